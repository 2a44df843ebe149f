/**
 * Ranking lessons for an intent (what the agent is about to do) and rendering the block to put
 * in its prompt. Pure: the text relevance comes in as scores (BM25 from the backend's full-text
 * index, or `termOverlapScores` where the backend has none).
 *
 * score = 2.0 × text relevance (normalised so the best text match is 1; under 0.02 is noise)
 *       + 1.5 if a trigger tool is the intent's tool
 *       + 1.5 if a trigger path glob matches one of the intent's paths
 *       + 3.0 if a trigger fingerprint is the intent's failure fingerprint
 *       + 0.5 if pinned (so a pinned lesson is always offered when there is room)
 * A lesson scoring 0 is not relevant and not returned. Ties: pinned, newer, then id.
 */

import { createRequire } from "node:module";
import type Picomatch from "picomatch";
import { GLOB_OPTIONS, globProblem } from "../glob-limits.js";
import { isExpired, type Lesson } from "./lessons-md.js";

export interface LessonIntent {
  /** The session asking: its own lessons are offered besides the workspace's. */
  sessionId?: string;
  tool?: string;
  /** Workspace-relative paths the agent will touch. */
  paths?: string[];
  /** Free text: the prompt or the task. The paths it names count besides `paths` (services/lessons/lessons.ts). */
  prompt?: string;
  /** The failure the agent just hit. */
  fingerprint?: string;
}

export const LESSON_WEIGHTS = Object.freeze({ text: 2, tool: 1.5, path: 1.5, fingerprint: 3, pinned: 0.5 });
/** Text relevance below this share of the best match counts as none. */
export const MIN_TEXT_SHARE = 0.02;

export interface RankedLesson {
  lesson: Lesson;
  score: number;
  /** What contributed: the text share, and which triggers matched. */
  why: { text: number; tool: boolean; path?: string; fingerprint: boolean; pinned: boolean };
}

/** Lessons an intent may see: not expired, and workspace-wide or of the asking session. */
export function visibleLessons(lessons: readonly Lesson[], sessionId: string | undefined, now: Date): Lesson[] {
  return lessons.filter((l) => !isExpired(l, now) && (l.scope === "workspace" || (sessionId !== undefined && l.sessionId === sessionId)));
}

const STOPWORDS = new Set(
  "a an and are as at be but by do does for from has have how i if in into is it its me my no not of on or our so than that the then there these this to was we were what when where which while who why will with you your".split(
    " ",
  ),
);
const MAX_TERMS = 32;

/** Lowercase word tokens (letters and digits), as the full-text index splits them. */
export function tokenize(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
}

/**
 * The search terms of an intent: the words of its prompt and the names of its files
 * (`src/ui/Tabs.tsx` → "tabs"), without stopwords. The tool is not a term: it has its own
 * trigger, and "Edit" as a word would match every lesson that mentions editing.
 */
export function queryTerms(intent: LessonIntent): string[] {
  const names = (intent.paths ?? []).map((p) => (p.split(/[\\/]/).pop() ?? "").replace(/\.[^.]*$/, ""));
  const words = [intent.prompt ?? "", ...names].flatMap(tokenize);
  return [...new Set(words.filter((w) => !STOPWORDS.has(w) && w.length > 1))].slice(0, MAX_TERMS);
}

/**
 * Extensions that make a word without a slash a file name ("index.js", "README.md"), where
 * other dotted words are prose ("e.g.", "v1.2", "a.m.", "example.com"). A short list of
 * common source, config and document types; one-letter ones that abbreviations end in (m, r,
 * d, s, t, g) are left out, and so is everything else: a path with a slash needs none.
 */
