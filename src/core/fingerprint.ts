/**
 * Failure fingerprints: the same failure gives the same short id, run after run, so the ledger,
 * the spiral detector and lessons can recognise it again. Pure.
 *
 * The error text is redacted first (a secret must not shape, or leak through, the id), then
 * normalised: lowercased; UUIDs, `0x…` numbers and ids mixing letters and digits (hex object
 * ids, temp-dir suffixes, hashes) become `<id>`; remaining numbers (line numbers, ports, counts,
 * durations) become `<n>`; whitespace is collapsed. The result is hashed.
 */
import { sha256 } from "./canonical.js";
import { redactText } from "./redaction/redact.js";

/** Only the start of a long error decides its fingerprint (stack traces repeat the rest). */
const MAX_FINGERPRINT_INPUT = 2048;

/** The normalised form of an error text, before hashing (shown by tests and for debugging). */
export function normaliseError(text: string): string {
  let t = text.length > MAX_FINGERPRINT_INPUT ? text.slice(0, MAX_FINGERPRINT_INPUT) : text;
  t = redactText(t).toLowerCase();
  return t
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, "<id>")
    .replace(/\b0x[0-9a-f]+\b/g, "<id>")
    .replace(/\b(?=[a-z]*\d)(?=\d*[a-z])[a-z0-9]{6,}\b/g, "<id>")
    .replace(/\d+(?:\.\d+)*/g, "<n>")
    .replace(/\s+/g, " ")
    .trim();
}

/** `fp-<16 hex>` of the normalised error text; undefined for an empty text. */
export function failureFingerprint(text: string): string | undefined {
  const n = normaliseError(text);
  return n.length === 0 ? undefined : `fp-${sha256(n).slice(0, 16)}`;
}
