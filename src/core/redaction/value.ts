/**
 * Redaction of whole values: strings by shape (large, binary, HTML → `sha256:<16 hex>`), tool
 * arguments and results by key and by value (`redactValue`), and journal event data
 * (`redactJson`). Pure (it hashes; nothing else). Free text goes through `redactText`
 * (core/redaction/text.ts); docs/architecture.md ("Redaction") describes the layers.
 */
import { sha256 } from "../canonical.js";
import type { JsonValue } from "../types.js";
import { placeholderish, REDACTED, secretPair } from "./judge.js";
import { isSecretKey, keyClass, keyWords, remembered, weakSecretKey } from "./keys.js";
import { MAX_SCAN, redactText } from "./text.js";

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
export const isFormFillTool: (toolName: string) => boolean = remembered(judgeFormTool, 1024);

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

/**
 * A `…_KEY`/`…_SALT` key (`RAPIDAPI_KEY`, `signingSalt`) whose string value looks generated: as in
 * free text (`secretPair`), such a key holds a secret only when its value looks random, since
 * `cacheKey: "user-42"` is data.
 */
function weakSecret(k: string, v: string): boolean {
  return v.length >= 16 && weakSecretKey(k) && secretPair(k, v);
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
      if (isSecretKey(k) || (typeof val === "string" && weakSecret(k, val)))
        out[key] = typeof val === "boolean" || val === null ? val : REDACTED;
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
    const r =
      typeof x === "string" && (keyClass(k) === 2 || weakSecret(k, x)) && x.length > 0 && !placeholderish(x) ? REDACTED : redactJson(x);
    if (r === x) continue;
    out ??= { ...v };
    out[k] = r;
  }
  return out ?? v;
}
