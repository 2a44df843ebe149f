/**
 * The scan (core/redaction/scan.ts) held to a plain reading of the same text. Its loop is written
 * for speed: most characters go through an inner loop that stops only at the few that need more,
 * so a character counted twice or skipped where that loop stops, or a run cut at the wrong
 * place, would move every rule's anchor. Each field checked here is spelt out the slow way:
 * whether 13 digits stand in a row (a space or dash at most between two: where a card can be),
 * whether a .pgpass port field stands after a colon, colons counted, the last `=` found, the
 * runs of token characters split at the characters that end one (whitespace as `\s` has it,
 * Unicode spaces too, and "'`<>\[]{},;), the provider literals each run holds, the
 * secret-sounding names read from the name characters around a hint word.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PROVIDERS } from "../src/core/redaction/providers.js";
import { M, MIN_RUN, scanText, W } from "../src/core/redaction/scan.js";

/** Pieces texts are built from: hint words in any case, provider literals, operators, digits, non-ASCII letters, Unicode spaces, surrogate pairs. */
const PIECES = [
  "password",
  "PASSWORD",
  "Token",
  "api_key",
  "x",
  "ghp_",
  "sk-",
  "AKIA",
  "xoxb-",
  "eyJ",
  "glpat-",
  "hvs.",
  "0",
  "7",
  "2024",
  "4111",
  "1234 ",
  "56-",
  "5432",
  "123456",
  "*",
  ":5432:",
  "::",
  "abcdEFGH",
  "_",
  ".",
  "-",
  "--",
  "-p",
  "-u",
  "u",
  "r",
  "(",
  "/",
  "://",
  "\\/",
  "=",
  ":",
  "@",
  "$",
  "%",
  '"',
  "'",
  "`",
  "<",
  "</",
  '("',
  "r#",
  "[",
  "]",
  "{",
  "}",
  ",",
  ";",
  "|",
  ">",
  "?",
  "&",
  "#",
  "~",
  " ",
  "\t",
  "\n",
  "\r\n",
  "\u000b",
  "\u00a0",
  "\u1680",
  "\u2003",
  "\u2028",
  "\u202f",
  "\u3000",
  "\ufeff",
  "é",
  "ß",
  "字",
  "\u0100",
  "\ud83d\ude00",
  "\ud800",
];

/**
 * Token pieces and the two characters the scan's inner loop ends a short run at by itself (a
 * space, a line break): runs of every length, one after another, some holding a literal.
 */
const WORDS = ["ghp_", "sk-", "AKIA", "xoxb-", "glpat-", "hvs.", "Token", "abcdEFGH", "2024", "x", "_", "-", "7", " ", " ", "\n"];

const text = fc.oneof(
  fc.array(fc.constantFrom(...PIECES), { maxLength: 60 }).map((p) => p.join("")),
  fc.array(fc.constantFrom(...WORDS), { maxLength: 40 }).map((p) => p.join("")),
  fc.string({ maxLength: 80 }),
  fc.string({ unit: "binary", maxLength: 80 }),
);

