/**
 * Redaction rules anchored at a secret-sounding name (`DB_PASSWORD=…`, `"apiKey": "…"`,
 * `--token …`, `Authorization: …`, `setPassword("…")`, "the password is …"). Pure.
 *
 * Each rule is tried only at the names the scan found (core/redact-scan.ts), with a sticky
 * pattern that starts at the name (or at the quote, sigil, `--` or line start before it), and
 * only when the character after the name can begin its shape. Most of a text is not a name, so
 * this is where the single pass saves most: before it, each of these rules ran its own regex
 * over the whole text and judged every hint word it met.
 */

import {
  KEYWORDS,
  literalSecret,
  looksEncoded,
  madeUp,
  placeholderish,
  randomLooking,
  SYMBOL_RUN,
  secretPair,
  symbolSecret,
  tag,
  tokenish,
} from "./redact-judge.js";
import { isSecretKey, keyClass, weakSecretKey } from "./redact-keys.js";
import { K, M, nameChar, type Pass, W } from "./redact-scan.js";

/** A rule tried at the i-th name of the scan, which spans [start, end) and ends with a word of `endWords` (`W` bits). */
export type NameRule = (p: Pass, i: number, start: number, end: number, endWords: number) => boolean;

const SECRET_OR_WEAK = K.SECRET | K.WEAK;
const isQuote = (c: number) => c === 34 || c === 39;
const isWord = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;

/** The first character after [end) that is not a space or tab. */
function nextSolid(text: string, end: number): number {
  let j = end;
  while (text.charCodeAt(j) === 32 || text.charCodeAt(j) === 9) j++;
  return text.charCodeAt(j);
}

/**
 * Try a sticky pattern where a name stands: at the quote before it (`"password": …`, `\"token\"`),
 * then at the name itself (widened over a `$`, `@` or `:` sigil: `$password`, `:token =>`).
 */
function atName(text: string, re: RegExp, start: number): RegExpExecArray | null {
  let s = start;
  const sigil = text.charCodeAt(s - 1);
  if ((sigil === 36 || sigil === 64 || sigil === 58) && !nameChar(text.charCodeAt(s - 2))) s--;
  if (isQuote(text.charCodeAt(s - 1))) {
    re.lastIndex = text.charCodeAt(s - 2) === 92 ? s - 2 : s - 1;
    const m = re.exec(text);
    if (m !== null) return m;
  }
  re.lastIndex = s;
  return re.exec(text);
}

