/**
 * Lessons: one sentence of advice with triggers, kept in LESSONS.md at the workspace root (the
 * truth, edited by hand or by `baton lessons add/rm`) and searched through a full-text index
 * in the backend (a cache keyed by the file's content hash, so hand edits are picked up on the
 * next search).
 *
 * Writers run inside a backend write transaction holding `lockKey("lessons-md:<file>")`, which
 * serialises two processes adding lessons at once (each re-reads the file under it) on every
 * engine (SQLite's write lock already did; PostgreSQL's write transactions run side by side),
 * and the index is refreshed in the same transaction. A lesson captured in a session is also journaled there
 * (`lesson:added`, linking the rollback it came from) after the file is written.
 */
import type { Backend, LessonDocRow, StoreTx } from "../backend/contract.js";
import { randomHex } from "../core/canonical.js";
import {
  type Injection,
  type LessonIntent,
  queryTerms,
  type RankedLesson,
  rankLessons,
  renderInjection,
  termOverlapScores,
  visibleLessons,
} from "../core/lesson-rank.js";
import {
  appendLessonBlock,
  isExpired,
  LESSON_ID,
  type Lesson,
  type LessonDiagnostic,
  type LessonScope,
  lessonVersions,
  type ParsedLessons,
  parseLessonsMd,
  removeLessonBlocks,
  renderLessonBlock,
} from "../core/lessons-md.js";
import { redactText } from "../core/redact.js";
import type { AppendResult, JsonObject } from "../core/types.js";
import { BatonError, badInput } from "../errors.js";
import { workspaceRelative } from "./files.js";
import type { Journal } from "./journal.js";
import { lessonsHash, lessonsPath, readLessonsText, writeLessonsText } from "./lessons-file.js";

export interface LessonInput {
  text: string;
  /** Default `session`: a lesson applies to its own session unless made workspace-wide. */
  scope?: LessonScope;
  /** The lesson's session (required for scope session); for a workspace lesson, where its capture is journaled. */
  sessionId?: string;
  tools?: string[];
  paths?: string[];
  fingerprints?: string[];
  /** The rollback (or checkpoint) id this lesson was captured from. */
  rollback?: string;
  pinned?: boolean;
  /** ISO date or time after which the lesson is no longer offered. */
  expires?: string;
  /** Default: generated (`les-` + 6 hex digits). */
  id?: string;
  actor?: string;
}

export interface ListedLesson extends Lesson {
  expired: boolean;
  /**
   * With `versions`: the version of the lesson's block in LESSONS.md, computed from the same
   * read of the file as the lesson itself (services/lesson-edit.ts takes it back).
   */
  version?: string;
}

export interface LessonsReport {
  /** LESSONS.md's path. */
  file: string;
  /** Problems found in the file (each names its line); the other lessons still load. */
  diagnostics: LessonDiagnostic[];
}

export interface LessonSearchResult extends LessonsReport {
  results: RankedLesson[];
  /** Whether text relevance came from the backend's full-text index (else term overlap). */
  fullText: boolean;
}

export interface LessonInjection extends LessonsReport, Injection {}

export const DEFAULT_SEARCH_K = 10;
export const DEFAULT_INJECT_K = 5;
export const DEFAULT_INJECT_MAX_CHARS = 2_000;
const SEARCH_LIMIT = 1_000;
const MAX_TEXT = 2_000;

interface Loaded {
  text: string | undefined;
  hash: string;
  parsed: ParsedLessons;
}

export class LessonService {
  readonly #backend: Backend;
  readonly #journal: Journal;
  readonly #root: string;
  readonly #file: string;
  readonly #now: () => Date;

  readonly #read: (file: string) => string | undefined;

  /** `read` reads LESSONS.md (tests inject one that changes the file between reads). */
  constructor(backend: Backend, journal: Journal, root: string, now: () => Date, read = readLessonsText) {
    this.#backend = backend;
    this.#journal = journal;
    this.#root = root;
    this.#file = lessonsPath(root);
    this.#now = now;
    this.#read = read;
  }

