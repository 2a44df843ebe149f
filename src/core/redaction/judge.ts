/**
 * Redaction: judgements of a value once a rule has found it (is it a literal secret, a template,
 * code, a path, a word?). Pure. The rules that find values are in named.ts,
 * shapes.ts and runs.ts; docs/architecture.md ("Redaction") says how they fit.
 */
import { keyClass, keyWords, remembered, weakSecretKey } from "./keys.js";

/** Whether a key is more than one word (`API_KEY`, not `key`), remembered like every judgement of a key. */
const manyWords = remembered((key) => keyWords(key).length > 1);

export const REDACTED = "[redacted]";

/** `[redacted:<id>]`: what a secret becomes in free text. */
export const tag = (id: string): string => `[redacted:${id}]`;

/**
 * A template's slot that reads as an expression: a name (dotted, indexed, called, with a default
 * or a filter) inside `${…}`, `${{…}}` or `{{…}}`: `${DB_PASSWORD}`, `${env:-x}`, `${{ secrets.TOKEN }}`,
 * `{{ .Values.token | b64enc }}`, or one a rule's value ends inside (`${NPM_TOKEN`). A secret that merely holds `${` and `}` is none
 * (`m{{h}o)p${e]nob(ody[…}}`, detect-secrets' example of one: after the name comes a `]`).
 */
