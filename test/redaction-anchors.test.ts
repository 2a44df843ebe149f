/**
 * Patterns tried only where their anchor stands must find what a search over the whole text
 * finds. Two places do this for speed: provider rules whose every match starts with one of
 * their literals are tried, sticky, only where a literal stands (core/redaction/runs.ts), and the
 * URL shapes only at the scheme starts before each `://` (core/redaction/shapes.ts). A literal
 * that is not where every match starts, or a scheme start the anchored search skips, would
 * leave a secret readable. Also the card pattern, written digit first so the engine can look
 * for a digit before trying anything: it must find what its plain spelling finds. And the
 * shortcuts: a rule's literals searched for by their first two characters (each head's next
 * place remembered while the search moves on), the first characters
 * of the literals the scan does not look for read along a run in one pass (and only in a run
 * where one search finds what every match of theirs holds), the names stage
 * passing over a name when what follows it can begin no rule's shape, offering a name whose
 * value is claimed already only to the rules whose claims start elsewhere, the prose rule
 * asking for a digit in the words after a name before its pattern runs, and the env-line,
 * setter and call-pair rules reading the characters after a name before theirs run.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  CALL_PAIR,
  CLAIM_ELSEWHERE,
  digitAhead,
  ENV_LINE,
  envValueStart,
  PROSE,
  pairSeparator,
  RULES,
  rulesAfter,
  SETTER,
  setterCall,
  valueAt,
} from "../src/core/redaction/named.js";
import { type NameRule, Pass, SECRET_OR_WEAK } from "../src/core/redaction/pass.js";
import { PROVIDERS } from "../src/core/redaction/providers.js";
import { FirstOf, groups, UNSCANNED, UNSCANNED_SEEK, unscannedHeads } from "../src/core/redaction/runs.js";
import { scanText } from "../src/core/redaction/scan.js";
import * as shapes from "../src/core/redaction/shapes.js";
import { applyShape, card, highEntropy, type Shape, urlPassword, urlUserToken } from "../src/core/redaction/shapes.js";
import { redactText } from "../src/core/redaction/text.js";
import { corpusTexts, generate } from "./redaction/corpus.js";

describe("provider rules tried where their literal stands", () => {
  const leading = PROVIDERS.filter((r) => r.leading);

  it("covers most rules", () => {
    expect(leading.length).toBeGreaterThan(PROVIDERS.length / 2);
  });

  it("every match of a leading rule, in every corpus text of two seeds, starts with one of its literals", () => {
    let matches = 0;
    const wrong: string[] = [];
    for (const seed of [11, 12])
      for (const text of corpusTexts(generate(seed)))
        for (const rule of leading) {
          if (!rule.literals.some((l) => text.includes(l))) continue;
          const re = rule.re();
          re.lastIndex = 0;
          for (let m = re.exec(text); m !== null; m = re.exec(text)) {
            matches++;
            if (!rule.literals.some((l) => text.startsWith(l, m.index))) wrong.push(`${rule.id}: ${m[0]}`);
          }
        }
    expect(wrong).toEqual([]);
    expect(matches).toBeGreaterThan(10_000);
  });
});

describe("a rule's literals searched for by their first two characters", () => {
  /** The plain reading: the first place at or after `from` where any literal stands. */
  const plain = (run: string, literals: readonly string[], from: number) =>
    Math.min(...literals.map((l) => run.indexOf(l, from)).filter((at) => at >= 0), Number.MAX_SAFE_INTEGER);
  const rules = PROVIDERS.filter((r) => r.leading);
  const rule = fc.constantFrom(...rules);

  /**
   * `FirstOf` asked at positions that never go back (the steps after 0, some 0: the same again),
   * held to the plain reading at each; how many of the answers found a literal.
   */
  function sameAsFirstOf(literals: readonly string[], run: string, steps: readonly number[]): number {
    const gs = groups(literals);
    const cursor = new FirstOf(run, gs);
    let found = 0;
    let from = 0;
    for (const step of [0, ...steps]) {
      from += step;
      const at = plain(run, literals, from);
      const want = at === Number.MAX_SAFE_INTEGER ? -1 : at;
      if (want >= 0) found++;
      expect(cursor.from(from), `${JSON.stringify(literals)} in ${JSON.stringify(run)} from ${from}`).toBe(want);
    }
    return found;
  }

  it("finds where the first literal stands, asked again and again from later positions, for every leading rule", () => {
    // Runs of a rule's literals, their heads and filler; then positions that never go back,
    // some repeated, as the runs stage asks (after a failed try, after a match).
    const asked = (r: (typeof rules)[number]) =>
      fc.tuple(
        fc.constant(r),
        fc.array(
          fc.oneof(fc.constantFrom(...r.literals, ...r.literals.map((l) => l.slice(0, 2))), fc.constantFrom("g", "-", "_", "x", "9", "A")),
          { maxLength: 30 },
        ),
        fc.array(fc.nat(12), { maxLength: 12 }),
      );
    let found = 0;
    fc.assert(
      fc.property(rule.chain(asked), ([r, parts, steps]) => {
        found += sameAsFirstOf(r.literals, parts.join(""), steps);
      }),
      { numRuns: 5000, seed: 11 },
    );
    expect(found).toBeGreaterThan(5000);
  });

  it("finds the same as the plain search for any literals, also where groups share a head their literals do not follow", () => {
    // The rules' own literals never give a later group literals of its own (a group past the
    // first is a single literal), so a remembered head not yet checked against them is made here:
    // literals of two letters and a digit, many sharing a head, read along runs of the same.
    const literal = fc.stringMatching(/^[ab][ab][12]?$/);
    let found = 0;
    fc.assert(
      fc.property(
        fc.uniqueArray(literal, { minLength: 1, maxLength: 5 }),
        fc.stringMatching(/^[ab12]{0,24}$/),
        fc.array(fc.nat(4), { maxLength: 10 }),
        (literals, run, steps) => {
          found += sameAsFirstOf(literals, run, steps);
        },
      ),
      { numRuns: 20_000, seed: 11 },
    );
    expect(found).toBeGreaterThan(10_000);
  });

  it("a run holding a literal of a rule the scan does not look for has that rule's head noted", () => {
    const unscanned = UNSCANNED.map((i) => PROVIDERS[i] as (typeof PROVIDERS)[number]);
    expect(unscanned.length).toBeGreaterThan(0);
    const parts = fc.constantFrom(
      ...unscanned.flatMap((r) => r.literals),
      ...unscanned.flatMap((r) => r.literals.map((l) => l.slice(0, 1))),
      "x",
      "9",
      "é",
      "_",
    );
    let held = 0;
    fc.assert(
      fc.property(fc.array(parts, { minLength: 1, maxLength: 10 }), fc.nat(3), (ps, pad) => {
        const run = ps.join("");
        const text = `${" ".repeat(pad)}${run} `;
        const heads = unscannedHeads(text, pad, pad + run.length);
        unscanned.forEach((r, u) => {
          if (!r.literals.some((l) => run.includes(l))) return;
          held++;
          expect((heads >>> u) & 1, `${r.id} in ${JSON.stringify(run)}`).toBe(1);
        });
      }),
      { numRuns: 5000, seed: 11 },
    );
    expect(held).toBeGreaterThan(5000);
  });

  it("every match of a rule the scan does not look for holds its seek pattern, which the one search for all of them finds", () => {
    const seeking = UNSCANNED.map((i) => PROVIDERS[i] as (typeof PROVIDERS)[number]).filter((r) => r.seek !== undefined);
    expect(seeking.length).toBeGreaterThanOrEqual(5);
    for (const r of seeking) {
      // What the rule's pattern matches, without its look-arounds and word boundaries, between
      // anything at all: the strings generated are the rule's matches and its near misses.
      const core = r
        .re()
        .source.replace(/\(\?<?[=!][^()]*\)/g, "")
        .replace(/\(\?:\|\)/g, "")
        .replace(/\\b/g, "");
      const edge = fc.string({ unit: fc.constantFrom("a", "Z", "0", "_", "-", ".", "~", "/", ":", "%", "2", "F", "é"), maxLength: 4 });
      let matches = 0;
      fc.assert(
        fc.property(edge, fc.stringMatching(new RegExp(`^(?:${core})$`)), edge, (before, body, after) => {
          const run = `${before}${body}${after}`;
          const re = r.re();
          re.lastIndex = 0;
          for (let m = re.exec(run); m !== null; m = re.exec(run)) {
            matches++;
            expect(new RegExp(r.seek as string).test(m[0]), `${r.id}: ${m[0]}`).toBe(true);
            expect(UNSCANNED_SEEK.test(run), `${r.id} in ${run}`).toBe(true);
          }
        }),
        { numRuns: 1000, seed: 11 },
      );
      expect(matches, r.id).toBeGreaterThan(300);
    }
  });

  it("groups GitLab's prefixes into two searches", () => {
    const gitlab = PROVIDERS.find((r) => r.id === "gitlab-token");
    expect(gitlab && groups(gitlab.literals).map((g) => g.head)).toEqual(["gl", "GR1348941"]);
  });
});

