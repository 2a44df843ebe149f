/**
 * Lessons: one sentence of advice with triggers, kept in LESSONS.md at the workspace root (the
 * truth, edited by hand or by `baton lessons add/rm`) and searched through a full-text index
 * in the backend (a cache keyed by the file's content hash, so hand edits are picked up on the
 * next search). The index is one per workspace scope (this host's workspace): hosts sharing a
 * store each have their own LESSONS.md.
 *
 * Writers change the file outside any transaction, taking turns on a lock and never
 * overwriting a hand edit (services/lessons/lessons-file.ts); the index is refreshed afterwards in a
 * transaction of its own, which only rebuilds a cache and so may safely be re-run. A lesson
 * captured in a session is also journaled there (`lesson:added`, linking the rollback it came
 * from) after the file is written.
 *
 * What follows the file write cannot undo it, so a caller told "failed" would retry a change
 * already made. So the index refresh is best effort (a failure is a warning on the result: the
 * index is a cache keyed by the file's hash, and the next search rebuilds it); the journal
 * entry has an id fixed by the lesson, so a retry journals it once; and an `add` of a lesson
 * the file already holds (the same id, or no id, with the same text, scope and triggers)
 * answers that lesson without writing.
 *
 * Longer than ~400 lines, a little: adding, removing, searching and injecting share the write order
 * above, read in one place; the file format is core/lessons/lessons-md.ts, the writer lessons-file.ts.
 */

import type { Backend, LessonDocRow, StoreTx } from "../../backend/contract.js";
import { checksum, randomHex } from "../../core/canonical.js";
import { globProblem } from "../../core/glob-limits.js";
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
} from "../../core/lessons/lessons-md.js";
import {
  type Injection,
  type LessonIntent,
  pathsInText,
  queryTerms,
  type RankedLesson,
  rankLessons,
  renderInjection,
  termOverlapScores,
  visibleLessons,
} from "../../core/lessons/rank.js";
import { redactText } from "../../core/redaction/redact.js";
import type { AppendResult, JsonObject } from "../../core/types.js";
import { BatonError, badInput } from "../../errors.js";
import { hostFacts, type ProcessFacts } from "../../platform/process-facts.js";
import { CACHE_TOUCH_MS, cacheScope } from "../cache-scope.js";
import { workspaceRelative } from "../files.js";
import type { Journal } from "../journal/journal.js";
import { checkLessonChange, editLessonText, type LessonChange, type LessonEditResult, removeLessonText } from "./lesson-edit.js";
import { LessonsFile, lessonsHash, lessonsPath, readLessonsText } from "./lessons-file.js";

/** `2026-09-01`, or a full RFC 3339 time. */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:\d{2})?)?$/;

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
   * read of the file as the lesson itself (services/lessons/lesson-edit.ts takes it back).
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

