/**
 * Redaction by key: whether a name (an object key, a variable, a flag, a header) says its value
 * is a secret, in any casing or separator style. Pure. Used by core/redaction/redact.ts; see there and
 * docs/redaction.md ("By key") for the rules.
 */

/**
 * A copy of `s` that holds none of the text it was cut from. In V8 a string cut from a longer one
 * (`slice`, a pattern's group) of 13 characters or more is a view that keeps the whole text
 * alive; a name or key remembered as it came would keep every large tool output it was cut from.
 * Only for what is stored: most keys are looked up, found, and never copied.
 */
export function detached(s: string): string {
  return s.length < 13 ? s : (JSON.parse(JSON.stringify(s)) as string);
}

/**
 * `judge` remembered for the last `limit` or so keys it was asked about: redaction asks about
 * the same few names (`password`, `DB_PASSWORD`, `token`) over and over, and judging one splits
 * it into words with several patterns. Keys are stored `detached` from the texts they came from.
 */
export function remembered<T>(judge: (key: string) => T, limit = 4096): (key: string) => T {
  const cache = new Map<string, T>();
  return (key) => {
    let r = cache.get(key);
    if (r === undefined) {
      r = judge(key);
      if (cache.size > limit) cache.clear();
      cache.set(detached(key), r);
    }
    return r;
  };
}

/** Split a key into lowercase words: `accessToken`, `x-api-key`, `AUTH_HEADER`, `APIKey` alike. */
export function keyWords(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0);
}

/** A word that alone makes a key secret. */
const SECRET_WORDS = new Set([
  "password",
  "passwd",
  "pwd",
  "pass",
  "passphrase",
  "sshpass",
  "passcode",
  "secret",
  "secrets",
  "token",
  "auth",
  "oauth",
  "authorization",
  "cookie",
  "cookies",
  "credential",
  "credentials",
  "creds",
  "otp",
  "totp",
  "hotp",
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
  "apikey",
  "privatekey",
  "secretkey",
  "accesskey",
  "clientsecret",
  "accesstoken",
  "refreshtoken",
  "idtoken",
  "authtoken",
  "pat",
]);

/**
 * Words naming a session: secret as a structured key or in a cookie or URL (`session=…`), but
 * not in free-text assignments, where `sessionId: "task-1"` is almost always a plain id.
 */
const SESSION_WORDS = new Set(["session", "sessionid", "sessid", "phpsessid", "jsessionid", "sid"]);

/** `<word> key` is secret for these words (`apiKey`, `private_key`, `AccountKey`, ...). */
const KEY_PREFIXES = new Set([
  "api",
  "storage",
  "admin",
  "write",
  "server",
  "service",
  "root",
  "user",
  "personal",
  "auth",
  "access",
  "management",
  "integration",
  "bot",
  "hmac",
  "cipher",
  "crypto",
  "decryption",
  "private",
  "secret",
  "access",
  "signing",
  "encryption",
  "master",
  "license",
  "account",
  "shared",
  "client",
  "app",
  "consumer",
  "subscription",
  "session",
  "webhook",
  "deploy",
  "recovery",
  "ssh",
  "gpg",
  "pgp",
]);

/** `<word> code` is secret for these (`verificationCode`, `mfa_code`, `otpCode`). */
const CODE_PREFIXES = new Set(["verification", "mfa", "otp", "sms", "security", "auth", "2fa", "twofa", "recovery", "backup", "one"]);

/**
 * A last word that makes the key describe a secret rather than hold one: `tokenType`,
 * `maxTokens`, `passwordField`, `authUrl`, `password_selector`, `secretName`.
 */
const NOT_SECRET_LAST = new Set([
  "count",
  "counts",
  "max",
  "min",
  "limit",
  "limits",
  "length",
  "len",
  "size",
  "type",
  "types",
  "kind",
  "name",
  "names",
  "url",
  "uri",
  "host",
  "hostname",
  "port",
  "source",
  "encryption",
  "algorithm",
  "arg",
  "args",
  "ms",
  "sec",
  "secs",
  "seconds",
  "minutes",
  "hours",
  "days",
  "interval",
  "delay",
  "leeway",
  "retries",
  "attempts",
  "urls",
  "endpoint",
  "path",
  "file",
  "dir",
  "env",
  "var",
  "field",
  "fields",
  "selector",
  "element",
  "label",
  "hint",
  "prompt",
  "placeholder",
  "policy",
  "method",
  "mode",
  "format",
  "enabled",
  "disabled",
  "required",
  "strength",
  "expires",
  "expiry",
  "expiration",
  "ttl",
  "timeout",
  "at",
  "usage",
  "used",
  "remaining",
  "budget",
  "location",
  "rule",
  "rules",
  "regex",
  "pattern",
  "schema",
  "version",
  "provider",
  "present",
  "set",
  "valid",
  "ok",
  "status",
  "error",
  "errors",
  "message",
  "messages",
  "string",
  "strings",
]);

/** Digest names, which end a key that holds a hash rather than the secret. */
const DIGESTS = new Set(["sha1", "sha256", "sha512", "md5"]);

export const NOT_SECRET_FIRST = new Set([
  "max",
  "min",
  "num",
  "total",
  "has",
  "is",
  "use",
  "show",
  "require",
  "requires",
  "needs",
  "no",
  "lookup",
]);