/** Where a lowercase header or scheme word ends the name [start, end) at a word boundary, or -1. */
function endsWithWord(text: string, start: number, end: number, words: readonly string[]): [number, string] | undefined {
  const lower = text.slice(start, end).toLowerCase();
  for (const w of words) {
    if (!lower.endsWith(w)) continue;
    const at = end - w.length;
    if (at === start || !isWord(text.charCodeAt(at - 1))) return [at, w];
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Headers and schemes

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

const HEADERS = ["proxy-authorization", "authorization", "set-cookie", "cookie", "x-api-key", "api-key", "x-auth-token"];
/** Header lines, in free text, curl commands and HTTP dumps: the value runs to the line's end or a quote. */
const HEADER = /((?:proxy-)?authorization|(?:set-)?cookie|x-api-key|api-key|x-auth-token)([ \t]*:[ \t]*)([^\r\n"'`\\]+)/iy;

const authorization: NameRule = (p, i, start, end, endWords) => {
  if ((endWords & W.HEADER) === 0 || nextSolid(p.text, end) !== 58 || (p.kind(i) & K.SECRET) === 0) return false;
  const at = endsWithWord(p.text, start, end, HEADERS);
  if (at === undefined) return false;
  HEADER.lastIndex = at[0];
  const m = HEADER.exec(p.text);
  if (m === null) return false;
  const [, name, sep, value] = m as unknown as [string, string, string, string];
  const v = value.trim();
  const vs = m.index + name.length + sep.length;
  const claim = (id: string) => p.claim(vs, vs + value.length, tag(id));
  // Cookies: name=value pairs, not prose ("the cookie: a URL can end up in logs")
  if (name.toLowerCase().includes("cookie")) return /^[^\s=;]+=/.test(v) && !placeholderish(v.slice(v.indexOf("=") + 1)) && claim("cookie");
  const scheme = /^([A-Za-z][\w-]*)[ \t]+(\S+)/.exec(v);
  if (scheme && AUTH_SCHEMES.has((scheme[1] as string).toLowerCase()))
    return !placeholderish(scheme[2] as string) && claim("authorization");
  const single = v.replace(/[;,.]$/, "");
  return !/\s/.test(single) && tokenish(single) && claim("authorization");
};

const SCHEMES = ["bearer", "basic", "token"];
const SCHEME = /(Bearer|Basic|Token)([ \t]+)([A-Za-z0-9\-._~+/%]{12,}=*)(?![A-Za-z0-9\-._~+/=%])/iy;

/** `Bearer <token>`, `Basic <base64>`, `Token <token>` anywhere. */
const bearer: NameRule = (p, _i, start, end, endWords) => {
  const c = p.text.charCodeAt(end);
  if ((endWords & W.SCHEME) === 0 || (c !== 32 && c !== 9)) return false;
  const at = endsWithWord(p.text, start, end, SCHEMES);
  if (at === undefined) return false;
  SCHEME.lastIndex = at[0];
  const m = SCHEME.exec(p.text);
  if (m === null) return false;
  const [, scheme, sp, v] = m as unknown as [string, string, string, string];
  if (!looksEncoded(v)) return false;
  const vs = m.index + scheme.length + sp.length;
  return p.claim(vs, vs + v.length, tag(scheme.toLowerCase()));
};

/** `Password=S3cr3t Passw0rd;` in an ADO/ODBC connection string: the value runs to the `;`. */
const CONN = /(Password|Pwd)([ \t]*=[ \t]*)([^;\r\n"'{}=]*[^;\r\n"'{}=\s])(?=[ \t]*;)/iy;

const connPassword: NameRule = (p, _i, start, end, endWords) => {
  if ((endWords & W.PASSWORD) === 0 || (p.scan.marks & M.SEMI) === 0 || nextSolid(p.text, end) !== 61) return false;
  const at = endsWithWord(p.text, start, end, ["password", "pwd"]);
  if (at === undefined || p.text.charCodeAt(at[0] - 1) === 45) return false;
  CONN.lastIndex = at[0];
  const m = CONN.exec(p.text);
  if (m === null) return false;
  const [, k, sep, v] = m as unknown as [string, string, string, string];
  if (placeholderish(v)) return false;
  const vs = m.index + k.length + sep.length;
  return p.claim(vs, vs + v.length, tag("password"));
};

// ---------------------------------------------------------------------------------------------
// URLs and command lines

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
const URL_PARAM = /([?&#;])([A-Za-z0-9_.[\]-]{1,64})=([^&#;\s"'<>`\\]+)/y;
const urlKeyChar = (c: number) => nameChar(c) || c === 91 || c === 93;

/** `?token=…`, `&sig=…`, `#access_token=…`, `;password=…`: a query or fragment parameter. */
const urlToken: NameRule = (p, _i, start) => {
  const { text } = p;
  if ((p.scan.marks & (M.EQ | M.URL_SEP)) !== (M.EQ | M.URL_SEP)) return false;
  let s = start;
  while (s > 0 && start - s < 64 && urlKeyChar(text.charCodeAt(s - 1))) s--;
  const sep = text.charCodeAt(s - 1);
  if (sep !== 63 && sep !== 38 && sep !== 35 && sep !== 59) return false;
  URL_PARAM.lastIndex = s - 1;
  const m = URL_PARAM.exec(text);
  if (m === null) return false;
  const [, , key, value] = m as unknown as [string, string, string, string];
  if (!(isSecretKey(key) || URL_SECRET_KEYS.has(key.toLowerCase()))) return false;
  if (value.length < 3 || !/[A-Za-z0-9]/.test(value) || /[(){}]/.test(value) || placeholderish(value)) return false; // `;n.getToken=function(){…}` in minified code
  const vs = s + key.length + 1;
  return p.claim(vs, vs + value.length, tag("url-token"));
};

/** `--token abc`, `--api-key=abc`, `--password "a b"`. `--session` is an id in most CLIs (Baton's own too), not a secret. */
const FLAG = /(?<![\w-])(--[A-Za-z][\w-]{0,63})(=|[ \t]+)("[^"\r\n]*"|'[^'\r\n]*'|[^\s"'-][^\s"']*)/y;

const cliFlag: NameRule = (p, i, start) => {
  const { text } = p;
  if ((p.kind(i) & K.SECRET) === 0 || text.charCodeAt(start - 1) !== 45 || text.charCodeAt(start - 2) !== 45) return false;
  FLAG.lastIndex = start - 2;
  const m = FLAG.exec(text);
  if (m === null) return false;
  const [, flag, sep, value] = m as unknown as [string, string, string, string];
  if (keyClass(flag.slice(2)) < 2) return false;
  const quoted = /^["']/.test(value);
  const v = quoted ? value.slice(1, -1) : value;
  if (placeholderish(v) || KEYWORDS.has(v.toLowerCase()) || (!quoted && !tokenish(v))) return false;
  const vs = m.index + flag.length + sep.length;
  return p.claim(vs, vs + value.length, tag("secret"));
};

// ---------------------------------------------------------------------------------------------
// Assignments

/** `password: |` and the lines indented under it. */
const YAML_BLOCK = /^([ \t]*)([A-Za-z0-9_.-]{1,64})([ \t]*:[ \t]*[|>][-+]?[ \t]*\r?\n)((?:\1[ \t]+[^\r\n]*(?:\r?\n|$))+)/my;

const yamlBlock: NameRule = (p, i, start, end) => {
  if ((p.scan.marks & (M.PIPE | M.GT)) === 0 || (p.kind(i) & SECRET_OR_WEAK) === 0 || nextSolid(p.text, end) !== 58) return false;
  YAML_BLOCK.lastIndex = p.lineStart(start);
  const m = YAML_BLOCK.exec(p.text);
  if (m === null) return false;
  const [all, ind, key, head, body] = m as unknown as [string, string, string, string, string];
  if (!(keyClass(key) === 2 || secretPair(key, body.trim()))) return false;
  const bs = m.index + ind.length + key.length + head.length;
  return p.claim(bs, m.index + all.length, `${ind}  ${tag("secret")}${body.endsWith("\n") ? "\n" : ""}`);
};

/** `ds.setPassword("x")`, `.withPassword("x")`, `secret: String::from("x")`, `token = "x".to_string()`. */
const SETTER =
  /([A-Za-z0-9_][\w.-]{0,63})(\(|[ \t]*(?::=|=|:)[ \t]*[A-Za-z_][\w]*(?:::[A-Za-z_]\w*)*\()([ \t]*)(["'])((?:(?!\4)[^\r\n\\]|\\.){1,4096})\4/y;

const setter: NameRule = (p, i, start, end) => {
  if (
    (p.scan.marks & M.CALL_QUOTE) === 0 ||
    !"(=:".includes(String.fromCharCode(nextSolid(p.text, end))) ||
    (p.kind(i) & SECRET_OR_WEAK) === 0
  )
    return false;
  const m = atName(p.text, SETTER, start);
  if (m === null) return false;
  const [, key, call, sp, , v] = m as unknown as [string, string, string, string, string, string];
  const last = key.replace(/^.*\./, "");
  const name = call === "(" ? last.replace(/^(?:set|with|put)(?=[A-Z_])/, "") : key;
  if (!secretPair(name, v) || !literalSecret(v) || (call === "(" && name === last)) return false;
  const vs = m.index + key.length + call.length + sp.length + 1;
  return p.claim(vs, vs + v.length, tag("secret"));
};

/** Go and JS backtick strings, Rust raw strings `r#"…"#`, after a secret name. */
const RAW = /([A-Za-z0-9_][\w.-]{0,63})([ \t]*(?::=|=|:)[ \t]*)(?:`([^`\r\n]{1,4096})`|r(#*)"([^"\r\n]{1,4096})"\4)/y;

const rawString: NameRule = (p, i, start) => {
  if ((p.scan.marks & (M.BACKTICK | M.RAW)) === 0 || (p.kind(i) & SECRET_OR_WEAK) === 0) return false;
  const m = atName(p.text, RAW, start);
  if (m === null) return false;
  const [, key, sep, bt, hashes, raw] = m as unknown as [string, string, string, string?, string?, string?];
  const v = bt ?? raw ?? "";
  if (!secretPair(key, v) || !literalSecret(v)) return false;
  const vs = m.index + key.length + sep.length + 1 + (bt !== undefined ? 0 : (hashes as string).length + 1);
  return p.claim(vs, vs + v.length, tag("secret"));
};

/** setProperty("db.password", "value"), os.Setenv("API_TOKEN", "value"), ENV["TOKEN"] = "value", config["KEY"] = "value" */
const CALL_PAIR = /(["'])([A-Za-z0-9_.-]{1,64})\1([ \t]*(?:,|\][ \t]*=)[ \t]*)(["'])((?:(?!\4)[^\r\n\\]|\\.){1,4096})\4/y;

const callPair: NameRule = (p, i, start, end) => {
  const { text } = p;
  if ((p.scan.marks & M.COMMA) === 0 || (p.kind(i) & SECRET_OR_WEAK) === 0) return false;
  let s = start;
  while (text.charCodeAt(s - 1) === 45 || text.charCodeAt(s - 1) === 46) s--;
  const q = text.charCodeAt(s - 1);
  if (!isQuote(q) || text.charCodeAt(end) !== q) return false;
  CALL_PAIR.lastIndex = s - 1;
  const m = CALL_PAIR.exec(text);
  if (m === null) return false;
  const [, , key, mid, , v] = m as unknown as [string, string, string, string, string, string];
  if (!secretPair(key, v) || !literalSecret(v) || /\s/.test(v) || !(tokenish(v) || randomLooking(v) || symbolSecret(v))) return false;
  const vs = m.index + key.length + 2 + mid.length + 1;
  return p.claim(vs, vs + v.length, tag("secret"));
};

/**
 * `KEY=value` on a line of its own (.env, `export`, Dockerfile ENV, Make `?=`): the value runs to
 * the end of the line, whatever characters it holds (Django keys have `()%&`). Under a clearly
 * secret CONSTANT name the value may hold spaces (`DB_PASSWORD=correct horse battery`).
 */
const ENV_LINE =
  /^([ \t]*(?:export[ \t]+|ENV[ \t]+|set[ \t]+|-[ \t]+)?)([A-Za-z_][A-Za-z0-9_.]{0,63})([ \t]*(?:[:?+]|::)?=[ \t]*)([^\s"'`$][^\r\n]{0,4096}?)[ \t]*$/my;

const ENV_OPERATOR = "=:?+";
const ENV_LEAD = new Set(["", "export", "ENV", "set", "-"]);

const envLine: NameRule = (p, i, start, end) => {
  const { text } = p;
  if ((p.kind(i) & SECRET_OR_WEAK) === 0 || !ENV_OPERATOR.includes(String.fromCharCode(nextSolid(text, end)))) return false;
  const ls = p.lineStart(start);
  if (ls === p.lastLine || !ENV_LEAD.has(text.slice(ls, start).trim())) return false; // one try per line, and only where the name leads it
  p.lastLine = ls;
  ENV_LINE.lastIndex = ls;
  const m = ENV_LINE.exec(text);
  if (m === null) return false;
  const [, lead, key, sep, v] = m as unknown as [string, string, string, string, string];
  const constant = /^[A-Z][A-Z0-9_]*$/.test(key);
  if (/\s/.test(v) && !(keyClass(key) === 2 && constant && !/[|&;<>=$`]|\s-/.test(v))) return false;
  if (!secretPair(key, v) || placeholderish(v) || !(tokenish(v.replace(/[;,]$/, "")) || constant || symbolSecret(v) || randomLooking(v)))
    return false;
  const vs = m.index + lead.length + key.length + sep.length;
  return p.claim(vs, vs + v.length, tag("secret"));
};

/**
 * key: value, key = value, "key": "value", KEY=value (dotenv), Go `:=`, `::=`, Make `?=`, PHP
 * `.=`, `=>` (PHP and Ruby hashes), keys that start with a digit (`1password_token`); not a value
 * an operator follows (`x = "a" in o`, `t = "a" + b`, `type T = 'a' | 'b'`, `c ? "a" : "b"`).
 * Quotes may be escaped once (JSON inside a JSON string).
 */
const ASSIGN =
  /(\\?["']|)([$:@]?[A-Za-z0-9_][A-Za-z0-9_.-]{0,63})\1([ \t]*)(::=|:=|\?=|\.=|\+=|=>|=(?![=>~])|:(?![:/]))([ \t]*)(?:"((?:[^"\\\r\n]|\\.){0,4096})"|'([^'\r\n]{0,4096})'|\\"((?:[^"\\\r\n]|\\[^"]){0,4096})\\"|([^\s"'`,;&}\])(<>\\]{1,4096}))(?![ \t]*(?:in\b|instanceof\b|[=!]==?|&&|\|\|?|\?|\+|:))/y;

/** The same head, then a value of a symbol secret's characters (`symbolSecret`: a Django key, cut by no stop character). */
const ASSIGN_HEAD = /(\\?["']|)([$:@]?[A-Za-z0-9_][A-Za-z0-9_.-]{0,63})\1[ \t]*(?:::=|:=|\?=|\.=|\+=|=>|=(?![=>~])|:(?![:/]))[ \t]*/y;

const assignment: NameRule = (p, i, start) => {
  const { text } = p;
  if ((p.scan.marks & (M.EQ | M.COLON)) === 0 || (p.kind(i) & SECRET_OR_WEAK) === 0) return false;
  const m = atName(text, ASSIGN, start);
  if (m === null) {
    // A value that starts with a character no bare value may start with (`(`, `&`): a symbol secret?
    const head = atName(text, ASSIGN_HEAD, start);
    return head !== null && symbolValue(p, head[2] as string, head.index + head[0].length);
  }
  const [, q, key, sp1, sep, sp2, dq, sq, edq, bare] = m as unknown as [
    string,
    string,
    string,
    string,
    string,
    string,
    string?,
    string?,
    string?,
    string?,
  ];
  const vs = m.index + q.length * 2 + key.length + sp1.length + sep.length + sp2.length;
  if (!p.free(vs, vs + 1)) return false; // the value is claimed already (a provider's token)
  const v0 = dq ?? sq ?? edq ?? bare ?? "";
  if (!secretPair(key, v0)) return bare !== undefined && symbolValue(p, key, vs);
  const at = (open: number, v: string) => p.claim(vs + open, vs + open + v.length, tag("secret"));
  if (dq !== undefined) return literalSecret(dq) && at(1, dq);
  if (sq !== undefined) return literalSecret(sq) && at(1, sq);
  if (edq !== undefined) return literalSecret(edq) && at(2, edq);
  const v = bare ?? "";
  // A bare value stops at `&`, `(` and `)` (`f(token=abc)`, `token=abc&page=2`), which a Django key holds.
  if (STOPS_IN_SYMBOLS.includes(text[vs + v.length] as string) && symbolValue(p, key, vs)) return true;
  const dotenv = sep !== ":" && sp1 === "" && sp2 === "" && /^[A-Z][A-Z0-9_]*$/.test(key) && !placeholderish(v);
  // A generated value that starts like a path (`/sHtXp…` base64) under a clearly secret name.
  return (dotenv || tokenish(v) || ((p.kind(i) & K.SECRET) !== 0 && randomLooking(v))) && at(0, v);
};

const STOPS_IN_SYMBOLS = "&()";

/** At vs, a symbol secret (`symbolSecret`: a Django key, unquoted) under `key`: claimed whole. */
function symbolValue(p: Pass, key: string, vs: number): boolean {
  SYMBOL_RUN.lastIndex = vs;
  const s = SYMBOL_RUN.exec(p.text);
  return s !== null && symbolSecret(s[0]) && secretPair(key, s[0]) && p.claim(vs, vs + s[0].length, tag("secret"));
}

/**
 * "the password is hunter2-xyz9", "password hunter2" (.netrc), "Set DB_PASSWORD to …": a secret
 * name, an optional verb, then a value that looks made up (letters and digits mixed).
 */
const PROSE =
  /([A-Za-z0-9_][\w.-]{0,63})([ \t]+(?:(?:is|was|to|of|set to|now)[ \t]+)?)(["']?)([^\s"'`<>[\]]{6,256}?)\3([.,;:)!?]?)(?=\s|$)/y;

const prose: NameRule = (p, i, start, end) => {
  const c = p.text.charCodeAt(end);
  if ((c !== 32 && c !== 9) || (p.kind(i) & SECRET_OR_WEAK) === 0) return false;
  const m = atName(p.text, PROSE, start);
  if (m === null) return false;
  const [, key, sp, q, v] = m as unknown as [string, string, string, string, string];
  if (!(keyClass(key) === 2 || weakSecretKey(key)) || !(madeUp(v) || symbolSecret(v))) return false;
  const vs = m.index + key.length + sp.length + q.length;
  return p.claim(vs, vs + v.length, tag("secret"));
};

/** The rules, in their order of precedence at one name: the first that claims a span there wins. */
const RULES: readonly NameRule[] = [
  authorization,
  bearer,
  connPassword,
  urlToken,
  cliFlag,
  yamlBlock,
  setter,
  rawString,
  callPair,
  envLine,
  assignment,
  prose,
];

/**
 * The names stage: each name the scan found, in text order, unless an earlier claim covers it
 * (`secret_…` inside a Notion token names nothing), is offered to the rules in order.
 */
export function names(p: Pass): void {
  const n = p.scan.names;
  for (let i = 0; i < n.length; i += 3) {
    const start = n[i] as number;
    const end = n[i + 1] as number;
    if (!p.free(start, end)) continue;
    for (const rule of RULES) if (rule(p, i / 3, start, end, n[i + 2] as number)) break;
  }
}
