/**
 * Redaction's one tokenising pass, and the edits the rules make. Pure.
 *
 * `scanText` reads a text once, character by character, and notes what every rule needs to know
 * whether (and where) to look: the secret-sounding names (`DB_PASSWORD`, `apiKey`, `--token`),
 * found by one small automaton over the letters of each name; the long runs of token
 * characters, where provider formats, JWTs and base64 can be; the rule words (`mysql`,
 * `identified`, `value`, ...); and the operators and punctuation present (`=`, `://`, `--`,
 * `-p`, `</`, `("`, ...). The rules then run only where their anchor stands: at a name, in a
 * run, or on the whole text when its literal is present. Before this pass each of about 28
 * rules ran its own literal test and regex over every text (docs/architecture.md, "Redaction").
 *
 * The rules do not rewrite the text one after another: each claims the span it would replace
 * (`Pass.claim`), in rule order, and a span that overlaps one already claimed is refused, as a
 * placeholder used to hide a secret from the rules after it. The text is rebuilt once, at the end.
 *
 * Longer than the house's ~400 lines: one pass over the text; splitting it would split the loop every rule depends on.
 */
import { type Automaton, automaton, CLASS, K as CLASSES, OUT, ROW, UNKNOWN } from "./automaton.js";
import { detached, keyClass, remembered, weakSecretKey } from "./keys.js";
import { PROVIDERS } from "./providers.js";

// ---------------------------------------------------------------------------------------------
// Character classes

/**
 * Per ASCII character, one entry (`TABLE`): its class in the literal automaton (low 6 bits),
 * these flags, and its marks. One load per character, and a branch into `special` only for the
 * few characters that need one (`-`, `/`, quotes, `#`, `:`, `=`).
 */
const F_NAME = 1 << 6; // [A-Za-z0-9_.-]: a name's characters
const F_BREAK = 1 << 7; // ends a run of token characters: whitespace "'`<>\[]{},;
const F_SPECIAL = 1 << 8;
const DIGIT_SHIFT = 9;
const F_DIGIT = 1 << DIGIT_SHIFT;

/**
 * Marks: characters and short shapes a text holds (`Scan.marks`). The first 13 are single
 * characters, kept in the character table (bits 10 and up) so one load per character gives them.
 */
export const M = {
  EQ: 1 << 0, // =
  COLON: 1 << 1, // :
  AT: 1 << 2, // @
  DOLLAR: 1 << 3, // $
  PIPE: 1 << 4, // |
  GT: 1 << 5, // >
  QUOTE: 1 << 6, // ' or "
  SQUOTE: 1 << 7, // '
  BACKTICK: 1 << 8, // `
  SEMI: 1 << 9, // ;
  URL_SEP: 1 << 10, // ? & # ;
  COMMA: 1 << 11, // , or ]
  PERCENT: 1 << 12, // %
  URL: 1 << 13, // ://
  CLOSE_TAG: 1 << 14, // </
  CALL_QUOTE: 1 << 15, // (" or ('
  RAW: 1 << 16, // r" or r#
  ESCAPED_SLASH: 1 << 17, // \/
  DASH2: 1 << 18, // --
  DASH_P: 1 << 19, // -p
  DASH_U: 1 << 20, // -u
  RUN_EQ: 1 << 21, // `=` in a run of 24 or more characters
  CARD: 1 << 22, // 13 digits in a row, a space or dash at most between two: where a card number can be
  PORT: 1 << 23, // `:5432:` or `:*:` and then a character neither whitespace nor colon: a .pgpass line's port
} as const;

const CHAR_MARKS: readonly (readonly [string, number])[] = [
  ["=", M.EQ],
  [":", M.COLON],
  ["@", M.AT],
  ["$", M.DOLLAR],
  ["|", M.PIPE],
  [">", M.GT],
  ["'\"", M.QUOTE],
  ["'", M.SQUOTE],
  ["`", M.BACKTICK],
  [";", M.SEMI],
  ["?&#;", M.URL_SEP],
  [",]", M.COMMA],
  ["%", M.PERCENT],
];
const MARK_SHIFT = 10;
/** The bits of the character marks once shifted down (`M` up to PERCENT). */
const CHAR_MARKS_MASK = (1 << CHAR_MARKS.length) - 1;
/**
 * Set on a character that ends a run, is special or has a mark: the only ones the scan does more
 * than count and feed the automaton. The bit right above the marks: every entry stays a small
 * integer (V8's Smi, below 2^30), which the optimised scan would otherwise deoptimise on.
 */
