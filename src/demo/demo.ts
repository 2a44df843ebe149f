/**
 * `baton demo`: three short stories told for real in a temporary workspace.
 *
 *  1. Recovery (chapter-live-variant.ts): a live-variant session survives an agent killed
 *     mid-work with SIGKILL.
 *  2. Delivery (chapter-delivery.ts): a browser event sent over HTTP to `baton serve` while no
 *     agent polls is leased, redelivered after the agent holding it is killed, and acked once.
 *  3. Time travel (chapter-time-travel.ts): an agent's spiral is caught, the user rolls back,
 *     and a lesson is captured and injected for the next attempt.
 *
 * Every journal operation is a separate process running this same CLI (`process.execPath` with
 * the CLI script, `--root <workspace> --json`), the agents and the server are real child
 * processes, killed with real signals, and every file is a real file. Each chapter checks the
 * results it relies on; the demo fails (exit 1, naming the chapter and step, the workspace kept
 * for inspection, every child it started stopped) when reality differs from the story.
 *
 * Output: prose by default; `--quiet` prints only the summary; `--json` prints JSON Lines, one
 * `{chapter, step, title, command, result}` object per step (`command` lists the commands the
 * step ran, in order; steps are numbered within their chapter) and a final `{summary}` object.
 * `--chapter <n>` tells one chapter only.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Ctx } from "../cli/context.js";
import { BatonError, badInput, EXIT_CODES } from "../errors.js";
import { endedByClosedStdout, writeStdout } from "../platform/output.js";
import { deliveryChapter } from "./chapter-delivery.js";
import { liveVariantChapter } from "./chapter-live-variant.js";
import { timeTravelChapter } from "./chapter-time-travel.js";
import { type Chapter, clip, Narrator, Story, wrapWords } from "./shared.js";

export interface DemoOptions {
  keep?: boolean;
  quiet?: boolean;
  json?: boolean;
  /** Tell only this chapter (1, 2 or 3). */
  chapter?: string | number;
}

const CHAPTERS: readonly Chapter[] = [liveVariantChapter, deliveryChapter, timeTravelChapter];

function chosenChapters(value: string | number | undefined): readonly Chapter[] {
  if (value === undefined) return CHAPTERS;
  const text = String(value).trim();
  const ch = /^\d+$/.test(text) ? CHAPTERS.find((c) => c.number === Number(text)) : undefined;
  if (!ch) {
    throw badInput(`--chapter must be one of ${CHAPTERS.map((c) => `${c.number} (${c.name})`).join(", ")}; got "${text}"`);
  }
  return [ch];
}

export async function demo(ctx: Ctx, opts: DemoOptions = {}): Promise<void> {
  const json = ctx.json || opts.json === true;
  const quiet = opts.quiet === true;
  const keep = opts.keep === true;
  const chapters = chosenChapters(opts.chapter);
  const started = Date.now();
  const root = mkdtempSync(join(tmpdir(), "baton-demo-"));
  const narrator = new Narrator(json ? (quiet ? "quiet" : "json") : quiet ? "quiet" : "prose");
  const story = new Story(root, narrator);
  const results: { chapter: Chapter; result: Record<string, unknown> }[] = [];
  const total = CHAPTERS.length;
  narrator.intro([
    chapters.length === 1
      ? `Baton demo, chapter ${chapters[0]?.number} of ${total}, told for real in a temporary workspace.`
      : `Baton demo: ${total} short stories, told for real in a temporary workspace.`,
    `Workspace: ${root}`,
    ...wrapWords(
      `Every "$ baton …" line below is a separate process: ${process.execPath} ${story.invocation.cli} --root <workspace> --json …`,
      "",
    ),
  ]);
  try {
    for (const ch of chapters) {
      narrator.startChapter(ch, total);
      results.push({ chapter: ch, result: await ch.tell(story) });
    }
  } catch (err) {
    if (endedByClosedStdout(err)) {
      // The reader went away (`baton demo | head`): no story to tell, nothing failed.
      if (!keep) rmSync(root, { recursive: true, force: true });
      throw err;
    }
    const { chapter, step } = narrator;
    const detail = err instanceof Error ? err.message : String(err);
    const failure = new BatonError(
      "internal",
      `demo failed in chapter ${chapter}, step ${step}: ${detail}\nworkspace kept for inspection: ${root}`,
      { chapter, step, workspace: root },
    );
    if (!json) throw failure;
    // JSON Lines to the end: the failure is one line too.
    writeStdout(`${JSON.stringify({ error: failure.toJSON() })}\n`);
    process.exitCode = EXIT_CODES.internal;
    return;
  } finally {
    story.stopChildren();
  }
  if (!keep) rmSync(root, { recursive: true, force: true });
  const elapsedMs = Date.now() - started;
  if (json) {
    const summary = {
      ok: true,
      chapters: results.map(({ chapter, result }) => ({ chapter: chapter.number, name: chapter.name, ...result })),
      workspace: root,
      kept: keep,
      elapsedMs,
    };
    writeStdout(`${JSON.stringify({ summary })}\n`);
    return;
  }
  const lines = [
    "",
    "Summary",
    ...results.flatMap(({ chapter, result }) => [
      `  ${chapter.number} · ${chapter.name}`,
      ...chapter.summary(result).flatMap((p) => wrapWords(p, "    ")),
    ]),
    keep ? `  Workspace kept: ${root}` : `  Workspace removed: ${root} (pass --keep to keep it).`,
    `  Took ${(elapsedMs / 1000).toFixed(1)} s.`,
  ];
  writeStdout(`${lines.map(clip).join("\n")}\n`);
}
