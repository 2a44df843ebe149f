/**
 * LESSONS.md: the canonical, human-edited store of lessons. Pure parse and render; the file's
 * I/O is in services/lessons/lessons-file.ts.
 *
 * One block per lesson, written for people first:
 *
 *     ### les-3f9a2c
 *
 *     Read the file before replacing text in it: its whitespace is fragile.
 *
 *     - scope: session
 *     - session: task-1a2b
 *     - tools: Edit, Write
 *     - paths: `src/ui/**`
 *     - fingerprints: `E_PATCH_MISMATCH`
 *     - created: 2026-05-01T10:00:00.000Z
 *     - rollback: rb-7c1d
 *     - pinned: yes
 *     - expires: 2026-09-01
 *
 * The heading is the id; the paragraph(s) under it are the advice; the trailing `- key: value`
 * list holds the rest (every key optional). Lists are comma-separated; backticks around a value
 * are optional and keep commas inside braces (`{a,b}`) or markdown characters literal. Anything
 * outside `### ` blocks (the title, notes under `#`/`##` headings) is the human's and ignored.
 *
 * A block that does not parse is reported with its line and skipped; the others still load.
 * Writers edit the text, not a re-rendering, so hand formatting and broken blocks survive.
 */

import { checksum, SESSION_ID } from "../canonical.js";
import { globProblem } from "../glob-limits.js";
import type { Severity } from "../types.js";

export type LessonScope = "session" | "workspace";

export interface Lesson {
  id: string;
  scope: LessonScope;
  /** The session a session-scoped lesson belongs to. */
  sessionId?: string;
  text: string;
  /** Trigger: tool names (case-insensitive). */
  tools: string[];
  /** Trigger: path globs, workspace-relative. */
  paths: string[];
  /** Trigger: failure fingerprints (exact). */
  fingerprints: string[];
  created?: string;
  /** The rollback (or checkpoint) this lesson was captured from. */
  rollback?: string;
  pinned: boolean;
  /** ISO date or time after which the lesson is no longer offered. */
  expires?: string;
  /** The 1-based line of the block's heading. */
  line: number;
}

export interface LessonDiagnostic {
  /** 1-based line in LESSONS.md. */
  line: number;
  severity: Severity;
  message: string;
  /** The block's id, when the heading had one. */
  id?: string;
}

/** A `### ` block's extent in the file: lines [start, end), 0-based. */
export interface LessonBlock {
  id: string;
  start: number;
  end: number;
  /** Whether it parsed into a lesson. */
  valid: boolean;
}

export interface ParsedLessons {
  lessons: Lesson[];
  blocks: LessonBlock[];
  diagnostics: LessonDiagnostic[];
}

export const LESSON_KEYS = Object.freeze([
  "scope",
  "session",
  "tools",
  "paths",
  "fingerprints",
  "created",
  "rollback",
  "pinned",
  "expires",
]);
export const LESSON_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$/;

