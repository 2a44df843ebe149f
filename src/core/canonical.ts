/**
 * Canonical JSON, hashes and ids. node:crypto is loaded on first use, not at start-up: it
 * pulls in Node's stream machinery (~5-9 ms measured), and `baton status` never needs it.
 */
import { createRequire } from "node:module";

type Crypto = typeof import("node:crypto");
let crypto: Crypto | undefined;

function nodeCrypto(): Crypto {
  crypto ??= createRequire(import.meta.url)("node:crypto") as Crypto;
  return crypto;
}

/**
 * How deep and how large user JSON may be (events, hook payloads, request bodies, CLI options).
 * JSON.parse takes any depth, but every recursive walk over the value (canonical form,
 * validation) would overflow the stack near ~4,000 levels: edges refuse such input first.
 */
export const JSON_LIMITS = Object.freeze({ depth: 64, nodes: 100_000 });

/**
 * How deep the brackets of a JSON or JSONC text nest as jsonc-parser reads them, without parsing
 * it: that parser recurses, and overflows the stack on a 20 KB file nested 10,000 deep, which a
 * repository can ship as a flow or an agent's settings. Read as it reads: a string or a line
 * comment ends at a line break too, and a closing bracket that does not match the innermost
 * open one closes nothing.
 */
export function jsonTextDepth(text: string): number {
  const open: number[] = [];
  let max = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      // a string: to its closing quote (over escapes) or the end of the line
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 92) i++;
        else if (d === 34 || d === 10 || d === 13) break;
      }
    } else if (c === 47 && text.charCodeAt(i + 1) === 47) {
      for (i += 2; i < n && text.charCodeAt(i) !== 10 && text.charCodeAt(i) !== 13; i++);
    } else if (c === 47 && text.charCodeAt(i + 1) === 42) {
      const close = text.indexOf("*/", i + 2);
      i = close < 0 ? n : close + 1;
    } else if (c === 123 || c === 91) {
      open.push(c);
      if (open.length > max) max = open.length;
    } else if ((c === 125 && open[open.length - 1] === 123) || (c === 93 && open[open.length - 1] === 91)) open.pop();
  }
  return max;
}

/** How deep an agent's settings file may nest before Baton leaves it alone: far past any real one, far short of the parser's stack. */
export const SETTINGS_TEXT_DEPTH = 1_000;

/**
 * Why a parsed JSON value is too deep or has too many values to take, or undefined when it
 * fits. Iterative, so it is itself safe on any depth.
 */
export function jsonBoundsProblem(value: unknown, limits: { depth: number; nodes: number } = JSON_LIMITS): string | undefined {
  const stack: [unknown, number][] = [[value, 1]];
  let nodes = 0;
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (++nodes > limits.nodes) return `JSON with more than ${limits.nodes} values is not accepted`;
    if (typeof v !== "object" || v === null) continue;
    if (depth > limits.depth) return `JSON nested deeper than ${limits.depth} levels is not accepted`;
    const children = Array.isArray(v) ? v : Object.values(v);
    if (children.length > limits.nodes) return `JSON with more than ${limits.nodes} values is not accepted`;
    for (const c of children) stack.push([c, depth + 1]);
  }
  return undefined;
}

/**
 * Whether `v` is JSON as it stands, what JSON.parse could have given: strings, finite numbers,
 * booleans, null, arrays and objects with Object's prototype or none, no toJSON anywhere. What
 * is not (a class instance, a URL, a boxed string, undefined) is written otherwise by
 * JSON.stringify. Past JSON_LIMITS.depth it answers false (callers check the bounds first).
 */
export function isPlainJson(v: unknown, depth = 0): boolean {
  switch (typeof v) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(v);
    case "object":
      break;
    default:
      return false;
  }
  if (v === null) return true;
  if (depth >= JSON_LIMITS.depth || typeof (v as { toJSON?: unknown }).toJSON === "function") return false;
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) return false;
    for (let i = 0; i < v.length; i++) if (!isPlainJson(v[i], depth + 1)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const k of Object.keys(v)) if (!isPlainJson((v as Record<string, unknown>)[k], depth + 1)) return false;
  return true;
}