describe("URL shapes tried at the scheme starts before each ://", () => {
  /** What a search over the whole text claims (the shape's global pattern), as the redacted text. */
  function searched(text: string, shape: Shape): string {
    const p = new Pass(text, scanText(text), redactText);
    const re = new RegExp(shape.re.source, shape.re.flags);
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      const c = shape.claim(m, p);
      if (c !== undefined) p.claim(c[0], c[1], c[2]);
    }
    return p.result();
  }
  function anchored(text: string, shape: Shape): string {
    const p = new Pass(text, scanText(text), redactText);
    applyShape(p, shape);
    return p.result();
  }

  // Schemes glued to words, digits and underscores, schemes over 32 characters, a second `://`
  // inside a URL, upper case, passwords and tokens: the places a scheme start can be missed.
  const FRAGMENTS = [
    "http",
    "https",
    "git+ssh",
    "HTTPS",
    "redis",
    "abcdefghijklmnopqrstuvwxyz0123456",
    "://",
    ":",
    "@",
    "/",
    " ",
    "\n",
    "user",
    "p4ssw0rd-9xQ",
    "tok3nAbCdEfGhIjKlMnOpQrS7",
    ".",
    "-",
    "+",
    "_",
    "1",
    "é",
    "?",
    "a",
  ];

  /** A URL with credentials, or most of one, after something a scheme start may be glued to. */
  const URL = fc
    .tuple(
      fc.constantFrom("", " ", "x", "1", "_", "git+", "a.b-", "é"),
      fc.constantFrom(
        "http",
        "https",
        "HTTPS",
        "redis",
        "ws",
        "h",
        "abcdefghijklmnopqrstuvwxyz0123456",
        "abcdefghijklmnopqrstuvwxyz012345",
      ),
      fc.constantFrom("", "user", "u:", "://"),
      fc.constantFrom("", ":p4ssw0rd-9xQ", ":", ":a b", ":$PASSWORD"),
      fc.constantFrom("", "tok3nAbCdEfGhIjKlMnOpQrS7", "x"),
      fc.constantFrom("@host", "@", "/path@x", ""),
    )
    .map(([before, scheme, user, pass, token, after]) => `${before}${scheme}://${user}${pass}${token}${after}`);

  for (const shape of [urlPassword, urlUserToken])
    it(`${shape === urlPassword ? "url-password" : "url-user-token"}: the same claims as a search over the whole text`, () => {
      let claimed = 0; // texts where something was claimed: the property also holds if nothing ever is
      fc.assert(
        fc.property(fc.array(fc.oneof(fc.constantFrom(...FRAGMENTS), URL), { maxLength: 30 }), (parts) => {
          const text = parts.join("");
          const out = anchored(text, shape);
          expect(out).toBe(searched(text, shape));
          if (out !== text) claimed++;
        }),
        { numRuns: 3_000 },
      );
      expect(claimed).toBeGreaterThan(30);
    });

  it("claims what it must, and not after a word character", () => {
    expect(anchored("git+https://user:p4ssw0rd-9xQ@host", urlPassword)).toBe("git+https://user:[redacted:password]@host");
    expect(anchored("see https://tok3nAbCdEfGhIjKlMnOpQrS7@host", urlUserToken)).toBe("see https://[redacted:token]@host");
    expect(anchored("1https://tok3nAbCdEfGhIjKlMnOpQrS7@host", urlUserToken)).toBe("1https://tok3nAbCdEfGhIjKlMnOpQrS7@host");
  });
});