const BLOCK_HEADING = /^###\s+(.*?)\s*#*\s*$/;
const OTHER_HEADING = /^#{1,2}\s/;
const FENCE = /^\s*(```|~~~)/;
const LIST_ITEM = /^\s*[-*+]\s+/;
// A backslash at the start of a text line escapes a character markdown (or the parser) would
// read as structure, or another backslash (so text that starts with an escape survives).
const ESCAPED = /^(\s*)\\([#*+\-`~\\])/;
const NEEDS_ESCAPE = /^(\s*)([#*+-]|```|~~~|\\[#*+\-`~\\])/;
const KEY_VALUE = /^\s*[-*+]\s+([A-Za-z][A-Za-z_-]*)\s*:\s*(.*?)\s*$/;

export function parseLessonsMd(text: string): ParsedLessons {
  const lines = text.split(/\r?\n/);
  const out: ParsedLessons = { lessons: [], blocks: [], diagnostics: [] };
  const seen = new Map<string, number>();
  let fenced = false;
  let open: { heading: string; start: number } | undefined;
  const close = (end: number) => {
    if (!open) return;
    parseBlock(lines, open.heading, open.start, end, out, seen);
    open = undefined;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (FENCE.test(line)) fenced = !fenced;
    if (fenced) continue;
    const h = BLOCK_HEADING.exec(line);
    if (h) {
      close(i);
      open = { heading: h[1] as string, start: i };
    } else if (OTHER_HEADING.test(line)) {
      close(i);
    }
  }
  close(lines.length);
  return out;
}

function parseBlock(lines: string[], heading: string, start: number, end: number, out: ParsedLessons, seen: Map<string, number>): void {
  const line = start + 1;
  const problems: LessonDiagnostic[] = [];
  const fail = (at: number, message: string) =>
    problems.push({ line: at, severity: "error", message, ...(LESSON_ID.test(heading) ? { id: heading } : {}) });
  const block: LessonBlock = { id: heading, start, end, valid: false };
  const { last } = lessonBlockParts(lines, block);
  out.blocks.push(block);
  if (!LESSON_ID.test(heading)) {
    fail(line, `"### ${heading}" is not a lesson id: use letters, digits, '.', '_', ':' or '-' (up to 100), e.g. "### les-3f9a2c"`);
    out.diagnostics.push(...problems);
    return;
  }
  const first = seen.get(heading);
  if (first !== undefined) {
    fail(line, `lesson id "${heading}" is used twice (first at line ${first}); give this block another id`);
    out.diagnostics.push(...problems);
    return;
  }
  seen.set(heading, line);

  const { metaStart } = lessonBlockParts(lines, block);

  for (let i = start + 1; i < metaStart; i++) {
    const m = KEY_VALUE.exec(lines[i] as string);
    if (m && LESSON_KEYS.includes((m[1] as string).toLowerCase())) {
      out.diagnostics.push({
        line: i + 1,
        severity: "warning",
        message: `"${(lines[i] as string).trim()}" looks like a setting but is read as text: keep the "- key: value" list together at the end of the block`,
        id: heading,
      });
    }
  }
  const textLines = lines.slice(start + 1, metaStart).map((l) => l.replace(ESCAPED, "$1$2"));
  const body = textLines.join("\n").trim();
  const lesson: Lesson = { id: heading, scope: "workspace", text: body, tools: [], paths: [], fingerprints: [], pinned: false, line };
  if (body === "") fail(line, `lesson ${heading} has no text: write the advice as a paragraph under its heading`);

  const keys = new Map<string, number>();
  let scope: string | undefined;
  for (let i = metaStart; i < last; i++) {
    const at = i + 1;
    const m = KEY_VALUE.exec(lines[i] as string);
    if (!m) {
      fail(at, `expected "- key: value" (keys: ${LESSON_KEYS.join(", ")})`);
      continue;
    }
    const key = (m[1] as string).toLowerCase();
    const raw = m[2] as string;
    if (!LESSON_KEYS.includes(key)) {
      out.diagnostics.push({
        line: at,
        severity: "warning",
        message: `unknown key "${key}" ignored (keys: ${LESSON_KEYS.join(", ")})`,
        id: heading,
      });
      continue;
    }
    if (keys.has(key)) {
      fail(at, `"${key}" is given twice in lesson ${heading} (first at line ${keys.get(key)})`);
      continue;
    }
    keys.set(key, at);
    const value = unquote(raw);
    switch (key) {
      case "scope":
        if (value === "session" || value === "workspace") scope = value;
        else fail(at, `scope must be "session" or "workspace", not "${value}"`);
        break;
      case "session":
        if (SESSION_ID.test(value)) lesson.sessionId = value;
        else fail(at, `session "${value}" is not a session id`);
        break;
      case "tools":
      case "paths":
      case "fingerprints": {
        const list = splitList(raw);
        if (list === undefined) fail(at, `${key}: unbalanced backticks or braces in "${raw}"`);
        else {
          const bad = key === "paths" ? list.map((g) => [g, globProblem(g)] as const).find(([, why]) => why !== undefined) : undefined;
          if (bad) fail(at, `paths: ${JSON.stringify(bad[0])} is refused: ${bad[1]}`);
          else lesson[key] = list;
        }
        break;
      }
      case "created":
      case "expires":
        if (value === "") break;
        if (Number.isNaN(Date.parse(value)))
          fail(at, `${key} "${value}" is not a date: use ISO-8601, e.g. 2026-09-01 or 2026-09-01T12:00:00Z`);
        else lesson[key] = value;
        break;
      case "rollback":
        if (value !== "") lesson.rollback = value;
        break;
      case "pinned": {
        const v = value.toLowerCase();
        if (v === "yes" || v === "true") lesson.pinned = true;
        else if (v === "no" || v === "false" || v === "") lesson.pinned = false;
        else fail(at, `pinned must be yes or no, not "${value}"`);
        break;
      }
    }
  }
  lesson.scope = (scope ?? (lesson.sessionId !== undefined ? "session" : "workspace")) as LessonScope;
  if (lesson.scope === "session" && lesson.sessionId === undefined) {
    fail(
      keys.get("scope") ?? line,
      `lesson ${heading} has scope session but no "- session: <id>"; name the session, or make it "scope: workspace"`,
    );
  }
  if (lesson.scope === "workspace" && lesson.sessionId !== undefined) {
    fail(keys.get("session") ?? line, `lesson ${heading} has scope workspace and a session; remove one of them`);
  }
  out.diagnostics.push(...problems);
  if (problems.length > 0) return;
  block.valid = true;
  out.lessons.push(lesson);
}

/**
 * Where a block's parts are: the text is lines [start + 1, metaStart), the `- key: value` list
 * [metaStart, last), and blank lines [last, end) follow. The metadata is the trailing run of
 * list items, when any item is a known `key: value`.
 */
export function lessonBlockParts(lines: readonly string[], block: LessonBlock): { metaStart: number; last: number } {
  const { start, end } = block;
  // Trim trailing blank lines so the block's extent ends at its content.
  let last = end;
  while (last > start + 1 && (lines[last - 1] as string).trim() === "") last--;
  let metaStart = last;
  while (metaStart > start + 1 && LIST_ITEM.test(lines[metaStart - 1] as string)) metaStart--;
  const isMeta = lines.slice(metaStart, last).some((l) => {
    const m = KEY_VALUE.exec(l);
    return m !== null && LESSON_KEYS.includes((m[1] as string).toLowerCase());
  });
  if (!isMeta) metaStart = last;
  return { metaStart, last };
}

/** The key of a `- key: value` line (lower case), if it is one. */
export function lessonLineKey(line: string): string | undefined {
  return KEY_VALUE.exec(line)?.[1]?.toLowerCase();
}

/**
 * A lesson's text as the lines of its paragraph(s): a line that markdown (or this parser) would
 * read as a heading, list item or fence gets a backslash, and so does a line that already starts
 * with such an escape, so the parser gives back exactly the text.
 */
export function lessonTextLines(text: string): string[] {
  // A lone CR is a line break to editors and Markdown viewers: split on it too, so each line is escaped.
  return text
    .trim()
    .split(/\r\n|\r|\n/)
    .map((x) => x.replace(NEEDS_ESCAPE, "$1\\$2"));
}

function unquote(v: string): string {
  const t = v.trim();
  return t.length >= 2 && t.startsWith("`") && t.endsWith("`") ? t.slice(1, -1).trim() : t;
}

/** Split a comma-separated list, keeping commas inside backticks or braces. */
function splitList(raw: string): string[] | undefined {
  const items: string[] = [];
  let cur = "";
  let tick = false;
  let depth = 0;
  for (const ch of raw) {
    if (ch === "`") tick = !tick;
    else if (!tick && ch === "{") depth++;
    else if (!tick && ch === "}") depth--;
    if (depth < 0) return undefined;
    if (ch === "," && !tick && depth === 0) {
      items.push(cur);
      cur = "";
    } else cur += ch;
  }
  if (tick || depth !== 0) return undefined;
  items.push(cur);
  return items.map(unquote).filter((x) => x !== "");
}

export const LESSONS_PREAMBLE = `# Lessons

Advice for agents working in this workspace, one block per lesson. Baton offers the most
relevant ones to agents (\`baton lessons inject\`). Edit freely: keep each lesson's \`### <id>\`
heading, the advice as a paragraph, then a \`- key: value\` list with any of: scope (session or
workspace), session, tools, paths (globs), fingerprints, created, rollback, pinned (yes/no),
expires (a date). Delete a block to delete the lesson.
`;

/** The markdown block of one lesson (no surrounding blank lines). */
export function renderLessonBlock(l: Omit<Lesson, "line">): string {
  const text = lessonTextLines(l.text).join("\n");
  const code = (v: string) => `\`${v}\``;
  const meta = [`- scope: ${l.scope}`];
  if (l.sessionId !== undefined) meta.push(`- session: ${l.sessionId}`);
  if (l.tools.length) meta.push(`- tools: ${l.tools.join(", ")}`);
  if (l.paths.length) meta.push(`- paths: ${l.paths.map(code).join(", ")}`);
  if (l.fingerprints.length) meta.push(`- fingerprints: ${l.fingerprints.map(code).join(", ")}`);
  if (l.created !== undefined) meta.push(`- created: ${l.created}`);
  if (l.rollback !== undefined) meta.push(`- rollback: ${l.rollback}`);
  if (l.pinned) meta.push("- pinned: yes");
  if (l.expires !== undefined) meta.push(`- expires: ${l.expires}`);
  return [`### ${l.id}`, "", text, "", ...meta].join("\n");
}

/** The file with a block appended (a new file starts with the preamble). */
export function appendLessonBlock(text: string | undefined, block: string): string {
  const base = text === undefined || text.trim() === "" ? LESSONS_PREAMBLE : text;
  return `${base.replace(/\s*$/, "")}\n\n${block}\n`;
}

/** The file without the blocks headed by `id` (their lines removed, surrounding text untouched). */
export function removeLessonBlocks(text: string, id: string): { text: string; removed: number } {
  const parsed = parseLessonsMd(text);
  const drop = parsed.blocks.filter((b) => b.id === id);
  if (drop.length === 0) return { text, removed: 0 };
  const lines = text.split(/\r?\n/);
  for (const b of [...drop].reverse()) lines.splice(b.start, b.end - b.start);
  const joined = lines.join("\n");
  return { text: joined.endsWith("\n") ? joined : `${joined}\n`, removed: drop.length };
}

/** Whether a lesson has expired at `now`. A date without a time expires at the end of that day (UTC). */
export function isExpired(l: Pick<Lesson, "expires">, now: Date): boolean {
  if (l.expires === undefined) return false;
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(l.expires);
  const t = Date.parse(dateOnly ? `${l.expires}T23:59:59.999Z` : l.expires);
  return !Number.isNaN(t) && t <= now.getTime();
}

/**
 * The version of each lesson block in the text, by id: a checksum of the block's lines as they
 * are in the file, so any change to the block (by hand or by a page) changes it. A duplicated id
 * has no single version and is left out.
 */
export function lessonVersions(text: string | undefined): Map<string, string> {
  const t = text ?? "";
  const lines = t.split(/\r?\n/);
  const out = new Map<string, string>();
  const seen = new Set<string>();
  for (const b of parseLessonsMd(t).blocks) {
    if (seen.has(b.id)) out.delete(b.id);
    else out.set(b.id, blockVersion(lines, b));
    seen.add(b.id);
  }
  return out;
}

/** The version of one block of `lines` (see `lessonVersions`). */
export function blockVersion(lines: readonly string[], b: LessonBlock): string {
  return checksum(lines.slice(b.start, b.end).join("\n").trimEnd());
}