/** Runs of 16 or more characters none of which ends a run, as [start, end) pairs. */
function plainRuns(t: string): number[] {
  const out: number[] = [];
  for (const m of t.matchAll(/[^\s"'`<>\\[\]{},;]+/g)) if (m[0].length >= MIN_RUN) out.push(m.index, m.index + m[0].length);
  return out;
}

/**
 * Per run, the provider rules (indexes, ascending) one of whose literals the scan looks for and
 * the run holds, A-Z read as a-z; undefined when none. A literal is never cut by a character
 * that ends a run, and a rule noted in one run must not be carried on to the next.
 */
function plainRules(t: string, runs: number[]): (number[] | undefined)[] {
  const out: (number[] | undefined)[] = [];
  for (let k = 0; k < runs.length; k += 2) {
    const run = t.slice(runs[k], runs[k + 1]).replace(/[A-Z]/g, (c) => c.toLowerCase());
    const ids = PROVIDERS.flatMap((r, id) => (r.scanned && r.hints.some((h) => run.includes(h)) ? [id] : []));
    out.push(ids.length > 0 ? ids : undefined);
  }
  return out;
}

/** Every word one of which a secret-sounding name holds (core/redaction/scan.ts HINTS, and `basic`). */
const HINT =
  /pass|pwd|secret|token|key|auth|cookie|cred|otp|mfa|pin|cvv|cvc|csc|ssn|csrf|xsrf|bearer|jwt|signature|code|verifier|sess|sid|pat|salt|seed|sig|hmac|pw|basic/i;

/** The names holding a hint word: runs of [A-Za-z0-9_.-], without their leading `-` and `.`, as [start, end) pairs. */
function plainNames(t: string): number[] {
  const out: number[] = [];
  for (const m of t.matchAll(/[A-Za-z0-9_.-]+/g)) {
    if (!HINT.test(m[0])) continue;
    const lead = /^[-.]*/.exec(m[0])?.[0].length ?? 0;
    out.push(m.index + lead, m.index + m[0].length);
  }
  return out;
}

describe("scanText", () => {
  it("counts, finds runs and names as a plain reading of the text does", () => {
    fc.assert(
      fc.property(text, (t) => {
        const s = scanText(t);
        expect((s.marks & M.CARD) !== 0).toBe(/\d(?:[ -]?\d){12}/.test(t));
        expect((s.marks & M.PORT) !== 0).toBe(/:(?:\d{1,5}|\*):[^\s:]/.test(t));
        // What the pipeline asks of the marks and words instead of searching the text itself.
        expect((s.words & W.EYJ) !== 0).toBe(/eyj/i.test(t));
        // Every mark the stages ask of: the characters, then the shapes of two or three.
        const has = (...xs: string[]) => xs.some((x) => t.includes(x));
        const marks: [number, boolean][] = [
          [M.EQ, has("=")],
          [M.COLON, has(":")],
          [M.AT, has("@")],
          [M.DOLLAR, has("$")],
          [M.PIPE, has("|")],
          [M.GT, has(">")],
          [M.QUOTE, has("'", '"')],
          [M.SQUOTE, has("'")],
          [M.BACKTICK, has("`")],
          [M.SEMI, has(";")],
          [M.URL_SEP, has("?", "&", "#", ";")],
          [M.COMMA, has(",", "]")],
          [M.PERCENT, has("%")],
          [M.URL, has("://")],
          [M.CLOSE_TAG, has("</")],
          [M.CALL_QUOTE, has('("', "('")],
          [M.RAW, has('r"', "r#")],
          [M.ESCAPED_SLASH, has("\\/")],
          [M.DASH2, has("--")],
          [M.DASH_P, has("-p")],
          [M.DASH_U, has("-u")],
          [M.RUN_EQ, plainRuns(t).some((x, k, r) => k % 2 === 0 && (r[k + 1] as number) - x >= 24 && t.slice(x, r[k + 1]).includes("="))],
        ];
        for (const [m, present] of marks) expect([m, (s.marks & m) !== 0]).toEqual([m, present]);
        expect(s.colons).toBe(t.split(":").length - 1);
        expect(s.lastEq).toBe(t.lastIndexOf("="));
        expect(s.runs).toEqual(plainRuns(t));
        expect(s.runRules).toEqual(plainRules(t, s.runs));
        const names: number[] = [];
        for (let i = 0; i < s.names.length; i += 3) names.push(s.names[i] as number, s.names[i + 1] as number);
        expect(names).toEqual(plainNames(t));
      }),
      { numRuns: 3000 },
    );
  });

  it("finds a run and a name where a text ends", () => {
    const s = scanText("x DB_PASSWORD=ghp_0123456789abcdefABCDEF");
    expect(s.runs).toEqual([2, 40]);
    expect(s.names.slice(0, 2)).toEqual([2, 13]);
  });

  it("sees a .pgpass port field: 1 to 5 digits or `*` between colons, then neither space nor colon", () => {
    const port = (t: string) => (scanText(t).marks & M.PORT) !== 0;
    expect(port("db:5432:app:me:pw")).toBe(true);
    expect(port("h:12345:x")).toBe(true);
    expect(port("h:*:x")).toBe(true);
    expect(port("h:123456:x")).toBe(false);
    expect(port("h::x")).toBe(false);
    expect(port("h:5432: x")).toBe(false);
    expect(port("h:5432::x")).toBe(false);
    expect(port("h:5432:")).toBe(false);
    expect(port("h:5a:x")).toBe(false);
  });

  it("sees 13 digits in a row across single spaces and dashes, not across two or across letters", () => {
    const card = (t: string) => (scanText(t).marks & M.CARD) !== 0;
    expect(card("pay 4111 1111 1111 1111 now")).toBe(true);
    expect(card("4111-1111-1111-1")).toBe(true);
    expect(card("1234567890123")).toBe(true);
    expect(card("123456789012")).toBe(false);
    expect(card("4111 1111  1111 1111")).toBe(false);
    expect(card("4111 1111 -1111 1111")).toBe(false);
    expect(card("4111a1111b1111c1111")).toBe(false);
    expect(card("41111111 é 11111111")).toBe(false);
    expect(card("4111111é1111111")).toBe(false);
  });
});
