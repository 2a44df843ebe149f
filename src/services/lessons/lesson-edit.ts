/**
 * Editing one lesson in LESSONS.md from a page that may be stale (the dashboard). LESSONS.md
 * stays the truth and may be edited by hand at any moment, so every change names the version of
 * the lesson's block it was made from (`blockVersion`: a checksum of the block's lines as they are
 * in the file). The change is computed from the file as it is when written (under the writers'
 * lock, services/lessons/lessons-file.ts, which also serialises `baton lessons add/rm`, and again after
 * a hand edit): a block that is gone is `lesson_not_found`, a block that changed is `conflict`,
 * and in both cases nothing is written. Other lessons' edits do not conflict.
 *
 * Pure functions of the file's text: LessonService.edit / removeAt write what they return.
 */
import {
  blockVersion,
  type Lesson,
  type LessonBlock,
  lessonBlockParts,
  lessonLineKey,
  lessonTextLines,
  lessonVersions,
  parseLessonsMd,
} from "../../core/lessons/lessons-md.js";
import { BatonError, badInput } from "../../errors.js";

export { lessonVersions };

const MAX_TEXT = 2_000;

export interface LessonChange {
  text?: string;
  pinned?: boolean;
}

/** Find the one block of `id` at `version` in `text` (LESSONS.md at `file`), or say why not. */
function locate(file: string, current: string | undefined, id: string, version: string) {
  const text = current ?? "";
  const parsed = parseLessonsMd(text);
  const blocks = parsed.blocks.filter((b) => b.id === id);
  if (blocks.length === 0)
    throw new BatonError(
      "lesson_not_found",
      `LESSONS.md has no lesson "${id}" (removed meanwhile, or never there: \`baton lessons list --all\` lists them); nothing was changed`,
      {
        id,
        file,
      },
    );
  if (blocks.length > 1)
    throw new BatonError("conflict", `LESSONS.md has ${blocks.length} lessons headed "${id}"; edit the file by hand to keep one`, {
      id,
      file,
    });
  const lines = text.split(/\r?\n/);
  const block = blocks[0] as LessonBlock;
  if (blockVersion(lines, block) !== version)
    throw new BatonError(
      "conflict",
      `lesson "${id}" was changed in LESSONS.md since this page read it; nothing was changed: reload it and edit again`,
      {
        id,
        file,
      },
    );
  const lesson = parsed.lessons.find((l) => l.id === id);
  // Errors inside this block (a warning, such as an unknown key, is kept as the human wrote it).
  const problems = parsed.diagnostics.filter((d) => d.severity === "error" && d.line > block.start && d.line <= block.end);
  return { lines, block, lesson, problems };
}

/** A lesson as an edit left it, with its new version. */
export interface LessonEditResult {
  lesson: Omit<Lesson, "line">;
  version: string;
}

/** Refuse a change that could never apply (empty or overlong text), before anything is locked or read. */
export function checkLessonChange(change: LessonChange): void {
  if (change.text !== undefined) {
    const t = change.text.trim();
    if (t === "") throw badInput("the lesson's text is empty; write one sentence of advice, or delete the lesson");
    if (t.length > MAX_TEXT) throw badInput(`the lesson's text is ${t.length} characters; keep it under ${MAX_TEXT}`);
  }
}

/** LESSONS.md's text with one lesson's text or pin changed, made from the lesson at `version`. */
export function editLessonText(
  file: string,
  current: string | undefined,
  id: string,
  version: string,
  change: LessonChange,
): { text: string; result: LessonEditResult } {
  checkLessonChange(change);
  const { lines, block, lesson, problems } = locate(file, current, id, version);
  if (!lesson || problems.length > 0) {
    const first = problems[0];
    throw new BatonError(
      "conflict",
      `lesson "${id}" has a problem in LESSONS.md${first ? ` (line ${first.line}: ${first.message})` : ""}; fix it there by hand (see \`baton lessons check\`), then edit again; nothing was changed`,
      { id, file },
    );
  }
  // Patch only the lines the change is about: anything else in the block (a hand-added
  // `- owner: alice`, a comment, the formatting) is the human's and stays.
  const { metaStart, last } = lessonBlockParts(lines, block);
  const blockLines = lines.slice(block.start, last);
  let meta = blockLines.slice(metaStart - block.start);
  let text = blockLines.slice(1, metaStart - block.start);
  if (change.text !== undefined && change.text.trim() !== lesson.text)
    text = ["", ...lessonTextLines(change.text), ...(meta.length > 0 ? [""] : [])];
  if (change.pinned !== undefined && change.pinned !== lesson.pinned) {
    const listless = meta.length === 0;
    meta = withPin(meta, change.pinned);
    // A list added under the text is one blank line apart from it.
    if (listless && meta.length > 0 && (text[text.length - 1] ?? "").trim() !== "") text = [...text, ""];
  }
  lines.splice(block.start, last - block.start, blockLines[0] as string, ...text, ...meta);
  const joined = lines.join("\n");
  const out = joined.endsWith("\n") ? joined : `${joined}\n`;
  const after = parseLessonsMd(out).lessons.find((l) => l.id === id);
  if (!after)
    throw new BatonError("conflict", `lesson "${id}" would not parse after this edit; edit it in LESSONS.md by hand; nothing was changed`, {
      id,
      file,
    });
  const { line: _line, ...rest } = after;
  return { text: out, result: { lesson: rest, version: lessonVersions(out).get(id) ?? "" } };
}

/** The `- key: value` list with its `pinned` line set (added at its end when absent and pinning). */
function withPin(meta: string[], pinned: boolean): string[] {
  const at = meta.findIndex((l) => lessonLineKey(l) === "pinned");
  const value = pinned ? "yes" : "no";
  if (at >= 0) return meta.map((l, i) => (i === at ? l.replace(/:\s*(.*?)\s*$/, `: ${value}`) : l));
  return pinned ? [...meta, "- pinned: yes"] : meta;
}

/** LESSONS.md's text without one lesson's block, as it was at `version`. */
export function removeLessonText(
  file: string,
  current: string | undefined,
  id: string,
  version: string,
): { text: string; result: { id: string; removed: number; file: string } } {
  const { lines, block } = locate(file, current, id, version);
  lines.splice(block.start, block.end - block.start);
  const joined = lines.join("\n");
  return { text: joined.endsWith("\n") ? joined : `${joined}\n`, result: { id, removed: 1, file } };
}