const TEMPLATE =
  /\$\{\{?\s*[\w$@.-]*\s*(?:[-:=?+(.[|*/%<>!&,'"][^{}]*)?(?:\}|$)|\{\{-?\s*[\w$@.-]*\s*(?:[-:=?+(.[|*/%<>!&,'"][^{}]*)?(?:-?\}\}|$)/;

/** A provider's prefix and x's (`ghp_xxxx…`, `AKIAXXXXXXXXXXXXXXXX`, `xoxb-xxxxxxxx-xxxxxxxx`): an example of its format. */
const X_FILLED = /^[A-Za-z0-9_.~-]{0,16}?[xX]{8,}(?:[_.~-][xX]+)*$/;

/**
 * A value that is a template or an example, not a secret: `${token}`, `{{secret}}`, `<token>`, `***`, `ghp_xxxx…`.
 * Each shape below starts with its own character, so a value is tried only against the shape its
 * first character can begin (most values are judged here, most start with a letter or a digit).
 */
export function placeholderish(v: string): boolean {
  if (v.length === 0 || ((v.includes("${") || v.includes("{{")) && TEMPLATE.test(v))) return true;
  if (v.length >= 10 && (v.includes("xxxx") || v.includes("XXXX")) && X_FILLED.test(v)) return true;
  switch (v.charCodeAt(0)) {
    case 60: // <token>, <your password>
      return /^<[^<>]*>$/.test(v);
    case 37: // printf-style %s, %(name)s
      return /^%(?:\([A-Za-z_]\w*\))?[-+ 0#]*\d*[sdifr]$/.test(v);
    case 36: // $ENV_VAR, $(command)
      return v === "$" || v.startsWith("$(") || /^\$[A-Z_][A-Z0-9_]*$/.test(v);
    case 64: // @sql_parameter
      return /^@[A-Za-z_]+$/.test(v);
    case 66: // B
    case 98: // b
    case 84: // T
    case 116: // t: Bearer <token>, basic <…>, Token <…>
      return /^(?:bearer|basic|token)[ \t]+<[^<>]*>$/i.test(v);
    case 91: // [redacted], [redacted:…]
      return v.startsWith("[redacted");
    case 42:
    case 88:
    case 120:
    case 46:
    case 0x2026:
    case 95:
    case 45: // ***, xxx, ..., ___, ---
      return /^[*x.\u2026_-]{3,}$/i.test(v); // the ellipsis as an escape: the hot bundles stay ASCII (scripts/build.mjs)
  }
  return false;
}

const KEYWORDS: ReadonlySet<string> = new Set([
  "true",
  "false",
  "null",
  "nil",
  "none",
  "undefined",
  "string",
  "number",
  "boolean",
  "object",
  "any",
  "unknown",
  "required",
  "optional",
  "str",
  "int",
  "bool",
  "bytes",
  "buffer",
  "function",
  "void",
  "never",
]);
/** The longest of KEYWORDS: a longer value is none of them, and is not lowercased to be looked up. */
const KEYWORD_MAX = Math.max(...[...KEYWORDS].map((k) => k.length));

/** A language keyword or type name (`true`, `null`, `string`), in any casing. */
export const keyword = (v: string): boolean => v.length <= KEYWORD_MAX && KEYWORDS.has(v.toLowerCase());

/**
 * An unquoted value after `key:` or `key =` that looks like a literal secret rather than code or
 * prose: it has a digit or a symbol a token would have, or is long and mixed-case. Identifiers
 * and member accesses (`opts.token`, `string`, `readToken()`) are kept.
 */
export function tokenish(v: string): boolean {
  if (v.length < 3 || keyword(v) || placeholderish(v)) return false;
  if (/^[([{/:]/.test(v) || v.includes("(") || v.includes("[")) return false; // an expression, a regex, a path
  if (/^!+[A-Za-z_$][A-Za-z_$.]*$/.test(v)) return false; // a negation (`!envAuthSet`), a YAML tag (`!Ref`); `!QAZ2wsx` is a password
  if (/^[A-Za-z_]\w*(?:::[A-Za-z_]\w*)+$/.test(v)) return false; // a Rust or C++ path: `String::from`
  // An identifier or member access (`opts.token`, `readToken`, `JwtAlgorithmMismatch`). A random
  // token of 20+ characters almost always has a digit, so a letters-only value is taken as a name.
  if (/^[A-Za-z_$][\w$]*(?:(?:\.|\?\.)[A-Za-z_$][\w$]*)*!?$/.test(v) && !/\d/.test(v)) return false; // `process.env.API_TOKEN!` too
  if (/^\d{1,3}$/.test(v) || ARCH.test(v)) return false; // small numbers (counts, flags); `libsecret-1-0:amd64` in `dpkg -l`
  return !/^0x[0-9a-f]{1,16}$/i.test(v) && !versionLike(v); // hex literals (32 hex digits and more are key material), versions
}

/** A CPU architecture's name, as package managers qualify a package with it. */
const ARCH = /^(?:amd64|arm64|i386|i686|armhf|armel|ppc64el|s390x|x86_64|aarch64|riscv64|mips64el)$/;

/**
 * An unquoted member access in code, whose first part may hold digits (a compiler's `_step22.value`,
 * `b3.pass`, `this$1$1.getToken`, `cancellation_1.CancellationToken.is`, `result.groups?.password`,
 * `process.env.API_TOKEN!`): the parts after the first have none, as a property's name seldom
 * does and a token's parts nearly always do.
 */
export const memberAccess = (v: string): boolean => /^[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][A-Za-z_$]*)+!?$/.test(v);

/**
 * A version or a version range (`1.0.12`, `^0.7.1`, `~2.x`, `>=18.0.0`, `3.0.0-beta.1`): a
 * package manifest's value under a name like `jsonwebtoken`. No part has a leading zero
 * (`12.05.1990` is a date). Under a password's name (`passwordName`) no value is excused.
 */
export const versionLike = (v: string): boolean =>
  /^(?:[~^]|[<>]=?|=)?v?(?:0|[1-9]\d{0,3})(?:\.(?:0|[1-9]\d*|[x*])){1,3}(?:-[0-9A-Za-z]+(?:[.-][0-9A-Za-z]+)*)?(?:\+[0-9A-Za-z.-]+)?$/.test(
    v,
  );

/**
 * A name a password stands under (`password`, `DB_PASS`, `pwd`): there a value may be anything,
 * so none of the shapes that excuse a value elsewhere (a version, a constant's name, a call) do.
 */
export const passwordName = (key: string): boolean => /pass|pwd/i.test(key);

/** An environment variable's or a constant's name (`LANGSMITH_API_KEY`, `TOKEN_STRING`): words of capitals joined by `_`, each starting with a letter. */
const envName = (v: string): boolean => /^[A-Z][A-Z0-9]*(?:_[A-Z][A-Z0-9]*)+$/.test(v);

/** An HTTP header's name (`X-Api-Key`, `X-Langsmith-User-Token`): what `USER_TOKEN_HEADER` holds, not the token. */
const HEADER_NAME = /^X-[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+$/i;

/** A run that looks encoded (base64 or similar) rather than an English word. */
export function looksEncoded(v: string): boolean {
  return /[0-9+/=]/.test(v) || (/[a-z]/.test(v) && /[A-Z]/.test(v.slice(1)));
}

export function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** Per ASCII character, its count in the string `entropy` is reading, and the order the characters first appeared in (scratch: entropy calls nothing). */
const COUNTS = new Int32Array(128);
const FIRST = new Uint8Array(128);

/**
 * Shannon entropy in bits per character. ASCII (nearly every value judged) is counted in a
 * table, summed in the order the characters first appear, as `entropyOf` sums its map: the same
 * number to the last bit.
 */
export function entropy(s: string): number {
  const n = s.length;
  let distinct = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128) {
      for (let k = 0; k < distinct; k++) COUNTS[FIRST[k] as number] = 0;
      return entropyOf(s);
    }
    if ((COUNTS[c] as number) === 0) FIRST[distinct++] = c;
    COUNTS[c] = (COUNTS[c] as number) + 1;
  }
  let h = 0;
  for (let k = 0; k < distinct; k++) {
    const c = FIRST[k] as number;
    const p = (COUNTS[c] as number) / n;
    h -= p * Math.log2(p);
    COUNTS[c] = 0;
  }
  return h;
}

/** Shannon entropy in bits per character, of any string (code points counted). */
function entropyOf(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

function digitCount(v: string): number {
  let n = 0;
  for (let i = 0; i < v.length; i++) if (v.charCodeAt(i) >= 48 && v.charCodeAt(i) <= 57) n++;
  return n;
}

/** A value that looks generated: long, letters and digits mixed, high entropy, token characters only. */
export function randomLooking(v: string): boolean {
  if (v.length < 16 || /^[0-9a-f-]+$/i.test(v) || !/^[A-Za-z0-9+/=_.~-]+$/.test(v) || !/\d.*\d/.test(v) || !/[A-Za-z]/.test(v))
    return false;
  if (
    /^[A-Za-z][A-Za-z0-9]*(?:[_.-][A-Za-z0-9]+)*$/.test(v) &&
    /^(?:[A-Z0-9]+|[a-z0-9]+)(?:[_.-]|$)/.test(v) &&
    !/\d{3}/.test(v) &&
    digitCount(v) < 4 && // digits scattered through it: `a1b2c3d4e5f6g7h8` is a key, not a snake_case name
    !/(?=[A-Za-z0-9]*[a-z])(?=[A-Za-z0-9]*[A-Z])(?=[A-Za-z0-9]*\d)[A-Za-z0-9]{16,}/.test(v) // a long mixed run is a token's body (`wj-8hNxmZiwWS5uv1ZQs…`)
  )
    return false; // CONSTANT_CASE, snake_case names
  return entropy(v) >= 3.3;
}

/**
 * A generated secret whose alphabet has symbols (Django's `get_random_secret_key`:
 * letters, digits and `!@#$%^&*(-_=+)`): 30 or more such characters with several symbols a
 * word, a path or a query string would not have. Such a value is cut by no rule's stop
 * characters (`&`, `(`, `)`), so the rules that stop there take it whole when this holds.
 */
export function symbolSecret(v: string): boolean {
  if (v.length < 30 || !/^[A-Za-z0-9!@#$%^&*()_=+-]+$/.test(v) || !/\d/.test(v) || !/[a-z]/i.test(v)) return false;
  let symbols = 0;
  for (let i = 0; i < v.length; i++) if ("!@#$%^*()+".includes(v[i] as string)) symbols++;
  return symbols >= 3 && entropy(v) >= 4;
}

/**
 * A value made of a symbol secret's characters (`symbolSecret`), for rules whose values stop at
 * one of them. Bounded (Django's keys are 50 characters): unbounded, every name in 200 KB of
 * `password=password=…` scanned to the end of the text.
 */
export const SYMBOL_RUN = /[A-Za-z0-9!@#$%^&*()_=+-]{30,128}(?![A-Za-z0-9!@#$%^&*()_=+-])/y;

/** Whether `key` holding `value` is a secret: a secret name, or a `…_KEY` name with a random-looking value. */
export function secretPair(key: string, value: string): boolean {
  const c = keyClass(key);
  if (c === 2) return key.length > 12 || !loneAbbreviation(key) || credentialLike(value);
  if (c !== 0 || !weakSecretKey(key)) return false;
  // Key material under `*_KEY`/`*_SALT` of several words (`KUCOIN_KEY`, `herokuKey`): hex, a UUID,
  // or letters and digits scattered (randomLooking rejects these: alone they are mostly hashes,
  // ids and names).
  if (manyWords(key) && keyMaterial(value)) return true;
  if (!randomLooking(value) && !symbolSecret(value)) return false;
  // The bare word `key` names React list keys, cache keys and map keys far more often than secrets:
  // it takes a long value that is not words joined by dashes (`user-list-item-3f7868`).
  return manyWords(key) || (value.length >= 24 && !/^(?:[A-Za-z]+[-_.]){2,}/.test(value));
}

/**
 * A value that is key material though randomLooking says no: 20 hex digits or more (a long one
 * was the only kind taken before; a 24-digit KuCoin key, a 32-digit Mailgun signing key), hex
 * in dashed groups (a UUID, as Heroku's and Snyk's API keys are; Mailgun's `…-0000-0000`), or
 * 14 or more letters and digits of one case with the digits scattered (`c5hbnfcmq5hhbfdqq`,
 * `4d78eh8tuekw3o`): six switches between letters and digits, or four where the letters are
 * not words (under a fifth vowels). A name with digits switches a few times at most and reads as
 * words (`user2profile3settings`, `utf8mb4unicodeci`, `theme2024dark`).
 */
export function keyMaterial(v: string): boolean {
  if (v.length < 14) return false;
  if (/^[0-9a-f]+$/i.test(v)) return v.length >= 32 || (v.length >= 20 && /\d/.test(v) && /[a-f]/i.test(v));
  if (/^[0-9a-f]{8,}(?:-[0-9a-f]{4,}){2,}$/i.test(v)) return /\d/.test(v) && /[a-f]/i.test(v);
  if (!/^(?:[a-z0-9]+|[A-Z0-9]+)$/.test(v)) return false;
  let switches = 0;
  let digits = 0;
  let letters = 0;
  let vowels = 0;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i) | 32;
    const digit = c >= 48 && c <= 57;
    if (digit) digits++;
    else {
      letters++;
      if (c === 97 || c === 101 || c === 105 || c === 111 || c === 117) vowels++;
    }
    if (i > 0) {
      const before = v.charCodeAt(i - 1);
      if (digit !== (before >= 48 && before <= 57)) switches++;
    }
  }
  return digits >= 2 && letters >= 4 && (switches >= 6 || (switches >= 4 && vowels * 5 < letters));
}

/**
 * `pass`, `pwd` or `pw` alone: a password in `auth: { user, pass }` and `DB_PWD`, but as often a test's
 * outcome (`pass: 'ARIA attribute is allowed'`) or the working directory (`PWD: '/home/bob'`).
 */
const loneAbbreviation = remembered((key) => {
  const words = keyWords(key);
  return words.length === 1 && (words[0] === "pass" || words[0] === "pwd" || words[0] === "pw");
});

/** What a password under `pass`, `pwd` or `pw` alone may be: one word (not a sentence, nor Chinese, Japanese or Korean text, written without spaces), not a path. */
const credentialLike = (v: string): boolean => !/[\s\u3000-\u9fff\uac00-\ud7af\uff00-\uffef]/.test(v) && !/^(?:~?\/|\.\.?\/)/.test(v);

/**
 * A quoted value under `key` that is a literal, not a template, an example or a keyword, nor
 * code's name for a secret rather than the secret: the key's own name (`password: "password"`,
 * `const API_KEY = "API_KEY"`), an environment variable's name (`"LANGSMITH_API_KEY"`), a
 * header's name (`"X-Api-Key"`), or a version range (`"jsonwebtoken": "^9.0.2"`).
 */
export function literalSecret(v: string, key?: string): boolean {
  if (v.length < 4 || placeholderish(v) || keyword(v)) return false;
  if (key === undefined || passwordName(key)) return true; // a password may be anything: `"ADMIN_PASS"`, `"12.5.1990"`
  return !versionLike(v) && !envName(v) && !HEADER_NAME.test(v) && !namesItself(key, v);
}

/** Whether `v` is `key`'s own name, or its last dotted part's, in any casing or separator style: `password: "password"`, `exports.Token = Token`. */
export function namesItself(key: string, v: string): boolean {
  if (/[!@#%^&*+=~?]/.test(v)) return false; // `Secret!`: made from the name, still a secret
  const dot = key.lastIndexOf(".");
  return sameName(v, key, 0) || (dot >= 0 && sameName(v, key, dot + 1));
}

/** Whether `a` and `b` from `from` on hold the same letters and digits, ignoring case and every other character (no string is built: most values differ at once). */
function sameName(a: string, b: string, from: number): boolean {
  let i = 0;
  let j = from;
  for (;;) {
    while (i < a.length && !alnum(a.charCodeAt(i))) i++;
    while (j < b.length && !alnum(b.charCodeAt(j))) j++;
    if (i === a.length || j === b.length) return i === a.length && j === b.length;
    if ((a.charCodeAt(i) | 32) !== (b.charCodeAt(j) | 32)) return false;
    i++;
    j++;
  }
}

/** [A-Za-z0-9] */
export const alnum = (c: number): boolean => (c >= 48 && c <= 57) || ((c | 32) >= 97 && (c | 32) <= 122);

/**
 * A word in prose that looks made up rather than written: letters and digits mixed (`hunter2-xyz9`),
 * not a path, URL, version, number, or identifier. A random token that merely starts like a
 * path or a version (`/rSBb0c…`, `v7HaIR94…`) still counts.
 */
export function madeUp(v: string): boolean {
  if (v.length < 6 || placeholderish(v) || !/\d/.test(v) || !/[A-Za-z]/.test(v)) return false;
  if (v.startsWith("[redacted") || v.startsWith("sha256:")) return false;
  if (/^[a-z]+(?:[A-Z][a-z0-9]+){3,}$/.test(v)) return false; // a camelCase identifier of four words or more: `addInt32PrefixedString` (`iLove2Code` is a password)
  if (v.startsWith("(") || /[\w$]\(/.test(v) || /:\d+:\d+\)?$/.test(v)) return false; // a call (`jsTokens$1(text`), a stack frame's location: `(/app/src/jwt.ts:42:11)`
  if (/:\/\/|^\d+(?:\.\d+)+|^v\d+(?:\.\d+)*(?:[-+][\w.-]*)?[.,;:]?$|^\d+(?:ms|s|m|h|d|kb|mb|gb|px|%)$/i.test(v)) return false;
  // A Debian version with an epoch (`1:4.13+dfsg1-1+deb12u1`), a source file's line (`auth.ts:42`).
  if (
    /^\d+:\d+(?:\.\d+)+(?:[+~][0-9A-Za-z.]+)*(?:-[0-9A-Za-z+.~]+)?$|^[\w.-]+\.(?:[cm]?[jt]sx?|py|go|rs|rb|java|kt|c|h|cc|cpp|cs|php|swift|md|json|ya?ml|toml|sh):\d+[.,;:]?$/.test(
      v,
    )
  )
    return false;
  if (/^(?:[/~]|\.\.?\/|\.[a-z][\w-]*$)/i.test(v)) return randomLooking(v.replace(/[.,;:]$/, "")); // a path, unless it is a token that starts with `/`
  return true;
}
