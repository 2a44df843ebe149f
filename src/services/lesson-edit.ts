/**
 * Editing one lesson in LESSONS.md from a page that may be stale (the dashboard). LESSONS.md
 * stays the truth and may be edited by hand at any moment, so every change names the version of
 * the lesson's block it was made from (`versionOf`: a checksum of the block's lines as they are
 * in the file). Under the store's write lock (which also serialises `baton lessons add/rm`), the
 * file is read again: a block that is gone is `lesson_not_found`, a block that changed is
 * `conflict`, and in both cases nothing is written. Other lessons' edits do not conflict.
 *
 * The search index is keyed by the file's hash, so the next search rebuilds it.
 */
import type { Backend } from "../backend/contract.js";
import { blockVersion, type Lesson, type LessonBlock, lessonVersions, parseLessonsMd, renderLessonBlock } from "../core/lessons-md.js";
import { BatonError, badInput } from "../errors.js";
import { lessonsPath, readLessonsText, writeLessonsText } from "./lessons-file.js";

export { lessonVersions };

const MAX_TEXT = 2_000;

export interface LessonChange {
  text?: string;
  pinned?: boolean;
}

/** Find the one block of `id` at `version`, or say why not. */
function locate(root: string, id: string, version: string) {
  const file = lessonsPath(root);
  const text = readLessonsText(file) ?? "";
  const parsed = parseLessonsMd(text);
  const blocks = parsed.blocks.filter((b) => b.id === id);
  if (blocks.length === 0)
    throw new BatonError("lesson_not_found", `LESSONS.md has no lesson "${id}" any more (removed meanwhile); nothing was changed`, {
      id,
      file,
    });
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
  return { file, lines, block, lesson };
}

function splice(lines: string[], block: LessonBlock, replacement: string[]): string {
  // Keep the blank lines that separated this block from the next.
  let end = block.end;
  while (end > block.start && (lines[end - 1] ?? "").trim() === "") end--;
  lines.splice(block.start, end - block.start, ...replacement);
  const joined = lines.join("\n");
  return joined.endsWith("\n") ? joined : `${joined}\n`;
}

export async function editLesson(
  backend: Backend,
  root: string,
  id: string,
  version: string,
  change: LessonChange,
): Promise<{ lesson: Omit<Lesson, "line">; version: string }> {
  if (change.text !== undefined) {
    const t = change.text.trim();
    if (t === "") throw badInput("the lesson's text is empty; write one sentence of advice, or delete the lesson");
    if (t.length > MAX_TEXT) throw badInput(`the lesson's text is ${t.length} characters; keep it under ${MAX_TEXT}`);
  }
  return backend.transaction("write", async () => {
    const { file, lines, block, lesson } = locate(root, id, version);
    if (!lesson)
      throw new BatonError("conflict", `lesson "${id}" does not parse (see \`baton lessons check\`); fix it in LESSONS.md by hand`, {
        id,
        file,
      });
    const { line: _line, ...rest } = lesson;
    const next: Omit<Lesson, "line"> = { ...rest };
    if (change.text !== undefined) next.text = change.text.trim();
    if (change.pinned !== undefined) next.pinned = change.pinned;
    const text = splice(lines, block, renderLessonBlock(next).split("\n"));
    writeLessonsText(file, text);
    return { lesson: next, version: lessonVersions(text).get(id) ?? "" };
  });
}

export async function deleteLesson(backend: Backend, root: string, id: string, version: string): Promise<{ id: string }> {
  return backend.transaction("write", async () => {
    const { file, lines, block } = locate(root, id, version);
    lines.splice(block.start, block.end - block.start);
    const joined = lines.join("\n");
    writeLessonsText(file, joined.endsWith("\n") ? joined : `${joined}\n`);
    return { id };
  });
}
