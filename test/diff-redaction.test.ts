/**
 * Diffs of file contents are redacted (services/time-travel/file-diff.ts): each side redacted as a whole,
 * line for line, so a multi-line private key is seen, no planted secret survives, the line
 * numbers stay the file's, both sides are redacted alike, and a file whose only change is a
 * secret still shows a changed line.
 */
import { diffArrays } from "diff";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { redactLines, unifiedDiff } from "../src/services/time-travel/file-diff.js";
import { parseUnified } from "../src/web/dashboard/diff-view.js";

const GITHUB = ["ghp_CANARYgithub0123456789abcdefghijklmn", "ghp_ROTATEgithub0123456789abcdefghijklmn"];
const KEY_BODY = [
  "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF0qJkFzYdJpJ1n9mDwjNh6pKqLhk",
  "q3bTzqW9Kk1o7gq3HQgT0Yd1x0x9xVzjK6fPqB2e7pG1h3J6k8l9m0n1o2p3q4r5",
];
const PEM = ["-----BEGIN RSA PRIVATE KEY-----", ...KEY_BODY, "-----END RSA PRIVATE KEY-----"].join("\n");
const SECRETS = [...GITHUB, ...KEY_BODY];

/** Lines of ordinary code, with secrets (one-line and a key block) among them. */
const text = fc
  .array(
    fc.constantFrom("const a = 1;", "return a;", "", "// note", `const token = "${GITHUB[0]}";`, `GITHUB_TOKEN=${GITHUB[1]}`, PEM, "}"),
    { maxLength: 25 },
  )
  .map((ls) => ls.join("\n"));

describe("redacted diffs", () => {
  it("redacts a text line for line: as many lines, no secret left, ordinary lines kept", () => {
    fc.assert(
      fc.property(text, (t) => {
        const lines = t.split("\n");
        const red = redactLines(t, diffArrays) ?? lines;
        expect(red.length, JSON.stringify(t)).toBe(lines.length);
        for (const s of SECRETS) expect(red.join("\n")).not.toContain(s);
        lines.forEach((l, i) => {
          if (l === "const a = 1;" || l === "return a;" || l === "// note") expect(red[i]).toBe(l);
        });
      }),
    );
  });

  it("shows every line from its side redacted, at the file's line numbers, and a changed secret as a changed line", async () => {
    await fc.assert(
      fc.asyncProperty(text, text, async (a, b) => {
        const diff = await unifiedDiff("a/f", "b/f", Buffer.from(a), Buffer.from(b));
        for (const s of SECRETS) expect(diff).not.toContain(s);
        const ra = redactLines(a, diffArrays) ?? a.split("\n");
        const rb = redactLines(b, diffArrays) ?? b.split("\n");
        const { lines } = parseUnified(diff);
        if (a !== b) expect(lines.length, "a difference is shown").toBeGreaterThan(0);
        for (const l of lines) {
          if (l.kind === "del" || l.kind === "ctx") expect(l.text).toBe(ra[(l.oldNo as number) - 1]);
          if (l.kind === "add") expect(l.text).toBe(rb[(l.newNo as number) - 1]);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("a rotated token is a changed line with both values hidden; a key block keeps its lines", async () => {
    const before = `const a = 1;\nconst token = "${GITHUB[0]}";\n${PEM}\nreturn a;\n`;
    const after = `const a = 1;\nconst token = "${GITHUB[1]}";\n${PEM}\nreturn a;\n`;
    const diff = await unifiedDiff("a/f", "b/f", Buffer.from(before), Buffer.from(after));
    expect(diff).toContain('-const token = "[redacted:github-token]";');
    expect(diff).toContain('+const token = "[redacted:github-token]";');
    expect(redactLines(before, diffArrays)).toEqual([
      "const a = 1;",
      'const token = "[redacted:github-token]";',
      "[redacted:private-key]",
      "[redacted]",
      "[redacted]",
      "[redacted]",
      "return a;",
      "",
    ]);
    // Nothing to hide: the diff is the plain one.
    expect(await unifiedDiff("a/f", "b/f", Buffer.from("x\n"), Buffer.from("y\n"))).toContain("-x\n+y");
  });
});
