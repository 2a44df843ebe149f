/**
 * The true and false positives of gitleaks' rules (cmd/generate/config/rules/*.go), read from a
 * checkout of gitleaks without Go: for bench/redact-heldout.mjs `--extract`.
 *
 * Each rule is a Go function that builds a `config.Rule`, a list `tps` of texts its regex must
 * find and a list `fps` it must not, and hands them to `utils.Validate`. Most `tps` are made by
 * `utils.GenerateSampleSecrets(identifier, secret)`, which puts one secret in about thirty
 * placements; the secret itself is often `prefix + secrets.NewSecret(regex)`, a random string
 * matching a regex. This file evaluates that small part of Go: string literals, `+`, slices and
 * maps of strings, `append`, `fmt.Sprintf`, the `utils` and `secrets` helpers (re-implemented
 * here from gitleaks' sources: cmd/generate/config/utils/*.go, cmd/generate/secrets/regen.go),
 * local variables and helper functions of the package, and the rule's own regex. A statement it
 * cannot evaluate (a loop, an `if`) is passed over and counted, never guessed.
 *
 * What comes out per rule: its id; the secrets handed to `GenerateSampleSecrets` (each with the
 * random parts `NewSecret` made, which a leak check looks for, and whether the rule's regex finds
 * it alone, without its name: then it has a format of its own); the other true positives as
 * written, each with the secrets the rule's regex finds in it (its secret group); and the false
 * positives as written.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

// ---------------------------------------------------------------------------------------------
// A seeded random source (mulberry32, as test/redaction/rng.ts).

export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---------------------------------------------------------------------------------------------
// Random strings from a Go regex, as gitleaks' `secrets.NewSecret` (lucasjones/reggen: an
// unbounded repeat adds up to 10 more).

const PRINTABLE = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join("");
const WORD = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";
const DIGITS = "0123456789";
const SPACE = " \t\n";

/** Parse a Go regex into a small tree: {alt: [seq]}, seq = [{node, min, max}], node = {set} | {group} | {lit}. */
function parseRegex(src) {
  let i = 0;
  const peek = () => src[i];
  function escapeSet(c) {
    switch (c) {
      case "d":
        return DIGITS;
      case "w":
        return WORD;
      case "s":
        return SPACE;
      case "n":
        return "\n";
      case "t":
        return "\t";
      case "r":
        return "\r";
      case "D":
        return PRINTABLE.replace(/[0-9]/g, "");
      case "W":
        return PRINTABLE.replace(/\w/g, "");
      case "S":
        return PRINTABLE.replace(/\s/g, "");
      default:
        return c;
    }
  }
  function parseClass() {
    // at the character after '['
    let negate = false;
    if (peek() === "^") {
      negate = true;
      i++;
    }
    let out = "";
    let first = true;
    while (i < src.length && (peek() !== "]" || first)) {
      first = false;
      if (src.startsWith("[:", i)) {
        const end = src.indexOf(":]", i);
        const name = src.slice(i + 2, end);
        i = end + 2;
        out +=
          { alnum: WORD.replace("_", ""), alpha: WORD.replace(/[0-9_]/g, ""), digit: DIGITS, xdigit: "0123456789abcdefABCDEF" }[name] ?? "";
        continue;
      }
      let c = src[i++];
      let set;
      if (c === "\\") {
        const e = src[i++];
        if (e === "x") {
          c = String.fromCharCode(Number.parseInt(src.slice(i, i + 2), 16));
          i += 2;
        } else {
          set = escapeSet(e);
          if (set.length === 1) c = set;
          else {
            out += set;
            continue;
          }
        }
      }
      if (peek() === "-" && src[i + 1] !== "]" && src[i + 1] !== undefined) {
        i++;
        let to = src[i++];
        if (to === "\\") {
          const e = src[i++];
          if (e === "x") {
            to = String.fromCharCode(Number.parseInt(src.slice(i, i + 2), 16));
            i += 2;
          } else to = escapeSet(e);
        }
        for (let k = c.charCodeAt(0); k <= to.charCodeAt(0); k++) out += String.fromCharCode(k);
      } else out += c;
    }
    i++; // ']'
    if (negate) out = [...PRINTABLE].filter((ch) => !out.includes(ch)).join("");
    return { set: [...new Set(out)].join("") };
  }
  function parseAtom() {
    const c = src[i++];
    if (c === "(") {
      if (peek() === "?") {
        // (?:…), (?i:…), (?-i:…), (?P<name>…), (?i) alone
        const close = src.indexOf(")", i);
        const colon = src.indexOf(":", i);
        if (src[i + 1] === "P" && src[i + 2] === "<") {
          i = src.indexOf(">", i) + 1;
        } else if (colon !== -1 && (close === -1 || colon < close)) {
          i = colon + 1;
        } else {
          i = close + 1; // flags only: nothing to generate
          return { lit: "" };
        }
      }
      const alt = parseAlt();
      i++; // ')'
      return { group: alt };
    }
    if (c === "[") return parseClass();
    if (c === ".") return { set: PRINTABLE.replace(" ", "") };
    if (c === "^" || c === "$") return { lit: "" };
    if (c === "\\") {
      const e = src[i++];
      if (e === "b" || e === "B" || e === "A" || e === "z") return { lit: "" };
      if (e === "x") {
        const ch = String.fromCharCode(Number.parseInt(src.slice(i, i + 2), 16));
        i += 2;
        return { lit: ch };
      }
      const set = escapeSet(e);
      return set.length === 1 ? { lit: set } : { set };
    }
    return { lit: c };
  }
  function parseSeq() {
    const seq = [];
    while (i < src.length && peek() !== "|" && peek() !== ")") {
      const node = parseAtom();
      let min = 1;
      let max = 1;
      const q = peek();
      if (q === "*" || q === "+" || q === "?") {
        i++;
        min = q === "+" ? 1 : 0;
        max = q === "?" ? 1 : min + 10;
      } else if (q === "{" && /^\{\d+(,\d*)?\}/.test(src.slice(i))) {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(src.slice(i));
        i += m[0].length;
        min = Number(m[1]);
        max = m[2] === undefined ? min : m[3] === "" ? min + 10 : Number(m[3]);
      }
      if (peek() === "?") i++; // lazy
      seq.push({ node, min, max });
    }
    return seq;
  }
  function parseAlt() {
    const alt = [parseSeq()];
    while (peek() === "|") {
      i++;
      alt.push(parseSeq());
    }
    return alt;
  }
  return parseAlt();
}

