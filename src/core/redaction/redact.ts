/**
 * Redaction: what may be stored of a tool call's arguments, results and error texts. Pure (it
 * hashes; nothing else), and applied before anything reaches storage or an export.
 *
 * Three layers, each documented in docs/redaction.md:
 * - **by key**: a value under a secret-looking key (`password`, `accessToken`, `x-api-key`,
 *   `AUTH_HEADER`, ...) is replaced, whatever its content. Keys are split into words in any
 *   casing or separator style before they are judged (`isSecretKey`, core/redaction/keys.ts).
 * - **by value**: every string is scanned for known secret formats and shapes (provider keys,
 *   JWTs, private key blocks, passwords in URLs and command lines, headers, assignments under a
 *   secret name in any syntax, card numbers) and each match is replaced by
 *   `[redacted:<category>]` (`redactText`). One tokenising pass (core/redaction/scan.ts) finds
 *   the names, long runs and operators a text holds; the rules run only there
 *   (core/redaction/named.ts, runs.ts, shapes.ts; values judged in judge.ts;
 *   provider formats in providers.ts).
 * - **by shape**: large or binary-looking values (HTML/DOM, base64 bodies, data URLs, bytes)
 *   and long strings become `sha256:<16 hex>`, so equal values still compare equal; depth, key
 *   and array limits bound the rest. Browser form-fill values become `[redacted:len=N]`
 *   (core/redaction/value.ts).
 *
 * A secret is never hashed on its own (a short password's hash could be brute-forced); only
 * long or binary content is, and long text is redacted before it is hashed.
 *
 * This file is the public face: callers import from here, whichever file holds the code.
 */
export { REDACTED } from "./judge.js";
export { isSecretKey, keyWords } from "./keys.js";
export { MAX_SCAN, redactText, VALUE_RULES } from "./text.js";
export {
  DEFAULT_REDACT_LIMITS,
  hashPlaceholder,
  isBulky,
  isFormFillTool,
  isPlaceholder,
  type RedactLimits,
  type RedactOptions,
  redactJson,
  redactString,
  redactValue,
  summariseText,
} from "./value.js";