const F_SLOW = 1 << (MARK_SHIFT + CHAR_MARKS.length);

/** Runs shorter than this hold no provider format (the shortest is 16 characters). */
export const MIN_RUN = 16;

/**
 * The constants the scan's inner loop spells as numbers: read from module variables, as
 * bundled code has them, they cost that loop about 9 instructions a character (measured with
 * bench/redact-instr.mjs). Checked here, at load, against what they stand for.
 */
const QUIET_LOOP = { DIGIT_SHIFT: 9, OUT: 0x1000000, F_SLOW: 0x800000, MIN_RUN: 16 };
if (QUIET_LOOP.DIGIT_SHIFT !== DIGIT_SHIFT || QUIET_LOOP.OUT !== OUT || QUIET_LOOP.F_SLOW !== F_SLOW || QUIET_LOOP.MIN_RUN !== MIN_RUN)
  throw new Error("redact-scan: the scan's inner loop spells constants that have changed; update it and QUIET_LOOP");

const TABLE = new Uint32Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  let e = CLASS[c] as number;
  if (/[A-Za-z0-9_.-]/.test(ch)) e |= F_NAME;
  else if (/[\s"'`<>\\[\]{},;]/.test(ch)) e |= F_BREAK;
  if (/[0-9]/.test(ch)) e |= F_DIGIT;
  if (/[-/"'#:=]/.test(ch)) e |= F_SPECIAL;
  for (const [chars, m] of CHAR_MARKS) if (chars.includes(ch)) e |= m << MARK_SHIFT;
  if ((e & (F_BREAK | F_SPECIAL | (CHAR_MARKS_MASK << MARK_SHIFT))) !== 0) e |= F_SLOW;
  TABLE[c] = e;
}
// What the inner loop assumes of a space and a line break (it ends a short run at either
// itself): class 0, which leads every state to the automaton's root, and neither special nor marked.
for (const c of [32, 10])
  if ((CLASS[c] as number) !== 0 || ((TABLE[c] as number) & (F_SPECIAL | (CHAR_MARKS_MASK << MARK_SHIFT))) !== 0)
    throw new Error("redact-scan: the scan's inner loop takes a space and a line break for unmarked characters of class 0; update it");

/** Whitespace beyond ASCII (what `\s` matches): these end a run too. */
function unicodeSpace(c: number): boolean {
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** What `\s` matches (and `String.prototype.trim` removes). */
export function whitespace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13) || (c >= 128 && unicodeSpace(c));
}

const isDigit = (c: number) => c >= 48 && c <= 57;

/** [A-Za-z0-9_.-] */
export function nameChar(c: number): boolean {
  return c < 128 && ((TABLE[c] as number) & F_NAME) !== 0;
}

// ---------------------------------------------------------------------------------------------
// Literals: one automaton (core/redaction/automaton.ts) for every word a rule looks for and every
// provider format's literal prefix

/** Word bits (`Scan.words`). HINT: a word one of which every secret name holds. */
export const W = {
  HINT: 1 << 0,
  BASIC: 1 << 1,
  IDENTIFIED: 1 << 2,
  VALUE: 1 << 3,
  CLIENT: 1 << 4, // mysql, mariadb, sshpass, login: commands that take `-p`
  PRIVATE: 1 << 5,
  STDIN: 1 << 6,
  NAME: 1 << 7,
  PUTTY: 1 << 8, // private-lines
  // Words a rule needs at the end of a name (`Scan.names`' third field):
  SCHEME: 1 << 9, // bearer, basic, token: `Bearer <token>`
  HEADER: 1 << 10, // authorization, cookie, api-key, auth-token: `Authorization: …`
  PASSWORD: 1 << 11, // password, pwd: `Password=…;`
  EYJ: 1 << 13, // eyj, any case: where a JWT can be (its header and payload start `eyJ`)
} as const;
/** Set on a state where a provider's literal ends (`Automaton.ids` holds which). */
const PROVIDER = 1 << 12;
/** The word bits a name keeps when the word ends it. */
const END_WORDS = W.SCHEME | W.HEADER | W.PASSWORD;

/** The words one of which every secret name contains (keyClass 2, session and weak names alike). */
const HINTS =
  "pass pwd secret token key auth cookie cred otp mfa pin cvv cvc csc ssn csrf xsrf bearer jwt signature code verifier sess sid pat salt seed sig hmac pw";

const WORDS: readonly (readonly [string, number])[] = [
  ...HINTS.split(" ").map((w) => [w, W.HINT] as const),
  ["basic", W.BASIC | W.SCHEME],
  ["bearer", W.SCHEME],
  ["token", W.SCHEME],
  ["identified", W.IDENTIFIED],
  ["value", W.VALUE],
  ["name", W.NAME],
  ["mysql", W.CLIENT],
  ["mariadb", W.CLIENT],
  ["sshpass", W.CLIENT],
  ["login", W.CLIENT],
  ["private", W.PRIVATE],
  ["private-lines", W.PUTTY],
  ["stdin", W.STDIN],
  ["sudo", W.STDIN],
  ["authorization", W.HEADER],
  ["cookie", W.HEADER],
  ["api-key", W.HEADER],
  ["auth-token", W.HEADER],
  ["password", W.PASSWORD],
  ["pwd", W.PASSWORD],
  ["eyj", W.EYJ],
];

/** Words that make the name holding them worth a rule's look (`Scan.names`). */
const NAME_WORDS = W.HINT | W.BASIC;

/**
 * The automaton of the words and the provider rules' literals, built by the first scan: a process
 * that never redacts (`baton status`) does not pay for it (~2 ms).
 */
let AC: Automaton | undefined;
function wordAutomaton(): Automaton {
  AC ??= automaton([
    ...WORDS.map(([text, bits]) => ({ text, bits, id: -1 })),
    ...PROVIDERS.flatMap((r, id) => (r.scanned ? r.hints.map((text) => ({ text, bits: PROVIDER, id })) : [])),
  ]);
  return AC;
}

// ---------------------------------------------------------------------------------------------
// The scan

export interface Scan {
  /** `M` bits. */
  marks: number;
  /** `W` bits. */
  words: number;
  /**
   * Names holding a hint word, as triples: [start, end) (leading `-` and `.` left out: `--token`
   * → `token`), and the `W` bits of the word that ends the name (SCHEME, HEADER, PASSWORD) or 0.
   */
  names: number[];
  /** Runs of 16 or more token characters (none of whitespace "'`<>\[]{},;), as [start, end) pairs. */
  runs: number[];
  /** Per run: the provider rules (indexes into PROVIDERS, ascending) whose literal it holds; undefined when none. */
  runRules: (number[] | undefined)[];
  colons: number;
  /** Where the last `=` stood (-1: none yet). */
  lastEq: number;
}

export function scanText(text: string): Scan {
  const n = text.length;
  const s: Scan = { marks: 0, words: 0, names: [], runs: [], runRules: [], colons: 0, lastEq: -1 };
  // The tables in locals: the loop reads them for every character.
  const table = TABLE;
  const ac = AC ?? wordAutomaton();
  const delta = ac.delta;
  const out = ac.rowBits;
  const resolve = ac.resolve;
  let marks = 0;
  let words = 0;
  // Digits in a row, a space or dash at most between two (a card's); `prior`: the count before
  // the current character, which a space or dash between two digits carries on.
  let chain = 0;
  let prior = 0;
  let card = false;
  let colons = 0;
  let lastEq = -1;
  let rules = false;
  let runStart = 0;
  let nameEnd = 0; // the end of the last name found
  let st = 0; // the automaton's state, as its row in `delta`
  for (let i = 0; i < n; i++) {
    let c = 0;
    let e = 0;
    let t = 0;
    // Most characters only count the digits in a row and step the automaton. This loop makes
    // no call, so the compiler keeps its tables' checks and its locals out of the way (with
    // calls in the same loop, as before, it checked them on every character); it stops at the
    // first character that needs more: outside ASCII, marked, special, ending a run (but for
    // the spaces and line breaks it handles itself, below), or reaching a state that reports a
    // word or is not filled in yet. Its constants are spelt as numbers (`QUIET_LOOP`).
    for (; i < n; i++) {
      c = text.charCodeAt(i);
      if (c >= 128) break;
      e = table[c] as number;
      prior = chain;
      chain = (chain + 1) * ((e >>> 9) & 1); // DIGIT_SHIFT: a digit adds one, anything else ends the chain
      if (chain === 13) card = true;
      t = delta[st + (e & 63)] as number;
      if (t >= 0x1000000 || (e & 0x800000) !== 0) {
        // A space or line break after a short run that holds no provider's literal, and after
        // no digit (no card's digits go on past it): the run ends with nothing to note, and the
        // automaton is back at its root (both are class 0, and neither is marked or special:
        // checked at load), so the loop goes on.
        if ((c !== 32 && c !== 10) || prior !== 0 || rules || i - runStart >= 16) break; // MIN_RUN
        runStart = i + 1;
      }
      st = t;
    }
    if (i >= n) break;
    if (c >= 128) {
      st = 0;
      chain = 0;
      if (!unicodeSpace(c)) continue;
    } else {
      // A space or dash between two digits: the chain goes on.
      if (prior !== 0 && (c === 32 || c === 45) && i + 1 < n && isDigit(text.charCodeAt(i + 1))) chain = prior;
      if (t === UNKNOWN) t = resolve(st, e & 63);
      st = t & ROW;
      if (t >= OUT) {
        const o = out[st] as number;
        words |= o;
        // A hint word: the name around it (found once per name; the letters are part of one).
        if ((o & NAME_WORDS) !== 0 && i >= nameEnd) nameEnd = pushName(text, s.names, i);
        if ((o & END_WORDS) !== 0 && i === nameEnd - 1) s.names[s.names.length - 1] = o & END_WORDS;
        if ((o & PROVIDER) !== 0) rules = addRules(st / CLASSES);
      }
      if ((e & F_SLOW) === 0) continue;
      marks |= (e >>> MARK_SHIFT) & CHAR_MARKS_MASK;
      if ((e & F_SPECIAL) !== 0) {
        if (c === 58) {
          colons++;
          if ((marks & M.PORT) === 0 && portAt(text, i)) marks |= M.PORT;
        } else if (c === 61) lastEq = i;
        else marks |= special(text, i, c);
      }
      if ((e & F_BREAK) === 0) continue;
    }
    // A break: the run before it ends.
    if (i - runStart >= MIN_RUN) marks |= pushRun(s, runStart, i, rules, lastEq);
    else if (rules) takeRules();
    rules = false;
    runStart = i + 1;
  }
  if (n - runStart >= MIN_RUN) marks |= pushRun(s, runStart, n, rules, lastEq);
  else if (rules) takeRules();
  s.marks = card ? marks | M.CARD : marks;
  s.words = words;
  s.colons = colons;
  s.lastEq = lastEq;
  return s;
}

/**
 * Whether a .pgpass port field starts at the colon at i: 1 to 5 digits or `*`, a colon, and a
 * character that is neither whitespace nor a colon (`/:(?:\d{1,5}|\*):[^\s:]/` matched there).
 */
function portAt(text: string, i: number): boolean {
  let j = i + 1;
  if (j < text.length && text.charCodeAt(j) === 42) j++;
  else {
    while (j < text.length && j - i <= 6 && isDigit(text.charCodeAt(j))) j++;
    if (j - i < 2 || j - i > 6) return false;
  }
  if (j + 1 >= text.length || text.charCodeAt(j) !== 58) return false;
  const c = text.charCodeAt(j + 1);
  return c !== 58 && !whitespace(c);
}

/** The marks of a `-`, `/`, quote or `#` at i. */
function special(text: string, i: number, c: number): number {
  // Read inside the text only: a read past either end deoptimises the scan (V8 returns NaN there).
  const prev = i > 0 ? text.charCodeAt(i - 1) : 0;
  switch (c) {
    case 45: {
      // -
      const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
      return (prev === 45 ? M.DASH2 : 0) | (next === 112 ? M.DASH_P : next === 117 ? M.DASH_U : 0);
    }
    case 47: // /
      if (prev === 47) return i > 1 && text.charCodeAt(i - 2) === 58 ? M.URL : 0;
      return prev === 60 ? M.CLOSE_TAG : prev === 92 ? M.ESCAPED_SLASH : 0;
    case 34: // "
      return prev === 40 ? M.CALL_QUOTE : prev === 114 ? M.RAW : 0;
    case 39: // '
      return prev === 40 ? M.CALL_QUOTE : 0;
    case 35: // #
      return prev === 114 ? M.RAW : 0;
  }
  return 0;
}

function pushRun(s: Scan, start: number, end: number, rules: boolean, lastEq: number): number {
  s.runs.push(start, end);
  s.runRules.push(rules ? takeRules() : undefined);
  return lastEq >= start && end - start >= 24 ? M.RUN_EQ : 0;
}

/** The provider rules the current run holds a literal of, as a bit set (a scratch shared by every scan: the scan never runs inside itself). */
const RULE_BITS = new Uint32Array(Math.ceil(PROVIDERS.length / 32));

function addRules(state: number): true {
  for (const id of (AC as Automaton).ids[state] as number[]) RULE_BITS[id >> 5] = (RULE_BITS[id >> 5] as number) | (1 << (id & 31));
  return true;
}

/** The rules `addRules` noted, ascending; the bit set is left clear. */
function takeRules(): number[] {
  const out: number[] = [];
  for (let w = 0; w < RULE_BITS.length; w++) {
    let b = RULE_BITS[w] as number;
    if (b === 0) continue;
    RULE_BITS[w] = 0;
    for (let bit = 0; b !== 0; bit++, b >>>= 1) if ((b & 1) !== 0) out.push(w * 32 + bit);
  }
  return out;
}

/**
 * Note the name (a run of [A-Za-z0-9_.-]) around position i, leading `-` and `.` left out, with
 * no end word yet (the scan sets it when a word ends the name); its end, or i + 1 when it is
 * only dashes and dots.
 */
function pushName(text: string, names: number[], i: number): number {
  let start = i;
  while (start > 0 && nameChar(text.charCodeAt(start - 1))) start--;
  let end = i + 1;
  while (end < text.length && nameChar(text.charCodeAt(end))) end++;
  while (start < end && (text.charCodeAt(start) === 45 || text.charCodeAt(start) === 46)) start++;
  names.push(start, end, 0);
  return end;
}

// ---------------------------------------------------------------------------------------------
// Names: what a name says about its value

/** Kind bits of a name: SECRET (keyClass 2), SESSION (keyClass 1), WEAK (`…_KEY`: secret when its value looks random). */
export const K = { SECRET: 1, SESSION: 2, WEAK: 4 } as const;
const nameKind: (name: string) => number = remembered((name) => {
  const c = keyClass(name);
  return c === 2 ? K.SECRET : c === 1 ? K.SESSION : weakSecretKey(name) ? K.WEAK : 0;
});

/**
 * The names judged lately, by a hash of their characters (`kindAt`): a table of 4,096 slots,
 * each the last name whose hash fell there and its kind. A name is compared in place before its
 * kind is taken.
 */
const SLOTS = 4096;
const slotNames: (string | undefined)[] = new Array(SLOTS).fill(undefined);
const slotKinds = new Uint8Array(SLOTS);

/**
 * The kind of the name text[start, end), as `nameKind` says. Looked up by a hash of its characters
 * read in place: a name sliced out to be looked up (a new string, hashed anew: about 180 ns here)
 * cost more than the rest of what most names get; and compared a character at a time in a loop
 * the compiler inlines (`startsWith` is a call, and took a third of the names stage).
 */
export function kindAt(text: string, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  const slot = (h ^ (h >>> 12)) & (SLOTS - 1);
  const known = slotNames[slot];
  if (known !== undefined && known.length === end - start) {
    let j = 0;
    while (j < known.length && known.charCodeAt(j) === text.charCodeAt(start + j)) j++;
    if (j === known.length) return slotKinds[slot] as number;
  }
  const name = detached(text.slice(start, end)); // the slot outlives the text
  const kind = nameKind(name);
  slotNames[slot] = name;
  slotKinds[slot] = kind;
  return kind;
}