const PATH_EXTENSIONS = new Set(
  "js mjs cjs jsx ts mts cts tsx json jsonc json5 md mdx markdown txt rst adoc html htm css scss sass less vue svelte astro py pyi ipynb rb php java kt kts scala groovy gradle go rs c h cc cpp cxx hpp hh swift cs fs dart lua pl pm jl ex exs erl hs elm clj cljs ml mli zig nim sh bash zsh fish ps1 bat sql graphql gql proto yml yaml toml ini cfg conf env xml csv tsv lock svg png jpg jpeg gif webp ico pdf tf tfvars hcl mk cmake gitignore dockerignore npmrc nvmrc editorconfig eslintrc prettierrc babelrc".split(
    " ",
  ),
);
/** Library names that look like file names ("Node.js"): prose, not paths, unless written with a slash. */
const NAMED_LIKE_FILES = new Set(
  "node.js next.js nuxt.js vue.js react.js express.js three.js d3.js chart.js ember.js backbone.js angular.js alpine.js p5.js socket.io".split(
    " ",
  ),
);
/** Words joined by a slash in prose ("and/or"), not directories. */
const PROSE_SLASHES = new Set("and/or either/or yes/no on/off true/false he/she his/her s/he input/output read/write pros/cons".split(" "));
/** Only this much of a text is scanned for paths (a prompt can be a pasted log of megabytes). */
const MAX_PATH_SCAN = 20_000;
const MAX_TEXT_PATHS = 32;

/**
 * The paths a text names ("edit src/ui/Tabs.tsx", "fix index.js:12"): words with a slash, or
 * ending in a known file extension, without the quotes, brackets and sentence punctuation around
 * them and a trailing line number (`:12`, `:12:3`, `#L12`). Not paths: URLs, globs, `~/…`,
 * words without a letter, prose like "e.g.", "v1.2", "and/or", "Node.js". Paths as written: the
 * caller makes them workspace-relative (and drops those outside it). At most 32, in order.
 */
