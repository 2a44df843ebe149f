/**
 * Redaction: what may be stored of a tool call's arguments, results and error texts. Pure (it
 * hashes; nothing else), and applied before anything reaches storage or an export.
 *
 * Three layers, each documented in docs/architecture.md ("Ledger and redaction"):
 * - **by key**: a value under a secret-looking key (`password`, `accessToken`, `x-api-key`,
 *   `AUTH_HEADER`, ...) is replaced, whatever its content. Keys are split into words in any
 *   casing or separator style before they are judged (`isSecretKey`).
 * - **by value**: every string is scanned for known secret formats (cloud, source-host, chat,
 *   payment and model-provider keys, JWTs, private key blocks, passwords in connection strings,
 *   tokens in URL query strings, Authorization and Cookie lines, `SECRET=...` assignments,
 *   card numbers) and each match is replaced by `[redacted:<category>]` (`redactText`).
 * - **by shape**: large or binary-looking values (HTML/DOM, base64 bodies, data URLs, bytes)
 *   and long strings become `sha256:<16 hex>`, so equal values still compare equal; depth, key
 *   and array limits bound the rest. Browser form-fill values become `[redacted:len=N]`.
 *
 * A secret is never hashed on its own (a short password's hash could be brute-forced); only
 * long or binary content is, and long text is redacted before it is hashed.
 */
import { sha256 } from "./canonical.js";
import { isSecretKey, keyClass, keyWords, weakSecretKey } from "./redact-keys.js";
import { PROVIDER_CHECKS, PROVIDERS, providersFor } from "./redact-providers.js";

import type { JsonValue } from "./types.js";

/** The key judgement lives in redact-keys.ts; these two are part of redaction's public face. */
export { isSecretKey, keyWords };

export const REDACTED = "[redacted]";

export interface RedactLimits {
  /** Objects and arrays nested deeper than this become `[truncated:depth]`. Default 8. */
  maxDepth: number;
  /** Keys kept per object (the rest are counted under `"…"`). Default 64. */
  maxKeys: number;
  /** Items kept per array (then one `"[+N items]"` marker). Default 64. */
  maxItems: number;
  /** Strings longer than this become `sha256:<16 hex>`. Default 512. */
  maxString: number;
}

export interface RedactOptions extends Partial<RedactLimits> {
  /** The tool the value belongs to: browser form-fill tools get their typed values replaced. */
  toolName?: string;
  /**
   * `length` (default): a browser form-fill value becomes `[redacted:len=N]`. `keep`: only values
   * of fields that look sensitive (password, card, OTP, ...) are replaced.
   */
  formValues?: "length" | "keep";
}

export const DEFAULT_REDACT_LIMITS: Readonly<RedactLimits> = Object.freeze({ maxDepth: 8, maxKeys: 64, maxItems: 64, maxString: 512 });

/** Text above this many characters is hashed without being scanned first (scanning it would cost more than it saves). */
export const MAX_SCAN = 256 * 1024;

// ---------------------------------------------------------------------------------------------
// Placeholders

/** `sha256:<16 hex>` of a string or bytes: equality survives, content does not. */
export function hashPlaceholder(value: string | Uint8Array): string {
  return `sha256:${sha256(value).slice(0, 16)}`;
}

const PLACEHOLDER = /^(?:\[redacted[^\]]*\]|sha256:[0-9a-f]{16}|\[truncated[^\]]*\])$/;

/** Whether a string is one of redaction's own placeholders. */
export function isPlaceholder(s: string): boolean {
  return PLACEHOLDER.test(s);
}

const lengthPlaceholder = (v: unknown): string =>
  `[redacted:len=${typeof v === "string" ? v.length : Array.isArray(v) ? v.length : String(v ?? "").length}]`;

// ---------------------------------------------------------------------------------------------
// Values: the rule table

interface ValueRule {
  /** Category, in the placeholder: `[redacted:<id>]`. */
  id: string;
  /** Lowercase literals; the rule runs only when the lowercased text contains one. Empty: always. */
  hints: readonly string[];
  /** A second list of literals, one of which must also be present. */
  also?: readonly string[];
  re: RegExp;
  /** The replacement for one match; return the match itself to keep it. */
  replace: (m: string, ...groups: string[]) => string;
  /**
   * A sticky pattern tried only where a secret-sounding name stands (found by one scan for the
   * name words, `keyedReplace`), instead of at every position: most of a text is not a name.
   */
  keyed?: boolean;
}

const tag = (id: string) => `[redacted:${id}]`;
const whole = (id: string) => () => tag(id);

