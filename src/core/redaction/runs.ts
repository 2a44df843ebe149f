/**
 * Redaction rules that look inside long runs of token characters (the scan's `runs`): provider
 * formats (core/redaction/providers.ts), JWTs, and secrets encoded in base64. Pure.
 *
 * Every one of these secrets is a run of 16 or more characters with no whitespace, quote,
 * bracket, brace, comma or semicolon in it, and most of a typical text is shorter words, so
 * only the runs are looked at; in a run, only the provider patterns whose literal prefix the
 * run holds are tried.
 */
import { tag } from "./judge.js";
import type { Pass } from "./pass.js";
import { PROVIDER_CHECKS, PROVIDERS } from "./providers.js";
import { W } from "./scan.js";

/** Text above this many characters is hashed without being scanned first (scanning it would cost more than it saves). */
export const MAX_SCAN = 256 * 1024;

/** Per ASCII character, 1 for a base64 digit: [A-Za-z0-9+/]. */
const B64 = new Uint8Array(128);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") B64[c.charCodeAt(0)] = 1;

function b64Digit(c: number): boolean {
  return c < 128 && B64[c] === 1;
}

/**
 * The base64 runs long enough to hold a secret (a kubeconfig's key data, a JWT or a credentials
 * file encoded once) in the run [from, to) of a text's token characters, as [start, end) pairs:
 * 40 or more digits that follow none, up to two `=`, and then no digit or `=` (what
 * `/(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{40,}={0,2}(?![A-Za-z0-9+/=])/g` matches). Read by hand, in
 * the text itself: the pattern, run with `matchAll` (judging a run redacts its decoded text,
 * which runs this stage again, so a shared pattern's position would be reset), copied itself on
 * every long run.
 */
function base64Runs(text: string, from: number, to: number): number[] {
  const out: number[] = [];
  for (let i = from; i < to; ) {
    if (!b64Digit(text.charCodeAt(i))) {
      i++;
      continue;
    }
    const a = i;
    while (i < to && b64Digit(text.charCodeAt(i))) i++;
    if (i - a < 40) continue;
    let e = i;
    while (e < to && e - i < 2 && text.charCodeAt(e) === 61) e++;
    if (e < to && (text.charCodeAt(e) === 61 || b64Digit(text.charCodeAt(e)))) continue;
    out.push(a, e);
  }
  return out;
}

const NONE: readonly number[] = [];
/** The rules whose literals the scan does not look for (`ProviderRule.scanned`), ascending. */
export const UNSCANNED: readonly number[] = PROVIDERS.flatMap((r, i) => (r.scanned ? [] : [i]));
/** Runs shorter than this are too short for every rule of `UNSCANNED`. */
const UNSCANNED_MIN = Math.min(...UNSCANNED.map((i) => (PROVIDERS[i] as (typeof PROVIDERS)[number]).min));

/**
 * The rules of `UNSCANNED` (bit u for the u-th) a literal of which starts with a pair of ASCII
 * characters (`PAIR_HEADS[first * 128 + second]`; a literal of one character, with every
 * second), or is one character (`ONE_HEADS`, for a run's last): read along a run, one pass says
 * which of them it may hold, where a search for each literal (`SK`, `YC`, `b_`, `1/`, …) cost
 * most long runs several calls that found nothing.
 */
const PAIR_HEADS = new Uint8Array(128 * 128);
const ONE_HEADS = new Uint8Array(128);
if (UNSCANNED.length > 8) throw new Error("redact-runs: more rules without a scanned literal than PAIR_HEADS has bits");
UNSCANNED.forEach((id, u) => {
  for (const l of (PROVIDERS[id] as (typeof PROVIDERS)[number]).literals) {
    const c0 = l.charCodeAt(0);
    const c1 = l.length > 1 ? l.charCodeAt(1) : 0;
    if (c0 >= 128 || c1 >= 128) throw new Error(`redact-runs: literal ${JSON.stringify(l)} is not ASCII`);
    if (l.length === 1) ONE_HEADS[c0] = (ONE_HEADS[c0] as number) | (1 << u);
    for (let second = 0; second < 128; second++)
      if (l.length === 1 || second === c1) PAIR_HEADS[c0 * 128 + second] = (PAIR_HEADS[c0 * 128 + second] as number) | (1 << u);
  }
});