/** A random string matching a Go regex. */
export function fromRegex(src, r) {
  const gen = (alt) => {
    const seq = alt[Math.floor(r() * alt.length)];
    let out = "";
    for (const { node, min, max } of seq) {
      const n = min + Math.floor(r() * (max - min + 1));
      for (let k = 0; k < n; k++) {
        if (node.lit !== undefined) out += node.lit;
        else if (node.set !== undefined) out += node.set[Math.floor(r() * node.set.length)] ?? "";
        else out += gen(node.group);
      }
    }
    return out;
  };
  return gen(parseRegex(src));
}

/**
 * A Go regex as a JavaScript one, to find a rule's secret in a text. Go's inline flag groups
 * (`(?i:…)`, `(?-i:…)`) have no equivalent in Node 20, so a pattern with any `(?i` is matched
 * case-insensitively throughout: looser than gitleaks, which is enough to say where a secret is.
 */
export function jsRegex(src) {
  let s = src;
  let flags = "g";
  if (/\(\?[a-z]*i/.test(s)) flags += "i";
  if (/\(\?[a-z]*s/.test(s)) flags += "s";
  s = s
    .replace(/\(\?-?[imsU]+\)/g, "")
    .replace(/\(\?-?[imsU]+(?:-[imsU]+)?:/g, "(?:")
    .replace(/\(\?P</g, "(?<")
    .replace(/\\z/g, "$(?![\\s\\S])")
    .replace(/\\A/g, "^(?<![\\s\\S])")
    .replace(/\[:alnum:\]/g, "A-Za-z0-9")
    .replace(/\[:alpha:\]/g, "A-Za-z")
    .replace(/\[:digit:\]/g, "0-9")
    .replace(/\[:xdigit:\]/g, "0-9A-Fa-f");
  return new RegExp(s, flags);
}

/** What the rule's regex takes as the secret in `text` (its secret group, else the first non-empty group, else the match). */
export function secretsIn(regexSrc, secretGroup, text) {
  let re;
  try {
    re = jsRegex(regexSrc);
  } catch {
    return undefined;
  }
  const out = [];
  for (const m of text.matchAll(re)) {
    let s = m[0];
    if (m.length >= 2) {
      if (secretGroup > 0) s = m[secretGroup] ?? "";
      else s = m.slice(1).find((g) => g !== undefined && g.length > 0) ?? m[0];
    }
    if (s.length > 0) out.push(s);
    if (m[0].length === 0) re.lastIndex++;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Go source: tokens.

function tokenize(src) {
  const toks = [];
  let i = 0;
  // A string's value is kept apart from `v`, which the brackets and operators are compared by (a string "}" is no brace).
  const push = (t, v) => toks.push(t === "str" || t === "rune" ? { t, v: "", s: v } : { t, v });
  while (i < src.length) {
    const c = src[i];
    if (c === "\n") {
      push("nl", "\n");
      i++;
    } else if (c === " " || c === "\t" || c === "\r") i++;
    else if (src.startsWith("//", i)) {
      while (i < src.length && src[i] !== "\n") i++;
    } else if (src.startsWith("/*", i)) {
      const end = src.indexOf("*/", i + 2);
      if (src.slice(i, end).includes("\n")) push("nl", "\n");
      i = end + 2;
    } else if (c === "`") {
      const end = src.indexOf("`", i + 1);
      push("str", src.slice(i + 1, end).replace(/\r/g, ""));
      i = end + 1;
    } else if (c === '"') {
      let j = i + 1;
      let v = "";
      while (src[j] !== '"') {
        if (src[j] === "\\") {
          const e = src[j + 1];
          const simple = { n: "\n", t: "\t", r: "\r", '"': '"', "\\": "\\", "'": "'", a: "\x07", b: "\b", f: "\f", v: "\v" };
          if (e in simple) {
            v += simple[e];
            j += 2;
          } else if (e === "x") {
            v += String.fromCharCode(Number.parseInt(src.slice(j + 2, j + 4), 16));
            j += 4;
          } else if (e === "u") {
            v += String.fromCharCode(Number.parseInt(src.slice(j + 2, j + 6), 16));
            j += 6;
          } else if (e === "U") {
            v += String.fromCodePoint(Number.parseInt(src.slice(j + 2, j + 10), 16));
            j += 10;
          } else if (/[0-7]/.test(e)) {
            v += String.fromCharCode(Number.parseInt(src.slice(j + 1, j + 4), 8));
            j += 4;
          } else {
            v += e;
            j += 2;
          }
        } else v += src[j++];
      }
      push("str", v);
      i = j + 1;
    } else if (c === "'") {
      const end = src.indexOf("'", i + 2);
      push("rune", src.slice(i + 1, end));
      i = end + 1;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i, i + 200));
      push("id", m[0]);
      i += m[0].length;
    } else if (/[0-9]/.test(c)) {
      const m = /^[0-9][0-9a-fA-FxX._]*/.exec(src.slice(i, i + 50));
      push("num", m[0]);
      i += m[0].length;
    } else {
      const three = src.slice(i, i + 3);
      const two = src.slice(i, i + 2);
      if (three === "...") {
        push("op", three);
        i += 3;
      } else if ([":=", "==", "!=", "<=", ">=", "&&", "||", "++", "--", "+=", "-=", "<-"].includes(two)) {
        push("op", two);
        i += 2;
      } else {
        push("op", c);
        i++;
      }
    }
  }
  return toks;
}

// ---------------------------------------------------------------------------------------------
// Go source: an evaluator for the part the rules use.

/** A value the evaluator cannot know (a loop's result, an unsupported call). */
const UNKNOWN = Symbol("unknown");
/** A string with the random parts it was made of (what `NewSecret` generated), for the leak check. */
class Made {
  constructor(text, random) {
    this.text = text;
    this.random = random;
  }
}
const textOf = (v) => (v instanceof Made ? v.text : v);
const randomOf = (v) => (v instanceof Made ? v.random : typeof v === "string" ? [] : []);
const madeOf = (v) => (v instanceof Made ? v : new Made(v, []));

/** utils.GenerateSampleSecrets' placements, read from gitleaks' generate.go (the live ones, not the TODOs). */
export function sampleTemplates(root) {
  const src = readFileSync(join(root, "cmd/generate/config/utils/generate.go"), "utf8");
  const body = src.slice(src.indexOf("func GenerateSampleSecrets"));
  const map = body.slice(body.indexOf("map[string]string{") + "map[string]string{".length, body.indexOf("replacer :="));
  const toks = tokenize(map).filter((t) => t.t !== "nl");
  const out = [];
  for (let k = 0; k + 2 < toks.length; k++)
    if (toks[k].t === "str" && toks[k + 1].v === ":" && toks[k + 2].t === "str") out.push({ id: toks[k].s, template: toks[k + 2].s });
  return out;
}

export class GoPackage {
  constructor(files, r, templates) {
    this.r = r;
    this.templates = templates;
    this.funcs = new Map();
    this.vars = new Map();
    this.skipped = [];
    for (const f of files) this.readFile(tokenize(f.src), f.name);
  }

  /** Top-level declarations: functions by name (their parameters and body tokens), package variables lazily. */
  readFile(toks, file) {
    let k = 0;
    const skipBalanced = (open, close) => {
      let depth = 0;
      const start = k;
      for (; k < toks.length; k++) {
        if (toks[k].v === open) depth++;
        else if (toks[k].v === close && --depth === 0) {
          k++;
          return toks.slice(start + 1, k - 1);
        }
      }
      return toks.slice(start + 1);
    };
    while (k < toks.length) {
      const t = toks[k];
      if (t.t === "id" && t.v === "func" && toks[k + 1]?.t === "id" && toks[k + 2]?.v === "(") {
        const name = toks[k + 1].v;
        k += 2;
        const params = skipBalanced("(", ")");
        while (k < toks.length && toks[k].v !== "{") k++;
        const body = skipBalanced("{", "}");
        this.funcs.set(name, { params: paramNames(params), body, file });
      } else if (t.t === "id" && (t.v === "var" || t.v === "const")) {
        k++;
        if (toks[k].v === "(") {
          const block = skipBalanced("(", ")");
          for (const stmt of statements(block)) this.declare(stmt);
        } else {
          const start = k;
          while (k < toks.length && !(toks[k].t === "nl" && depthZero(toks, start, k))) k++;
          this.declare(toks.slice(start, k));
        }
      } else k++;
    }
  }

  declare(stmt) {
    const eq = stmt.findIndex((t) => t.v === "=");
    if (stmt[0]?.t !== "id" || eq < 0) return;
    const expr = stmt.slice(eq + 1);
    let cached;
    this.vars.set(stmt[0].v, () => {
      if (cached === undefined) cached = this.evalTokens(expr, new Map());
      return cached;
    });
  }

  /** Run a function's body: the values of `utils.Validate(r, tps, fps)` calls it reaches, and what it returns. */
  call(name, args) {
    const fn = this.funcs.get(name);
    if (!fn) return UNKNOWN;
    const env = new Map();
    for (let k = 0; k < fn.params.length; k++) env.set(fn.params[k], args[k]);
    for (const stmt of statements(fn.body)) {
      const head = stmt[0];
      if (!head) continue;
      if (head.t === "id" && head.v === "return") return this.evalTokens(stmt.slice(1), env);
      if (head.t === "id" && (head.v === "for" || head.v === "if" || head.v === "switch")) {
        this.skipped.push(`${fn.file}: ${name}: a \`${head.v}\` statement`);
        // Anything it assigns is no longer known.
        for (let k = 0; k + 1 < stmt.length; k++)
          if (stmt[k].t === "id" && (stmt[k + 1].v === "=" || stmt[k + 1].v === ":=")) env.set(stmt[k].v, UNKNOWN);
        continue;
      }
      if (head.t === "id" && head.v === "var" && stmt[1]?.v === "(") {
        for (const inner of statements(stmt.slice(2, -1))) {
          const eq = inner.findIndex((t) => t.v === "=");
          if (inner[0]?.t === "id") env.set(inner[0].v, eq < 0 ? undefined : this.evalTokens(inner.slice(eq + 1), env));
        }
        continue;
      }
      if (head.t === "id" && head.v === "var") {
        const eq = stmt.findIndex((t) => t.v === "=");
        env.set(stmt[1].v, eq < 0 ? undefined : this.evalTokens(stmt.slice(eq + 1), env));
        continue;
      }
      const op = stmt.findIndex((t) => t.v === ":=" || t.v === "=");
      if (op > 0) {
        const target = stmt.slice(0, op);
        const value = this.evalTokens(stmt.slice(op + 1), env);
        if (target.length === 1 && target[0].t === "id") env.set(target[0].v, value);
        else if (target.length === 3 && target[1].v === "." && env.get(target[0].v) && typeof env.get(target[0].v) === "object")
          env.get(target[0].v)[target[2].v] = value;
        continue;
      }
      this.evalTokens(stmt, env);
    }
    return undefined;
  }

  evalTokens(toks, env) {
    const p = { toks: toks.filter((t) => t.t !== "nl"), k: 0 };
    try {
      return this.expr(p, env);
    } catch (e) {
      if (e === UNKNOWN) return UNKNOWN;
      throw e;
    }
  }

  expr(p, env) {
    let v = this.unary(p, env);
    while (p.toks[p.k]?.v === "+") {
      p.k++;
      const w = this.unary(p, env);
      if (v === UNKNOWN || w === UNKNOWN) v = UNKNOWN;
      else if (typeof textOf(v) === "string" || typeof textOf(w) === "string") {
        const a = madeOf(v);
        const b = madeOf(w);
        v = new Made(a.text + b.text, [...a.random, ...b.random]);
      } else v = v + w;
    }
    return v;
  }

  unary(p, env) {
    const t = p.toks[p.k];
    if (t?.v === "&" || t?.v === "*") {
      p.k++;
      return this.unary(p, env);
    }
    return this.postfix(this.primary(p, env), p, env);
  }

  primary(p, env) {
    const t = p.toks[p.k++];
    if (!t) throw UNKNOWN;
    if (t.t === "str") return t.s;
    if (t.t === "num") return Number(t.v.replace(/_/g, ""));
    if (t.v === "(") {
      const v = this.expr(p, env);
      p.k++; // ')'
      return v;
    }
    if (t.v === "[" && p.toks[p.k]?.v === "]" && p.toks[p.k + 1]?.t === "id" && p.toks[p.k + 2]?.v === "(") {
      // A conversion, []byte(s): the value itself.
      p.k += 2;
      return { builtin: "string" };
    }
    if (t.v === "[" || t.v === "map") {
      // A composite literal's type: []T, map[K]V, then {…}.
      p.k--;
      return this.composite(p, env);
    }
    if (t.t === "id") {
      if (t.v === "true") return true;
      if (t.v === "false") return false;
      if (t.v === "nil") return undefined;
      if (t.v === "func") throw UNKNOWN;
      // A qualified name: pkg.Name
      if (p.toks[p.k]?.v === "." && ["utils", "secrets", "fmt", "strings", "regexp", "config", "b64", "base64"].includes(t.v)) {
        p.k++;
        const name = `${t.v}.${p.toks[p.k++].v}`;
        if (p.toks[p.k]?.v === "{") return this.composite(p, env, name);
        return { builtin: name };
      }
      if (env.has(t.v)) return env.get(t.v);
      if (this.vars.has(t.v)) return this.vars.get(t.v)();
      if (this.funcs.has(t.v)) return { fn: t.v };
      if (t.v === "append" || t.v === "len" || t.v === "string" || t.v === "byte") return { builtin: t.v };
      throw UNKNOWN;
    }
    throw UNKNOWN;
  }

  /** A composite literal at p (its type first unless given): a slice, a map or a struct. */
  composite(p, env, typeName) {
    let type = typeName ?? "";
    if (!typeName) {
      while (p.k < p.toks.length && p.toks[p.k].v !== "{") type += p.toks[p.k++].v;
    }
    p.k++; // '{'
    const isMap = type.startsWith("map[");
    const isSlice = type.startsWith("[]");
    const out = isSlice ? [] : {};
    while (p.k < p.toks.length && p.toks[p.k].v !== "}") {
      if (p.toks[p.k].v === ",") {
        p.k++;
        continue;
      }
      // An element: `key: value` (a map or a struct) or a value. Elements that cannot be evaluated are UNKNOWN.
      const start = p.k;
      let depth = 0;
      let colon = -1;
      for (; p.k < p.toks.length; p.k++) {
        const v = p.toks[p.k].v;
        if (v === "{" || v === "(" || v === "[") depth++;
        else if (v === "}" || v === ")" || v === "]") {
          if (depth === 0) break;
          depth--;
        } else if (depth === 0 && v === ",") break;
        else if (depth === 0 && v === ":" && colon < 0) colon = p.k;
      }
      const elem = p.toks.slice(start, p.k);
      if (colon >= 0 && !isSlice) {
        const keyToks = p.toks.slice(start, colon);
        const key = keyToks.length === 1 && keyToks[0].t === "id" && !isMap ? keyToks[0].v : textOf(this.evalTokens(keyToks, env));
        out[key] = this.evalTokens(p.toks.slice(colon + 1, p.k), env);
      } else if (isSlice) out.push(this.evalTokens(elem, env));
    }
    p.k++; // '}'
    if (typeName === "config.Rule") return out;
    return out;
  }

  postfix(v, p, env) {
    for (;;) {
      const t = p.toks[p.k];
      if (t?.v === "(") {
        p.k++;
        const args = [];
        let spread = false;
        while (p.toks[p.k]?.v !== ")") {
          args.push(this.expr(p, env));
          if (p.toks[p.k]?.v === "...") {
            spread = true;
            p.k++;
          }
          if (p.toks[p.k]?.v === ",") p.k++;
        }
        p.k++;
        v = this.apply(v, args, spread);
      } else if (t?.v === "." && p.toks[p.k + 1]?.t === "id") {
        p.k += 2;
        const name = p.toks[p.k - 1].v;
        if (v === UNKNOWN) continue;
        if (typeof v === "object" && v !== null && v.builtin !== undefined) v = { builtin: `${v.builtin}.${name}` };
        else if (typeof v === "object" && v !== null && name in v) v = v[name];
        else if (name === "String" && typeof v === "object" && v?.regex !== undefined) v = { builtin: "regex.String", of: v };
        else v = UNKNOWN;
      } else if (t?.v === "[") {
        p.k++;
        const a = p.toks[p.k]?.v === ":" ? 0 : this.expr(p, env);
        if (p.toks[p.k]?.v === ":") {
          p.k++;
          const b = p.toks[p.k]?.v === "]" ? undefined : this.expr(p, env);
          p.k++;
          v = v === UNKNOWN ? UNKNOWN : textOf(v).slice(a, b);
        } else {
          p.k++;
          v = v === UNKNOWN ? UNKNOWN : Array.isArray(v) ? v[a] : typeof textOf(v) === "string" ? textOf(v)[a] : v[a];
        }
      } else return v;
    }
  }

  apply(callee, args, spread) {
    if (callee === UNKNOWN) return UNKNOWN;
    if (callee?.fn) {
      if (callee.fn === "newPlausibleSecret") return this.plausible(textOf(args[0]));
      return this.call(callee.fn, args);
    }
    const name = callee?.builtin;
    if (name === "regex.String") return callee.of.regex;
    if (args.some((a) => a === UNKNOWN) && name !== "append" && name !== "utils.Validate" && name !== "utils.ValidateWithPaths")
      return UNKNOWN;
    const s = (k) => textOf(args[k]);
    switch (name) {
      case "append": {
        const base = Array.isArray(args[0]) ? [...args[0]] : [];
        for (const a of args.slice(1, spread ? -1 : undefined)) base.push(a);
        if (spread) {
          const last = args[args.length - 1];
          if (Array.isArray(last)) base.push(...last);
          else base.push(UNKNOWN);
        }
        return base;
      }
      case "utils.Numeric":
        return `[0-9]{${s(0)}}`;
      case "utils.Hex":
        return `[a-f0-9]{${s(0)}}`;
      case "utils.AlphaNumeric":
        return `[a-z0-9]{${s(0)}}`;
      case "utils.AlphaNumericExtendedShort":
        return `[a-z0-9_-]{${s(0)}}`;
      case "utils.AlphaNumericExtended":
        return `[a-z0-9=_\\-]{${s(0)}}`;
      case "utils.AlphaNumericExtendedLong":
        return `[a-z0-9\\/=_\\+\\-]{${s(0)}}`;
      case "utils.Hex8_4_4_4_12":
        return "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
      case "secrets.NewSecret": {
        const made = fromRegex(s(0), this.r);
        return new Made(made, [made]);
      }
      case "fmt.Sprintf": {
        let k = 1;
        const random = [];
        const text = s(0).replace(/%[sdvq]/g, () => {
          const a = args[k++];
          random.push(...randomOf(a));
          return String(textOf(a));
        });
        return new Made(text, random);
      }
      case "strings.Repeat":
        return s(0).repeat(args[1]);
      case "strings.ToUpper":
        return s(0).toUpperCase();
      case "strings.ToLower":
        return s(0).toLowerCase();
      case "strings.Join":
        return args[0].map(textOf).join(s(1));
      case "regexp.MustCompile":
        return { regex: s(0) };
      case "utils.GenerateSemiGenericRegex":
        return { regex: semiGeneric(args[0].map(textOf), s(1), args[2]) };
      case "utils.GenerateUniqueTokenRegex":
        return { regex: `${args[1] ? "(?i)" : ""}\\b(${s(0)})(?:[\\x60'"\\s;]|\\\\[nr]|$)` };
      case "utils.MergeRegexps":
        return { regex: args.map((a) => a.regex).join("|") };
      case "utils.GenerateSampleSecret":
        return new Made(`${s(0)}_api_token = "${s(1)}"`, randomOf(args[1]));
      case "utils.GenerateSampleSecrets":
        // Kept whole: the bench places the secret in these templates itself (and in its own).
        return [{ sample: { identifier: s(0), secret: madeOf(args[1]) } }];
      case "base64.StdEncoding.EncodeToString":
      case "b64.StdEncoding.EncodeToString":
        return new Made(Buffer.from(s(0)).toString("base64"), randomOf(args[0]).length > 0 ? [Buffer.from(s(0)).toString("base64")] : []);
      case "base64.RawURLEncoding.EncodeToString":
      case "b64.RawURLEncoding.EncodeToString":
        return new Made(
          Buffer.from(s(0)).toString("base64url"),
          randomOf(args[0]).length > 0 ? [Buffer.from(s(0)).toString("base64url")] : [],
        );
      case "utils.GetEnvOrDefault":
        return UNKNOWN;
      case "utils.Validate":
      case "utils.ValidateWithPaths":
        return { validated: { rule: args[0], tps: args[1], fps: args[2] } };
      case "string":
      case "byte":
        return args[0];
      case "len":
        return textOf(args[0]).length;
      default:
        return UNKNOWN;
    }
  }

  /** gitleaks' newPlausibleSecret: a NewSecret with a digit 1-9 (its stop-word retry is not applied). */
  plausible(regex) {
    for (;;) {
      const made = fromRegex(regex, this.r);
      if (/[1-9]/.test(made)) return new Made(made, [made]);
    }
  }
}

/** gitleaks' utils.GenerateSemiGenericRegex. */
function semiGeneric(identifiers, secretRegex, caseInsensitive) {
  const ids = `[\\w.-]{0,50}?(?:${identifiers.join("|")})(?:[ \\t\\w.-]{0,20})[\\s'"]{0,3}`;
  const head = caseInsensitive ? `(?i)${ids}` : `[\\w.-]{0,50}?(?i:${identifiers.join("|")})(?:[ \\t\\w.-]{0,20})[\\s'"]{0,3}`;
  return `${head}(?:=|>|:{1,3}=|\\|\\||:|=>|\\?=|,)[\\x60'"\\s=]{0,5}(${secretRegex})(?:[\\x60'"\\s;]|\\\\[nr]|$)`;
}

/** A parameter list's names: `(identifier string, secret string)`, `(a, b string)`. */
function paramNames(toks) {
  const names = [];
  let depth = 0;
  let first = true;
  for (const t of toks) {
    if (t.v === "(" || t.v === "[" || t.v === "{") depth++;
    else if (t.v === ")" || t.v === "]" || t.v === "}") depth--;
    else if (depth === 0 && t.v === ",") first = true;
    else if (first && t.t === "id") {
      names.push(t.v);
      first = false;
    }
  }
  return names;
}

function depthZero(toks, from, to) {
  let d = 0;
  for (let k = from; k < to; k++) {
    const v = toks[k].v;
    if (v === "(" || v === "{" || v === "[") d++;
    else if (v === ")" || v === "}" || v === "]") d--;
  }
  return d === 0;
}

/** A body's statements: token runs split at line ends outside brackets, where Go would insert a semicolon. */
export function statements(toks) {
  const out = [];
  let cur = [];
  let depth = 0;
  for (const t of toks) {
    if (t.v === "(" || t.v === "{" || t.v === "[") depth++;
    else if (t.v === ")" || t.v === "}" || t.v === "]") depth--;
    if (t.t === "nl" && depth === 0) {
      const last = cur[cur.length - 1];
      if (last && (last.t !== "op" || [")", "}", "]", "++", "--"].includes(last.v))) {
        out.push(cur);
        cur = [];
      }
      continue;
    }
    if (t.v === ";" && depth === 0) {
      if (cur.length > 0) out.push(cur);
      cur = [];
      continue;
    }
    cur.push(t);
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

// ---------------------------------------------------------------------------------------------
// The rules.

/**
 * Every rule function in cmd/generate/config/rules that ends in `utils.Validate`: its id, regex,
 * secret group, and its cases (see the file's comment). `seed` fixes the random secrets.
 */
export function extractGitleaks(root, seed = 32) {
  const dir = join(root, "cmd/generate/config/rules");
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".go") && !f.endsWith("_test.go"))
    .sort()
    .map((f) => ({ name: f, src: readFileSync(join(dir, f), "utf8") }));
  const pkg = new GoPackage(files, rng(seed), sampleTemplates(root));
  const rules = [];
  for (const [name, fn] of pkg.funcs) {
    if (!/^[A-Z]/.test(name) || !fn.body.some((t) => t.v === "Validate" || t.v === "ValidateWithPaths")) continue;
    const v = pkg.call(name, []);
    const validated = v?.validated;
    if (!validated || typeof validated.rule !== "object") {
      pkg.skipped.push(`${fn.file}: ${name}: not evaluated`);
      continue;
    }
    const { rule, tps, fps } = validated;
    const regex = rule.Regex?.regex;
    const group = typeof rule.SecretGroup === "number" ? rule.SecretGroup : 0;
    const list = (x) => (Array.isArray(x) ? x : x && typeof x === "object" ? Object.values(x) : []);
    const samples = [];
    const texts = [];
    let unknown = 0;
    for (const tp of list(tps)) {
      if (tp === UNKNOWN || tp === undefined) unknown++;
      else if (tp?.sample) {
        const secret = tp.sample.secret;
        const alone = regex !== undefined && (secretsIn(regex, group, secret.text) ?? []).includes(secret.text);
        samples.push({ identifier: tp.sample.identifier, secret: secret.text, random: secret.random, alone });
      } else {
        const text = textOf(tp);
        const found = regex === undefined ? undefined : secretsIn(regex, group, text);
        texts.push({ text, secrets: found ?? [] });
      }
    }
    const negatives = [];
    for (const fp of list(fps)) {
      if (fp === UNKNOWN || fp === undefined) unknown++;
      else negatives.push(textOf(fp));
    }
    if (unknown > 0) pkg.skipped.push(`${fn.file}: ${rule.RuleID ?? name}: ${unknown} case(s) not evaluated`);
    rules.push({ rule: rule.RuleID ?? name, file: fn.file, regex, group, samples, texts, negatives });
  }
  rules.sort((a, b) => (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0));
  return { templates: pkg.templates, rules, skipped: pkg.skipped };
}