describe("the card pattern, digit first", () => {
  /** The plain spelling: 13 to 19 digits, one space or dash at most after each but the last. */
  const PLAIN = /(?<![\d.])(?:\d[ -]?){12,18}\d(?![\d.])/g;
  const matches = (re: RegExp, text: string) => [...text.matchAll(new RegExp(re.source, re.flags))].map((m) => `${m.index}:${m[0]}`);
  /** Texts of digits, separators, dots and letters, long enough to hold a card number or two. */
  const piece = fc.constantFrom("4", "0", "9", "1234", "5678", "4111", " ", "-", ".", "a", "\n");
  const texts = fc.array(piece, { minLength: 4, maxLength: 40, size: "max" }).map((a) => a.join(""));
  const agrees = (re: RegExp) => fc.property(texts, (t) => matches(re, t).join("|") === matches(PLAIN, t).join("|"));

  it("finds what the plain spelling finds", () => {
    fc.assert(agrees(card.re), { numRuns: 3000, seed: 11 });
  });

  it("the check catches a spelling that differs (a separator allowed after the last digit)", () => {
    const loose = /(?<![\d.])\d(?:[ -]?\d){12,18}[ -]?(?![\d.])/g;
    expect(fc.check(agrees(loose), { numRuns: 3000, seed: 11 }).failed).toBe(true);
  });
});