/** The rules of `UNSCANNED` (bit u for the u-th) whose literals' first characters stand somewhere in text[start, end). */
export function unscannedHeads(text: string, start: number, end: number): number {
  let m = 0;
  let c0 = text.charCodeAt(start);
  for (let j = start + 1; j < end; j++) {
    const c1 = text.charCodeAt(j);
    if ((c0 | c1) < 128) m |= PAIR_HEADS[(c0 << 7) | c1] as number;
    else if (c0 < 128) m |= ONE_HEADS[c0] as number;
    c0 = c1;
  }
  if (c0 < 128) m |= ONE_HEADS[c0] as number;
  return m;
}

/**
 * Where a rule of `UNSCANNED` may match (`ProviderRule.seek`): a run in which none of these
 * stands needs no pair table read along it. The bits of the rules without one (a literal of one
 * character: a Discord token's dot) are set for every run of their length.
 */
export const UNSCANNED_SEEK = new RegExp(
  UNSCANNED.flatMap((i) => {
    const seek = (PROVIDERS[i] as (typeof PROVIDERS)[number]).seek;
    return seek === undefined ? [] : [`(?:${seek})`];
  }).join("|"),
);
/** Per rule of `UNSCANNED` without a seek pattern (bit u for the u-th): its shortest match. */
const UNSEEKING: readonly (readonly [bit: number, min: number])[] = UNSCANNED.flatMap((i, u) => {
  const r = PROVIDERS[i] as (typeof PROVIDERS)[number];
  return r.seek === undefined ? [[1 << u, r.min] as const] : [];
});

/**
 * The rules of `UNSCANNED` (bit u for the u-th) that may match in the run, as `unscannedHeads`
 * says where `UNSCANNED_SEEK` finds something in it, and those without a seek pattern.
 */
function unscannedIn(text: string, run: string, start: number, end: number): number {
  let m = 0;
  for (const [bit, min] of UNSEEKING) if (run.length >= min) m |= bit;
  if (UNSCANNED_SEEK.test(run)) m |= unscannedHeads(text, start, end);
  return m;
}

/** Whether the run holds one of a rule's literals as its pattern spells them (the scan found them case-folded: `sk` in `task`). */
function holdsOne(run: string, literals: readonly string[]): boolean {
  for (const l of literals) if (run.includes(l)) return true;
  return false;
}

/**
 * A rule's literals grouped by their first two characters (`head`): one search for the head
 * finds where any literal of the group may start (GitLab's eleven `gl…-` prefixes are one
 * search, not eleven). A group of one literal searches for the literal itself (`rest` empty).
 */
interface LiteralGroup {
  head: string;
  rest: readonly string[];
}

export function groups(literals: readonly string[]): LiteralGroup[] {
  const byHead = new Map<string, string[]>();
  for (const l of literals) {
    const head = l.slice(0, 2);
    byHead.set(head, [...(byHead.get(head) ?? []), l]);
  }
  return [...byHead].map(([head, ls]) => (ls.length === 1 ? { head: ls[0] as string, rest: [] } : { head, rest: ls }));
}

/** Per rule (by index into PROVIDERS): its literals' groups. */
const GROUPS: readonly (readonly LiteralGroup[])[] = PROVIDERS.map((r) => groups(r.literals));

/** Whether one of `literals` stands at `at` in the run. */
function oneAt(run: string, literals: readonly string[], at: number): boolean {
  for (const l of literals) if (run.startsWith(l, at)) return true;
  return false;
}

/**
 * Where the first of a rule's literals (as `groups`) stands in a run, asked from positions that
 * never go back (a leading rule's pattern tried at each literal in turn): each group's next head
 * is remembered, and searched for again only once passed. Asked afresh each time, a group whose
 * head the run lacks (Yandex's `AQVN` in a run of `YC…`) was searched for to the run's end at
 * every literal of another group: 260 ms for 200 KB of `YCYC…!` before a real token.
 */