/**
 * A deep copy of plain JSON (what JSON.parse gives; isPlainJson): equal to
 * `JSON.parse(JSON.stringify(v))`, about five times faster (a 60 KB snapshot in ~50 µs), and
 * like it, an undefined member is left out, an undefined array item becomes null and -0 becomes
 * 0. An own `__proto__` key stays an own key, as JSON.parse makes it.
 */
export function copyJson<T>(v: T): T {
  if (typeof v !== "object" || v === null) return v === 0 ? (0 as T) : v;
  if (Array.isArray(v)) {
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = v[i] === undefined ? null : copyJson(v[i]);
    return out as T;
  }
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const x = (v as Record<string, unknown>)[k];
    if (x === undefined) continue;
    if (k === "__proto__") Object.defineProperty(out, k, { value: copyJson(x), enumerable: true, writable: true, configurable: true });
    else out[k] = copyJson(x);
  }
  return out as T;
}

/** Deeper than this, canonicalJson throws rather than overflow the stack (edges check far less). */
const CANONICAL_MAX_DEPTH = 1_000;

/**
 * JSON with object keys sorted at every depth: equal values give equal text. `json`, when the
 * caller has it, is `JSON.stringify(value)`: a value whose keys are already in order (most
 * are: event data, hook payloads) is then answered with that text, one walk of the value and
 * no text built (an append hashes its body this way).
 */
export function canonicalJson(value: unknown, json?: string): string {
  if (inCanonicalOrder(value, 0)) return json ?? JSON.stringify(value) ?? "null";
  return canonicalWrite(value, 0) ?? "null";
}

/** Deeper than this the order is not checked: canonicalWrite answers (and refuses past its limit). */
const IN_ORDER_MAX_DEPTH = 64;

/**
 * Whether JSON.stringify(v) is already v's canonical text: plain objects and arrays only (no
 * toJSON, no boxed primitive, no function, no own "__proto__"), every object's keys in
 * canonicalWrite's order.
 */
