/**
 * Hand-written, real-world shapes (not produced by the corpus generator): each planted secret
 * must be gone from the output, and each ordinary line must come back unchanged. These are the
 * leaks and over-redactions a second reading found; the corpus measures rates, this file pins cases.
 */
import { describe, expect, it } from "vitest";
import { redactText, redactValue } from "../src/core/redaction/redact.js";
import { KEEP_FIXTURES, LEAK_FIXTURES, PREFIX_KEEP, THIRD_PARTY_KEEP, URL_KEEP } from "./redaction/fixtures.js";

describe("redaction fixtures (hand-written real-world shapes)", () => {
  it.each(LEAK_FIXTURES.map(([t, s]) => [t, s] as const))("hides the secret in %j", (text, secret) => {
    const out = redactText(text);
    expect(out, out).not.toContain(secret);
  });
  it.each(KEEP_FIXTURES.map((t) => [t] as const))("keeps %j unchanged", (text) => {
    expect(redactText(text)).toBe(text);
  });
  it.each(THIRD_PARTY_KEEP.map(([src, line]) => [src, line] as const))("keeps a line of %s unchanged: %j", (_src, line) => {
    expect(redactText(line)).toBe(line);
  });
  it.each(PREFIX_KEEP.map((t) => [t] as const))("keeps %j: an identifier, not a token", (text) => {
    expect(redactText(text)).toBe(text);
  });
  it.each(URL_KEEP.map((t) => [t] as const))("keeps %j: no password in that URL", (text) => {
    expect(redactText(text)).toBe(text);
  });
  it("judges keys alike in structured values: `passWord` and `DB_PASS_PROD` hold passwords, `passThrough` does not", () => {
    expect(redactValue({ passWord: "Xk9mP2vQ7", DB_PASS_PROD: "Xk9mP2vQ7", passThrough: "stream" })).toEqual({
      passWord: "[redacted]",
      DB_PASS_PROD: "[redacted]",
      passThrough: "stream",
    });
  });
  it("does not take a redacted secret's random letters for a card-ish word before a number", () => {
    // `/cc` in the token would read as `cc` (a card word) in the 48 characters before the number.
    const token = `FwoGZXIvYXdzE${"Ab3d".repeat(15)}/ccQ${"x9Yz".repeat(10)}`;
    const out = redactText(`AWS_SESSION_TOKEN=${token}\norder 5500005555555559 shipped`);
    expect(out).not.toContain("Ab3dAb3d");
    expect(out).toContain("order 5500005555555559 shipped");
  });
});
