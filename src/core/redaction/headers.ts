/**
 * Redaction rules at a name that heads a value in a protocol's syntax: HTTP headers
 * (`Authorization: …`, `Cookie: …`, `X-Api-Key: …`), auth schemes (`Bearer …`), connection
 * strings (`Password=…;`), URL parameters (`?token=…`) and command-line flags (`--token …`).
 * Pure. Each is tried at the names the scan found (core/redaction/named.ts `names`), and only when
 * the name ends with the word the rule needs (the scan notes it) or stands after `--` or `?`.
 */

import { keyword, looksEncoded, memberAccess, placeholderish, tag, tokenish } from "./judge.js";
import { isSecretKey, keyClass } from "./keys.js";
import { charCode, declared, isWord, type NameRule, nextSolid } from "./pass.js";
import { K, M, nameChar, W } from "./scan.js";

/** Where a lowercase header or scheme word ends the name [start, end) at a word boundary, or -1. */
function endsWithWord(text: string, start: number, end: number, words: readonly string[]): [number, string] | undefined {
  const lower = text.slice(start, end).toLowerCase();
  for (const w of words) {
    if (!lower.endsWith(w)) continue;
    const at = end - w.length;
    if (at === start || !isWord(charCode(text, at - 1))) return [at, w];
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

export const authorization: NameRule = (p, i, start, end, endWords) => {
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
  // A scheme of the service's own (`Api-Token`, `SSWS`, `GenieKey`, `Klaviyo-API-Key`) and one
  // credential after it that looks like one: the value goes, as with the schemes above.
  if (scheme && /^[A-Za-z][A-Za-z-]{1,31}[ \t]+\S+$/.test(v))
    return tokenish((scheme[2] as string).replace(/[;,.]$/, "")) && claim("authorization");
  const single = v.replace(/[;,.]$/, "");
  return !/\s/.test(single) && tokenish(single) && claim("authorization");
};

const SCHEMES = ["bearer", "basic", "token"];
const SCHEME = /(Bearer|Basic|Token)([ \t]+)([A-Za-z0-9\-._~+/%]{12,}=*)(?![A-Za-z0-9\-._~+/=%])/iy;

/** `Bearer <token>`, `Basic <base64>`, `Token <token>` anywhere. */
export const bearer: NameRule = (p, _i, start, end, endWords) => {
  const c = charCode(p.text, end);
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

export const connPassword: NameRule = (p, _i, start, end, endWords) => {
  if ((endWords & W.PASSWORD) === 0 || (p.scan.marks & M.SEMI) === 0 || nextSolid(p.text, end) !== 61) return false;
  const at = endsWithWord(p.text, start, end, ["password", "pwd"]);
  // Not `-password=` (a flag), nor `conn_info.password = pass;` (code assigning a property).
  if (at === undefined || charCode(p.text, at[0] - 1) === 45 || charCode(p.text, at[0] - 1) === 46) return false;
  CONN.lastIndex = at[0];
  const m = CONN.exec(p.text);
  if (m === null) return false;
  const [, k, sep, v] = m as unknown as [string, string, string, string];
  if (placeholderish(v) || (memberAccess(v) && declared(p, at[0]))) return false; // `const password = result.groups?.password;` is code
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
export const urlToken: NameRule = (p, _i, start) => {
  const { text } = p;
  if ((p.scan.marks & (M.EQ | M.URL_SEP)) !== (M.EQ | M.URL_SEP)) return false;
  let s = start;
  while (s > 0 && start - s < 64 && urlKeyChar(charCode(text, s - 1))) s--;
  const sep = charCode(text, s - 1);
  if (sep !== 63 && sep !== 38 && sep !== 35 && sep !== 59) return false;
  URL_PARAM.lastIndex = s - 1;
  const m = URL_PARAM.exec(text);
  if (m === null) return false;
  const [, , key, value] = m as unknown as [string, string, string, string];
  const secret = isSecretKey(key);
  if (!(secret || URL_SECRET_KEYS.has(key.toLowerCase()))) return false;
  if (!secret && value.length < 16 && /^[a-z]+$/.test(value)) return false; // `?key=value`, `?code=abc`: a word, not a key
  if (value.length < 3 || !/[A-Za-z0-9]/.test(value) || /[(){}]/.test(value) || placeholderish(value)) return false; // `;n.getToken=function(){…}` in minified code
  const vs = s + key.length + 1;
  return p.claim(vs, vs + value.length, tag("url-token"));
};

/** `--token abc`, `--api-key=abc`, `--password "a b"`. `--session` is an id in most CLIs (Baton's own too), not a secret. */
const FLAG = /(?<![\w-])(--[A-Za-z][\w-]{0,63})(=|[ \t]+)("[^"\r\n]*"|'[^'\r\n]*'|[^\s"'-][^\s"']*)/y;

export const cliFlag: NameRule = (p, i, start) => {
  const { text } = p;
  if ((p.kind(i) & K.SECRET) === 0 || charCode(text, start - 1) !== 45 || charCode(text, start - 2) !== 45) return false;
  FLAG.lastIndex = start - 2;
  const m = FLAG.exec(text);
  if (m === null) return false;
  const [, flag, sep, value] = m as unknown as [string, string, string, string];
  if (keyClass(flag.slice(2)) < 2) return false;
  const quoted = /^["']/.test(value);
  const v = quoted ? value.slice(1, -1) : value;
  if (placeholderish(v) || keyword(v) || (!quoted && !tokenish(v))) return false;
  const vs = m.index + flag.length + sep.length;
  return p.claim(vs, vs + value.length, tag("secret"));
};
