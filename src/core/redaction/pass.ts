/**
 * Redaction: one text being redacted (`Pass`): its scan, and the spans the rules have claimed.
 * Pure. The rules do not rewrite the text one after another: each claims the span it would
 * replace, in rule order, and a span that overlaps one already claimed is refused, as a
 * placeholder used to hide a secret from the rules after it. The text is rebuilt once, at the
 * end. Also the helpers the rules at a name share (core/redaction/named.ts, headers.ts).
 */
import { K, kindAt, nameChar, type Scan } from "./scan.js";

/**
 * One text being redacted: its scan, and the spans the rules have claimed so far (sorted,
 * never overlapping), each with what replaces it.
 */
export class Pass {
  readonly text: string;
  readonly scan: Scan;
  /** Redacts a text from the start: base64 and decoded runs are scanned again (redact.ts `redactText`). */
  readonly again: (text: string) => string;
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];
  private readonly withs: string[] = [];
  /** The name `kind` was last asked about (-1: none yet), and its kind. */
  private kindOf = -1;
  private lastKind = 0;
  /** The last line start the env-line rule tried (it tries each line once, however many names it holds). */
  lastLine = -1;
  /** The name whose value `valueStartOf` (core/redaction/named.ts) found last (-1: none yet), and where that value starts. */
  valueName = -1;
  valueStart = -1;
  /** The line `lineStart` found last: its start, and the newline that ends it (-1: none, the text's end). */
  private lineFrom = -1;
  private lineEnd = -1;

  constructor(text: string, scan: Scan, again: (text: string) => string) {
    this.text = text;
    this.scan = scan;
    this.again = again;
  }

  /**
   * The kind (`K` bits) of the i-th name of the scan. The rules at a name ask about that name
   * alone, so the last answer is remembered, and no array is made (which cost more than most
   * texts' names).
   */
  kind(i: number): number {
    if (i !== this.kindOf) {
      this.lastKind = kindAt(this.text, this.scan.names[3 * i] as number, this.scan.names[3 * i + 1] as number);
      this.kindOf = i;
    }
    return this.lastKind;
  }

  /**
   * The start of the line holding `at`. Remembered for the line found last: rules ask at every
   * name, and 200 KB of names on one line would otherwise scan back to its start from each.
   */
  lineStart(at: number): number {
    if (this.lineFrom >= 0 && at >= this.lineFrom && (this.lineEnd < 0 || at <= this.lineEnd)) return this.lineFrom;
    this.lineFrom = this.text.lastIndexOf("\n", at - 1) + 1;
    this.lineEnd = this.text.indexOf("\n", at);
    return this.lineFrom;
  }

  /** Index of the first claimed span that ends after `at`. */
  private after(at: number): number {
    let lo = 0;
    let hi = this.ends.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.ends[mid] as number) <= at) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Whether [start, end) overlaps no claimed span. */
  free(start: number, end: number): boolean {
    const i = this.after(start);
    return i === this.starts.length || (this.starts[i] as number) >= end;
  }

  /** Replace [start, end) by `by`, unless an earlier rule claimed any of it. */
  claim(start: number, end: number, by: string): boolean {
    const last = this.ends.length - 1;
    if (last < 0 || start >= (this.ends[last] as number)) {
      this.starts.push(start);
      this.ends.push(end);
      this.withs.push(by);
      return true;
    }
    const i = this.after(start);
    if (i < this.starts.length && (this.starts[i] as number) < end) return false;
    this.starts.splice(i, 0, start);
    this.ends.splice(i, 0, end);
    this.withs.splice(i, 0, by);
    return true;
  }

  /** Where the last claimed span that ends at or before `at` ends (0: none). */
  claimedUpTo(at: number): number {
    const i = this.after(at) - 1;
    return i >= 0 ? (this.ends[i] as number) : 0;
  }

  /** The text with every claimed span replaced (the same string when none was). */
  result(): string {
    if (this.starts.length === 0) return this.text;
    let out = "";
    let at = 0;
    for (let i = 0; i < this.starts.length; i++) {
      out += this.text.slice(at, this.starts[i]) + this.withs[i];
      at = this.ends[i] as number;
    }
    return out + this.text.slice(at);
  }
}

// ---------------------------------------------------------------------------------------------
// Rules at a name

/** A rule tried at the i-th name of the scan, which spans [start, end) and ends with a word of `endWords` (`W` bits). */
export type NameRule = (p: Pass, i: number, start: number, end: number, endWords: number) => boolean;

export const SECRET_OR_WEAK = K.SECRET | K.WEAK;

/**
 * The character code at i, or 0 (no character a rule looks for) outside the text. The rules look
 * one or two characters around a name or a value, often past either end: V8 answers such a read
 * with NaN, and deoptimises the function that made it (and every function it was inlined in)
 * the first time, so each rule was compiled again in the middle of the work.
 */
/** A line's start up to a declared variable's name: `  export const `, `let `, `var `. */
const DECLARES = /[ \t]*(?:export[ \t]+)?(?:const|let|var)[ \t]+/y;

/**
 * Whether the name at `start` is what its line declares (`const token = …`, `  export let pass
 * = …`). Only a line's first 128 characters are read: a name further in is not declared there,
 * and a text of long lines would otherwise be read again at every name.
 */
export function declared(p: Pass, start: number): boolean {
  const ls = p.lineStart(start);
  if (start - ls > 128) return false;
  DECLARES.lastIndex = ls;
  const m = DECLARES.exec(p.text);
  return m !== null && m.index + m[0].length === start;
}

export const charCode = (text: string, i: number): number => (i >= 0 && i < text.length ? text.charCodeAt(i) : 0);
export const isQuote = (c: number) => c === 34 || c === 39;
export const isWord = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;

/** Where the spaces and tabs from j end. */
export function spacesFrom(text: string, j: number): number {
  let k = j;
  while (charCode(text, k) === 32 || charCode(text, k) === 9) k++;
  return k;
}

/** The first character after [end) that is not a space or tab. */
export function nextSolid(text: string, end: number): number {
  return charCode(text, spacesFrom(text, end));
}

/**
 * Try a sticky pattern where a name stands: at the quote before it (`"password": …`, `\"token\"`),
 * then at the name itself (widened over a `$`, `@` or `:` sigil: `$password`, `:token =>`).
 */
export function atName(text: string, re: RegExp, start: number): RegExpExecArray | null {
  let s = start;
  const sigil = charCode(text, s - 1);
  if ((sigil === 36 || sigil === 64 || sigil === 58) && !nameChar(charCode(text, s - 2))) s--;
  if (isQuote(charCode(text, s - 1))) {
    re.lastIndex = charCode(text, s - 2) === 92 ? s - 2 : s - 1;
    const m = re.exec(text);
    if (m !== null) return m;
  }
  re.lastIndex = s;
  return re.exec(text);
}