  #load(): Loaded {
    const text = this.#read(this.#file);
    return { text, hash: lessonsHash(text), parsed: parseLessonsMd(text ?? "") };
  }

  /**
   * Lessons in the file (of one session's view with `sessionId`), expired ones only with `all`;
   * with `versions`, each with its block's version from the same read of the file, so a hand
   * edit between two reads can never pair old text with a new version (which an edit would then
   * accept, overwriting the hand edit).
   */
  list(opts: { sessionId?: string; all?: boolean; versions?: boolean } = {}): LessonsReport & { lessons: ListedLesson[] } {
    const { text, parsed } = this.#load();
    const now = this.#now();
    const versions = opts.versions ? lessonVersions(text) : undefined;
    const lessons = parsed.lessons
      .filter((l) => opts.sessionId === undefined || l.scope === "workspace" || l.sessionId === opts.sessionId)
      .map((l): ListedLesson => {
        const version = versions?.get(l.id);
        return { ...l, expired: isExpired(l, now), ...(version !== undefined ? { version } : {}) };
      })
      .filter((l) => opts.all || !l.expired);
    return { file: this.#file, lessons, diagnostics: parsed.diagnostics };
  }

  /** Problems in LESSONS.md, and how many lessons load. */
  check(): LessonsReport & { lessons: number } {
    const { parsed } = this.#load();
    return { file: this.#file, lessons: parsed.lessons.length, diagnostics: parsed.diagnostics };
  }

  /** Lessons for an intent, best first (see core/lesson-rank.ts for the score). */
  async search(intent: LessonIntent, opts: { k?: number } = {}): Promise<LessonSearchResult> {
    const loaded = this.#load();
    const norm = this.#intent(intent);
    const visible = visibleLessons(loaded.parsed.lessons, norm.sessionId, this.#now());
    const terms = queryTerms(norm);
    const fullText = this.#backend.capabilities.fullTextSearch;
    const scores = fullText ? await this.#fullTextScores(loaded, terms) : termOverlapScores(visible, terms);
    const results = rankLessons(visible, norm, scores).slice(0, Math.max(0, opts.k ?? DEFAULT_SEARCH_K));
    return { file: this.#file, results, fullText, diagnostics: loaded.parsed.diagnostics };
  }

  /** The prompt block for an intent: the top k lessons within maxChars, best first. */
  async inject(intent: LessonIntent, opts: { k?: number; maxChars?: number } = {}): Promise<LessonInjection> {
    const k = opts.k ?? DEFAULT_INJECT_K;
    const { results, diagnostics, file } = await this.search(intent, { k });
    return { file, diagnostics, ...renderInjection(results, { k, maxChars: opts.maxChars ?? DEFAULT_INJECT_MAX_CHARS }) };
  }

  async add(input: LessonInput): Promise<{ lesson: Lesson; file: string; journaled?: AppendResult; diagnostics: LessonDiagnostic[] }> {
    const scope = input.scope ?? "session";
    if (scope === "session" && input.sessionId === undefined) {
      throw badInput("a session lesson needs its session: pass --session <id>, or --workspace for a workspace-wide lesson");
    }
    const text = redactText(input.text.trim());
    if (text === "") throw badInput("the lesson's text is empty; write one sentence of advice");
    if (text.length > MAX_TEXT)
      throw badInput(`the lesson's text is ${text.length} characters; keep it under ${MAX_TEXT} (one or two sentences)`);
    const expires = input.expires;
    if (expires !== undefined && Number.isNaN(Date.parse(expires))) {
      throw badInput(`expires "${expires}" is not a date; use ISO-8601, e.g. 2026-09-01`);
    }
    if (input.id !== undefined && !LESSON_ID.test(input.id)) {
      throw badInput(`lesson id "${input.id}" is invalid: use letters, digits, '.', '_', ':' or '-', starting with a letter or digit`);
    }
    const tools = cleanList(input.tools, "tool", /[,`]/);
    const paths = cleanList(input.paths, "path", /`/).map((p) => this.#relative(p));
    const fingerprints = cleanList(input.fingerprints, "fingerprint", /`/);
    // The session must exist before anything is written.
    if (input.sessionId !== undefined) await this.#journal.read(input.sessionId);

    const lesson = await this.#backend.transaction("write", async (tx) => {
      await tx.lockKey(this.#fileKey()); // writers of this LESSONS.md take turns, whatever the engine
      const loaded = this.#load();
      const taken = new Set(loaded.parsed.blocks.map((b) => b.id));
      if (input.id !== undefined && taken.has(input.id)) {
        throw new BatonError("conflict", `LESSONS.md already has a lesson "${input.id}"; choose another --id or remove it first`, {
          id: input.id,
        });
      }
      let id = input.id;
      while (id === undefined || taken.has(id)) id = `les-${randomHex(3)}`;
      const l: Lesson = {
        id,
        scope,
        ...(scope === "session" ? { sessionId: input.sessionId } : {}),
        text,
        tools,
        paths,
        fingerprints,
        created: this.#now().toISOString(),
        ...(input.rollback !== undefined ? { rollback: input.rollback } : {}),
        pinned: input.pinned === true,
        ...(expires !== undefined ? { expires } : {}),
        line: 0,
      };
      const next = appendLessonBlock(loaded.text, renderLessonBlock(l));
      writeLessonsText(this.#file, next);
      const parsed = parseLessonsMd(next);
      await this.#reindex(tx, lessonsHash(next), parsed);
      return parsed.lessons.find((x) => x.id === id) ?? l;
    });
    let journaled: AppendResult | undefined;
    if (input.sessionId !== undefined) {
      const data: JsonObject = { id: lesson.id, text: lesson.text, scope: lesson.scope };
      if (lesson.rollback !== undefined) data.rollback = lesson.rollback;
      journaled = await this.#journal.append(input.sessionId, { type: "lesson:added", actor: input.actor ?? "user", data });
    }
    return { lesson, file: this.#file, diagnostics: this.#load().parsed.diagnostics, ...(journaled ? { journaled } : {}) };
  }

  /** Remove the block(s) headed `### <id>` (a malformed block too: that is how to clear one). */
  async remove(id: string): Promise<{ id: string; removed: number; file: string }> {
    return this.#backend.transaction("write", async (tx) => {
      await tx.lockKey(this.#fileKey());
      const loaded = this.#load();
      const { text, removed } = removeLessonBlocks(loaded.text ?? "", id);
      if (removed === 0) {
        const known = loaded.parsed.blocks.map((b) => b.id);
        throw new BatonError(
          "lesson_not_found",
          `LESSONS.md has no lesson "${id}"${known.length ? ` (lessons: ${known.slice(0, 10).join(", ")}${known.length > 10 ? ", …" : ""})` : ""}; run \`baton lessons list --all\``,
          { id, file: this.#file },
        );
      }
      writeLessonsText(this.#file, text);
      await this.#reindex(tx, lessonsHash(text), parseLessonsMd(text));
      return { id, removed, file: this.#file };
    });
  }

  /** BM25 relevance from the index, rebuilding it first when LESSONS.md changed since it was built. */
  async #fullTextScores(loaded: Loaded, terms: string[]): Promise<Map<string, number>> {
    if (terms.length === 0) return new Map();
    const fresh = await this.#backend.transaction("read", async (tx) =>
      (await tx.lessons.indexedHash()) === loaded.hash ? tx.lessons.search(terms, SEARCH_LIMIT) : undefined,
    );
    const rows =
      fresh ??
      (await this.#backend.transaction("write", async (tx) => {
        if ((await tx.lessons.indexedHash()) !== loaded.hash) await this.#reindex(tx, loaded.hash, loaded.parsed);
        return tx.lessons.search(terms, SEARCH_LIMIT);
      }));
    return new Map(rows.filter((r) => r.relevance > 0).map((r) => [r.id, r.relevance]));
  }

  async #reindex(tx: StoreTx, hash: string, parsed: ParsedLessons): Promise<void> {
    const docs: LessonDocRow[] = parsed.lessons.map((l) => ({ id: l.id, text: l.text }));
    await tx.lessons.replaceIndex(hash, docs, this.#now().toISOString());
  }

  /** The lockKey of this workspace's LESSONS.md (hosts sharing a store each have their own file). */
  #fileKey(): string {
    return `lessons-md:${this.#file}`;
  }

  #intent(intent: LessonIntent): LessonIntent {
    return intent.paths ? { ...intent, paths: intent.paths.map((p) => this.#relative(p)) } : intent;
  }

  /** Workspace-relative POSIX form of a path inside the workspace; other paths and globs as given. */
  #relative(p: string): string {
    const posix = p.replace(/\\/g, "/").replace(/^\.\//, "");
    return /[*?[\]{}]/.test(posix) ? posix : (workspaceRelative(this.#root, p) ?? posix);
  }
}

function cleanList(values: readonly string[] | undefined, what: string, forbidden: RegExp): string[] {
  const out: string[] = [];
  for (const raw of values ?? []) {
    const v = raw.trim();
    if (v === "") throw badInput(`an empty ${what} was given`);
    if (forbidden.test(v)) throw badInput(`${what} "${v}" contains a character LESSONS.md cannot hold in a list (${forbidden.source})`);
    if (!out.includes(v)) out.push(v);
  }
  return out;
}