export function pathsInText(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.slice(0, MAX_PATH_SCAN).split(/[\s"'`(),;<>|]+/)) {
    // "[src/a.ts]" is a bracketed path; "app/[id]/page.tsx" a path with brackets in it.
    const w = (/^\[.*\]$/.test(raw) ? raw.slice(1, -1) : raw)
      .replace(/[.,:;!?]+$/, "")
      .replace(/(?::\d+)+$|#L\d+(?:-L?\d+)?$/, "")
      .replace(/[.:]+$/, "");
    if (w.length < 2 || w.length > 1_024 || !/\p{L}/u.test(w) || /[*?{}]|:\/\/|^\/\/|^~|^www\./i.test(w)) continue;
    const lower = w.toLowerCase();
    if (w.includes("/")) {
      if (PROSE_SLASHES.has(lower) || w.split("/").every((seg) => seg.length <= 1)) continue;
    } else {
      const dot = w.lastIndexOf(".");
      if (dot < 0 || !PATH_EXTENSIONS.has(lower.slice(dot + 1)) || NAMED_LIKE_FILES.has(lower)) continue;
    }
    if (!out.includes(w)) out.push(w);
    if (out.length >= MAX_TEXT_PATHS) break;
  }
  return out;
}

/** Relevance without a full-text index: how many distinct query terms a lesson's text holds. */
export function termOverlapScores(lessons: readonly Lesson[], terms: readonly string[]): Map<string, number> {
  const scores = new Map<string, number>();
  if (terms.length === 0) return scores;
  for (const l of lessons) {
    const words = new Set(tokenize(l.text));
    const hits = terms.filter((t) => words.has(t)).length;
    if (hits > 0) scores.set(l.id, hits);
  }
  return scores;
}

let picomatch: typeof Picomatch | undefined;
const matchers = new Map<string, (path: string) => boolean>();

/** A trigger path: a glob (a pattern without `/` matches the file name anywhere), or a directory prefix. */
export function pathMatches(glob: string, path: string): boolean {
  const g = glob.replace(/^\.\//, "").replace(/\/+$/, "");
  if (path === g || path.startsWith(`${g}/`)) return true;
  let m = matchers.get(g);
  if (!m) {
    picomatch ??= createRequire(import.meta.url)("picomatch") as typeof Picomatch;
    // A pattern beyond the limits never matches (the reader refuses it; this is the backstop).
    m = globProblem(g) !== undefined ? () => false : picomatch(g, { ...GLOB_OPTIONS, basename: !g.includes("/") });
    matchers.set(g, m);
  }
  return m(path);
}

/** Rank lessons (already filtered with visibleLessons) for an intent, best first. */
export function rankLessons(lessons: readonly Lesson[], intent: LessonIntent, textScores: ReadonlyMap<string, number>): RankedLesson[] {
  const W = LESSON_WEIGHTS;
  let best = 0;
  for (const l of lessons) best = Math.max(best, textScores.get(l.id) ?? 0);
  const tool = intent.tool?.toLowerCase();
  const paths = intent.paths ?? [];
  const out: RankedLesson[] = [];
  for (const lesson of lessons) {
    const share = best > 0 ? (textScores.get(lesson.id) ?? 0) / best : 0;
    // Shares this small are BM25 noise (a term in most lessons has an IDF of ~0), not relevance.
    const text = share >= MIN_TEXT_SHARE ? share : 0;
    const toolHit = tool !== undefined && lesson.tools.some((t) => t.toLowerCase() === tool);
    const pathHit = lesson.paths.find((g) => paths.some((p) => pathMatches(g, p)));
    const fpHit = intent.fingerprint !== undefined && lesson.fingerprints.includes(intent.fingerprint);
    const score =
      W.text * text +
      (toolHit ? W.tool : 0) +
      (pathHit !== undefined ? W.path : 0) +
      (fpHit ? W.fingerprint : 0) +
      (lesson.pinned ? W.pinned : 0);
    if (score <= 0) continue;
    const why: RankedLesson["why"] = { text: round(text), tool: toolHit, fingerprint: fpHit, pinned: lesson.pinned };
    if (pathHit !== undefined) why.path = pathHit;
    out.push({ lesson, score: round(score), why });
  }
  return out.sort(
    (a, b) =>
      b.score - a.score ||
      Number(b.lesson.pinned) - Number(a.lesson.pinned) ||
      compareText(b.lesson.created ?? "", a.lesson.created ?? "") ||
      compareText(a.lesson.id, b.lesson.id),
  );
}

/**
 * Code-unit order. Lesson ids are ASCII and `created` is ISO-8601, so this is the order they
 * mean; `localeCompare` would also make the order depend on the locale, and its first call
 * builds an ICU collator, ~7 ms of every agent hook that injects lessons (docs/benchmarks.md).
 */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

export const INJECTION_HEADING = "## Lessons from earlier attempts";
/** Below this many characters of advice, a truncated lesson is not worth including. */
const MIN_TRUNCATED = 24;

export interface Injection {
  /** The block to put in a prompt; empty when nothing is relevant or nothing fits. */
  markdown: string;
  included: { id: string; score: number; truncated: boolean }[];
  /** Lessons among the top k that did not fit in maxChars. */
  omitted: string[];
}

/**
 * The prompt block: the top `k` lessons, best first, as a markdown list within `maxChars`.
 * A lesson that does not fit is left out (a later, shorter one may still fit); if not even the
 * best fits, it is truncated rather than dropped.
 */
export function renderInjection(ranked: readonly RankedLesson[], opts: { k: number; maxChars: number }): Injection {
  const top = ranked.slice(0, Math.max(0, opts.k));
  const out: Injection = { markdown: "", included: [], omitted: [] };
  let md = INJECTION_HEADING;
  for (const r of top) {
    const text = r.lesson.text.replace(/\s+/g, " ").trim();
    const suffix = ` (${r.lesson.id})`;
    const item = `\n- ${text}${suffix}`;
    if (md.length + item.length <= opts.maxChars) {
      md += item;
      out.included.push({ id: r.lesson.id, score: r.score, truncated: false });
      continue;
    }
    const room = opts.maxChars - md.length - `\n- `.length - suffix.length - 1;
    if (out.included.length === 0 && room >= MIN_TRUNCATED) {
      md += `\n- ${text.slice(0, room).trimEnd()}…${suffix}`;
      out.included.push({ id: r.lesson.id, score: r.score, truncated: true });
      continue;
    }
    out.omitted.push(r.lesson.id);
  }
  if (out.included.length > 0) out.markdown = md;
  return out;
}