describe("the high-entropy shape tried only in runs with a name before a `=`", () => {
  /** Runs of constants' names, lowercase names, `=`, values and base64 padding. */
  const piece = fc.constantFrom(
    "A",
    "API_KEY",
    "AB",
    "X9",
    "_",
    "a",
    "page",
    "=",
    "==",
    "?",
    "&",
    "Zx9Qw2Lk7Vb3Nm8Pq4Rt",
    "-",
    ".",
    "~",
    "/",
  );
  const runs = fc.array(piece, { minLength: 1, maxLength: 30 }).map((a) => a.join(""));
  const holds = (may: (text: string, start: number, end: number) => boolean) =>
    fc.property(runs, fc.nat(5), (run, pad) => {
      const text = `${"x".repeat(pad)} ${run} `;
      const matched = new RegExp(highEntropy.re.source).test(run);
      return !matched || may(text, pad + 1, pad + 1 + run.length);
    });

  it("never turns away a run the pattern matches in", () => {
    const may = highEntropy.runMay;
    expect(may).toBeDefined();
    fc.assert(holds(may as NonNullable<typeof may>), { numRuns: 5000, seed: 11 });
  });

  it("the check catches a test that asks for a longer name", () => {
    const strict = (text: string, start: number, end: number) => {
      for (let q = text.indexOf("=", start + 4); q >= 0 && q < end; q = text.indexOf("=", q + 1))
        if (/[A-Z0-9_]/.test(text[q - 1] ?? "")) return true;
      return false;
    };
    expect(fc.check(holds(strict), { numRuns: 5000, seed: 11 }).failed).toBe(true);
  });
});

