/**
 * Redaction rules at a secret-sounding name that assigns a value, in any syntax
 * (`DB_PASSWORD=…`, `"apiKey": "…"`, `password: |`, `setPassword("…")`, `ENV["TOKEN"] = "…"`,
 * "the password is …"), and the names stage that offers every name to these and to the rules
 * of core/redaction/headers.ts. Pure.
 *
 * Each rule is tried only at the names the scan found (core/redaction/scan.ts), with a sticky
 * pattern that starts at the name (or at the quote, sigil or line start before it), and only
 * when the character after the name can begin its shape. Most of a text is not a name, so this
 * is where the single pass saves most: before it, each of these rules ran its own regex over
 * the whole text and judged every hint word it met.
 *
 * Longer than the house's ~400 lines: the rules of one stage, which grows by rules.
 */
import { authorization, bearer, cliFlag, connPassword, urlToken } from "./headers.js";
import {
  alnum,
  literalSecret,
  madeUp,
  memberAccess,
  namesItself,
  passwordName,
  placeholderish,
  randomLooking,
  SYMBOL_RUN,
  secretPair,
  symbolSecret,
  tag,
  tokenish,
  versionLike,
} from "./judge.js";
import { keyClass, weakSecretKey } from "./keys.js";
import { atName, charCode, declared, isQuote, type NameRule, nextSolid, type Pass, SECRET_OR_WEAK, spacesFrom } from "./pass.js";
import { K, M, whitespace } from "./scan.js";

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

/**
 * `ds.setPassword("x")`, `.withPassword("x")`, `secret: String::from("x")`, `token = "x".to_string()`.
 * Exported, like ENV_LINE and CALL_PAIR, for the test that holds each rule's shortcut to its
 * pattern; sticky, so whoever runs one sets `lastIndex` first (every rule here does).
 */