/** A value that is a template or an example, not a secret: `${token}`, `{{secret}}`, `<token>`, `***`. */
function placeholderish(v: string): boolean {
  return (
    v.length === 0 ||
    v.includes("${") ||
    v.includes("{{") ||
    /^<[^<>]*>$/.test(v) || // <token>, <your password>
    /^%(?:\([A-Za-z_]\w*\))?[-+ 0#]*\d*[sdifr]$/.test(v) || // printf-style %s, %(name)s
    /^\$[A-Z_][A-Z0-9_]*$/.test(v) || // $ENV_VAR
    v === "$" ||
    /^(?:bearer|basic|token)[ \t]+<[^<>]*>$/i.test(v) || // Bearer <token>
    v.startsWith("$(") || // $(command)
    /^@[A-Za-z_]+$/.test(v) || // @sql_parameter
    /^[*x.…_-]{3,}$/i.test(v) ||
    v.startsWith("[redacted") ||
    v === REDACTED
  );
}

const KEYWORDS = new Set([
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

/**
 * An unquoted value after `key:` or `key =` that looks like a literal secret rather than code or
 * prose: it has a digit or a symbol a token would have, or is long and mixed-case. Identifiers
 * and member accesses (`opts.token`, `string`, `readToken()`) are kept.
 */
function tokenish(v: string): boolean {
  if (v.length < 3 || KEYWORDS.has(v.toLowerCase()) || placeholderish(v)) return false;
  if (/^[([{/:]/.test(v) || v.includes("(") || v.includes("[")) return false; // an expression, a regex, a path
  if (/^[A-Za-z_]\w*(?:::[A-Za-z_]\w*)+$/.test(v)) return false; // a Rust or C++ path: `String::from`
  // An identifier or member access (`opts.token`, `readToken`, `JwtAlgorithmMismatch`). A random
  // token of 20+ characters almost always has a digit, so a letters-only value is taken as a name.
  if (/^[A-Za-z_$][\w$]*(?:(?:\.|\?\.)[A-Za-z_$][\w$]*)*$/.test(v) && !/\d/.test(v)) return false;
  if (/^\d{1,3}$/.test(v)) return false; // small numbers: counts, flags
  return true;
}

/** A run that looks encoded (base64 or similar) rather than an English word. */
function looksEncoded(v: string): boolean {
  return /[0-9+/=]/.test(v) || (/[a-z]/.test(v) && /[A-Z]/.test(v.slice(1)));
}

function luhn(digits: string): boolean {
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

function entropy(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/** A value that looks generated: long, letters and digits mixed, high entropy, token characters only. */
function randomLooking(v: string): boolean {
  if (v.length < 16 || /^[0-9a-f-]+$/i.test(v) || !/^[A-Za-z0-9+/=_.~-]+$/.test(v) || !/\d.*\d/.test(v) || !/[A-Za-z]/.test(v))
    return false;
  if (
    /^[A-Za-z][A-Za-z0-9]*(?:[_.-][A-Za-z0-9]+)*$/.test(v) &&
    /^(?:[A-Z0-9]+|[a-z0-9]+)(?:[_.-]|$)/.test(v) &&
    !/\d{3}/.test(v) &&
    !/(?=[A-Za-z0-9]*[a-z])(?=[A-Za-z0-9]*[A-Z])(?=[A-Za-z0-9]*\d)[A-Za-z0-9]{16,}/.test(v) // a long mixed run is a token's body (`wj-8hNxmZiwWS5uv1ZQs…`)
  )
    return false; // CONSTANT_CASE, snake_case names
  return entropy(v) >= 3.3;
}

/** Whether `key` holding `value` is a secret: a secret name, or a `…_KEY` name with a random-looking value. */
function secretPair(key: string, value: string): boolean {
  const c = keyClass(key);
  if (c === 2) return true;
  if (c !== 0 || !weakSecretKey(key)) return false;
  // A long hex value under `*_KEY`/`*_SALT` is a key (randomLooking rejects hex: it is mostly hashes).
  if (/^[0-9a-f]{32,}$/i.test(value) && keyWords(key).length > 1) return true;
  if (!randomLooking(value)) return false;
  // The bare word `key` names React list keys, cache keys and map keys far more often than secrets:
  // it takes a long value that is not words joined by dashes (`user-list-item-3f7868`).
  return keyWords(key).length > 1 || (value.length >= 24 && !/^(?:[A-Za-z]+[-_.]){2,}/.test(value));
}

/** A quoted value that is a literal, not a template, an example or a keyword. */
function literalSecret(v: string): boolean {
  return v.length >= 4 && !placeholderish(v) && !KEYWORDS.has(v.toLowerCase());
}

/**
 * A word in prose that looks made up rather than written: letters and digits mixed (`hunter2-xyz9`),
 * not a path, URL, version, number, or identifier.
 */
function madeUp(v: string): boolean {
  if (v.length < 6 || placeholderish(v) || !/\d/.test(v) || !/[A-Za-z]/.test(v)) return false;
  if (/^[/~.]|:\/\/|^\d+(?:\.\d+)+|^v\d|^\d+(?:ms|s|m|h|d|kb|mb|gb|px|%)$/i.test(v)) return false;
  if (v.startsWith("(") || /:\d+:\d+\)?$/.test(v)) return false; // a stack frame's location: `(/app/src/jwt.ts:42:11)`
  if (v.startsWith("[redacted") || v.startsWith("sha256:")) return false;
  return true;
}

/** Whether a base64 run decodes to text that holds a secret (a key block, a JWT, a token). */
function base64HidesSecret(run: string): boolean {
  if (run.length > MAX_SCAN) return false;
  let text: string;
  try {
    text = atob(run.length % 4 === 0 ? run : run.slice(0, run.length - (run.length % 4)));
  } catch {
    return false;
  }
  let odd = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 32 && c !== 9 && c !== 10 && c !== 13) || c > 126) odd++;
  }
  if (odd > text.length / 20) return false; // binary: a key's random bytes, a hash, an image
  return redactText(text) !== text;
}

/** Substrings one of which every secret key (lowercased) contains: a cheap test before the key rules' regexes run. */
const SECRET_KEY_PARTS: readonly string[] = [
  "pass",
  "pwd",
  "secret",
  "token",
  "auth",
  "cookie",
  "cred",
  "otp",
  "mfa",
  "pin",
  "cvv",
  "cvc",
  "csc",
  "ssn",
  "csrf",
  "xsrf",
  "bearer",
  "jwt",
  "signature",
  "key",
  "code",
  "verifier",
  "pat",
  "sid",
  "sess",
  "salt",
  "seed",
  "hash",
  "sig",
  "hmac",
  "pw",
];

/** Authorization header schemes: `Authorization: <scheme> <credentials>`. */
const AUTH_SCHEMES = new Set([
  "bearer",
  "basic",
  "digest",
  "token",
  "negotiate",
  "ntlm",
  "aws4-hmac-sha256",
  "apikey",
  "api-key",
  "key",
  "oauth",
  "hoba",
  "mutual",
  "sapisidhash",
  "splunk",
  "sso-key",
  "dpop",
]);

/** Keys whose URL query value is a credential even though the key alone is not secret-sounding. */
const URL_SECRET_KEYS = new Set([
  "key",
  "sig",
  "code",
  "access_token",
  "x-amz-signature",
  "x-amz-credential",
  "x-amz-security-token",
  "x-goog-signature",
  "x-goog-credential",
  "sv_sig",
  "hmac",
  "pw",
]);

/** A base64 run long enough to hold a secret (a kubeconfig's key data, a JWT or a credentials file encoded once). */
const BASE64_RUN = /(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{40,}={0,2}(?![A-Za-z0-9+/=])/g;
const base64Replace = (m: string): string => (base64HidesSecret(m) ? tag("base64-secret") : m);

/** Every provider rule whose literal is in the run, in order: an earlier rule's placeholder hides its match from later ones. */
function providerPass(run: string): string {
  const rules = providersFor(run.toLowerCase());
  let out = run;
  for (const i of rules) {
    const rule = PROVIDERS[i] as (typeof PROVIDERS)[number];
    const check = PROVIDER_CHECKS[rule.id];
    const re = rule.re();
    re.lastIndex = 0;
    out = out.replace(re, (m) => (check && !check(m) ? m : tag(rule.id)));
  }
  return out;
}

/**
 * The value rules, in the order they run. Earlier rules replace whole secrets with placeholders,
 * so later, more generic rules (assignments, query strings) see the placeholders and skip them.
 */
const RULES: readonly ValueRule[] = [
  {
    id: "private-key",
    hints: ["private key"],
    // A block with or without its END line (a cut or escaped block still goes).
    re: /-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----|$)/g,
    replace: whole("private-key"),
  },
  {
    id: "provider",
    hints: [],
    // Provider formats and secrets inside base64 are looked for only in runs of 16 or more token
    // characters (most of a typical text is short words), and a provider pattern only when its
    // literal is in the run (core/redact-providers.ts).
    re: /[^\s"'`<>\\[\]{},;]{16,}/g,
    replace: (run: string) => {
      const out = run.length >= 40 ? run.replace(BASE64_RUN, base64Replace) : run;
      return providerPass(out);
    },
  },
  {
    id: "jwt",
    hints: ["eyj"],
    re: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g,
    replace: whole("jwt"),
  },
  {
    id: "url-password",
    hints: ["://"],
    // The password runs to the last `@` before the host (`p@ss:w0rd` is one password).
    re: /\b([a-z][a-z0-9+.-]{1,31}:\/\/)([^\s:@/?#"'<>]{0,256}):([^\s/?#"'<>]{1,256})@/gi,
    replace: (m, scheme: string, user: string, pass: string) => (placeholderish(pass) ? m : `${scheme}${user}:${tag("password")}@`),
  },
  {
    id: "authorization",
    hints: ["authorization", "cookie", "api-key", "auth-token"],
    // Header lines, in free text, curl commands and HTTP dumps: the value runs to the line's end or a quote.
    re: /\b((?:proxy-)?authorization|(?:set-)?cookie|x-api-key|api-key|x-auth-token)([ \t]*:[ \t]*)([^\r\n"'`\\]+)/gi,
    replace: (m, name: string, sep: string, value: string) => {
      const v = value.trim();
      const lower = name.toLowerCase();
      if (lower.includes("cookie")) {
        // name=value pairs, not prose ("the cookie: a URL can end up in logs")
        return /^[^\s=;]+=/.test(v) && !placeholderish(v.slice(v.indexOf("=") + 1)) ? `${name}${sep}${tag("cookie")}` : m;
      }
      const scheme = /^([A-Za-z][\w-]*)[ \t]+(\S+)/.exec(v);
      if (scheme && AUTH_SCHEMES.has((scheme[1] as string).toLowerCase()))
        return placeholderish(scheme[2] as string) ? m : `${name}${sep}${tag("authorization")}`;
      const single = v.replace(/[;,.]$/, "");
      return !/\s/.test(single) && tokenish(single) ? `${name}${sep}${tag("authorization")}` : m;
    },
  },
  {
    id: "bearer",
    hints: ["bearer", "basic", "token "],
    re: /\b(Bearer|Basic|Token)([ \t]+)([A-Za-z0-9\-._~+/%]{12,}=*)(?![A-Za-z0-9\-._~+/=%])/gi,
    replace: (m, scheme: string, sp: string, v: string) => (looksEncoded(v) ? `${scheme}${sp}${tag(scheme.toLowerCase())}` : m),
  },
  {
    id: "conn-password",
    hints: ["password", "pwd"],
    also: [";"],
    // `Password=S3cr3t Passw0rd;` in an ADO/ODBC connection string: the value runs to the `;`.
    re: /(?<![\w-])(Password|Pwd)([ \t]*=[ \t]*)([^;\r\n"'{}=]*[^;\r\n"'{}=\s])(?=[ \t]*;)/gi,
    replace: (m, k: string, sep: string, v: string) => (placeholderish(v) ? m : `${k}${sep}${tag("password")}`),
  },
  {
    id: "url-token",
    hints: ["="],
    also: ["?", "&", "#", ";"],
    re: /([?&#;])([A-Za-z0-9_.[\]-]{1,64})=([^&#;\s"'<>`\\]+)/g,
    replace: (m, sep: string, key: string, value: string) =>
      (isSecretKey(key) || URL_SECRET_KEYS.has(key.toLowerCase())) &&
      value.length >= 3 &&
      /[A-Za-z0-9]/.test(value) &&
      !/[(){}]/.test(value) && // `;n.getToken=function(){…}` in minified code
      !placeholderish(value)
        ? `${sep}${key}=${tag("url-token")}`
        : m,
  },
  {
    id: "user-password",
    hints: ["-u", "--user"],
    // curl/wget/httpie style `-u user:password`, `--user user:password`, `--proxy-user u:p`
    re: /(?<![\w-])(-u|--user|--proxy-user|--http-password)([ \t]+|=)(["']?)([^\s:"'`]*):([^\s"'`]+)\3/g,
    replace: (m, flag: string, sep: string, q: string, user: string, pass: string) =>
      placeholderish(pass) ? m : `${flag}${sep}${q}${user}:${tag("password")}${q}`,
  },
  {
    id: "cli-flag",
    hints: ["--"],
    also: SECRET_KEY_PARTS,
    // `--token abc`, `--api-key=abc`, `--password "a b"`. `--session` is an id in most CLIs (Baton's own too), not a secret.
    re: /(?<![\w-])(--[A-Za-z][\w-]{0,63})(=|[ \t]+)("[^"\r\n]*"|'[^'\r\n]*'|[^\s"'-][^\s"']*)/g,
    replace: (m, flag: string, sep: string, value: string) => {
      if (keyClass(flag.slice(2)) < 2) return m;
      const quoted = /^["']/.test(value);
      const v = quoted ? value.slice(1, -1) : value;
      if (placeholderish(v) || KEYWORDS.has(v.toLowerCase()) || (!quoted && !tokenish(v))) return m;
      return `${flag}${sep}${tag("secret")}`;
    },
  },
  {
    id: "cli-password",
    hints: ["-p"],
    also: ["mysql", "mariadb", "sshpass", "login"],
    // `mysql -pSECRET` (glued, as the MySQL clients take it), `sshpass -p SECRET`, `docker login -p SECRET`.
    // The middle is bounded: unbounded, it rescanned to the line's end from every `login`/`mysql` (quadratic).
    re: /\b(mysql\w*|mariadb[\w-]*|sshpass|login)\b([^\r\n|;&]{0,200}?[ \t])(-p)([ \t]*)(["']?)(-?[^\s"'`-][^\s"'`]*)\5/g,
    replace: (m, cmd: string, mid: string, flag: string, sp: string, q: string, v: string) => {
      const glued = sp === "";
      if (glued !== cmd.toLowerCase().startsWith("m") || placeholderish(v)) return m;
      if (v.startsWith("-") && (v.length < 12 || !/\d/.test(v))) return m; // the next flag, not a password that starts with `-`
      return `${cmd}${mid}${flag}${sp}${q}${tag("password")}${q}`;
    },
  },
  {
    id: "sql-password",
    hints: ["identified", "password"],
    also: ["'"],
    // Not a quoted key (`'password': 'x'` in a Python dict is the assignment rule's): there the
    // first "value" would be the `': '` between key and value, and the secret would stay.
    re: /\b(IDENTIFIED[ \t]+BY|(?<!['"])PASSWORD(?!['"]))([ \t]*=?[ \t]*)'(?![ \t]*[:,])([^'\r\n]{1,256})'/gi,
    replace: (m, kw: string, sp: string, v: string) => (placeholderish(v) ? m : `${kw}${sp}'${tag("password")}'`),
  },
  {
    id: "password-hash",
    hints: ["$"],
    // htpasswd and /etc/shadow entries, bcrypt/argon2 hashes: an offline-crackable password.
    re: /(?<![\w$])\$(?:(?:apr1|1|5|6)\$[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{20,}|2[abxy]\$\d{2}\$[./A-Za-z0-9]{53}|y\$[./A-Za-z0-9]+\$[./A-Za-z0-9]+\$[./A-Za-z0-9]{20,}|argon2(?:id|i|d)\$v=\d+\$[^$\s]+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]{16,})/g,
    replace: whole("password-hash"),
  },
  {
    id: "putty-key",
    hints: ["private-lines"],
    // A PuTTY .ppk file's private part: `Private-Lines: N` and the base64 lines after it.
    re: /(Private-Lines:[ \t]*\d+[ \t]*\r?\n)(?:[A-Za-z0-9+/=]+(?:\r?\n|$))+/gi,
    replace: (_m, head: string) => `${head}${tag("private-key")}\n`,
  },
  {
    id: "pgpass",
    hints: [":"],
    // A .pgpass line: host:port:database:user:password, the whole line.
    re: /^([^\s:#]+:(?:\d{1,5}|\*):[^\s:]+:[^\s:]+:)([^\s:]{4,256})[ \t]*$/gm,
    replace: (m, head: string, v: string) => (placeholderish(v) ? m : `${head}${tag("password")}`),
  },
  {
    id: "url-user-token",
    hints: ["://"],
    // `https://<token>@github.com`: a token as the user name, no colon.
    re: /\b([a-z][a-z0-9+.-]{1,31}:\/\/)([A-Za-z0-9_-]{20,256})@/gi,
    replace: (m, scheme: string, user: string) =>
      /\d/.test(user) && /[A-Za-z]/.test(user) && entropy(user) >= 3 ? `${scheme}${tag("token")}@` : m,
  },
  {
    id: "password-stdin",
    hints: ["password-stdin"],
    // `echo pw | docker login --password-stdin`: what is echoed is the password.
    re: /\b(echo|printf)([ \t]+(?:-[ne][ \t]+|'%s(?:\\n)?'[ \t]+|"%s(?:\\n)?"[ \t]+)?)(["']?)([^\s|"'$]{1,256})\3([ \t]*\|[ \t]*[^\r\n|]{0,200}?--password-stdin)/g,
    replace: (m, cmd: string, sp: string, q: string, v: string, rest: string) =>
      placeholderish(v) ? m : `${cmd}${sp}${q}${tag("password")}${q}${rest}`,
  },
  {
    id: "yaml-block",
    hints: ["|", ">"],
    also: SECRET_KEY_PARTS,
    // `password: |` and the lines indented under it.
    re: /^([ \t]*)([A-Za-z0-9_.-]{1,64})([ \t]*:[ \t]*[|>][-+]?[ \t]*\r?\n)((?:\1[ \t]+[^\r\n]*(?:\r?\n|$))+)/gm,
    replace: (m, ind: string, key: string, head: string, body: string) =>
      keyClass(key) === 2 || secretPair(key, body.trim())
        ? `${ind}${key}${head}${ind}  ${tag("secret")}${body.endsWith("\n") ? "\n" : ""}`
        : m,
  },
  {
    id: "setter",
    hints: SECRET_KEY_PARTS,
    also: ['("', "('"],
    // `ds.setPassword("x")`, `.withPassword("x")`, `secret: String::from("x")`, `token = "x".to_string()`.
    keyed: true,
    re: /([A-Za-z0-9_][\w.-]{0,63})(\(|[ \t]*(?::=|=|:)[ \t]*[A-Za-z_][\w]*(?:::[A-Za-z_]\w*)*\()([ \t]*)(["'])((?:(?!\4)[^\r\n\\]|\\.){1,4096})\4/y,
    replace: (m, key: string, call: string, sp: string, q: string, v: string) => {
      const name = call === "(" ? key.replace(/^.*\./, "").replace(/^(?:set|with|put)(?=[A-Z_])/, "") : key;
      return secretPair(name, v) && literalSecret(v) && (call !== "(" || name !== key.replace(/^.*\./, ""))
        ? `${key}${call}${sp}${q}${tag("secret")}${q}`
        : m;
    },
  },
  {
    id: "raw-string",
    hints: SECRET_KEY_PARTS,
    also: ["`", 'r"', "r#"],
    // Go and JS backtick strings, Rust raw strings `r#"…"#`, after a secret name.
    keyed: true,
    re: /([A-Za-z0-9_][\w.-]{0,63})([ \t]*(?::=|=|:)[ \t]*)(?:`([^`\r\n]{1,4096})`|r(#*)"([^"\r\n]{1,4096})"\4)/y,
    replace: (m, key: string, sep: string, bt?: string, hashes?: string, raw?: string) => {
      const v = bt ?? raw ?? "";
      if (!secretPair(key, v) || !literalSecret(v)) return m;
      return bt !== undefined ? `${key}${sep}\`${tag("secret")}\`` : `${key}${sep}r${hashes}"${tag("secret")}"${hashes}`;
    },
  },
  {
    id: "call-pair",
    hints: SECRET_KEY_PARTS,
    also: [",", "]"],
    // setProperty("db.password", "value"), os.Setenv("API_TOKEN", "value"), ENV["TOKEN"] = "value", config["KEY"] = "value"
    re: /(["'])([A-Za-z0-9_.-]{1,64})\1([ \t]*(?:,|\][ \t]*=)[ \t]*)(["'])((?:(?!\4)[^\r\n\\]|\\.){1,4096})\4/g,
    replace: (m, q: string, key: string, mid: string, q2: string, v: string) =>
      secretPair(key, v) && literalSecret(v) && !/\s/.test(v) && tokenish(v) ? `${q}${key}${q}${mid}${q2}${tag("secret")}${q2}` : m,
  },
  {
    id: "name-value",
    hints: ["value"],
    also: SECRET_KEY_PARTS,
    // <add key="API_TOKEN" value="…"/>, `- name: API_TOKEN` / `value: …` (Kubernetes env, HAR headers)
    re: /\b(key|name)(["']?[ \t]*[=:][ \t]*)(["']?)([A-Za-z0-9_.-]{1,64})\3([ \t,]*\r?\n?[ \t]*["']?)(value)(["']?[ \t]*[=:][ \t]*)("[^"\r\n]*"|'[^'\r\n]*'|[^\s,}>/]+)/gi,
    replace: (m, k: string, s1: string, q: string, name: string, mid: string, vk: string, s2: string, v: string) => {
      const bare = v.replace(/^["']|["']$/g, "");
      if (!secretPair(name, bare) || !literalSecret(bare)) return m;
      const vq = /^["']/.test(v) ? v[0] : "";
      return `${k}${s1}${q}${name}${q}${mid}${vk}${s2}${vq}${tag("secret")}${vq}`;
    },
  },
  {
    id: "xml-element",
    hints: ["</"],
    also: SECRET_KEY_PARTS,
    re: /<([A-Za-z_][\w.:-]{0,63})>([^<>\s]{1,4096})<\/\1>/g,
    replace: (m, name: string, v: string) => (secretPair(name, v) && literalSecret(v) ? `<${name}>${tag("secret")}</${name}>` : m),
  },
  {
    id: "env-line",
    hints: ["="],
    also: SECRET_KEY_PARTS,
    // `KEY=value` on a line of its own (.env, `export`, Dockerfile ENV, Make `?=`): the value runs to
    // the end of the line, whatever characters it holds (Django keys have `()%&`).
    // Under a clearly secret CONSTANT name the value may hold spaces (`DB_PASSWORD=correct horse battery`).
    re: /^([ \t]*(?:export[ \t]+|ENV[ \t]+|set[ \t]+|-[ \t]+)?)([A-Za-z_][A-Za-z0-9_.]{0,63})([ \t]*(?:[:?+]|::)?=[ \t]*)([^\s"'`$][^\r\n]{0,4096}?)[ \t]*$/gm,
    replace: (m, lead: string, key: string, sep: string, v: string) => {
      if (/\s/.test(v) && !(keyClass(key) === 2 && /^[A-Z][A-Z0-9_]*$/.test(key) && !/[|&;<>=$`]|\s-/.test(v))) return m;
      return secretPair(key, v) && !placeholderish(v) && (tokenish(v.replace(/[;,]$/, "")) || /^[A-Z][A-Z0-9_]*$/.test(key))
        ? `${lead}${key}${sep}${tag("secret")}`
        : m;
    },
  },
  {
    id: "assignment",
    hints: SECRET_KEY_PARTS,
    // key: value, key = value, "key": "value", KEY=value (dotenv), Go `:=`, `::=`, Make `?=`, PHP
    // `.=`, `=>` (PHP and Ruby hashes), keys that start with a digit (`1password_token`); not a value
    // an operator follows (`x = "a" in o`, `t = "a" + b`, `type T = 'a' | 'b'`, `c ? "a" : "b"`).
    // Quotes may be escaped once (JSON inside a JSON string).
    // Tried only where a secret-sounding name stands (`keyed`), so `x = f(token=…)` cannot swallow
    // the pair after it.
    keyed: true,
    re: /(\\?["']|)([$:@]?[A-Za-z0-9_][A-Za-z0-9_.-]{0,63})\1([ \t]*)(::=|:=|\?=|\.=|\+=|=>|=(?![=>~])|:(?![:/]))([ \t]*)(?:"((?:[^"\\\r\n]|\\.){0,4096})"|'([^'\r\n]{0,4096})'|\\"((?:[^"\\\r\n]|\\[^"]){0,4096})\\"|([^\s"'`,;&}\])(<>\\]{1,4096}))(?![ \t]*(?:in\b|instanceof\b|[=!]==?|&&|\|\|?|\?|\+|:))/y,
    replace: (m, q: string, key: string, sp1: string, sep: string, sp2: string, dq?: string, sq?: string, edq?: string, bare?: string) => {
      const v0 = dq ?? sq ?? edq ?? bare ?? "";
      if (!secretPair(key, v0)) return m;
      const head = `${q}${key}${q}${sp1}${sep}${sp2}`;
      const literal = (v: string) => v.length >= 4 && !placeholderish(v) && !KEYWORDS.has(v.toLowerCase());
      if (dq !== undefined) return literal(dq) ? `${head}"${tag("secret")}"` : m;
      if (sq !== undefined) return literal(sq) ? `${head}'${tag("secret")}'` : m;
      if (edq !== undefined) return literal(edq) ? `${head}\\"${tag("secret")}\\"` : m;
      const v = bare ?? "";
      const dotenv = sep !== ":" && sp1 === "" && sp2 === "" && /^[A-Z][A-Z0-9_]*$/.test(key) && !placeholderish(v);
      return dotenv || tokenish(v) ? `${head}${tag("secret")}` : m;
    },
  },
  {
    id: "prose",
    hints: SECRET_KEY_PARTS,
    // "the password is hunter2-xyz9", "password hunter2" (.netrc), "Set DB_PASSWORD to …": a secret
    // name, an optional verb, then a value that looks made up (letters and digits mixed).
    keyed: true,
    re: /([A-Za-z0-9_][\w.-]{0,63})([ \t]+(?:(?:is|was|to|of|set to|now)[ \t]+)?)(["']?)([^\s"'`<>[\]]{6,256}?)\3([.,;:)!?]?)(?=\s|$)/y,
    replace: (m, key: string, sp: string, q: string, v: string, tail: string) =>
      (keyClass(key) === 2 || weakSecretKey(key)) && madeUp(v) ? `${key}${sp}${q}${tag("secret")}${q}${tail}` : m,
  },
  {
    id: "high-entropy",
    hints: ["="],
    // An environment-style assignment of a random-looking value whose name does not say "secret".
    re: /(?<![A-Za-z0-9_])([A-Z][A-Z0-9_]{2,63})=([A-Za-z0-9+/=_\-.~]{20,})(?![A-Za-z0-9+/=_\-.~])/g,
    replace: (m, key: string, v: string) => {
      if (/^[0-9a-f-]+$/i.test(v) || /^[\d.]+$/.test(v)) return m; // hex hashes, UUIDs, versions
      if (!(/[a-z]/.test(v) && /[A-Z]/.test(v) && /\d/.test(v)) || entropy(v) < 3.5) return m;
      return `${key}=${tag("high-entropy")}`;
    },
  },
  {
    id: "card",
    hints: [],
    re: /(?<![\d.])(?:\d[ -]?){12,18}\d(?![\d.])/g,
    replace: (m, ...a: string[]) => {
      const at = Number(a[0]);
      const text = a[1] as string;
      const digits = m.replace(/[ -]/g, "");
      const grouped = /[ -]/.test(m);
      if (digits.length < 13 || digits.length > 19 || !/^[3-6]/.test(digits)) return m;
      if (!grouped && digits.length !== 15 && digits.length !== 16) return m;
      // Ids, trace ids and order numbers are 15-16 digits too (one in ten passes Luhn): an
      // unseparated number is a card only with a card-ish word just before it.
      if (!grouped && !CARD_CONTEXT.test(text.slice(Math.max(0, at - 48), at))) return m;
      // Cards are printed in fours (Amex 4-6-5); other groupings are ids and numbers.
      if (grouped && !/^\d{4}([ -])\d{4}\1\d{4}\1\d{1,7}$/.test(m) && !/^\d{4}([ -])\d{6}\1\d{5}$/.test(m)) return m;
      return luhn(digits) ? tag("card") : m;
    },
  },
];

/** Words that say the number after them is a card. */
const CARD_CONTEXT = /card|\bcc|\bpan\b|visa|master|amex|discover|credit|debit|payment|billing|cvv|\bacct|account/i;

/** The value rules' ids, in the order they run (most are also the `<category>` in `[redacted:<category>]`). */
export const VALUE_RULES: readonly string[] = Object.freeze(RULES.map((r) => r.id));

/**
 * Replace every secret the value rules recognise in a piece of free text (an error message, an
 * observation, a command line). Text that contains nothing recognisable comes back unchanged
 * (the same string).
 */
export function redactText(input: string): string {
  if (input.length < 8) return input;
  // Encoded runs first: a provider pattern would otherwise take an encoded token's head and leave its tail.
  const text = ENCODED.test(input) ? decodedPass(input) : input;
  const lower = text.toLowerCase();
  let out = text;
  for (const rule of COMPILED) {
    if (!rule.hint(lower) || !rule.also(lower)) continue;
    if (rule.id === "card" && !/\d{4}/.test(out)) continue;
    if (rule.id === "assignment" && !/[:=]/.test(out)) continue;
    rule.re.lastIndex = 0;
    out = rule.keyed ? keyedReplace(out, rule) : out.replace(rule.re, rule.replace as (m: string, ...a: string[]) => string);
  }
  return out;
}

/** A percent escape or a JSON-escaped slash somewhere in a text. */
const ENCODED = /%[0-9A-Fa-f]{2}|\\\//;

/** A run that may hold a percent escape or a JSON-escaped slash (tested per run: one pattern for both would backtrack). */
const ENCODED_RUN = /[^\s"'<>`]{16,}/g;

/**
 * Secrets the rules cannot see where they stand: URL-encoded (`token%3Dghp_…`, `%22ghp_…`,
 * `id_token%3DeyJ…`) or with JSON-escaped slashes (`https:\/\/hooks.slack.com\/…`). Each such
 * run is decoded and scanned again; a run that then holds a secret is stored decoded and
 * redacted (the same text, spelled plainly), every other run is left as it was.
 */
function decodedPass(text: string): string {
  return text.replace(ENCODED_RUN, (run) => {
    if (!/%[0-9A-Fa-f]{2}|\\\//.test(run)) return run;
    let plain = run.replaceAll("\\/", "/");
    if (/%[0-9A-Fa-f]{2}/.test(plain)) {
      try {
        plain = decodeURIComponent(plain.replace(/\+/g, " "));
      } catch {
        plain = plain.replace(/%([0-9A-Fa-f]{2})/g, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
      }
    }
    if (plain === run) return run;
    const r = redactText(plain);
    return r === plain ? run : r;
  });
}

/** The words one of which every secret name contains (the name scan's literals). */
const KEY_HINT =
  /pass|pwd|secret|token|key|auth|cookie|cred|otp|mfa|pin|cvv|cvc|csc|ssn|csrf|xsrf|bearer|jwt|signature|code|verifier|sess|sid|pat|salt|seed|sig|hmac|pw/gi;

/** [A-Za-z0-9_.-] */
function nameChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 46 || c === 45;
}

/**
 * Apply a `keyed` rule: for each secret-sounding name in the text (a name word, widened to the
 * whole name), try the rule's sticky pattern at the name (or at the quote before it).
 */
function keyedReplace(text: string, rule: Pick<ValueRule, "re" | "replace">): string {
  const at = rule.re;
  let out = "";
  let last = 0;
  let from = 0;
  KEY_HINT.lastIndex = 0;
  for (let h = KEY_HINT.exec(text); h !== null; h = KEY_HINT.exec(text)) {
    let ks = h.index;
    while (ks > from && nameChar(text.charCodeAt(ks - 1))) ks--;
    while (ks < h.index && (text[ks] === "-" || text[ks] === ".")) ks++;
    let ke = h.index + h[0].length;
    while (ke < text.length && nameChar(text.charCodeAt(ke))) ke++;
    KEY_HINT.lastIndex = ke;
    from = ke;
    const name = text.slice(ks, ke);
    if (keyClass(name) !== 2 && !weakSecretKey(name)) continue;
    const sigil = text[ks - 1];
    if ((sigil === "$" || sigil === "@" || sigil === ":") && !nameChar(text.charCodeAt(ks - 2))) ks--;
    let m: RegExpExecArray | null = null;
    const q = text[ks - 1];
    if (q === '"' || q === "'") {
      at.lastIndex = text[ks - 2] === "\\" ? ks - 2 : ks - 1;
      m = at.exec(text);
    }
    if (m === null) {
      at.lastIndex = ks;
      m = at.exec(text);
    }
    if (m === null || m.index < last) continue;
    const r = rule.replace(m[0], ...(m.slice(1) as string[]));
    if (r === m[0]) continue;
    out += text.slice(last, m.index) + r;
    last = m.index + m[0].length;
    from = last;
    KEY_HINT.lastIndex = last;
  }
  return last === 0 ? text : out + text.slice(last);
}

/** A test for "the text contains one of these literals": one regex for many, `includes` for few. */
function literalTest(hints: readonly string[] | undefined): (lower: string) => boolean {
  if (!hints || hints.length === 0) return () => true;
  if (hints.length === 1) {
    const h = hints[0] as string;
    return (l) => l.includes(h);
  }
  const re = new RegExp(hints.map((h) => h.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"));
  return (l) => re.test(l);
}

const COMPILED = RULES.map((r) => ({ ...r, hint: literalTest(r.hints), also: literalTest(r.also) }));

// ---------------------------------------------------------------------------------------------
// Shapes: large, binary, HTML

/** A string that is content rather than a value: HTML/DOM, base64, a data URL, binary. */
export function isBulky(s: string): boolean {
  if (s.length < 64) return false;
  if (s.startsWith("data:") && s.slice(0, 100).includes(";base64,")) return true;
  if (s.length >= 256 && /^[A-Za-z0-9+/=_\r\n-]+$/.test(s.length > 4096 ? s.slice(0, 4096) : s)) return true; // base64 body
  if (s.length >= 256 && /^\s*<(?:!doctype|html|head|body|\?xml|!--|[a-z][a-z0-9-]*[\s>/])/i.test(s) && s.includes("</")) return true;
  let odd = 0;
  const n = Math.min(s.length, 2048);
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if ((c < 32 && c !== 9 && c !== 10 && c !== 13) || c === 0xfffd) odd++;
  }
  return odd > n / 100;
}

/** A string as it may be stored: bulky or long → `sha256:<16 hex>`, otherwise redacted. */
export function redactString(s: string, maxString = DEFAULT_REDACT_LIMITS.maxString): string {
  if (isBulky(s)) return hashPlaceholder(s);
  if (s.length > maxString) return hashPlaceholder(s.length > MAX_SCAN ? s : redactText(s));
  return redactText(s);
}

/**
 * Free text (an error, an observation) cut to `maxChars` after redaction. Very long text is
 * first cut at a whitespace boundary, which never splits a secret (none of the recognised
 * formats contains whitespace, and a private key block without its END line is still removed).
 */
export function summariseText(text: string, maxChars: number): string {
  if (isBulky(text)) return hashPlaceholder(text);
  let t = text;
  if (t.length > 64 * 1024) {
    const cut = t.slice(0, 64 * 1024);
    const ws = Math.max(cut.lastIndexOf(" "), cut.lastIndexOf("\n"), cut.lastIndexOf("\t"));
    if (ws < 60 * 1024) return hashPlaceholder(text); // one enormous token: content, not text
    t = cut.slice(0, ws);
  }
  const r = redactText(t);
  if (r.length <= maxChars && t.length === text.length) return r;
  const keep = Math.max(0, Math.min(r.length, maxChars));
  return `${r.slice(0, keep)}…[+${r.length - keep + (text.length - t.length)} chars]`;
}

// ---------------------------------------------------------------------------------------------
// Structured values: tool arguments and results

const FORM_TOOL_WORDS = new Set(["fill", "type", "typing", "input", "keyboard", "autofill", "form", "sendkeys", "settext", "setvalue"]);

/** Whether a tool types into a page: `browser_type`, `fill`, `fill_form`, `page.type`, `keyboard_type`, `enter_text`, ... */
const formToolCache = new Map<string, boolean>();

export function isFormFillTool(toolName: string): boolean {
  let r = formToolCache.get(toolName);
  if (r === undefined) {
    r = judgeFormTool(toolName);
    if (formToolCache.size > 1024) formToolCache.clear();
    formToolCache.set(toolName, r);
  }
  return r;
}

function judgeFormTool(toolName: string): boolean {
  const words = keyWords(toolName);
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as string;
    if (FORM_TOOL_WORDS.has(w)) return true;
    const next = words[i + 1];
    if ((w === "enter" || w === "insert" || w === "send" || w === "set") && (next === "text" || next === "value" || next === "keys"))
      return true;
  }
  return false;
}

/** Argument keys that carry what is typed into a field. */
const FORM_VALUE_KEYS = new Set(["value", "values", "text", "input", "keys", "content", "data"]);
/** Sibling keys that describe the field a value goes into. */
const FIELD_KEYS = [
  "selector",
  "field",
  "name",
  "label",
  "element",
  "ref",
  "placeholder",
  "id",
  "type",
  "autocomplete",
  "inputType",
  "aria-label",
  "key",
  "header",
];
const SENSITIVE_FIELD =
  /pass(?:word|wd|code|phrase)?\b|pwd|secret|token|api[-_ ]?key|credential|card|cc-?(?:num|number|csc|exp)|cvv|cvc|security[-_ ]?code|otp|one[-_ ]?time|\bpin\b|ssn|social[-_ ]security|iban|routing|account[-_ ]?number|cookie|authorization|session/i;

/**
 * Whether an object describes a sensitive field, so its `value`/`text` is replaced. In a form-fill
 * tool's arguments any describing key counts (selector, label, placeholder, autocomplete, ...);
 * elsewhere only name-value pairs (`{name: "Authorization", value: ...}`, as in HAR files) and
 * `type: "password"`.
 */
function fieldIsSensitive(o: Record<string, unknown>, formTool: boolean): boolean {
  for (const k of FIELD_KEYS) {
    const v = o[k];
    if (typeof v !== "string") continue;
    if (k === "type" && v.toLowerCase() === "password") return true;
    if ((k === "name" || k === "key" || k === "header" || k === "field") && isSecretKey(v)) return true;
    if (formTool && k !== "type" && SENSITIVE_FIELD.test(v)) return true;
  }
  return false;
}

/** A key press that names a key (`Enter`, `Control+A`, `F5`) rather than typing text. */
const NAMED_KEY = /^(?:[A-Z][A-Za-z0-9]+|F\d{1,2})(?:\+(?:[A-Z][A-Za-z0-9]*|[a-z0-9]))*$/;

const keyTextCache = new Map<string, string>();

/** An object key as it may be stored (keys repeat from call to call, so the result is cached). */
function redactKey(k: string): string {
  if (k.length < 8) return k;
  let r = keyTextCache.get(k);
  if (r === undefined) {
    r = k.length > 128 ? hashPlaceholder(k) : redactText(k);
    if (keyTextCache.size > 4096) keyTextCache.clear();
    keyTextCache.set(k, r);
  }
  return r;
}

interface WalkCtx {
  limits: RedactLimits;
  formTool: boolean;
  keepForm: boolean;
  seen: Set<object>;
}

/**
 * A JSON-safe, redacted copy of a tool's arguments or result. Never throws: cycles become
 * `[circular]`, functions and symbols are dropped, bytes are hashed, non-finite numbers are null.
 */
export function redactValue(value: unknown, opts: RedactOptions = {}): JsonValue {
  const ctx: WalkCtx = {
    limits: {
      maxDepth: opts.maxDepth ?? DEFAULT_REDACT_LIMITS.maxDepth,
      maxKeys: opts.maxKeys ?? DEFAULT_REDACT_LIMITS.maxKeys,
      maxItems: opts.maxItems ?? DEFAULT_REDACT_LIMITS.maxItems,
      maxString: opts.maxString ?? DEFAULT_REDACT_LIMITS.maxString,
    },
    formTool: opts.toolName !== undefined && isFormFillTool(opts.toolName),
    keepForm: opts.formValues === "keep",
    seen: new Set(),
  };
  return walk(value, 0, ctx);
}

function walk(v: unknown, depth: number, ctx: WalkCtx): JsonValue {
  switch (typeof v) {
    case "string":
      return redactString(v, ctx.limits.maxString);
    case "number":
      return Number.isFinite(v) ? v : null;
    case "boolean":
      return v;
    case "bigint":
      return v.toString();
    case "undefined":
    case "function":
    case "symbol":
      return null;
  }
  if (v === null) return null;
  if (v instanceof Uint8Array) return hashPlaceholder(v);
  if (v instanceof ArrayBuffer) return hashPlaceholder(new Uint8Array(v));
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString();
  const obj = v as object;
  if (depth >= ctx.limits.maxDepth) return "[truncated:depth]";
  if (ctx.seen.has(obj)) return "[circular]";
  ctx.seen.add(obj);
  try {
    if (Array.isArray(obj)) {
      const n = Math.min(obj.length, ctx.limits.maxItems);
      const out: JsonValue[] = new Array(n);
      for (let i = 0; i < n; i++) out[i] = walk(obj[i], depth + 1, ctx);
      if (obj.length > n) out.push(`[+${obj.length - n} items]`);
      return out;
    }
    const src = obj as Record<string, unknown>;
    const out: { [k: string]: JsonValue } = {};
    const keys = Object.keys(src);
    const sensitiveField = fieldIsSensitive(src, ctx.formTool);
    const n = Math.min(keys.length, ctx.limits.maxKeys);
    for (let i = 0; i < n; i++) {
      const k = keys[i] as string;
      const val = src[k];
      if (typeof val === "function" || typeof val === "symbol" || val === undefined) continue;
      const key = redactKey(k);
      if (isSecretKey(k)) out[key] = typeof val === "boolean" || val === null ? val : REDACTED;
      else if (FORM_VALUE_KEYS.has(k) && (sensitiveField || (ctx.formTool && !ctx.keepForm)) && typeof val !== "boolean" && val !== null)
        out[key] = Array.isArray(val) ? val.map(lengthPlaceholder) : lengthPlaceholder(val);
      else if (ctx.formTool && (k === "key" || k === "keys") && typeof val === "string" && !NAMED_KEY.test(val))
        out[key] = lengthPlaceholder(val);
      else out[key] = walk(val, depth + 1, ctx);
    }
    if (keys.length > n) out["…"] = `+${keys.length - n} keys`;
    return out;
  } finally {
    ctx.seen.delete(obj);
  }
}

/**
 * Structure-preserving redaction of JSON the caller already bounded (core/canonical.ts
 * `jsonBoundsProblem`): journal event data. Every string goes through `redactText` (never hashed
 * or cut: a flow's data must keep its shape), and a string under a secret name is replaced. A key
 * of a session id (`sessionId`) is not a secret name here: it names Baton's own sessions.
 */
export function redactJson(v: JsonValue): JsonValue {
  // Like redactString: text too long to scan is hashed unscanned (the caller's bounds allow more
  // than MAX_SCAN, and a hook payload is outside text).
  if (typeof v === "string") return v.length > MAX_SCAN ? hashPlaceholder(v) : redactText(v);
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) {
    let out: JsonValue[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const r = redactJson(v[i] as JsonValue);
      if (r === v[i]) continue;
      out ??= v.slice();
      out[i] = r;
    }
    return out ?? v;
  }
  let out: { [k: string]: JsonValue } | undefined;
  for (const [k, x] of Object.entries(v)) {
    const r = typeof x === "string" && keyClass(k) === 2 && x.length > 0 && !placeholderish(x) ? REDACTED : redactJson(x);
    if (r === x) continue;
    out ??= { ...v };
    out[k] = r;
  }
  return out ?? v;
}