describe("the names stage offers a name only to the rules that can claim after what follows it", () => {
  /** Each rule at a name that claims there, tried alone on a fresh pass (no earlier claim hides what it would take), with the character after the name. */
  function claims(text: string): { rule: number; c: number; secret: boolean; at: string }[] {
    const scan = scanText(text);
    const out: { rule: number; c: number; secret: boolean; at: string }[] = [];
    for (let k = 0; k < scan.names.length / 3; k++) {
      const [start, end, words] = scan.names.slice(3 * k, 3 * k + 3) as [number, number, number];
      const c = end < text.length ? text.charCodeAt(end) : 0;
      const secret = (new Pass(text, scan, redactText).kind(k) & SECRET_OR_WEAK) !== 0;
      RULES.forEach((rule, r) => {
        if (rule(new Pass(text, scan, redactText), k, start, end, words)) out.push({ rule: r, c, secret, at: text.slice(start, end + 1) });
      });
    }
    return out;
  }
  /** The claims the names stage would never make: by a rule it does not offer the name to. */
  const refused = (text: string) =>
    claims(text)
      .filter(({ rule, c, secret }) => !rulesAfter(c, secret).includes(RULES[rule] as NameRule))
      .map(({ rule, at }) => `rule ${rule} at ${JSON.stringify(at)} in ${JSON.stringify(text)}`);

  /** A secret name, what may follow it, and a value in the shapes the rules take. */
  const NAMES = [
    "password",
    "DB_PASSWORD",
    "api_key",
    "apiKey",
    "token",
    "Authorization",
    "Bearer",
    "cookie",
    "--token",
    "pwd",
    "secret",
    "x-api-key",
    "a[token",
  ];
  const AFTER = [
    " ",
    "\t",
    ":",
    "=",
    "(",
    "?",
    "+",
    '"',
    "'",
    "\\",
    "[",
    "]",
    ")",
    ",",
    "}",
    ">",
    "<",
    "%",
    "&",
    "/",
    "@",
    ";",
    "$",
    "`",
    "\n",
    "\r",
    "|",
    "!",
    "*",
    "#",
    "\u00a0",
    "é",
    "",
  ];
  const VALUE = [
    "",
    "= s3cr3tV4lue-99xQz",
    ": s3cr3tV4lue-99xQz",
    '": "s3cr3tV4lue-99xQz"',
    '("s3cr3tV4lue-99xQz")',
    '", "s3cr3tV4lue-99xQz")',
    ": 's3cr3tV4lue-99xQz'",
    ", 's3cr3tV4lue-99xQz')",
    '": \\"s3cr3tV4lue-99xQz\\"',
    " is hunter2-xyz9 ",
    " Zx9Qw2Lk7Vb3Nm8Pq4Rt ",
    ": Bearer Zx9Qw2Lk7Vb3Nm8Pq4Rt",
    "=Zx9Qw2Lk7Vb3Nm8Pq4Rt;",
    ' String::from("s3cr3tV4lue-99xQz")',
    ' = String::from("s3cr3tV4lue-99xQz")',
    "`s3cr3tV4lue-99xQz`",
    'r#"s3cr3tV4lue-99xQz"#',
    ": |\n  s3cr3tV4lue-99xQz\n",
    " = `s3cr3tV4lue-99xQz`",
    "]=Zx9Qw2Lk7Vb3Nm8Pq4Rt",
    ' .=\\"s3cr3tV4lue-99xQz\\"',
    " +=\\'s3cr3tV4lue-99xQz\\'",
    ' =>\\"Zx9Qw2Lk7Vb3Nm8Pq4Rt\\"',
    "=>;Zx9Qw2Lk7Vb3;",
    ' string = "s3cr3tV4lue-99xQz"',
    '= "s3cr3tV4lue-99xQz"', // after `!` or `=`: a comparison with a literal (`token != "…"`)
  ];
  const PREFIXES = ["", "\n", " ", "?", "&", "export ", '"', "'", '\\"', "$", "--", "x.setPassword"];
  /** Every prefix, name, following character and value, once: where each rule claims after each character. */
  const single = PREFIXES.flatMap((pre) => NAMES.flatMap((n) => AFTER.flatMap((a) => VALUE.map((v) => `${pre}${n}${a}${v}`))));

  it("no rule claims after a name it is not offered: every single name and value, generated texts of several, and the corpus", () => {
    for (const t of single) expect(refused(t)).toEqual([]);
    const several = fc
      .array(fc.tuple(fc.constantFrom(...PREFIXES), fc.constantFrom(...NAMES), fc.constantFrom(...AFTER), fc.constantFrom(...VALUE)), {
        minLength: 2,
        maxLength: 4,
      })
      .map((parts) => parts.map((p) => p.join("")).join(""));
    fc.assert(
      fc.property(several, (t) => {
        expect(refused(t)).toEqual([]);
      }),
      { numRuns: 3000, seed: 11 },
    );
    for (const t of corpusTexts(generate(11))) expect(refused(t)).toEqual([]);
  });

  it("every character a rule is offered after has a text where it claims after it, so withholding any one fails the check above", () => {
    const seen = new Set<string>();
    for (const t of single) for (const { rule, c } of claims(t)) seen.add(`${rule}:${c}`);
    const unwitnessed: string[] = [];
    RULES.forEach((rule, r) => {
      for (let c = 0; c < 128; c++)
        if (rulesAfter(c, true).includes(rule) && !seen.has(`${r}:${c}`))
          unwitnessed.push(`rule ${r} after ${JSON.stringify(String.fromCharCode(c))}`);
    });
    expect(unwitnessed).toEqual([]);
  });

  /**
   * Each rule the names stage withholds at a name whose value (`valueAt`) is claimed, tried alone
   * with that value claimed from its first character for one character and for the whole of its
   * word: the claims it makes anyway.
   */
  function claimsWhenTaken(text: string): { made: string[]; tried: number } {
    const scan = scanText(text);
    const made: string[] = [];
    let tried = 0;
    for (let k = 0; k < scan.names.length / 3; k++) {
      const [start, end, words] = scan.names.slice(3 * k, 3 * k + 3) as [number, number, number];
      const v = valueAt(text, end);
      if (v < 0 || v >= text.length) continue;
      const word = /^\S*/.exec(text.slice(v))?.[0].length ?? 0;
      for (const len of new Set([1, Math.max(1, word)]))
        RULES.forEach((rule, r) => {
          if (CLAIM_ELSEWHERE.has(rule)) return;
          const p = new Pass(text, scan, redactText);
          p.claim(v, v + len, "[taken]");
          tried++;
          if (rule(p, k, start, end, words))
            made.push(`rule ${r} at ${JSON.stringify(text.slice(start, end + 1))} in ${JSON.stringify(text)}`);
        });
    }
    return { made, tried };
  }

  it("at a name whose value is claimed already, no withheld rule claims: every single name and value, generated texts, and the corpus", () => {
    let tried = 0;
    const check = (t: string) => {
      const r = claimsWhenTaken(t);
      tried += r.tried;
      expect(r.made).toEqual([]);
    };
    for (const t of single) check(t);
    const several = fc
      .array(fc.tuple(fc.constantFrom(...PREFIXES), fc.constantFrom(...NAMES), fc.constantFrom(...AFTER), fc.constantFrom(...VALUE)), {
        minLength: 2,
        maxLength: 4,
      })
      .map((parts) => parts.map((p) => p.join("")).join(""));
    fc.assert(fc.property(several, check), { numRuns: 2000, seed: 12 });
    for (const t of corpusTexts(generate(11))) check(t);
    expect(tried).toBeGreaterThan(100_000);
  });

  it("the rules that claim elsewhere do claim at a name whose value is claimed, so withholding one fails the check above", () => {
    const witness: Record<string, string> = {
      yamlBlock: "password: |\n  s3cr3tV4lue-99xQz\n",
      setter: 'token = String::from("s3cr3tV4lue-99xQz")',
      rawString: "token = `s3cr3tV4lue-99xQz`",
      cliFlag: '--token .=\\"s3cr3tV4lue-99xQz\\"',
      connPassword: "Password=>;Zx9Qw2Lk7Vb3;",
      typed: 'token: string = "s3cr3tV4lue-99xQz"',
    };
    for (const [name, text] of Object.entries(witness)) {
      const scan = scanText(text);
      const [start, end, words] = scan.names.slice(0, 3) as [number, number, number];
      const v = valueAt(text, end);
      const rule = [...CLAIM_ELSEWHERE].find((r) => r.name === name) as NameRule;
      const p = new Pass(text, scan, redactText);
      expect(p.claim(v, v + 1, "[taken]")).toBe(true);
      expect(rule(p, 0, start, end, words), name).toBe(true);
    }
  });
});