export const SETTER =
  /([A-Za-z0-9_][\w.-]{0,63})(\(|[ \t]*(?::=|=|:)[ \t]*[A-Za-z_][\w]*(?:::[A-Za-z_]\w*)*\()([ \t]*)(["'])((?:(?!\4)[^\r\n\\]|\\.){1,4096})\4/y;

/**
 * Whether what follows the name that ends at `end` is where SETTER goes on: a `(` right after
 * it, or spaces, `:=`, `=` or `:`, spaces and a letter or `_` (a call's name). Most names
 * before `=` or `:` hold a quoted value (`"token": "…"`), which this turns away before the
 * pattern runs.
 */
export function setterCall(text: string, end: number): boolean {
  if (charCode(text, end) === 40) return true;
  let j = spacesFrom(text, end);
  const c = charCode(text, j);
  if (c === 58) j += charCode(text, j + 1) === 61 ? 2 : 1;
  else if (c === 61) j++;
  else return false;
  const k = charCode(text, spacesFrom(text, j));
  return (k >= 65 && k <= 90) || (k >= 97 && k <= 122) || k === 95;
}

/** A call that loads a module by its name or path (`auth_js_1 = require("./auth.js")`): what it is given is no secret. */
const LOADER = /^[ \t]*(?::=|=|:)[ \t]*(?:require|import|require_relative)\($/;

const setter: NameRule = (p, i, start, end) => {
  if ((p.scan.marks & M.CALL_QUOTE) === 0 || (p.kind(i) & SECRET_OR_WEAK) === 0 || !setterCall(p.text, end)) return false;
  const m = atName(p.text, SETTER, start);
  if (m === null) return false;
  const [, key, call, sp, , v] = m as unknown as [string, string, string, string, string, string];
  const last = key.replace(/^.*\./, "");
  const name = call === "(" ? last.replace(/^(?:set|with|put)(?=[A-Z_])/, "") : key;
  if (!secretPair(name, v) || !literalSecret(v, name) || (call === "(" && name === last) || LOADER.test(call)) return false;
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
  if (!secretPair(key, v) || !literalSecret(v, key)) return false;
  const vs = m.index + key.length + sep.length + 1 + (bt !== undefined ? 0 : (hashes as string).length + 1);
  return p.claim(vs, vs + v.length, tag("secret"));
};

/** setProperty("db.password", "value"), os.Setenv("API_TOKEN", "value"), ENV["TOKEN"] = "value", config["KEY"] = "value" */
export const CALL_PAIR = /(["'])([A-Za-z0-9_.-]{1,64})\1([ \t]*(?:,|\][ \t]*=)[ \t]*)(["'])((?:(?!\4)[^\r\n\\]|\\.){1,4096})\4/y;

/** Whether a `,` or `]` follows the quote at `end` that closes a call pair's key (spaces between): `("KEY", …`, `["KEY"] = …`. */
export function pairSeparator(text: string, end: number): boolean {
  const next = charCode(text, spacesFrom(text, end + 1));
  return next === 44 || next === 93;
}

const callPair: NameRule = (p, i, start, end) => {
  const { text } = p;
  if ((p.scan.marks & M.COMMA) === 0 || (p.kind(i) & SECRET_OR_WEAK) === 0) return false;
  let s = start;
  while (charCode(text, s - 1) === 45 || charCode(text, s - 1) === 46) s--;
  const q = charCode(text, s - 1);
  if (!isQuote(q) || charCode(text, end) !== q) return false;
  if (!pairSeparator(text, end)) return false;
  CALL_PAIR.lastIndex = s - 1;
  const m = CALL_PAIR.exec(text);
  if (m === null) return false;
  const [, , key, mid, , v] = m as unknown as [string, string, string, string, string, string];
  if (!secretPair(key, v) || !literalSecret(v, key) || /\s/.test(v) || !(tokenish(v) || randomLooking(v) || symbolSecret(v))) return false;
  const vs = m.index + key.length + 2 + mid.length + 1;
  return p.claim(vs, vs + v.length, tag("secret"));
};

/**
 * Whether an assignment's value after the name that ends at `end` either cannot be (no operator
 * follows) or is claimed already (`valueAt`): then the assignment rules, whose every claim would
 * hold that character, need not run their patterns. (The names stage does not offer a name whose
 * value is claimed to these rules at all; the second half holds for a rule called alone.)
 */
function valueTaken(p: Pass, i: number, end: number): boolean {
  const v = valueStartOf(p, i, end);
  return v < 0 || !p.free(v, v + 1);
}

/** `valueAt` for the i-th name, which ends at `end`: the names stage asks first, then the assignment rules (remembered for the name asked last). */
function valueStartOf(p: Pass, i: number, end: number): number {
  if (p.valueName !== i) {
    p.valueStart = valueAt(p.text, end);
    p.valueName = i;
  }
  return p.valueStart;
}

/**
 * Where the value after the name that ends at `end` starts: past a closing quote, spaces, an
 * assignment operator, spaces and an opening quote; -1 when no operator follows. Most secret
 * names in a text hold a token the runs stage has taken there.
 */
export function valueAt(text: string, end: number): number {
  const j = spacesFrom(text, quoteAt(text, end));
  const op = operatorLength(text, j);
  return op === 0 ? -1 : quoteAt(text, spacesFrom(text, j + op));
}

/** The length of the assignment or comparison operator at j (`:::=`, `::=`, `:=`, `:`, `=>`, `=`, `?=`, `.=`, `+=`, `!=`, `==`, `===`, `!==`); 0: none. */
function operatorLength(text: string, j: number): number {
  const c = charCode(text, j);
  const next = charCode(text, j + 1);
  if ((c === 61 || c === 33) && next === 61) return charCode(text, j + 2) === 61 ? 3 : 2;
  if (c === 58) {
    if (next === 61) return 2;
    if (next !== 58) return 1;
    const third = charCode(text, j + 2);
    return third === 61 ? 3 : third === 58 && charCode(text, j + 3) === 61 ? 4 : 1;
  }
  if (c === 61) return next === 62 ? 2 : 1;
  return (c === 63 || c === 46 || c === 43) && next === 61 ? 2 : 0;
}

/** After the quote (`"`, `'`, `\"`, `\'`) at j, if one stands there. */
function quoteAt(text: string, j: number): number {
  const c = charCode(text, j);
  if (c === 92 && isQuote(charCode(text, j + 1))) return j + 2;
  return isQuote(c) ? j + 1 : j;
}

/**
 * `KEY=value` on a line of its own (.env, `export`, Dockerfile ENV, Make `?=`, `::=`, `:::=`, `!=`): the value runs to
 * the end of the line, whatever characters it holds (Django keys have `()%&`). Under a clearly
 * secret CONSTANT name the value may hold spaces (`DB_PASSWORD=correct horse battery`).
 */
export const ENV_LINE =
  /^([ \t]*(?:export[ \t]+|ENV[ \t]+|set[ \t]+|-[ \t]+)?)([A-Za-z_][A-Za-z0-9_.]{0,63})([ \t]*(?:[:?+!]|:::?)?=[ \t]*)([^\s"'`$][^\r\n]{0,4096}?)[ \t]*$/my;

const ENV_OPERATOR = "=:?+!";
const ENV_LEADS = ["export", "ENV", "set", "-"];

/** Whether text[ls, start), trimmed of whitespace, is empty or one of ENV_LEADS (the words an env line may start with). */
function envLead(text: string, ls: number, start: number): boolean {
  let a = ls;
  let b = start;
  while (a < b && whitespace(text.charCodeAt(a))) a++;
  while (b > a && whitespace(text.charCodeAt(b - 1))) b--;
  if (a === b) return true;
  for (const w of ENV_LEADS) if (w.length === b - a && text.startsWith(w, a)) return true;
  return false;
}

/**
 * Whether what follows the name that ends at `end` is what ENV_LINE needs there: spaces, `=`,
 * `:=`, `?=`, `+=`, `!=`, `::=` or `:::=`, spaces, and a character a value may start with. Most names its
 * other checks let through are YAML or JSON keys (`token: …`, `"token": "…"`), which this turns
 * away before the pattern runs.
 */
export function envValueStart(text: string, end: number): boolean {
  let j = spacesFrom(text, end);
  const c = charCode(text, j);
  if (c === 58) j += charCode(text, j + 1) !== 58 ? 1 : charCode(text, j + 2) === 58 ? 3 : 2;
  else if (c === 63 || c === 43 || c === 33) j++;
  if (charCode(text, j) !== 61) return false;
  const k = spacesFrom(text, j + 1);
  if (k >= text.length) return false;
  const v = text.charCodeAt(k);
  return v !== 34 && v !== 39 && v !== 96 && v !== 36 && !whitespace(v);
}

const envLine: NameRule = (p, i, start, end) => {
  const { text } = p;
  if ((p.kind(i) & SECRET_OR_WEAK) === 0 || !ENV_OPERATOR.includes(String.fromCharCode(nextSolid(text, end)))) return false;
  const ls = p.lineStart(start);
  if (ls === p.lastLine || !envLead(text, ls, start)) return false; // one try per line, and only where the name leads it
  p.lastLine = ls;
  if (valueTaken(p, i, end) || !envValueStart(text, end)) return false;
  ENV_LINE.lastIndex = ls;
  const m = ENV_LINE.exec(text);
  if (m === null) return false;
  const [, lead, key, sep, v] = m as unknown as [string, string, string, string, string];
  const constant = /^[A-Z][A-Z0-9_]*$/.test(key);
  // Make's `!=` assigns a command's output: a command (`cat .token`) is not the secret.
  if (/\s/.test(v) && (sep.includes("!") || !(keyClass(key) === 2 && constant && !/[|&;<>=$`]|\s-/.test(v)))) return false;
  const bare = v.replace(/[;,]$/, "");
  if (
    !secretPair(key, v) ||
    placeholderish(v) ||
    !(tokenish(bare) || constant || symbolSecret(v) || randomLooking(v) || (versionLike(bare) && passwordName(key)))
  )
    return false;
  const vs = m.index + lead.length + key.length + sep.length;
  // `token = creds2.token;`, `exports.Token = Token;` are code.
  if (!constant && codeNotValue(p, start, key, bare, charCode(text, vs + bare.length))) return false;
  return p.claim(vs, vs + v.length, tag("secret"));
};

/**
 * key: value, key = value, "key": "value", KEY=value (dotenv), Go `:=`, `::=`, Make `?=` and `:::=`, PHP
 * `.=`, `=>` (PHP and Ruby hashes), keys that start with a digit (`1password_token`); not a quoted
 * value an operator follows (`x = "a" in o`, `t = "a" + b`, `type T = 'a' | 'b'`, `c ? "a" : "b"`).
 * A bare value is taken whole whatever follows it (`KEY=… && ./run.sh`).
 * Quotes may be escaped once (JSON inside a JSON string).
 */
const ASSIGN =
  /(\\?["']|)([$:@]?[A-Za-z0-9_][A-Za-z0-9_.-]{0,63})\1([ \t]*)(:::=|::=|:=|\?=|\.=|\+=|=>|[=!]==?|=(?![=>~])|:(?![:/]))([ \t]*)(?:(?:"((?:[^"\\\r\n]|\\.){0,4096})"|'([^'\r\n]{0,4096})'|\\"((?:[^"\\\r\n]|\\[^"]){0,4096})\\")(?![ \t]*(?:in\b|instanceof\b|[=!]==?|&&|\|\|?|\?|\+|:))|([^\s"'`,;&}\])(<>\\]{1,4096}))/y;

/** The same head, then a value of a symbol secret's characters (`symbolSecret`: a Django key, cut by no stop character). */
const ASSIGN_HEAD =
  /(\\?["']|)([$:@]?[A-Za-z0-9_][A-Za-z0-9_.-]{0,63})\1[ \t]*(?::::=|::=|:=|\?=|\.=|\+=|=>|[=!]==?|=(?![=>~])|:(?![:/]))[ \t]*/y;

const assignment: NameRule = (p, i, start, end) => {
  const { text } = p;
  if ((p.scan.marks & (M.EQ | M.COLON)) === 0 || (p.kind(i) & SECRET_OR_WEAK) === 0 || valueTaken(p, i, end)) return false;
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
  // A comparison with a literal (`if (api_key != "…")`, `token === "…"`): a hard-coded secret when
  // the literal looks made (`hardCoded`); a word (`"Bearer"`), a lexer's token kind
  // (`"?NonExpressionParenKeyword"`) or a bare name is what it is checked against.
  if (sep === "==" || sep === "===" || sep === "!=" || sep === "!==") {
    const lit = dq ?? sq ?? edq;
    if (lit === undefined || lit.length < 6 || !literalSecret(lit, key) || !hardCoded(lit)) return false;
    return at(dq !== undefined || sq !== undefined ? 1 : 2, lit);
  }
  if (dq !== undefined) return literalSecret(dq, key) && at(1, dq);
  if (sq !== undefined) return literalSecret(sq, key) && at(1, sq);
  if (edq !== undefined) return literalSecret(edq, key) && at(2, edq);
  const v = bare ?? "";
  // A bare value stops at `&`, `(` and `)` (`f(token=abc)`, `token=abc&page=2`), which a Django key holds.
  if (stopsInSymbols(charCode(text, vs + v.length)) && symbolValue(p, key, vs)) return true;
  const dotenv = sep !== ":" && sp1 === "" && sp2 === "" && /^[A-Z][A-Z0-9_]*$/.test(key) && !placeholderish(v);
  // A generated value that starts like a path (`/sHtXp…` base64) under a clearly secret name.
  if (!(dotenv || tokenish(v) || (versionLike(v) && passwordName(key)) || ((p.kind(i) & K.SECRET) !== 0 && randomLooking(v)))) return false;
  // Code, not a value: a call (`secretKey = reader.int32()`), the key's own name (`exports.Token =
  // Token`), a member access (`var token = _step22.value;`).
  const next = charCode(text, vs + v.length);
  const password = passwordName(key);
  if (next === 40 && CALLEE.test(v) && (v.includes(".") || (!password && (sp1 !== "" || sp2 !== "")))) return false;
  if (!dotenv && codeNotValue(p, start, key, v, next)) return false;
  return at(0, v);
};

/**
 * A literal compared with a secret's name that is a secret rather than what code checks it
 * against: inside its edges (a lexer's `"?Keyword"`, a tag's `"</script>"` aside) it holds a
 * digit, or two symbols a word would not have (detect-secrets' `m{{h}o)p${e]nob(ody[…}}`).
 */
function hardCoded(lit: string): boolean {
  const inner = lit.replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "");
  return /\d/.test(inner) || (/[A-Za-z]/.test(inner) && (inner.match(/[^\w\s.-]/g)?.length ?? 0) >= 2);
}

/**
 * A typed declaration: `let token: string = "…"` (TypeScript, Kotlin, Swift, Python hints, Rust
 * `&str`), `var stripeToken string = "…"` (Go). The type stands between the name and `=`, where
 * the assignment rule wants the operator; the value must be a quoted literal.
 */
export const TYPED =
  /([A-Za-z0-9_][\w.-]{0,63})(?:[ \t]*:[ \t]*|[ \t]+)(&(?:'[A-Za-z_]\w*[ \t]+)?)?([A-Za-z_][\w.]*(?:::[A-Za-z_]\w*)*(?:<[\w ,.:&'<>]{0,64}>)?(?:\[\])*\??[ \t]*=[ \t]*)(["'])((?:(?!\4)[^\r\n\\]|\\.){1,4096})\4(?![ \t]*(?:in\b|instanceof\b|[=!]==?|&&|\|\|?|\?|\+|:))/y;

/** Whether a type's name (a letter or `_`, or `&` for Rust's `&str`) follows the name that ends at `end`, after `:` or spaces. */
export function typeAfter(text: string, end: number): boolean {
  let j = spacesFrom(text, end);
  if (charCode(text, j) === 58) j = spacesFrom(text, j + 1);
  else if (j === end) return false;
  const k = charCode(text, j);
  return (k >= 65 && k <= 90) || (k >= 97 && k <= 122) || k === 95 || k === 38;
}

const typed: NameRule = (p, i, start, end) => {
  const { text } = p;
  if ((p.scan.marks & (M.EQ | M.QUOTE)) !== (M.EQ | M.QUOTE) || (p.kind(i) & SECRET_OR_WEAK) === 0 || !typeAfter(text, end)) return false;
  TYPED.lastIndex = start;
  const m = TYPED.exec(text);
  if (m === null) return false;
  const [all, key, , , , v] = m as unknown as [string, string, string | undefined, string, string, string];
  if (!secretPair(key, v) || !literalSecret(v, key)) return false;
  const ve = m.index + all.length - 1;
  return p.claim(ve - v.length, ve, tag("secret"));
};

/**
 * Whether a bare value shaped like a member access (`memberAccess`) stands in code rather than in
 * an INI or properties line, a log or a YAML map, where `password = Hunter2.word`,
 * `user=bob, password=Summer2024.prod, port=5432` and `{password: Summer2024.prod}` hold
 * passwords: it holds `?.` (TypeScript), a `;` follows it, or its line declares the name
 * (`var token = _step22.value`, `var pass = b3.pass, fail = b3.fail`).
 */
function inCode(p: Pass, start: number, v: string, next: number): boolean {
  return next === 59 || v.includes("?.") || declared(p, start);
}

/**
 * Whether the bare value `v` after the name at `start` (`next`: the character after it) is code
 * rather than a secret: the key's own name (`exports.Token = Token`) or a member access in code.
 * The assignment and env-line rules ask it where the line is not a dotenv one.
 */
function codeNotValue(p: Pass, start: number, key: string, v: string, next: number): boolean {
  return namesItself(key, v) || (memberAccess(v) && inCode(p, start, v, next));
}

/**
 * What a call's callee may be: a name or a member access (`getToken`, `reader.int32`,
 * `this.#res.headers.getSetCookie`). Taken for code when it holds a `.`, or after an operator
 * with spaces under a name that is not a password's: `db_password=Xk9mP2vQ7(prod)` and
 * `password = Xk9mP2vQ7(prod)` hold passwords.
 */
const CALLEE = /^[A-Za-z_$][\w$]*(?:\??\.#?[A-Za-z_$][\w$]*)*$/;

/** `&`, `(` or `)`: where a bare value stops though a symbol secret goes on (not the text's end: 0). */
const stopsInSymbols = (c: number) => c === 38 || c === 40 || c === 41;

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
export const PROSE =
  /([A-Za-z0-9_][\w.-]{0,63})([ \t]+(?:(?:is|was|to|of|set to|now)[ \t]+)?)(["']?)([^\s"'`<>[\]]{6,256}?)\3([.,;:)!?]?)(?=\s|$)/y;

const prose: NameRule = (p, i, start, end) => {
  const c = charCode(p.text, end);
  if ((c !== 32 && c !== 9) || (p.kind(i) & SECRET_OR_WEAK) === 0 || !digitAhead(p.text, end)) return false;
  const m = atName(p.text, PROSE, start);
  if (m === null) return false;
  const [, key, sp, q, v] = m as unknown as [string, string, string, string, string];
  // A name that ends a sentence (`modifier keys. Alt=1`) holds nothing; a weak one (`key`, `salt`)
  // only what looks generated, as in any other shape (`the key ECDSA-256`, `for (const key of keys1)`).
  const strong = keyClass(key) === 2;
  if (!(strong || weakSecretKey(key)) || charCode(key, key.length - 1) === 46 || !(madeUp(v) || symbolSecret(v))) return false;
  if (!strong && !secretPair(key, v) && keyClass(`${wordBefore(p.text, m.index)}_${key}`) !== 2) return false;
  // The name again, and a count or a line after it (`token:56` in `npm help-search`'s listing).
  if (v.length > key.length && charCode(v, key.length) === 58 && v.slice(0, key.length).toLowerCase() === key.toLowerCase()) return false;
  const vs = m.index + key.length + sp.length + q.length;
  return p.claim(vs, vs + v.length, tag("secret"));
};

/** The word before `at`, across spaces (`signing` in `the signing key is …`); "" when none. */
function wordBefore(text: string, at: number): string {
  let e = at;
  while (e > 0 && (text.charCodeAt(e - 1) === 32 || text.charCodeAt(e - 1) === 9)) e--;
  let s = e;
  while (s > 0 && e - s < 32 && alnum(text.charCodeAt(s - 1))) s--;
  return e === at ? "" : text.slice(s, e);
}

/** The longest word prose's value can be: the value, a quote on each side, and a stop. */
const PROSE_WORD = 256 + 3;

/**
 * Whether a digit stands in one of the three words after a name (each read up to PROSE_WORD
 * characters): prose's value is the first, or the one after a verb (`is`, `set to`), and both
 * `madeUp` and `symbolSecret` need a digit in it. Most names before a space (`Bearer $TOKEN`,
 * `token is missing`) have none, and are turned away before the pattern runs.
 */
export function digitAhead(text: string, end: number): boolean {
  let j = end;
  for (let word = 0; word < 3; word++) {
    j = spacesFrom(text, j);
    const last = Math.min(text.length, j + PROSE_WORD);
    for (; j < last; j++) {
      const c = text.charCodeAt(j);
      if (c >= 48 && c <= 57) return true;
      if (whitespace(c)) break;
    }
    if (j < text.length && text.charCodeAt(j) !== 32 && text.charCodeAt(j) !== 9) return false; // a line's end, or a word too long
  }
  return false;
}

/** Spaces and tabs, which may stand between a name and its operator or value. */
const SP = " \t";

/**
 * The rules, in their order of precedence at one name (the first that claims a span there
 * wins), each with the characters that may follow a name it claims at: what its shape allows
 * right after the name (spaces before an operator, the operator itself, a closing quote, a URL
 * key's bracket).
 */
const RULE_FOLLOWS: readonly (readonly [rule: NameRule, after: string])[] = [
  [authorization, `${SP}:`],
  [bearer, SP],
  [connPassword, `${SP}=`],
  [urlToken, "=[]"],
  [cliFlag, `${SP}=`],
  [yamlBlock, `${SP}:`],
  [setter, `${SP}(=:`],
  [rawString, `${SP}=:`],
  [callPair, `"'`],
  [envLine, `${SP}=:?+!`],
  [assignment, `${SP}=:?+!"'\\`],
  [typed, `${SP}:`],
  [prose, SP],
];

/** The rules, in their order of precedence at one name. */
export const RULES: readonly NameRule[] = RULE_FOLLOWS.map(([rule]) => rule);

/**
 * The rules that may claim at a name that is neither secret nor weak (`inside` holds `sid`,
 * `design` holds `sig`: most names the scan notes): every other rule needs one of those kinds.
 */
const ANY_NAME_RULES: ReadonlySet<NameRule> = new Set([bearer, connPassword, urlToken]);

/**
 * Per ASCII character, the rules that may claim at a secret or weak name it follows, and those
 * that may at any name, in order. After most characters (a line's end, `)`, `,`, `}`, `>`, `%`
 * …), and at the text's end, no rule can: the name is not judged. After a quote, two rules of
 * thirteen can.
 */
const AFTER_SECRET: readonly (readonly NameRule[])[] = Array.from({ length: 128 }, (_, c) =>
  RULE_FOLLOWS.filter(([, after]) => after.includes(String.fromCharCode(c))).map(([rule]) => rule),
);
const AFTER_ANY: readonly (readonly NameRule[])[] = AFTER_SECRET.map((rules) => rules.filter((r) => ANY_NAME_RULES.has(r)));
const NONE: readonly NameRule[] = [];

/**
 * The rules whose claim at a name need not hold the first character of the value after its
 * operator (`valueAt`): a YAML block's lines below, a setter's or raw string's quoted value after
 * a call or a backtick, a call pair's second string, a typed declaration's value after its type, and the two whose bare value may be the
 * operator itself (a flag's `--token .=\"…` takes `.=\`; a connection string's `Password=>;`
 * takes `>`). Every other rule claims from that character on or not at all, so at a name whose
 * value a provider's token has claimed already only these can claim.
 */
export const CLAIM_ELSEWHERE: ReadonlySet<NameRule> = new Set([connPassword, cliFlag, yamlBlock, setter, rawString, callPair, typed]);
const TAKEN_SECRET = AFTER_SECRET.map((rules) => rules.filter((r) => CLAIM_ELSEWHERE.has(r)));
const TAKEN_ANY = AFTER_ANY.map((rules) => rules.filter((r) => CLAIM_ELSEWHERE.has(r)));

/**
 * The rules that may claim at a name followed by the character code c (0: the text's end), by
 * whether the name is secret or weak, and whether the value after its operator is claimed already.
 */
export function rulesAfter(c: number, secret: boolean, taken = false): readonly NameRule[] {
  if (c >= 128) return NONE;
  return (taken ? (secret ? TAKEN_SECRET[c] : TAKEN_ANY[c]) : secret ? AFTER_SECRET[c] : AFTER_ANY[c]) as readonly NameRule[];
}

/**
 * The names stage: each name the scan found, in text order, unless an earlier claim covers it
 * (`secret_…` inside a Notion token names nothing) or no rule can match after it, is offered to
 * the rules that can (`rulesAfter`) in order.
 */
export function names(p: Pass): void {
  const n = p.scan.names;
  const { text } = p;
  for (let k = 0; k < n.length / 3; k++) {
    const start = n[3 * k] as number;
    const end = n[3 * k + 1] as number;
    const c = end < text.length ? text.charCodeAt(end) : 0;
    if (rulesAfter(c, true).length === 0 || !p.free(start, end)) continue;
    const v = valueStartOf(p, k, end);
    const rules = rulesAfter(c, (p.kind(k) & SECRET_OR_WEAK) !== 0, v >= 0 && !p.free(v, v + 1));
    for (let r = 0; r < rules.length; r++) if ((rules[r] as NameRule)(p, k, start, end, n[3 * k + 2] as number)) break;
  }
}
