/**
 * A seeded random source and a tiny format language for the redaction corpus: the same seed always
 * gives the same corpus, so a failure can be replayed, while every body is random (a rule cannot
 * pass by memorising examples).
 *
 * Format language: literal text, with `{c:n}` or `{c:n-m}` for n (to m) characters of class `c`:
 *   a  lowercase letters and digits     A  uppercase letters and digits    n  letters and digits
 *   x  lowercase hex                    X  uppercase hex                   d  digits
 *   u  base64url (letters, digits, _ -) b  base64 (letters, digits, + /)   l  lowercase letters
 *   L  uppercase letters                k  bech32 (age keys)               p  password characters
 *   D  Django's SECRET_KEY alphabet
 * The random parts are reported separately (`parts`), so a leak check can look for them alone,
 * not for a provider's fixed prefix.
 */

export type Rng = () => number;

/** mulberry32: small, fast, good enough to shuffle a corpus. */
export function rng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const LOW = "abcdefghijklmnopqrstuvwxyz";
const UP = LOW.toUpperCase();
const DIG = "0123456789";
export const CLASSES: Record<string, string> = {
  a: LOW + DIG,
  A: UP + DIG,
  n: LOW + UP + DIG,
  x: "0123456789abcdef",
  X: "0123456789ABCDEF",
  d: DIG,
  u: `${LOW + UP + DIG}_-`,
  b: `${LOW + UP + DIG}+/`,
  l: LOW,
  L: UP,
  k: "qpzry9x8gf2tvdw0s3jn54khce6mua7l",
  p: `${LOW + UP + DIG}!#%^*-_+.`,
  D: `${LOW + DIG}!@#%^&*(-_=+)`,
};

export const int = (r: Rng, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));
export const pick = <T>(r: Rng, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;

/** `n` random characters of `alphabet`, with at least one digit and one letter when the alphabet has both (as real keys do). */
export function chars(r: Rng, alphabet: string, n: number): string {
  for (;;) {
    let s = "";
    for (let i = 0; i < n; i++) s += alphabet[Math.floor(r() * alphabet.length)];
    const mixed = /\d/.test(alphabet) && /[A-Za-z]/.test(alphabet) && n >= 8;
    if (!mixed || (/\d/.test(s) && /[A-Za-z]/.test(s))) return s;
  }
}

export interface Generated {
  value: string;
  /** The random parts (the secret material), in order. */
  parts: string[];
}

/** Expand a format (see the header) with random bodies. */
export function expand(r: Rng, format: string): Generated {
  let value = "";
  const parts: string[] = [];
  const re = /\{([a-zA-Z]):(\d+)(?:-(\d+))?\}/g;
  let last = 0;
  for (let m = re.exec(format); m; m = re.exec(format)) {
    value += format.slice(last, m.index);
    const cls = CLASSES[m[1] as string];
    if (!cls) throw new Error(`unknown class ${m[1]} in ${format}`);
    const lo = Number(m[2]);
    const n = m[3] ? int(r, lo, Number(m[3])) : lo;
    const s = chars(r, cls, n);
    value += s;
    parts.push(s);
    last = m.index + m[0].length;
  }
  value += format.slice(last);
  return { value, parts };
}

/** base64url without padding, as JWTs use. */
export const b64url = (s: string): string => Buffer.from(s).toString("base64url");
export const b64 = (s: string): string => Buffer.from(s).toString("base64");