describe("a shape is called only for texts that hold what it needs", () => {
  const all = Object.entries(shapes).filter((e): e is [string, Shape] => typeof e[1] === "object" && e[1] !== null && "need" in e[1]);

  it("every text a shape's gate lets through, in the corpus of two seeds, holds one of its needed marks or words", () => {
    expect(all.length).toBeGreaterThanOrEqual(14);
    const passed = new Map<string, number>();
    const wrong: string[] = [];
    // The corpus has no PuTTY key file: one by hand.
    const putty =
      "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPrivate-Lines: 1\nAAAAIGxZ3mQ9fT0sVq2r8XkP1bN7cW4eH6jY5uD3aR0oL2iK\n";
    for (const text of [putty, ...corpusTexts(generate(11)), ...corpusTexts(generate(12))]) {
      const p = new Pass(text, scanText(text), redactText);
      for (const [id, s] of all) {
        if (!s.gate(p)) continue;
        passed.set(id, (passed.get(id) ?? 0) + 1);
        if ((p.scan.marks & s.need[0]) === 0 && (p.scan.words & s.need[1]) === 0) wrong.push(`${id}: ${JSON.stringify(text.slice(0, 80))}`);
      }
    }
    expect(wrong).toEqual([]);
    // Every shape's gate let some text through: the check above was asked of each.
    expect(all.map(([id]) => id).filter((id) => !passed.has(id))).toEqual([]);
  });
});