export class FirstOf {
  readonly #run: string;
  readonly #gs: readonly LiteralGroup[];
  /** Per group: -2 not searched yet; -1 no head at or after the last `from`; else a head there, not yet passed. */
  readonly #next: number[];

  constructor(run: string, gs: readonly LiteralGroup[]) {
    this.#run = run;
    this.#gs = gs;
    this.#next = gs.map(() => -2);
  }

  /** Where the first literal at or after `from` stands (-1: none); `from` at least the last call's. */
  from(from: number): number {
    const run = this.#run;
    let first = -1;
    for (let i = 0; i < this.#gs.length; i++) {
      const g = this.#gs[i] as LiteralGroup;
      let at = this.#next[i] as number;
      if (at === -1) continue;
      if (at < from) at = run.indexOf(g.head, from);
      while (at >= 0 && (first < 0 || at < first)) {
        if (g.rest.length === 0 || oneAt(run, g.rest, at)) {
          first = at;
          break;
        }
        at = run.indexOf(g.head, at + 1);
      }
      this.#next[i] = at;
    }
    return first;
  }
}

/**
 * A provider's format filled with one character (`ghp_xxxx…`, `AKIAXXXXXXXXXXXXXXXX`,
 * `glpat-XXXXXXXXXXX-XXXXXXXX`, `sntryu_aaaa…`): half or more of the first 24 letters and digits
 * after its first four are one character. An example in docs and config templates, as `***` is;
 * a random token's commonest character is a tenth of it at most. Read with a majority vote
 * (Boyer-Moore) over at most 24 characters, after a look at four in the middle: every provider
 * match is asked, and this was 2% of a pass over the corpus when it read every match.
 */
export function exampleToken(m: string): boolean {
  // First a look at the middle: a filled format has two like characters side by side among any
  // four (a separator breaks one pair at most); a random token seldom does (1 in 20), so most
  // matches are let go here.
  const mid = m.length >> 1;
  const a = m.charCodeAt(mid - 1);
  const b = m.charCodeAt(mid);
  const c2 = m.charCodeAt(mid + 1);
  if (a !== b && b !== c2 && c2 !== m.charCodeAt(mid + 2)) return false;
  let candidate = 0;
  let votes = 0;
  let n = 0;
  let i = 4;
  for (; i < m.length && n < 24; i++) {
    const c = m.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122))) continue;
    n++;
    if (votes === 0) {
      candidate = c;
      votes = 1;
    } else if (c === candidate) votes++;
    else votes--;
  }
  if (n < 8 || votes === 0) return false;
  let count = 0;
  for (let j = 4; j < i; j++) if (m.charCodeAt(j) === candidate) count++;
  return count * 2 >= n;
}

/** A JSON Web Token: header and payload both start with `{"` (`eyJ`); the signature may be missing (an unsigned token, `alg: none`). */
const JWT = /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]*)?/g;

/** The value (0-63) of a base64 digit. */
function b64(c: number): number {
  if (c >= 65 && c <= 90) return c - 65;
  if (c >= 97 && c <= 122) return c - 71;
  if (c >= 48 && c <= 57) return c + 4;
  return c === 43 ? 62 : 63;
}

/**
 * Whether a base64 run decodes to text that holds a secret (a key block, a JWT, a token).
 * Decoded text is mostly ASCII, whose bytes are under 128, so the first digit of each group of
 * four is under 32: random base64 (a key's bytes, a hash, an image, most tokens) fails that on
 * about every second group and is turned away before it is decoded. The bound is the one the
 * decoded text is judged by (more than one byte in twenty outside printable ASCII is binary).
 */
function base64HidesSecret(p: Pass, run: string): boolean {
  if (run.length > MAX_SCAN) return false;
  const whole = run.length - (run.length % 4);
  let high = 0;
  for (let i = 0; i < whole; i += 4) if (b64(run.charCodeAt(i)) >= 32) high++;
  if (high > ((whole / 4) * 3) / 20) return false;
  let text: string;
  try {
    text = atob(run.slice(0, whole));
  } catch {
    return false;
  }
  let odd = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 32 && c !== 9 && c !== 10 && c !== 13) || c > 126) odd++;
  }
  if (odd > text.length / 20) return false; // binary: a key's random bytes, a hash, an image
  return p.again(text) !== text;
}