/** What is published holds no secret: `public_key`, `publicToken`, `STRIPE_PUBLISHABLE_KEY` (any word of a key of several). */
const PUBLISHED = new Set(["public", "publishable"]);

/** 0: not secret; 1: a session key (secret in structures, cookies and URLs); 2: secret everywhere. */
export type KeyClass = 0 | 1 | 2;

/**
 * Whether a key names a secret, in any casing or separator style: `password`, `passwd`, `pwd`,
 * `secret`, `token`, `apiKey`, `x-api-key`, `Authorization`, `auth`, `cookie`, `Set-Cookie`,
 * `session`, `credentials`, `private_key`, `otp`, `pin`, `client_secret`, `code_verifier`,
 * `id_token`, `accessToken`, `AUTH_HEADER`, ... Keys that describe a secret rather than hold
 * one (`tokenType`, `maxTokens`, `passwordField`, `authUrl`) are not secret; `tokens` (plural,
 * a count in model APIs) is not either.
 */
export function isSecretKey(key: string): boolean {
  return keyClass(key) > 0;
}

export const keyClass: (key: string) => KeyClass = remembered(judgeKey);

function judgeKey(key: string): KeyClass {
  // A dotted path is judged by its last segment: `spring.datasource.password`, `options.token.message`.
  const dot = key.lastIndexOf(".");
  const words = keyWords(dot >= 0 ? key.slice(dot + 1) : key);
  if (words.length === 0) return 0;
  const last = words[words.length - 1] as string;
  if (words.length > 1 && (NOT_SECRET_LAST.has(last) || NOT_SECRET_FIRST.has(words[0] as string) || words.some((w) => PUBLISHED.has(w))))
    return 0;
  // A digest of what the name holds (`pin-sha256`, HPKP's public key hash), unless that is a
  // password's: `ADMIN_PASSWORD_MD5` can be cracked.
  if (words.length > 1 && DIGESTS.has(last) && !words.some((w) => w.includes("pass") || w === "pwd" || w === "pw")) return 0;
  let session = false;
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as string;
    // `pass` names a password (`DB_PASS`, `passWord`, `DB_PASS_PROD`) but not before a word that
    // makes it a verb or a stage (`STENCIL_PASS_DEPTH_FAIL`, `passThrough`, `pass_arg`).
    if (SECRET_WORDS.has(w) && (w !== "pass" || !PASS_NOT_BEFORE.has(words[i + 1] ?? ""))) return 2;
    // `pw` ends a password's name (`pw`, `DB_PW`, `userPw`); first, it is Playwright's (`PW_TEST_REPORTER`).
    if (w === "pw" && i === words.length - 1) return 2;
    if (w.length > 5 && w.endsWith("token")) return 2; // csrftoken, xsrftoken, bearertoken
    if (w.includes("password") || w.includes("passwd") || w.includes("secret") || w.includes("credential")) return 2;
    if (w.includes("apikey") || w.includes("privatekey") || w.includes("accesskey")) return 2;
    const prev = i > 0 ? (words[i - 1] as string) : "";
    if ((w === "key" || w === "keys") && KEY_PREFIXES.has(prev)) return 2;
    if (w === "code" && CODE_PREFIXES.has(prev)) return 2;
    if (w === "verifier" && prev === "code") return 2;
    if (SESSION_WORDS.has(w)) session = true;
  }
  return session ? 1 : 0;
}

/** Words after which `pass` is not a password (`passThrough`, `STENCIL_PASS_DEPTH_FAIL`, `--pass-arg`). */
const PASS_NOT_BEFORE = new Set([
  "through",
  "thru",
  "depth",
  "fail",
  "arg",
  "args",
  "op",
  "ops",
  "count",
  "rate",
  "filter",
  "result",
  "results",
  "status",
  "threshold",
  "level",
  "id",
  "ids",
]);

/** A last word that makes a key secret when its value looks random: `RAPIDAPI_KEY`, `signing_salt`. */
const WEAK_LAST = new Set(["key", "keys", "salt", "seed", "sig", "hmac", "sid"]);

/** First words of keys that index data rather than unlock anything: `cacheKey`, `sortKey`, `idempotencyKey`. */
const DATA_KEY_FIRST = new Set([
  "cache",
  "sort",
  "primary",
  "foreign",
  "partition",
  "row",
  "item",
  "list",
  "map",
  "group",
  "idempotency",
  "dedup",
  "dedupe",
  "unique",
  "index",
  "object",
  "bucket",
  "query",
  "store",
  "route",
  "react",
  "i18n",
  "translation",
  "render",
  "hot",
  "keyboard",
  "press",
]);

export const weakSecretKey: (key: string) => boolean = remembered(judgeWeak);

function judgeWeak(key: string): boolean {
  const words = keyWords(key);
  return (
    words.length > 0 &&
    WEAK_LAST.has(words[words.length - 1] as string) &&
    keyClass(key) === 0 &&
    !NOT_SECRET_FIRST.has(words[0] as string) &&
    !DATA_KEY_FIRST.has(words[0] as string) &&
    !words.some((w) => PUBLISHED.has(w))
  );
}