describe("a shape's gate turns away no text where its pattern would claim", () => {
  const all = Object.entries(shapes).filter((e): e is [string, Shape] => typeof e[1] === "object" && e[1] !== null && "need" in e[1]);
  /** Whether any match of the shape's pattern over the whole text is one its claim takes. */
  const claims = (s: Shape, p: Pass) => [...p.text.matchAll(new RegExp(s.re.source, s.re.flags))].some((m) => s.claim(m, p) !== undefined);
  // The shapes' triggers and their look-alikes: each kind of password hash, shell `$`, curl's flags and `-p` elsewhere.
  const piece = fc.constantFrom(
    "$1$saltSALT$N9qo8uLOickgx2ZMRZoMyeIj",
    "$5$saltSALT$N9qo8uLOickgx2ZMRZoMyeIj",
    "$6$saltSALT$N9qo8uLOickgx2ZMRZoMyeIj",
    "$apr1$saltSALT$N9qo8uLOickgx2ZMRZoMyeIj",
    "$2b$05$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy",
    "$y$j9T$saltSALT$N9qo8uLOickgx2ZMRZoMyeIj",
    "$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHQ$N9qo8uLOickgx2ZMRZoMyeIj",
    "$TOKEN",
    "$(cat f)",
    `\${X}`,
    "$$",
    "Zx9Qw2Lk7Vb3Hj8Tn4Rs6Yd1",
    "-u",
    "-p",
    "--user",
    "--proxy-user",
    "--http-password",
    "--http-password=admin:s3cretPassw0rd!",
    "mkdir -p",
    "=",
    " ",
    "\t",
    "\n",
    ":",
    "admin",
    "s3cretPassw0rd!",
    '"',
    "'",
    "w",
    "-",
  );
  const text = fc.array(piece, { maxLength: 12 }).map((xs) => xs.join(""));

  it("on generated texts and the corpus: where the gate says no, no match of the pattern is claimed", () => {
    const wrong: string[] = [];
    let refused = 0;
    const check = (t: string) => {
      const p = new Pass(t, scanText(t), redactText);
      for (const [id, s] of all) {
        if (s.gate(p)) continue;
        refused++;
        if (claims(s, p)) wrong.push(`${id}: ${JSON.stringify(t.slice(0, 100))}`);
      }
    };
    fc.assert(
      fc.property(text, (t) => {
        check(t);
        return true;
      }),
      { numRuns: 5_000, seed: 14 },
    );
    for (const t of corpusTexts(generate(11))) check(t);
    expect(wrong).toEqual([]);
    expect(refused).toBeGreaterThan(100_000);
  });

  it("the hash and curl shapes' gates: a text each lets through and one each turns away", () => {
    const gate = (s: Shape, t: string) => s.gate(new Pass(t, scanText(t), redactText));
    expect(gate(shapes.passwordHash, "admin:$apr1$saltSALT$N9qo8uLOickgx2ZMRZoMyeI")).toBe(true);
    expect(gate(shapes.passwordHash, `echo $TOKEN $(date) \${HOME}`)).toBe(false);
    expect(gate(shapes.userPassword, "curl --http-password=s3cret https://x")).toBe(true);
    expect(gate(shapes.userPassword, "curl -u admin:s3cret https://x")).toBe(true);
    expect(gate(shapes.userPassword, "mkdir -p build && docker run -p 80:80 x")).toBe(false);
  });
});

describe("prose is tried only where a digit stands in the words after the name", () => {
  const long = fc.integer({ min: 250, max: 258 });
  const word = fc.oneof(
    fc.constantFrom("is", "to", "set", "hunter2-xyz9", "abcdefgh", "x", "'hunter2x'", '"abc1defg"', "s3cret.", "(a1b2c3d4)"),
    fc.tuple(fc.constantFrom("a", "b9", "-"), long).map(([c, n]) => c.repeat(n).slice(0, n)),
    // Long words whose one digit is last: unquoted, quoted, and with a stop after the quote.
    fc
      .tuple(long, fc.constantFrom("", "'", '"'), fc.constantFrom("", ".", ")"))
      .map(([n, q, stop]) => `${q}${"a".repeat(n - 1)}7${q}${stop}`),
  );
  const gap = fc.constantFrom(" ", "  ", "\t", " \t ", "\n", "\r\n", "\u00a0", "", ".");
  const verb = fc.constantFrom("", "is ", "was\t", "to ", "of ", "now ", "set to ", "set to\t ", "set ", "is\n");
  const text = fc
    .tuple(
      fc.constantFrom("password", "token", "$password"),
      fc.constantFrom(" ", "\t", "  "),
      verb,
      word,
      fc.array(fc.tuple(gap, word), { maxLength: 3 }),
      fc.constantFrom("", " ", "\n"),
    )
    .map(([name, sp, v, first, rest, tail]) => `${name}${sp}${v}${first}${rest.map(([g, w]) => g + w).join("")}${tail}`);

  /** Whether PROSE matches at the name that starts the text with a value holding a digit. */
  const valueWithDigit = (t: string, start: number): boolean => {
    PROSE.lastIndex = start;
    const m = PROSE.exec(t);
    return m !== null && /\d/.test(m[4] as string);
  };

  it("digitAhead holds wherever the pattern would find a value with a digit", () => {
    let found = 0;
    fc.assert(
      fc.property(text, (t) => {
        const scan = scanText(t);
        if (scan.names.length === 0) return true;
        const [start, end] = scan.names as [number, number];
        if (!valueWithDigit(t, start)) return true;
        found++;
        return digitAhead(t, end);
      }),
      { numRuns: 20_000, seed: 13 },
    );
    expect(found).toBeGreaterThan(1_000);
  });

  it("turns names away: before a word with no digit, a line's end, or a word too long to be the value", () => {
    expect(digitAhead("password is hunter2-xyz9", 8)).toBe(true);
    expect(digitAhead("password set to s3cr3t99", 8)).toBe(true);
    expect(digitAhead("password is missing", 8)).toBe(false);
    expect(digitAhead("password\nhunter2-xyz9", 8)).toBe(false);
    expect(digitAhead("password is\nhunter2-xyz9", 8)).toBe(false);
    expect(digitAhead(`password ${"a".repeat(300)}9`, 8)).toBe(false);
  });
});