function inCanonicalOrder(v: unknown, depth: number): boolean {
  // JSON.stringify writes a function's toJSON() where canonicalWrite drops the function.
  if (typeof v === "function") return false;
  if (typeof v !== "object" || v === null) return true;
  if (depth >= IN_ORDER_MAX_DEPTH) return false;
  if (Array.isArray(v)) {
    if (typeof (v as { toJSON?: unknown }).toJSON === "function") return false;
    for (let i = 0; i < v.length; i++) if (!inCanonicalOrder(v[i], depth + 1)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return false;
  const o = v as Record<string, unknown>;
  if (typeof o.toJSON === "function") return false;
  const keys = Object.keys(o);
  let n = 0; // the leading index keys keep their order; the rest must be sorted
  while (n < keys.length && isIndexKey(keys[n] as string)) n++;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    if (k === "__proto__" || (i > n && !((keys[i - 1] as string) < k))) return false;
    if (!inCanonicalOrder(o[k], depth + 1)) return false;
  }
  return true;
}

// Byte-for-byte what JSON.stringify with a key-sorting replacer produced (so stored body hashes
// still match), without allocating a sorted copy of every object. Two quirks of that replacer are
// kept on purpose: integer-like keys come first in numeric order (a sorted copy still enumerates
// them first), and an own "__proto__" key is dropped (assigning it to the copy sets its prototype).
function canonicalWrite(v: unknown, depth: number): string | undefined {
  if (v === null) return "null";
  switch (typeof v) {
    case "string":
    case "boolean":
    case "bigint": // throws, as JSON.stringify does
      return JSON.stringify(v);
    case "number":
      return Number.isFinite(v) ? String(v) : "null";
    case "object":
      break;
    default:
      return undefined; // undefined, functions, symbols: omitted
  }
  if (depth >= CANONICAL_MAX_DEPTH) throw new RangeError(`JSON nested deeper than ${CANONICAL_MAX_DEPTH} levels`);
  const o = v as Record<string, unknown> & { toJSON?: () => unknown };
  if (typeof o.toJSON === "function") return canonicalWrite(o.toJSON(), depth);
  if (Array.isArray(o)) {
    let s = "[";
    for (let i = 0; i < o.length; i++) s += `${i ? "," : ""}${canonicalWrite(o[i], depth + 1) ?? "null"}`;
    return `${s}]`;
  }
  const keys = Object.keys(o);
  let n = 0;
  while (n < keys.length && isIndexKey(keys[n] as string)) n++;
  const ordered = n === 0 ? keys.sort() : n === keys.length ? keys : [...keys.slice(0, n), ...keys.slice(n).sort()];
  let s = "{";
  let first = true;
  for (const k of ordered) {
    if (k === "__proto__") continue;
    const x = canonicalWrite(o[k], depth + 1);
    if (x === undefined) continue;
    s += `${first ? "" : ","}${JSON.stringify(k)}:${x}`;
    first = false;
  }
  return `${s}}`;
}

function isIndexKey(k: string): boolean {
  return /^(?:0|[1-9]\d{0,9})$/.test(k) && Number(k) <= 4294967294;
}

export function sha256(text: string | Uint8Array): string {
  // crypto.hash (Node ≥ 20.12) is a one-shot digest: about half the cost of createHash for short inputs.
  const c = nodeCrypto() as Crypto & { hash?: (algorithm: string, data: string | Uint8Array, encoding: "hex") => string };
  return c.hash ? c.hash("sha256", text, "hex") : c.createHash("sha256").update(text).digest("hex");
}

/** Random bytes are drawn from the CSPRNG a page at a time: one call per id cost ~6 µs. */
const POOL_BYTES = 4096;
let pool: Buffer | undefined;
let poolAt = POOL_BYTES;

/** A random lowercase hex string of `bytes` bytes. */
export function randomHex(bytes: number): string {
  if (bytes > 256) return nodeCrypto().randomBytes(bytes).toString("hex");
  if (!pool || poolAt + bytes > POOL_BYTES) {
    pool = nodeCrypto().randomBytes(POOL_BYTES);
    poolAt = 0;
  }
  const hex = pool.toString("hex", poolAt, poolAt + bytes);
  poolAt += bytes;
  return hex;
}

export function randomId(): string {
  return nodeCrypto().randomUUID();
}

/**
 * A UUID in version 7's layout (RFC 9562): 48 bits of Unix milliseconds, 12 bits of a sequence
 * that keeps one process's ids in order within a millisecond, then 62 random bits. Ids made one
 * after another sort after one another, so a unique index on them (events' `(session_id, id)`)
 * grows at its right edge: an append changes the same few pages as the one before, where a
 * random id changed a page anywhere in the index (and the next WAL checkpoint copied it).
 * Uniqueness comes from the random bits, as with `randomId`; a clock that steps back keeps the
 * last millisecond until it catches up.
 */
export const timeOrderedId: (now?: number) => string = timeOrderedIds();

/** A generator of time-ordered ids with an order of its own (timeOrderedId is the process's). */
export function timeOrderedIds(): (now?: number) => string {
  let lastMs = 0;
  let sequence = 0;
  let prefixMs = -1;
  let prefix = "";
  return (now = Date.now()) => {
    if (now > lastMs) {
      lastMs = now;
      sequence = 0;
    } else if (++sequence > 0xfff) {
      lastMs++;
      sequence = 0;
    }
    if (prefixMs !== lastMs) {
      const t = lastMs.toString(16).padStart(12, "0");
      prefix = `${t.slice(0, 8)}-${t.slice(8, 12)}-7`;
      prefixMs = lastMs;
    }
    // 62 random bits behind the variant's two (10xx): from the pool, a batch of ids draws no syscall each.
    const r = randomHex(8);
    const variant = ((Number.parseInt(r.charAt(0), 16) & 3) | 8).toString(16);
    return `${prefix}${sequence.toString(16).padStart(3, "0")}-${variant}${r.slice(1, 4)}-${r.slice(4)}`;
  };
}

/**
 * FNV-1a, 64 bits as two 32-bit lanes, over UTF-16 code units: a fast checksum that detects a
 * damaged cache entry (the snapshot). Not a security boundary: anyone who can write the
 * database can also rewrite the checksum.
 */
export function checksum(text: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0xcbf29ce4;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x0100019d);
  }
  return `fnv1a:${(h1 >>> 0).toString(16).padStart(8, "0")}${(h2 >>> 0).toString(16).padStart(8, "0")}`;
}

/** A session id, as the journal takes one: 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit. */
export const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
