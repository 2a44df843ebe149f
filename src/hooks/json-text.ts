/**
 * An agent's settings file changed in place: only what changes is touched, so every byte of the
 * user's own entries stays as they wrote it (a one-line group, comments, key order, indentation,
 * line endings). Baton's installer used to rewrite the whole `hooks` value through a formatter,
 * which re-laid out the user's own hooks and left them that way after uninstall.
 *
 * `rewriteJson(text, next)` turns the object `text` holds into `next` by the smallest structural
 * edits: a new key goes at the end of its object, a removed key or item is cut together with its
 * separator, an array is aligned on its unchanged items (longest common subsequence) so that
 * removing or appending a group leaves its neighbours alone, and an item that changed is edited
 * inside. New values are laid out like their container: on one line in a one-line container
 * (spaced like it: `{ "a": 1 }` or `{"a":1}`), else one entry per line at the container's
 * indentation plus the file's indent unit (spaces or a tab), with the file's line endings.
 */
import { findNodeAtLocation, type Node, parse, parseTree } from "jsonc-parser";
import type { JsonObject, JsonValue } from "../core/types.js";

type Path = (string | number)[];

interface Style {
  unit: string;
  eol: string;
}

const PARSE = { allowTrailingComma: true, disallowComments: false } as const;

/** The text of a new settings file holding `value`. */
export function freshJson(value: JsonObject): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** `text` (a JSON object, comments and trailing commas allowed) edited so it holds `next`. */
export function rewriteJson(text: string, next: JsonObject): string {
  const style = styleOf(text);
  return edit(text, style, [], parse(text, [], PARSE) as JsonValue, next);
}

function styleOf(text: string): Style {
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const m = /\n([ \t]+)\S/.exec(text);
  if (m?.[1]?.startsWith("\t")) return { unit: "\t", eol };
  return { unit: " ".repeat(m?.[1] ? Math.min(8, m[1].length) : 2), eol };
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function edit(text: string, style: Style, path: Path, a: JsonValue | undefined, b: JsonValue): string {
  if (same(a, b)) return text;
  if (isObject(a) && isObject(b)) {
    for (const key of Object.keys(a)) if (!(key in b)) text = remove(text, [...path, key]);
    for (const key of Object.keys(b)) if (key in a) text = edit(text, style, [...path, key], a[key], b[key] as JsonValue);
    for (const key of Object.keys(b)) if (!(key in a)) text = insert(text, style, path, key, b[key] as JsonValue);
    return text;
  }
  if (Array.isArray(a) && Array.isArray(b)) return editArray(text, style, path, a, b);
  return replace(text, style, path, b);
}

/**
 * The items both arrays keep, as index pairs in order (longest common subsequence); the rest are
 * edits. Arrays here are a few hook groups long.
 */
function common(a: JsonValue[], b: JsonValue[]): [number, number][] {
  const ka = a.map((v) => JSON.stringify(v));
  const kb = b.map((v) => JSON.stringify(v));
  const n = a.length;
  const m = b.length;
  const len: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      (len[i] as number[])[j] = ka[i] === kb[j] ? (len[i + 1]?.[j + 1] ?? 0) + 1 : Math.max(len[i + 1]?.[j] ?? 0, len[i]?.[j + 1] ?? 0);
  const pairs: [number, number][] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (ka[i] === kb[j]) pairs.push([i++, j++]);
    else if ((len[i + 1]?.[j] ?? 0) >= (len[i]?.[j + 1] ?? 0)) i++;
    else j++;
  }
  return pairs;
}

/**
 * Between two kept items, the old items left and the new ones come in pairs (an item edited in
 * place: a group that lost Baton's handler, Baton's group with another launcher); old ones past
 * the pairs are removed, new ones inserted. Gaps are handled from the last, so the indices of
 * the items before a gap are still those of the original text.
 */