describe("the env-line, setter and call-pair patterns run only where what follows the name can go on", () => {
  /** A name, what may stand between it and its value, and a value, in the spellings the three patterns take and their near misses. */
  const pick = (...xs: string[]) => fc.constantFrom(...xs);
  const text = fc
    .tuple(
      pick("", "\n", "export ", "ENV ", "set ", "- ", "  ", "x.", "$", '"', "'", '("', "['", "os.Setenv('"),
      pick("password", "DB_PASSWORD", "api_key", "token", "secret.key", "x-token", "9token"),
      pick("", '"', "'", "]", '"]'),
      pick("", " ", "\t", "  "),
      pick("", "=", ":=", "::=", "?=", "+=", ":", "::", "(", ",", "]", "] =", "==", "=>", ".="),
      pick("", " ", "\t"),
      pick("", '"', "'", "`", "$", "String::from(", "Some(", "_x(", "f(", "9(", "\u00a0", "\n", "\0", "(", " '", "é"),
      // A call's name before a quoted value (`= String::from("…")`, `:= decrypt('…')`): the setter's own shape.
      pick("", "", "", 'String::from("', "f('", '_x("', 'decrypt("', "Decrypt('", 'Some( "'),
      pick("s3cr3tV4lue-99xQz", "x", "", "hunter2 xyz", '"', "'", ")", "abc\\'d"),
      pick("", '"', "'", '")', "')", "\n", " ", ";"),
    )
    .map((parts) => parts.join(""));

  /** Each name of the text, with the match of each pattern whose key ends where the name does. */
  function cases(t: string) {
    const scan = scanText(t);
    const out: { end: number; env: boolean; setter: boolean; pair: boolean }[] = [];
    for (let k = 0; k < scan.names.length; k += 3) {
      const start = scan.names[k] as number;
      const end = scan.names[k + 1] as number;
      const ls = t.lastIndexOf("\n", start - 1) + 1;
      ENV_LINE.lastIndex = ls;
      const e = ENV_LINE.exec(t);
      const env = e !== null && e.index + (e[1] as string).length + (e[2] as string).length === end;
      let setter = false;
      for (let at = Math.max(0, start - 2); at <= start; at++) {
        SETTER.lastIndex = at;
        const m = SETTER.exec(t);
        if (m !== null && m.index + (m[1] as string).length === end) setter = true;
      }
      let pair = false;
      for (let at = Math.max(0, start - 3); at < start; at++) {
        CALL_PAIR.lastIndex = at;
        const m = CALL_PAIR.exec(t);
        if (m !== null && m.index + 1 + (m[2] as string).length === end) pair = true;
      }
      out.push({ end, env, setter, pair });
    }
    return out;
  }

  it("each shortcut holds wherever its pattern matches at the name: generated texts and the corpus", () => {
    const seen = { env: 0, setter: 0, pair: 0 };
    const check = (t: string) => {
      for (const c of cases(t)) {
        if (c.env) {
          seen.env++;
          expect(envValueStart(t, c.end), `env-line ${JSON.stringify(t)}`).toBe(true);
        }
        if (c.setter) {
          seen.setter++;
          expect(setterCall(t, c.end), `setter ${JSON.stringify(t)}`).toBe(true);
        }
        if (c.pair) {
          seen.pair++;
          expect(pairSeparator(t, c.end), `call pair ${JSON.stringify(t)}`).toBe(true);
        }
      }
    };
    fc.assert(
      fc.property(text, (t) => check(t)),
      { numRuns: 20_000, seed: 14 },
    );
    for (const t of corpusTexts(generate(11))) check(t);
    expect(Math.min(seen.env, seen.setter, seen.pair), JSON.stringify(seen)).toBeGreaterThan(300);
  });

  it("and turns names away where it cannot", () => {
    expect(envValueStart('token: "abc"', 5)).toBe(false);
    expect(envValueStart("token = $TOKEN", 5)).toBe(false);
    expect(envValueStart("token ::= abc", 5)).toBe(true);
    expect(setterCall('"token": "abc"', 6)).toBe(false);
    expect(setterCall('token = String::from("abc")', 5)).toBe(true);
    expect(setterCall('setToken("abc")', 8)).toBe(true);
    expect(pairSeparator('{"token": "abc"}', 7)).toBe(false);
    expect(pairSeparator('setenv("token", "abc")', 13)).toBe(true);
  });
});
