/**
 * Inputs built to make a backtracking pattern rescan: long runs of a rule's trigger word with
 * nothing to match (or the match at the very end). Each must complete with the right output;
 * their cost is measured in bench/redact.mjs ("adversarial" rows), not asserted here. Before the
 * `cli-password` bound, 200 KB of `mysql -u x ` took seconds.
 */
import { describe, expect, it } from "vitest";
import { MAX_SCAN, redactJson, redactText } from "../src/core/redaction/redact.js";
import { ADVERSARIAL } from "./redaction/adversarial.js";

describe("redaction of adversarial inputs", () => {
  it.each(ADVERSARIAL.map((a) => [a.name, a] as const))("%s: completes, and redacts what it must", (_n, a) => {
    const out = redactText(a.text);
    if (a.secret) expect(out.includes(a.secret)).toBe(false);
    if (a.same) expect(out).toBe(a.text);
    expect(redactText(out)).toBe(out);
  });

  it("a password after 200 KB of `mysql -u x ` is found when within reach of its command", () => {
    const text = `${"mysql -u x ".repeat(18_000)}-pS3cretPw9`;
    expect(redactText(text)).not.toContain("S3cretPw9");
  });

  it("journal data: a string longer than the scan limit is hashed, not scanned or stored", () => {
    const big = `token=${"ghp_R7xkq2LmN8pQ4sT6vW9yZ1aB3cD5eF7gH9iJ ".repeat(Math.ceil(MAX_SCAN / 40))}`;
    const out = redactJson({ note: big, n: 1 }) as { note: string; n: number };
    expect(out.note).toMatch(/^sha256:[0-9a-f]{16}$/);
    expect(out.n).toBe(1);
    expect(redactJson({ note: "short ghp_R7xkq2LmN8pQ4sT6vW9yZ1aB3cD5eF7gH9iJ" })).toEqual({ note: "short [redacted:github-token]" });
  });
});