function editArray(text: string, style: Style, path: Path, a: JsonValue[], b: JsonValue[]): string {
  const kept = [...common(a, b), [a.length, b.length] as [number, number]];
  let pi = 0;
  let pj = 0;
  const gaps: { i0: number; i1: number; j0: number; j1: number }[] = [];
  for (const [i, j] of kept) {
    if (i > pi || j > pj) gaps.push({ i0: pi, i1: i, j0: pj, j1: j });
    pi = i + 1;
    pj = j + 1;
  }
  for (const g of gaps.reverse()) {
    const paired = Math.min(g.i1 - g.i0, g.j1 - g.j0);
    for (let j = g.j1 - 1; j >= g.j0 + paired; j--) text = insertItem(text, style, path, g.i0 + paired, b[j] as JsonValue);
    for (let i = g.i1 - 1; i >= g.i0 + paired; i--) text = remove(text, [...path, i]);
    for (let k = paired - 1; k >= 0; k--) text = edit(text, style, [...path, g.i0 + k], a[g.i0 + k] as JsonValue, b[g.j0 + k] as JsonValue);
  }
  return text;
}

function tree(text: string): Node {
  const root = parseTree(text, [], PARSE);
  if (!root) throw new Error("not JSON");
  return root;
}

function at(text: string, path: Path): Node {
  const node = findNodeAtLocation(tree(text), path);
  if (!node) throw new Error(`no value at ${JSON.stringify(path)}`);
  return node;
}

function end(n: Node): number {
  return n.offset + n.length;
}

function lineStart(text: string, offset: number): number {
  return text.lastIndexOf("\n", offset - 1) + 1;
}

function indentAt(text: string, offset: number): string {
  return /^[ \t]*/.exec(text.slice(lineStart(text, offset)))?.[0] ?? "";
}

function startsLine(text: string, offset: number): boolean {
  return text.slice(lineStart(text, offset), offset).trim() === "";
}

/** Whether new entries of `container` go one per line (else on its one line). */
function multiline(text: string, container: Node): boolean {
  if (text.slice(container.offset, end(container)).includes("\n")) return true;
  // An empty container in a file laid out over lines (or the empty root object `{}`).
  if ((container.children?.length ?? 0) > 0) return false;
  const root = tree(text);
  return root === container || (root.children?.length ?? 0) === 0 || text.slice(root.offset, end(root)).includes("\n");
}

/** How a one-line container spaces its entries: `{ "a": 1, "b": [2] }`, `{"a":1,"b":[2]}`, … */
interface Inline {
  colon: string;
  comma: string;
  brace: string;
  bracket: string;
}