/** What a write tells its caller besides its result: what went wrong after the change was made (never a reason to retry). */
export interface WriteNotes {
  warnings?: string[];
}

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
  readonly #facts: ProcessFacts;
  readonly #writer: LessonsFile;

  /** `read` reads LESSONS.md (tests inject one that changes the file between reads); `facts` name the host. */
  constructor(backend: Backend, journal: Journal, root: string, now: () => Date, read = readLessonsText, facts: ProcessFacts = hostFacts) {
    this.#backend = backend;
    this.#journal = journal;
    this.#root = root;
    this.#file = lessonsPath(root);
    this.#now = now;
    this.#facts = facts;
    // The lock service is loaded only by a writer: searches (every agent hook) never need it.
    const locks = () => import("../work/locks.js").then((l) => new l.LockService(backend, { now, facts }));
    this.#writer = new LessonsFile(this.#file, locks, () => facts.host(), read);
  }

  /** The index's scope: this workspace (on this host, when the store is shared: services/cache-scope.ts). */
  get scope(): string {
    return cacheScope(this.#backend.capabilities.sharedAcrossHosts, this.#facts.host(), this.#root);
  }

  #load(): Loaded {
    const text = this.#writer.read();
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

  /** Lessons for an intent, best first (see core/lessons/rank.ts for the score). */
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

  async add(
    input: LessonInput,
  ): Promise<{ lesson: Lesson; file: string; journaled?: AppendResult; diagnostics: LessonDiagnostic[] } & WriteNotes> {
    const scope = input.scope ?? "session";
    if (scope === "session" && input.sessionId === undefined) {
      throw badInput("a session lesson needs its session: pass --session <id>, or --workspace for a workspace-wide lesson");
    }
    const text = redactText(input.text.trim());
    if (text === "") throw badInput("the lesson's text is empty; write one sentence of advice");
    if (text.length > MAX_TEXT)
      throw badInput(`the lesson's text is ${text.length} characters; keep it under ${MAX_TEXT} (one or two sentences)`);
    const expires = input.expires;
    // A date as ISO-8601 writes it, nothing else: Date.parse also takes "2026-09-01 (comment)",
    // and a line break in the comment would start a setting of its own in LESSONS.md.
    if (expires !== undefined && (!ISO_DATE.test(expires) || Number.isNaN(Date.parse(expires)))) {
      throw badInput(`expires "${expires}" is not a date; use ISO-8601, e.g. 2026-09-01`);
    }
    if (input.rollback !== undefined && !/^[\x21-\x7e]{1,200}$/.test(input.rollback))
      throw badInput(`the rollback id "${input.rollback}" is not one: printable characters without spaces (\`baton rollback\` prints it)`);
    if (input.id !== undefined && (!LESSON_ID.test(input.id) || redactText(input.id) !== input.id)) {
      throw badInput(
        `lesson id "${redactText(input.id)}" is invalid: use letters, digits, '.', '_', ':' or '-', starting with a letter or digit (and no secret: it is the lesson's heading in LESSONS.md)`,
      );
    }
    // A line break (any control character) would end the list item and start a line of its own
    // in LESSONS.md: another setting of the lesson, or another lesson.
    // Triggers are written to LESSONS.md too: redacted as the text is. A path that held a secret
    // is refused: redacted it would be a pattern (`[redacted:…]` is a character class) matching nothing.
    const tools = cleanList(input.tools, "tool", /[,`\p{Cc}]/u).map(redactText);
    const paths = cleanList(input.paths, "path", /[`\p{Cc}]/u).map((p) => {
      if (redactText(p) !== p)
        throw badInput(`path ${JSON.stringify(redactText(p))} holds what looks like a secret; give the path without it`);
      return this.#relative(p);
    });
    for (const g of paths) {
      const why = globProblem(g);
      if (why) throw badInput(`path ${JSON.stringify(g)} is refused: ${why}; use a simpler pattern`);
    }
    const fingerprints = cleanList(input.fingerprints, "fingerprint", /[`\p{Cc}]/u).map(redactText);
    // The session must exist before anything is written.
    if (input.sessionId !== undefined) await this.#journal.read(input.sessionId);

    const created = this.#now().toISOString();
    const draft = (id: string): Lesson => ({
      id,
      scope,
      ...(scope === "session" ? { sessionId: input.sessionId } : {}),
      text,
      tools,
      paths,
      fingerprints,
      created,
      ...(input.rollback !== undefined ? { rollback: input.rollback } : {}),
      pinned: input.pinned === true,
      ...(expires !== undefined ? { expires } : {}),
      line: 0,
    });
    // The lesson as the file would hold it (text and lists as parsing gives them back), to find it there.
    const wanted = sameAs(parseLessonsMd(renderLessonBlock(draft("les-new"))).lessons[0] ?? draft("les-new"));
    const written = await this.#writer.update((current) => {
      const parsed = parseLessonsMd(current ?? "");
      // Already there (a retry after a failure that followed the write): that lesson, nothing written.
      const there = parsed.lessons.find((l) => (input.id === undefined || l.id === input.id) && sameAs(l) === wanted);
      if (there && current !== undefined) return { text: current, result: there };
      const taken = new Set(parsed.blocks.map((b) => b.id));
      if (input.id !== undefined && taken.has(input.id)) {
        throw new BatonError("conflict", `LESSONS.md already has a lesson "${input.id}"; choose another --id or remove it first`, {
          id: input.id,
        });
      }
      let id = input.id;
      while (id === undefined || taken.has(id)) id = `les-${randomHex(3)}`;
      const l = draft(id);
      const next = appendLessonBlock(current, renderLessonBlock(l));
      return { text: next, result: parseLessonsMd(next).lessons.find((x) => x.id === id) ?? l };
    });
    const lesson = written.result;
    const warnings = [...written.warnings, ...(await this.#refresh(written.text))];
    let journaled: AppendResult | undefined;
    if (input.sessionId !== undefined) {
      const data: JsonObject = { id: lesson.id, text: lesson.text, scope: lesson.scope };
      if (lesson.rollback !== undefined) data.rollback = lesson.rollback;
      // An id the lesson fixes (its id, when it was created, what it says): a retry journals it once.
      const version = checksum(JSON.stringify([lesson.created ?? null, lesson.text, lesson.scope, lesson.sessionId ?? null])).slice(6);
      const id = `lesson:${lesson.id}:added:${version}`;
      journaled = await this.#journal.append(input.sessionId, { id, type: "lesson:added", actor: input.actor ?? "user", data });
    }
    return {
      lesson,
      file: this.#file,
      diagnostics: this.#load().parsed.diagnostics,
      ...(journaled ? { journaled } : {}),
      ...notes(warnings),
    };
  }

  /** Remove the block(s) headed `### <id>` (a malformed block too: that is how to clear one). */
  async remove(id: string): Promise<{ id: string; removed: number; file: string } & WriteNotes> {
    const {
      result: removed,
      text,
      warnings,
    } = await this.#writer.update((current) => {
      const { text, removed } = removeLessonBlocks(current ?? "", id);
      if (removed === 0) {
        const known = parseLessonsMd(current ?? "").blocks.map((b) => b.id);
        throw new BatonError(
          "lesson_not_found",
          `LESSONS.md has no lesson "${id}"${known.length ? ` (lessons: ${known.slice(0, 10).join(", ")}${known.length > 10 ? ", …" : ""})` : ""}; run \`baton lessons list --all\``,
          { id, file: this.#file },
        );
      }
      return { text, result: removed };
    });
    return { id, removed, file: this.#file, ...notes([...warnings, ...(await this.#refresh(text))]) };
  }

  /**
   * Change one lesson's text or pin, made from the lesson as it was at `version`: a lesson
   * changed or removed meanwhile (by hand, or by another writer) is refused and nothing is
   * written (services/lessons/lesson-edit.ts).
   */
  async edit(id: string, version: string, edit: LessonChange): Promise<LessonEditResult & WriteNotes> {
    // Redacted as `add` redacts: LESSONS.md is committed, and read into every agent's prompt.
    const change = edit.text === undefined ? edit : { ...edit, text: redactText(edit.text) };
    checkLessonChange(change);
    const { result, text, warnings } = await this.#writer.update((current) => editLessonText(this.#file, current, id, version, change));
    return { ...result, ...notes([...warnings, ...(await this.#refresh(text))]) };
  }

  /** Remove one lesson's block as it was at `version` (refused, writing nothing, when it changed or went meanwhile). */
  async removeAt(id: string, version: string): Promise<{ id: string; removed: number; file: string } & WriteNotes> {
    const { result, text, warnings } = await this.#writer.update((current) => removeLessonText(this.#file, current, id, version));
    return { ...result, ...notes([...warnings, ...(await this.#refresh(text))]) };
  }

  /** BM25 relevance from the index, rebuilding it first when LESSONS.md changed since it was built. */
  async #fullTextScores(loaded: Loaded, terms: string[]): Promise<Map<string, number>> {
    if (terms.length === 0) return new Map();
    const scope = this.scope;
    const now = this.#now();
    const stale = new Date(now.getTime() - CACHE_TOUCH_MS).toISOString();
    let touch = false;
    const fresh = await this.#backend.transaction("read", async (tx) => {
      const state = await tx.lessons.indexState(scope);
      if (state?.hash !== loaded.hash) return undefined;
      touch = state.usedAt < stale;
      return tx.lessons.search(scope, terms, SEARCH_LIMIT);
    });
    // Used, unchanged, not noted as used for a day: noted now, so `baton gc` keeps it.
    if (touch) await this.#touch(scope, now.toISOString(), stale);
    const rows =
      fresh ??
      (await this.#backend.transaction("write", async (tx) => {
        await this.#reindex(tx, loaded.hash, loaded.parsed);
        return tx.lessons.search(scope, terms, SEARCH_LIMIT);
      }));
    return new Map(rows.filter((r) => r.relevance > 0).map((r) => [r.id, r.relevance]));
  }

  /**
   * Note the index as used. Housekeeping a search does not depend on: a busy or read-only store
   * leaves it to the next search (an I/O error is still an error).
   */
  async #touch(scope: string, at: string, ifBefore: string): Promise<void> {
    await this.#backend
      .transaction("write", (tx) => tx.lessons.touchIndex(scope, at, ifBefore))
      .catch((err: unknown) => {
        if (!(err instanceof BatonError) || err.code === "io_error" || err.code === "internal") throw err;
      });
  }

  /**
   * After a write: index the text just written, unless a search already did. Best effort: the
   * file is written already, and the index is a cache the next search rebuilds from the file's
   * hash, so a failure here is a warning for the caller, never the write's failure.
   */
  async #refresh(text: string): Promise<string[]> {
    try {
      await this.#backend.transaction("write", (tx) => this.#reindex(tx, lessonsHash(text), parseLessonsMd(text)));
      return [];
    } catch (err) {
      const code = err instanceof BatonError ? err.code : "internal";
      return [
        `LESSONS.md was written, but its search index was not refreshed (${code}: ${(err as Error).message}); the next search rebuilds it`,
      ];
    }
  }

  /**
   * Inside a write transaction: rebuild the scope's index from `parsed` unless it was built from
   * this hash already. Rebuilders of one scope take turns (`lockKey`): two replacing it side by
   * side on PostgreSQL would each delete only the rows they saw and leave both sets. Only a
   * cache changes, so a re-run of the transaction is harmless.
   */
  async #reindex(tx: StoreTx, hash: string, parsed: ParsedLessons): Promise<void> {
    const scope = this.scope;
    await tx.lockKey(`lessons-index:${scope}`);
    if ((await tx.lessons.indexState(scope))?.hash === hash) return;
    const docs: LessonDocRow[] = parsed.lessons.map((l) => ({ id: l.id, text: l.text }));
    await tx.lessons.replaceIndex(scope, hash, docs, this.#now().toISOString());
  }

  /**
   * The intent with workspace-relative paths: those given, and those its prompt names ("edit
   * index.js": core/lessons/rank.ts `pathsInText`), so a lesson's path trigger matches a file the
   * words name as it matches `--path`. A named path outside the workspace names no lesson's file.
   */
  #intent(intent: LessonIntent): LessonIntent {
    const given = (intent.paths ?? []).map((p) => this.#relative(p));
    const named = intent.prompt ? pathsInText(intent.prompt).flatMap((p) => workspaceRelative(this.#root, p) ?? []) : [];
    if (named.length === 0) return intent.paths ? { ...intent, paths: given } : intent;
    return { ...intent, paths: [...new Set([...given, ...named])] };
  }

  /** Workspace-relative POSIX form of a path inside the workspace; other paths and globs as given. */
  #relative(p: string): string {
    const posix = p.replace(/\\/g, "/").replace(/^\.\//, "");
    return /[*?[\]{}]/.test(posix) ? posix : (workspaceRelative(this.#root, p) ?? posix);
  }
}

/** The warnings of a write, when there are any. */
function notes(warnings: readonly string[]): WriteNotes {
  return warnings.length > 0 ? { warnings: [...warnings] } : {};
}

/** What makes two lessons the same lesson, whatever their ids and creation times. */
function sameAs(l: {
  scope: LessonScope;
  sessionId?: string | undefined;
  text: string;
  tools: readonly string[];
  paths: readonly string[];
  fingerprints: readonly string[];
  rollback?: string | undefined;
  pinned?: boolean | undefined;
  expires?: string | undefined;
}): string {
  const set = (xs: readonly string[]) => [...xs].sort();
  return JSON.stringify([
    l.scope,
    l.scope === "session" ? (l.sessionId ?? null) : null,
    l.text,
    set(l.tools),
    set(l.paths),
    set(l.fingerprints),
    l.rollback ?? null,
    l.pinned === true,
    l.expires ?? null,
  ]);
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