/**
 * The runs stage: in each long run, every provider rule whose literal the run holds (in table
 * order: an earlier rule's claim hides its match from later ones), then JWTs, then base64 that
 * hides a secret.
 */
export function runs(p: Pass): void {
  const { text } = p;
  const r = p.scan.runs;
  const jwts = (p.scan.words & W.EYJ) !== 0; // asked of each run only when the text may hold one
  for (let k = 0; k < r.length; k += 2) {
    const start = r[k] as number;
    const end = r[k + 1] as number;
    const found = p.scan.runRules[k >> 1] ?? NONE;
    // Most runs are too short for base64 and the rules the scan does not look for, and hold no
    // rule's literal: nothing to look at.
    if (found === NONE && end - start < UNSCANNED_MIN && !jwts) continue;
    const run = text.slice(start, end);
    const heads = end - start >= UNSCANNED_MIN ? unscannedIn(text, run, start, end) : 0;
    const unscanned = heads !== 0 ? UNSCANNED : NONE;
    for (let f = 0, u = 0; f < found.length || u < unscanned.length; ) {
      // The rules the scan found and the ones it does not look for, merged in table order.
      const a = found[f] ?? Number.MAX_SAFE_INTEGER;
      const b = unscanned[u] ?? Number.MAX_SAFE_INTEGER;
      const i = a < b ? a : b;
      if (a < b) f++;
      else if (((heads >>> u++) & 1) === 0) continue; // none of its literals' heads in the run
      const rule = PROVIDERS[i] as (typeof PROVIDERS)[number];
      if (run.length < rule.min) continue;
      // A leading rule's first literal is where its pattern is tried first; any other rule needs one somewhere.
      const gs = GROUPS[i] as readonly LiteralGroup[];
      const literals = rule.leading ? new FirstOf(run, gs) : undefined;
      const first = literals !== undefined ? literals.from(0) : holdsOne(run, rule.literals) ? 0 : -1;
      if (first < 0 || (rule.gate !== undefined && !rule.gate(run))) continue;
      const check = PROVIDER_CHECKS[rule.id];
      if (rule.leading) {
        // Where a literal stands, after the last match: the matches a global search would find.
        const re = rule.sticky();
        for (let at = first; at >= 0; ) {
          re.lastIndex = at;
          const m = re.exec(run);
          if (m === null) {
            at = (literals as FirstOf).from(at + 1);
            continue;
          }
          if ((!check || check(m[0])) && !exampleToken(m[0])) p.claim(start + at, start + at + m[0].length, tag(rule.id));
          at = (literals as FirstOf).from(at + m[0].length);
        }
        continue;
      }
      const re = rule.re();
      re.lastIndex = 0;
      for (let m = re.exec(run); m !== null; m = re.exec(run)) {
        if (m[0].length === 0) re.lastIndex++;
        else if ((!check || check(m[0])) && !exampleToken(m[0])) p.claim(start + m.index, start + m.index + m[0].length, tag(rule.id));
      }
    }
    if (jwts && run.includes("eyJ")) {
      JWT.lastIndex = 0;
      for (let m = JWT.exec(run); m !== null; m = JWT.exec(run)) p.claim(start + m.index, start + m.index + m[0].length, tag("jwt"));
    }
    // Base64 last, and only in a run no rule claimed any of (most long runs in a text are the
    // tokens just claimed): decoding and scanning again is this stage's dearest step.
    if (run.length < 40 || !p.free(start, end)) continue;
    const b = base64Runs(text, start, end);
    for (let j = 0; j < b.length; j += 2)
      if (base64HidesSecret(p, text.slice(b[j], b[j + 1]))) p.claim(b[j] as number, b[j + 1] as number, tag("base64-secret"));
  }
}