function inlineStyle(sample: string): Inline {
  return {
    colon: /":\s/.test(sample) ? ": " : ":",
    comma: /,\s/.test(sample) ? ", " : ",",
    brace: /\{ \S/.test(sample) ? " " : "",
    bracket: /\[ \S/.test(sample) ? " " : "",
  };
}

function inline(value: JsonValue, s: Inline): string {
  if (Array.isArray(value)) return value.length === 0 ? "[]" : `[${s.bracket}${value.map((v) => inline(v, s)).join(s.comma)}${s.bracket}]`;
  if (isObject(value)) {
    const entries = Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}${s.colon}${inline(v as JsonValue, s)}`);
    return entries.length === 0 ? "{}" : `{${s.brace}${entries.join(s.comma)}${s.brace}}`;
  }
  return JSON.stringify(value);
}

function render(value: JsonValue, style: Style, indent: string, multi: boolean, sample: string): string {
  if (!multi) return inline(value, inlineStyle(sample));
  return JSON.stringify(value, null, style.unit).replace(/\n/g, style.eol + indent);
}

/** Where a new entry of `container` goes, and how it is separated and laid out. */
function layout(text: string, style: Style, container: Node) {
  const multi = multiline(text, container);
  const last = container.children?.[container.children.length - 1];
  const indent = last && startsLine(text, last.offset) ? indentAt(text, last.offset) : indentAt(text, container.offset) + style.unit;
  const sample = text.slice(container.offset, end(container));
  return { multi, indent, sample, sep: multi ? style.eol + indent : inlineStyle(sample).comma.slice(1) };
}

function splice(text: string, from: number, to: number, content: string): string {
  return text.slice(0, from) + content + text.slice(to);
}

/** An entry (`"key": value` or an item) added at the end of `container`, or as its only one. */
function append(text: string, style: Style, container: Node, entry: (multi: boolean, indent: string, sample: string) => string): string {
  const l = layout(text, style, container);
  const body = entry(l.multi, l.indent, l.sample);
  const last = container.children?.[container.children.length - 1];
  if (last) return splice(text, end(last), end(last), `,${l.sep}${body}`);
  const open = container.offset + 1;
  const close = end(container) - 1;
  // An empty container: its inside (blanks only) becomes the entry on a line of its own.
  if (l.multi && text.slice(open, close).trim() === "")
    return splice(text, open, close, `${style.eol}${l.indent}${body}${style.eol}${indentAt(text, container.offset)}`);
  return splice(text, open, open, `${l.multi ? style.eol + l.indent : ""}${body}`);
}

function insert(text: string, style: Style, path: Path, key: string, value: JsonValue): string {
  const container = at(text, path);
  return append(
    text,
    style,
    container,
    (multi, indent, sample) =>
      `${JSON.stringify(key)}${multi ? ": " : inlineStyle(sample).colon}${render(value, style, indent, multi, sample)}`,
  );
}

/** `value` inserted into the array at `path` so that it becomes item `index`. */
function insertItem(text: string, style: Style, path: Path, index: number, value: JsonValue): string {
  const container = at(text, path);
  const items = container.children ?? [];
  if (index >= items.length) return append(text, style, container, (multi, indent, sample) => render(value, style, indent, multi, sample));
  const l = layout(text, style, container);
  const next = items[index] as Node;
  const indent = startsLine(text, next.offset) ? indentAt(text, next.offset) : l.indent;
  const body = render(value, style, indent, l.multi, l.sample);
  if (index === 0) return splice(text, next.offset, next.offset, `${body},${l.multi ? style.eol + indent : l.sep}`);
  const prev = items[index - 1] as Node;
  return splice(text, end(prev), end(prev), `,${l.multi ? style.eol + indent : l.sep}${body}`);
}

/** The offset just past the comma that follows `from` (blanks and comments skipped), if one does before `to`. */
function commaAfter(text: string, from: number, to: number): number | undefined {
  let i = from;
  while (i < to) {
    const c = text.charAt(i);
    if (c === ",") return i + 1;
    if (/\s/.test(c)) i++;
    else if (text.startsWith("//", i)) i = text.indexOf("\n", i) < 0 ? to : text.indexOf("\n", i);
    else if (text.startsWith("/*", i)) i = text.indexOf("*/", i + 2) < 0 ? to : text.indexOf("*/", i + 2) + 2;
    else return undefined;
  }
  return undefined;
}

/** The key or item at `path` cut out together with the comma and blanks that separated it. */
function remove(text: string, path: Path): string {
  const value = at(text, path);
  const node = typeof path[path.length - 1] === "string" ? (value.parent as Node) : value;
  const container = node.parent as Node;
  const siblings = container.children ?? [];
  const k = siblings.indexOf(node);
  if (k > 0) return splice(text, end(siblings[k - 1] as Node), end(node), "");
  const next = siblings[k + 1];
  if (next) {
    // The first of several: up to the next one's line, so a comment above it stays.
    let to = commaAfter(text, end(node), next.offset) ?? end(node);
    while (to < next.offset && /[ \t\r\n]/.test(text.charAt(to))) to++;
    return splice(text, node.offset, to, "");
  }
  // The only one: a trailing comma (JSONC) goes with it.
  const to = commaAfter(text, end(node), end(container) - 1) ?? end(node);
  return splice(text, container.offset + 1, to, "");
}

function replace(text: string, style: Style, path: Path, value: JsonValue): string {
  const node = at(text, path);
  const old = text.slice(node.offset, end(node));
  return splice(text, node.offset, end(node), render(value, style, indentAt(text, node.offset), old.includes("\n"), old));
}
