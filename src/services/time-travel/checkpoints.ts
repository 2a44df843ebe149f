/**
 * Taking, listing, pinning and pruning checkpoints; collecting blobs nothing references.
 *
 * A checkpoint's files are read, hashed and packed first, outside any transaction (content over
 * the inline limit is written to its blob file then, fsynced, directories fsynced). One write
 * transaction then stores the small blobs, records the checkpoint, updates the stat cache and
 * applies retention: its commit makes blobs and references durable together.
 * Blobs are deleted only inside a write transaction that has just found them unreferenced, and
 * that transaction bumps the blob epoch: a whole-tree checkpoint that trusted the stat cache
 * while a collection ran sees the epoch change and starts again, so it never commits a
 * reference to a blob that was deleted under it.
 *
 * Longer than most files here (~630 lines) because taking a checkpoint, targeted or whole
 * tree, is one sequence over one set of state (the blob store, this process's stat cache copy
 * and lanes); what stands alone is apart: manifests.ts (lanes, pruning), stat-table.ts (the stat
 * cache copy), checkpoint-config.ts (settings, excluded and private paths), blobs.ts, tree-scan.ts.
 */
import { closeSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import type { Backend, CheckpointFileRow, CheckpointRow, SkippedPath, StatCacheRow, StoreTx } from "../../backend/contract.js";
import { sessionKey } from "../../backend/contract.js";
import { checksum, randomHex, sha256 } from "../../core/canonical.js";
import {
  type Checkpoint,
  type CheckpointFile,
  type CheckpointInfo,
  type CheckpointKind,
  MAX_CHECKPOINT_RETAIN,
} from "../../core/time-travel/checkpoints.js";
import { BatonError, badInput, checkDeadline } from "../../errors.js";
import { touchPrivate } from "../../platform/private-files.js";
import { hostFacts, machineId } from "../../platform/process-facts.js";
import { checkPath, readCurrent, unsafePath } from "../../platform/safe-fs.js";
import { pruneAgentMarks } from "../../platform/workspace.js";
import { CACHE_TOUCH_MS, CACHE_TTL_MS, cacheScope } from "../cache-scope.js";
import { isWorkspaceRoot, WHOLE_ROOT, withLinkTargets, workspaceRelative } from "../files.js";
import { Blobs, type StagedBlob } from "./blobs.js";
import { type CheckpointOptions, DEFAULT_PRIVATE, pathMatcher, readCheckpointConfig } from "./checkpoint-config.js";
import { laneFor, Manifests } from "./manifests.js";
import { classify, nextStatTable, readRegular, type StatTable, statTable } from "./stat-table.js";
import { coversWith, walkCovers } from "./tree-rules.js";
import { MODE, STAT_FIELDS, WalkCache, walkTree } from "./tree-scan.js";
import { outsideRulesText, parseOutsideRules, rootSources } from "./tree-sources.js";

export type { CheckpointOptions };

export interface CheckpointInput {
  /** Targeted: the files about to be written (workspace-relative, or absolute inside it). */
  files?: readonly string[];
  /** Whole tree (the default when no files are given). */
  all?: boolean;
  label?: string;
  toolName?: string;
  turn?: number;
  runId?: string;
  /** The agent lane taking it (core/lanes.ts): its undo steps through its own lane's checkpoints. */
  lane?: string;
  pinned?: boolean;
  /**
   * The checkpoint's id (`cp-` and 1-60 letters, digits, `.`, `_`, `-`), for a caller that may
   * ask twice (an agent hook answered by the server, then by its own process): a create with an
   * id this session already has returns that checkpoint (`duplicate`) and reads nothing; one
   * another session has is `conflict`. Default: a fresh random id.
   */
  id?: string;
  /** Commit only by this time (ms since the epoch), checked right before the commit; later: `deadline_exceeded`, nothing stored. */
  deadline?: number;
  /**
   * Whole tree: told how far it got, synchronously, as it goes: `scan` after each directory
   * walked (`done`: files found so far), then `read` after each new or changed file is read and
   * stored (`done` of `total`). For a progress line; it must not throw.
   */
  onProgress?: (p: { phase: "scan" | "read"; done: number; total?: number }) => void;
}

export interface CheckpointResult {
  checkpoint: Checkpoint;
  /** The id was given and already taken in this session: this is the checkpoint made then. */
  duplicate?: boolean;
  /** Checkpoints retention pruned to make room. */
  pruned: string[];
  /** Whole tree: files read (new or changed) vs trusted from the stat cache; blobs newly stored. */
  stats: { files: number; read: number; cached: number; blobsStored: number };
  /**
   * Whole tree: files left out because their names cannot be stored and restored safely (a
   * newline, a backslash, a control character, too long). A rollback leaves them as they are.
   */
  skipped?: { path: string; reason: string }[];
}

/** What a rollback needs of a tree checkpoint beside its files: the rules it kept (`outside_rules`), and the paths its walk skipped. */
export interface TreeKept {
  rules: string | null;
  skipped: readonly string[];
}

/**
 * A cache entry is trusted when every stat field agrees and the file's mtime is strictly older
 * than the scan that hashed it, as the filesystem's own clock tells it: each whole-tree scan
 * first touches `.baton/stat-clock` and reads back its mtime. A write landing in the same
 * timestamp tick as the scan (coarse kernel clocks, 1-2 s granularity on old filesystems)
 * makes the entry "racy" and the file is read again next time. Git's racy-clean rule.
 */
const CLOCK_FILE = "stat-clock";
const MAX_RETRIES = 3;
/**
 * A whole-tree checkpoint keeps the packed content of the small files it read in memory until
 * its commit; past this many bytes (a first checkpoint of a large tree) it stores them ahead,
 * in write transactions of their own. Stored ahead, they are unreferenced until the commit:
 * `baton gc` spares them for its grace period, and any deletion bumps the blob epoch, which
 * makes the checkpoint start again.
 */
const STAGE_AHEAD_BYTES = 32 * 1024 * 1024;

const CHECKPOINT_ID = /^cp-[A-Za-z0-9._-]{1,60}$/;

/** The checkpoint a caller's id names was made before (found inside the commit's transaction). */
class AlreadyTaken extends BatonError {
  constructor(readonly row: CheckpointRow) {
    super("conflict", `checkpoint ${row.id} exists`);
  }
}

/**
 * Blobs were collected since this checkpoint read the blob epoch (or a blob file it staged is
 * gone): it starts again. A BatonError, so the backend hands it back from the transaction as
 * it is (anything else thrown inside one is reported as `internal`).
 */
class EpochChanged extends BatonError {
  constructor() {
    super("storage_busy", "blobs were collected while this checkpoint ran; it starts again");
  }
}

export function toInfo(r: CheckpointRow): CheckpointInfo {
  const c: CheckpointInfo = {
    id: r.id,
    sessionId: r.sessionId,
    seq: r.seq,
    kind: r.kind,
    pinned: r.pinned,
    createdAt: r.createdAt,
    fileCount: r.fileCount,
  };
  if (r.runId !== null) c.runId = r.runId;
  if (r.turn !== null) c.turn = r.turn;
  if (r.toolName !== null) c.toolName = r.toolName;
  if (r.parent !== null) c.parent = r.parent;
  if (r.label !== null) c.label = r.label;
  if (r.restores !== null) c.restores = r.restores;
  if (r.prunedAt !== null) c.prunedAt = r.prunedAt;
  if (r.host) c.host = r.host;
  if (r.workspace) c.workspace = r.workspace;
  if (r.machine) c.machine = r.machine;
  if (r.agentLane) c.lane = r.agentLane;
  return c;
}

/** The note of a file entry whose blob stays in the workspace that took it (a private file on a shared store). */
const LOCAL = "local";

export function toFile(r: CheckpointFileRow): CheckpointFile {
  if (r.state === "file") {
    const f: CheckpointFile = { path: r.path, hash: r.hash ?? "", mode: r.mode ?? 0o644, size: r.size ?? 0 };
    return r.note === LOCAL ? { ...f, local: true } : f;
  }
  if (r.state === "absent") return { path: r.path, absent: true };
  return { path: r.path, skipped: r.note ?? "not stored" };
}

function toRow(f: CheckpointFile): CheckpointFileRow {
  if ("hash" in f) return { path: f.path, state: "file", hash: f.hash, mode: f.mode, size: f.size, note: f.local ? LOCAL : null };
  if ("absent" in f) return { path: f.path, state: "absent", hash: null, mode: null, size: null, note: null };
  return { path: f.path, state: "skipped", hash: null, mode: null, size: null, note: f.skipped };
}

/** What a garbage collection removed and kept. */
export interface CollectResult {
  blobsRemoved: number;
  tempsRemoved: number;
  blobsKept: number;
}

export class CheckpointService {
  readonly #backend: Backend;
  readonly #root: string;
  readonly #now: () => Date;
  readonly #batonDir: string;
  readonly blobs: Blobs;
  readonly retain: number;
  readonly #exclude: readonly string[];
  /** Whether no checkpoint may store a path (configured excludes). */
  readonly excluded: (rel: string) => boolean;
  /** Whether a path's content stays in this workspace's blob store: a private file, on a store shared across hosts. */
  readonly keptLocal: (rel: string) => boolean;
  /** Changes with the private patterns, so stat cache entries always name blobs where they belong. */
  readonly #privateMark: string;
  readonly #maxFileBytes: number;
  readonly #stageAheadBytes: number;
  /**
   * This process's copy of the stat cache, valid while the store's generation is unchanged: a
   * long-lived process (server, MCP, library) skips re-reading thousands of rows per checkpoint.
   */
  #statMemo: StatTable | undefined;
  /** This process's gitignore decisions, reused while each directory's patterns are unchanged. */
  readonly #walkCache = new WalkCache();
  /** Manifest runs: lanes, and this process's copy of their open runs. */
  readonly #manifests = new Manifests();

  /** The store is shared across hosts (capabilities.sharedAcrossHosts): other hosts' checkpoints are in it too. */
  readonly sharedAcrossHosts: boolean;
  /** This host's name, recorded on each checkpoint (a shared store holds other hosts' too). */
  readonly host: () => string;
  /** This machine's stable identity (process-facts.ts machineId), when it has one. */
  readonly machine: () => string | undefined;

  constructor(
    backend: Backend,
    root: string,
    batonDir: string,
    opts: CheckpointOptions & { now?: () => Date; host?: () => string; machine?: () => string | undefined } = {},
  ) {
    this.host = opts.host ?? (() => hostFacts.host());
    this.machine = opts.machine ?? machineId;
    this.#backend = backend;
    this.#root = root;
    this.#now = opts.now ?? (() => new Date());
    this.#batonDir = batonDir;
    const blobOpts: { durable: boolean; inlineMaxBytes?: number } = { durable: opts.durable ?? true };
    if (opts.inlineMaxBytes !== undefined) blobOpts.inlineMaxBytes = opts.inlineMaxBytes;
    const shared = backend.capabilities.sharedAcrossHosts;
    this.sharedAcrossHosts = shared;
    this.blobs = new Blobs(backend, join(batonDir, "blobs"), { ...blobOpts, shared, here: () => `host ${this.host()}, ${root}` });
    const config = readCheckpointConfig(batonDir);
    this.retain = opts.retain ?? config.retain ?? 100;
    // The config file's and the environment's values were checked where they were read, naming themselves.
    if (!Number.isInteger(this.retain) || this.retain < 1 || this.retain > MAX_CHECKPOINT_RETAIN)
      throw badInput(`checkpoints.retain must be a whole number from 1 to ${MAX_CHECKPOINT_RETAIN}, got ${this.retain}`);
    this.#exclude = [...(config.exclude ?? []), ...(opts.exclude ?? [])];
    this.excluded = pathMatcher(this.#exclude);
    // A store inside the workspace (SQLite) is this machine's: nothing needs keeping apart.
    const secret = shared ? [...DEFAULT_PRIVATE, ...(config.private ?? []), ...(opts.private ?? [])] : [];
    this.keptLocal = pathMatcher(secret);
    this.#privateMark = secret.length > 0 ? `#${checksum(secret.join("\n"))}` : "";
    this.#maxFileBytes = opts.maxFileBytes ?? config.maxFileBytes ?? 64 * 1024 * 1024;
    this.#stageAheadBytes = opts.stageAheadBytes ?? STAGE_AHEAD_BYTES;
  }

  /** Files larger than this are recorded as skipped (so a rollback leaves them as they are). */
  get maxFileBytes(): number {
    return this.#maxFileBytes;
  }

  get root(): string {
    return this.#root;
  }

  /**
   * The stat cache's scope: this workspace (on this host, when the store is shared: hosts each
   * have their own files, inodes and clocks; services/cache-scope.ts). A moved workspace, or a
   * renamed host on a shared store, starts a new one; `collect` drops scopes unused for
   * CACHE_TTL_MS.
   */
  cacheScope(): string {
    // With the private patterns in it: after they change, every file is read again once, so each
    // blob is stored where the new patterns say (a trusted entry's blob is not looked at).
    return `${cacheScope(this.sharedAcrossHosts, this.host(), this.#root)}${this.#privateMark}`;
  }

  /** Workspace-relative, safe form of a path a caller gave (relative to the root, or absolute inside it). */
  relPath(p: string): string {
    const rel = workspaceRelative(this.#root, p);
    if (!rel) throw unsafePath(p, isWorkspaceRoot(this.#root, p) ? WHOLE_ROOT : `is outside the workspace ${this.#root}`);
    checkPath(rel);
    return rel;
  }

  /** The paths, each followed by the workspace file it leads to when it is a link (files.ts withLinkTargets). */
  withLinkTargets(paths: readonly string[]): string[] {
    return withLinkTargets(this.#root, paths);
  }

  /** Now, by the filesystem's clock (the mtime of a file just written); -Infinity (trust nothing) if it cannot be read. */
  #fsClock(): number {
    const file = join(this.#batonDir, CLOCK_FILE);
    try {
      closeSync(touchPrivate(file)); // never through a link a repository committed
      return statSync(file).mtimeMs;
    } catch {
      return Number.NEGATIVE_INFINITY;
    }
  }

  /** The paths a whole-tree checkpoint would cover now, and those it would leave out (odd names). */
  treeScan(): { paths: string[]; skipped: { path: string; reason: string }[] } {
    const scan = walkTree(this.#root, { exclude: this.#exclude, cache: this.#walkCache });
    return { paths: scan.paths, skipped: scan.skipped };
  }

  /** Whether a whole-tree checkpoint would take a file at `rel` if it existed (not ignored, not excluded). */
  treeCovers(): (rel: string) => boolean {
    return walkCovers(this.#root, { exclude: this.#exclude });
  }

  /**
   * Whether the whole-tree checkpoint `cp` covered `rel`: judged by the `.gitignore` and
   * `.batonignore` versions it lists (their texts in `texts`, by hash), and by the rules it
   * kept (`outside`: configured excludes, the global ignore file, the repository's info/exclude
   * and .gitignore files above the workspace, the `.gitignore` files its walk read but left
   * out), or today's for a checkpoint that kept none (taken by an earlier version). A path its
   * walk skipped (a folder or file it could not read, a name it could not store), a link it
   * found, and an ignore file it recorded as skipped are unknown: nothing under them counts as
   * covered.
   */
  coveredAt(cp: Checkpoint, texts: ReadonlyMap<string, Buffer>, kept?: TreeKept): (rel: string) => boolean {
    const known = new Map<string, string | null>();
    for (const f of cp.files) {
      if (!isIgnoreFile(f.path)) continue;
      const text = "hash" in f ? texts.get(f.hash)?.toString("utf8") : undefined;
      known.set(f.path, "skipped" in f || ("hash" in f && text === undefined) ? null : (text ?? ""));
    }
    const batonignore = known.get(".batonignore");
    if (batonignore === null) return () => false;
    const rules = parseOutsideRules(kept?.rules);
    // A folder its walk could not read (unreadable then), a name it could not store, a link or
    // socket it could not keep (and what is under one now): it never looked there.
    const blind = [...(kept?.skipped ?? []), ...(rules?.others ?? [])];
    if (blind.includes(".")) return () => false;
    // The .batonignore the checkpoint lists, else the one its walk read (kept with its rules:
    // a .batonignore that a rule leaves out is not listed), else none.
    const then = rules?.sources ?? rootSources(this.#root, this.#exclude);
    const covers = coversWith({
      root: { ...then, batonignore: batonignore ?? rules?.sources.batonignore ?? "" },
      // The version listed; else the one its walk read and left out (often itself: a venv's `*`); else none.
      gitignore: (dir) => {
        const t = known.get(dir === "" ? ".gitignore" : `${dir}/.gitignore`);
        return t === undefined ? rules?.unlisted.get(dir) : t;
      },
    });
    if (blind.length === 0) return covers;
    const unseen = new Set(blind);
    const under = (rel: string) => {
      if (unseen.has(rel)) return true;
      for (let i = rel.indexOf("/"); i >= 0; i = rel.indexOf("/", i + 1)) if (unseen.has(rel.slice(0, i))) return true;
      return false;
    };
    return (rel) => !under(rel) && covers(rel);
  }

  async create(sessionId: string, input: CheckpointInput = {}): Promise<CheckpointResult> {
    if (input.files && input.files.length > 0 && input.all) throw badInput("give either --files or --all, not both");
    if (input.turn !== undefined && (!Number.isSafeInteger(input.turn) || input.turn < 0))
      throw badInput("turn must be a whole number ≥ 0");
    if (input.id !== undefined && !CHECKPOINT_ID.test(input.id))
      throw badInput(`checkpoint id ${JSON.stringify(input.id)} is invalid: "cp-" and 1-60 letters, digits, ".", "_" or "-"`);
    if (input.deadline !== undefined && !Number.isFinite(input.deadline)) throw badInput("deadline must be a time in ms since the epoch");
    try {
      // Taken already (the first attempt of a caller that retries): nothing is read again.
      if (input.id !== undefined) {
        const prior = await this.#backend.transaction("read", (tx) => tx.checkpoints.getCheckpoint(input.id as string));
        if (prior) throw new AlreadyTaken(prior);
      }
      checkDeadline(input.deadline, "the checkpoint");
      if (input.files && input.files.length > 0) {
        const paths = this.withLinkTargets([...new Set(input.files.map((p) => this.relPath(p)))]);
        return await this.#targeted(sessionId, "targeted", paths, input);
      }
      return await this.#tree(sessionId, input);
    } catch (err) {
      if (!(err instanceof AlreadyTaken)) throw err;
      if (err.row.sessionId !== sessionId) {
        throw new BatonError("conflict", `checkpoint id ${err.row.id} is taken by session ${err.row.sessionId}; give another id`, {
          checkpointId: err.row.id,
        });
      }
      const checkpoint = await this.get(err.row.id);
      return { checkpoint, pruned: [], stats: { files: checkpoint.files.length, read: 0, cached: 0, blobsStored: 0 }, duplicate: true };
    }
  }

  /** Mark the files whose blobs stay in this workspace (private files, on a shared store), in place. */
  #markLocal(files: CheckpointFile[]): CheckpointFile[] {
    for (const [i, f] of files.entries()) if ("hash" in f && this.keptLocal(f.path)) files[i] = { ...f, local: true };
    return files;
  }

  /**
   * A safety checkpoint of `paths`, taken by a rollback before it restores `restores`. `after`
   * runs inside its transaction (the rollback's `rollback:started`), then the deadline is checked.
   */
  safety(
    sessionId: string,
    paths: readonly string[],
    restores: string,
    protect: readonly string[],
    o: {
      deadline?: number;
      lane?: string;
      after?: (tx: StoreTx, checkpoint: { id: string; files: readonly CheckpointFile[] }) => Promise<void>;
    } = {},
  ): Promise<CheckpointResult> {
    const input = {
      label: `before rolling back to ${restores}`,
      ...(o.deadline !== undefined ? { deadline: o.deadline } : {}),
      ...(o.lane !== undefined ? { lane: o.lane } : {}),
    };
    return this.#targeted(sessionId, "safety", paths, input, restores, protect, o.after);
  }

  async #targeted(
    sessionId: string,
    kind: CheckpointKind,
    paths: readonly string[],
    input: CheckpointInput,
    restores?: string,
    protect: readonly string[] = [],
    after?: (tx: StoreTx, checkpoint: { id: string; files: readonly CheckpointFile[] }) => Promise<void>,
  ): Promise<CheckpointResult> {
    const files: CheckpointFile[] = [];
    const staged: { path: string; blob: StagedBlob }[] = [];
    for (const path of paths) {
      const cur = readCurrent(this.#root, path, this.#maxFileBytes);
      // A rollback about to put a file where a directory is: no file is there (so undoing it removes the file).
      if (cur.kind === "absent" || (kind === "safety" && cur.kind === "other" && cur.what === "a directory"))
        files.push({ path, absent: true });
      else if (cur.kind === "other") files.push({ path, skipped: cur.what });
      // Configured out of every checkpoint: known, never stored (a rollback leaves it as it is).
      else if (kind !== "safety" && this.excluded(path)) files.push({ path, skipped: "excluded by checkpoints.exclude" });
      else {
        const local = this.keptLocal(path);
        const blob = this.blobs.stage(cur.content, undefined, local);
        staged.push({ path, blob });
        files.push({ path, hash: blob.hash, mode: cur.mode, size: cur.size, ...(local ? { local: true as const } : {}) });
      }
    }
    this.blobs.sync();
    files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    const blobs = staged.map((s) => s.blob);
    for (let attempt = 1; ; attempt++) {
      let stored = 0;
      try {
        const result = await this.#commit(
          sessionId,
          kind,
          files,
          input,
          { restores, protect },
          async (tx) => {
            stored = await this.#store(tx, blobs);
          },
          after,
        );
        stored += blobs.filter((b) => b.fileCreated).length;
        return { ...result, stats: { files: files.length, read: paths.length, cached: 0, blobsStored: stored } };
      } catch (err) {
        if (!(err instanceof EpochChanged) || attempt >= MAX_RETRIES) throw err instanceof EpochChanged ? busy() : err;
        // A blob file we stored or deduplicated was collected before we took the lock: store it again.
        for (const { path, blob } of staged) {
          if (blob.inline || this.blobs.files.has(blob.hash)) continue;
          const cur = readCurrent(this.#root, path, this.#maxFileBytes);
          if (cur.kind !== "file" || this.blobs.stage(cur.content, undefined, blob.local).hash !== blob.hash) throw busy();
        }
        this.blobs.sync();
      }
    }
  }

  /**
   * Inside the write transaction that references them: store the staged inline blobs not
   * stored yet (in either place), and check the staged files are still there (under the write
   * lock no collection runs). A file collected since it was staged is `EpochChanged`.
   */
  async #store(tx: StoreTx, staged: readonly StagedBlob[]): Promise<number> {
    let stored = 0;
    const now = Date.now();
    for (const b of staged) {
      const outcome = await this.blobs.commit(tx.checkpoints, b, now);
      if (outcome === "gone") throw new EpochChanged();
      if (outcome === "stored") stored++;
    }
    return stored;
  }

  /** A large first tree scan: store these staged inline blobs now, in a transaction of their own, and let go of their content. */
  async #storeAhead(staged: StagedBlob[]): Promise<number> {
    const stored = await this.#backend.transaction("write", (tx) => this.#store(tx, staged));
    for (const b of staged) b.packed = undefined;
    return stored;
  }

  async #tree(sessionId: string, input: CheckpointInput): Promise<CheckpointResult> {
    const scope = this.cacheScope();
    for (let attempt = 1; ; attempt++) {
      const { epoch, table } = await this.#backend.transaction("read", async (tx) => {
        const generation = await tx.checkpoints.statCacheGeneration(scope);
        const memo = this.#statMemo;
        return {
          epoch: await tx.checkpoints.blobEpoch(),
          table: memo?.generation === generation ? memo : statTable(await tx.checkpoints.statCache(scope), generation),
        };
      });
      this.#statMemo = undefined; // rebuilt below once this checkpoint commits
      const clockMs = this.#fsClock();
      const progress = input.onProgress;
      const scan = walkTree(this.#root, {
        exclude: this.#exclude,
        cache: this.#walkCache,
        ...(progress ? { onDir: (done: number) => progress({ phase: "scan", done }) } : {}),
      });
      const { slots, toRead, matched, known } = classify(scan, table, this.#maxFileBytes);
      const fresh: StatCacheRow[] = [];
      const freshAt: number[] = [];
      let staged: StagedBlob[] = [];
      let stagedBytes = 0;
      let stored = 0;
      let vanishedWhileWalking = false;
      // Listed but not read: kept as skipped (a permission) or with the links (one put in its
      // place), so no rollback takes it for absent.
      const skipped = [...scan.skipped];
      const others = [...scan.others];
      for (const i of toRead) {
        const path = scan.paths[i] as string;
        const content = readRegular(join(this.#root, path));
        if (!("data" in content)) {
          vanishedWhileWalking = true; // left out
          if ("problem" in content) skipped.push({ path, reason: content.problem });
          if ("other" in content) others.push(path);
          continue;
        }
        const hash = sha256(content.data);
        const k = matched[i] as number;
        // Read again only because it was racy, and unchanged: its blob is the cached entry's,
        // which the epoch check guards like any trusted entry's. Otherwise pack (or store) it.
        if (k < 0 || table.hashes[k] !== hash) {
          const blob = this.blobs.stage(content.data, hash, this.keptLocal(path));
          if (blob.fileCreated) stored++;
          if (blob.packed !== undefined) {
            staged.push(blob);
            stagedBytes += blob.packed.byteLength;
          }
        }
        slots[i] = { path, hash, mode: scan.stats[i * STAT_FIELDS + MODE] as number, size: content.data.byteLength };
        fresh.push({ ...content.stat, path, hash, checkedMs: clockMs });
        freshAt.push(i);
        progress?.({ phase: "read", done: fresh.length, total: toRead.length });
        if (stagedBytes > this.#stageAheadBytes) {
          stored += await this.#storeAhead(staged);
          staged = [];
          stagedBytes = 0;
        }
      }
      const found = vanishedWhileWalking ? slots.filter((f) => f !== undefined) : (slots as CheckpointFile[]);
      const files = this.#markLocal(found);
      const read = fresh.length;
      this.blobs.sync();
      let vanished: string[] = [];
      if (known < table.count) {
        const seen = new Set(scan.paths);
        vanished = table.paths.filter((p, k) => table.hashes[k] !== "" && !seen.has(p));
      }
      try {
        let expected = -1;
        // Set (never added to) inside the transaction: a backend may run it again (a deadlock).
        let storedInCommit = 0;
        const result = await this.#commit(
          sessionId,
          "tree",
          files,
          input,
          { skipped, outsideRules: outsideRulesText(scan.sources, scan.unlisted, others) },
          async (tx) => {
            // Hashes trusted from the stat cache (and blobs stored ahead) name blobs this
            // transaction does not store: a collection since we read the epoch may have taken
            // some. Then (other writers pruning: on a shared store, nearly every checkpoint of
            // every session) look at exactly those blobs, now that the collector's lock is held,
            // rather than start the walk again: only a blob really gone means a restart.
            expected = -1;
            const collected = (await tx.checkpoints.blobEpoch()) !== epoch;
            storedInCommit = await this.#store(tx, staged);
            if (collected && !(await this.blobs.allPresent(tx.checkpoints, fileHashes(files)))) throw new EpochChanged();
            const before = await tx.checkpoints.statCacheGeneration(scope);
            const nowMs = Date.now();
            if (fresh.length > 0 || vanished.length > 0) {
              await tx.checkpoints.putStatCache(scope, fresh);
              await tx.checkpoints.deleteStatCache(scope, vanished);
              await tx.checkpoints.bumpStatCacheGeneration(scope, nowMs);
            } else await tx.checkpoints.touchStatScope(scope, nowMs, nowMs - CACHE_TOUCH_MS); // trusted whole: still in use
            // Our copy stays valid only if nobody else changed the cache since we read it.
            if (before === table.generation) expected = before + (fresh.length > 0 || vanished.length > 0 ? 1 : 0);
          },
          async (tx) => {
            if (expected >= 0 && (await tx.checkpoints.statCacheGeneration(scope)) !== expected) expected = -1; // retention forgot entries
          },
        );
        // Committed: only now may this process trust its copy (a rolled-back commit stored nothing).
        if (expected >= 0) this.#statMemo = nextStatTable(table, scan, matched, fresh, freshAt, expected);
        stored += storedInCommit;
        return {
          ...result,
          stats: { files: files.length, read, cached: files.length - read, blobsStored: stored },
          ...(skipped.length > 0 ? { skipped } : {}),
        };
      } catch (err) {
        if (!(err instanceof EpochChanged) || attempt >= MAX_RETRIES) throw err instanceof EpochChanged ? busy() : err;
      }
    }
  }

  async #commit(
    sessionId: string,
    kind: CheckpointKind,
    files: CheckpointFile[],
    input: CheckpointInput,
    extra: { restores?: string | undefined; protect?: readonly string[]; skipped?: readonly SkippedPath[]; outsideRules?: string },
    check: (tx: StoreTx) => Promise<void>,
    after?: (tx: StoreTx, checkpoint: { id: string; files: readonly CheckpointFile[] }) => Promise<void>,
  ): Promise<Omit<CheckpointResult, "stats">> {
    return this.#backend.transaction("write", async (tx) => {
      await tx.lockKey(sessionKey(sessionId)); // the next checkpoint seq, one writer of the session at a time
      if (!(await tx.getSession(sessionId))) {
        throw new BatonError("not_found", `no session "${sessionId}"; run \`baton session list --all\` to see the sessions`, {
          sessionId,
        });
      }
      const q = tx.checkpoints;
      // A checkpoint that will prune (and so collect blobs) takes the collector's lock exclusively
      // before `check` takes it shared: two writers that each held it shared and then both
      // wanted it exclusively would deadlock.
      if ((await q.retentionCandidates(sessionId, this.retain - 1)).length > 0) await q.reserveCollector();
      // A caller's id taken meanwhile (its other attempt committed first): that one stands.
      const taken = input.id !== undefined ? await q.getCheckpoint(input.id) : undefined;
      if (taken) throw new AlreadyTaken(taken);
      await check(tx);
      const last = await q.lastCheckpoint(sessionId);
      const id = input.id ?? `cp-${randomHex(5)}`;
      const row: CheckpointRow = {
        id,
        sessionId,
        seq: (last?.seq ?? 0) + 1,
        kind,
        lane: laneFor(kind, id, sessionId),
        runId: input.runId ?? null,
        turn: input.turn ?? null,
        toolName: input.toolName ?? null,
        parent: last?.id ?? null,
        label: input.label ?? null,
        pinned: input.pinned ?? false,
        restores: extra.restores ?? null,
        createdAt: this.#now().toISOString(),
        prunedAt: null,
        fileCount: files.length,
        ...(extra.skipped !== undefined && extra.skipped.length > 0 ? { skipped: extra.skipped } : {}),
        host: this.host(),
        workspace: this.#root,
        machine: this.machine() ?? null,
        agentLane: input.lane ?? null,
        outsideRules: extra.outsideRules ?? null,
      };
      await this.#manifests.insert(q, row, files.map(toRow));
      const pruned = await this.#applyRetention(tx, sessionId, new Set([row.id, ...(extra.protect ?? [])]));
      await after?.(tx, { id: row.id, files });
      // Last, right before the commit: past the deadline this transaction stores nothing.
      checkDeadline(input.deadline, `checkpoint ${row.id}`);
      return { checkpoint: { ...toInfo(row), files }, pruned };
    });
  }

  /** Prune the oldest unpinned checkpoints beyond the limit; delete blobs nothing references any more. */
  async #applyRetention(tx: StoreTx, sessionId: string, protect: ReadonlySet<string>): Promise<string[]> {
    // Protected checkpoints (the new one, a rollback's range) count toward the limit but are never pruned.
    const victims = (await tx.checkpoints.retentionCandidates(sessionId, this.retain)).filter((id) => !protect.has(id));
    if (victims.length === 0) return [];
    const hashes: string[] = [];
    const pruned: string[] = [];
    const at = this.#now().toISOString();
    for (const id of victims) {
      const row = await tx.checkpoints.getCheckpoint(id);
      // Pinned (or pruned) by another writer since it was chosen: kept as it is.
      const dead = row && (await this.#manifests.prune(tx.checkpoints, row, at));
      if (dead === undefined) continue;
      pruned.push(id);
      hashes.push(...dead);
    }
    await this.#deleteBlobs(tx, await tx.checkpoints.unreferenced(hashes));
    return pruned;
  }

  /** Inside a write transaction: forget and delete (from both places) blobs found unreferenced. */
  async #deleteBlobs(tx: StoreTx, hashes: readonly string[]): Promise<number> {
    if (hashes.length === 0) return 0;
    await tx.checkpoints.bumpBlobEpoch();
    await tx.checkpoints.forgetStatCacheHashes(hashes);
    return this.blobs.remove(tx, hashes);
  }

  /** Delete, now, the blobs among `hashes` that nothing references (e.g. a completed session's artifacts). */
  async release(hashes: readonly string[]): Promise<number> {
    return this.#backend.transaction("write", async (tx) => this.#deleteBlobs(tx, await tx.checkpoints.unreferenced(hashes)));
  }

  /**
   * Sweep the whole store: delete blobs no live checkpoint or active session's artifact
   * references, and temp files of interrupted writes, when older than `graceMs` (a checkpoint
   * in progress in another process has stored blobs it has not committed yet). Stat cache
   * entries whose blob is gone are forgotten.
   */
  async collect(opts: { graceMs?: number } = {}): Promise<CollectResult> {
    const grace = opts.graceMs ?? 60 * 60 * 1000;
    return this.#backend.transaction("write", async (tx) => {
      // The collector's lock before looking: a checkpoint committing a reference to an old
      // unreferenced blob between this look and the delete would name a deleted blob.
      await tx.checkpoints.reserveCollector();
      const now = Date.now();
      const referenced = new Set(await tx.checkpoints.referencedHashes());
      const { hashes, temps } = await this.blobs.list(tx.checkpoints);
      const doomed = hashes.filter((b) => !referenced.has(b.hash) && now - b.mtimeMs > grace).map((b) => b.hash);
      const removed = await this.#deleteBlobs(tx, doomed);
      const stored = new Set(hashes.map((b) => b.hash));
      // This workspace's stat cache entries whose blob is gone (other hosts' blobs may be theirs alone).
      const gone = [...new Set((await tx.checkpoints.statCache(this.cacheScope())).map((r) => r.hash))].filter((h) => !stored.has(h));
      await tx.checkpoints.forgetStatCacheHashes(gone);
      // Caches of workspaces and hosts that stopped using this store (renamed, moved, gone).
      await tx.checkpoints.dropStatScopes(now - CACHE_TTL_MS);
      await tx.lessons.dropIndexes(new Date(now - CACHE_TTL_MS).toISOString());
      let tempsRemoved = 0;
      for (const t of temps) {
        if (now - t.mtimeMs <= grace) continue;
        try {
          unlinkSync(t.path);
          tempsRemoved++;
        } catch {
          // raced with its writer or another sweep
        }
      }
      // Marks of agent sessions idle as long (platform/workspace.ts markAgentSession).
      pruneAgentMarks(this.#batonDir, now - CACHE_TTL_MS);
      return { blobsRemoved: removed, tempsRemoved, blobsKept: hashes.length - removed };
    });
  }

  async list(sessionId: string, opts: { includePruned?: boolean; idPrefix?: string } = {}): Promise<CheckpointInfo[]> {
    if (opts.idPrefix !== undefined && (typeof opts.idPrefix !== "string" || !/^[A-Za-z0-9._-]{1,64}$/.test(opts.idPrefix)))
      throw badInput("idPrefix must be the start of a checkpoint id: 1-64 letters, digits, '.', '_' or '-'");
    return (await this.#rows(sessionId, opts.includePruned ?? false, opts.idPrefix)).map(toInfo);
  }

  /**
   * What the dashboard's version tag of a session's checkpoints is made of (services/session/overview.ts):
   * each checkpoint, pruned ones too, with its pin and how many times the pin changed.
   */
  async pinStates(sessionId: string): Promise<{ id: string; pinned: boolean; prunedAt: string | null; pinChanges: number }[]> {
    return (await this.#rows(sessionId, true)).map((r) => ({
      id: r.id,
      pinned: r.pinned,
      prunedAt: r.prunedAt,
      pinChanges: r.pinChanges ?? 0,
    }));
  }

  /** A session's checkpoint rows, pruned ones too or not; `not_found` when there is no such session. */
  #rows(sessionId: string, includePruned: boolean, idPrefix?: string): Promise<CheckpointRow[]> {
    return this.#backend.transaction("read", async (tx) => {
      if (!(await tx.getSession(sessionId))) throw new BatonError("not_found", `no session "${sessionId}"`, { sessionId });
      return includePruned ? tx.checkpoints.listCheckpoints(sessionId, idPrefix) : tx.checkpoints.liveCheckpoints(sessionId, idPrefix);
    });
  }

  /** A checkpoint's files as stored (none once pruned), inside a transaction. */
  files(tx: StoreTx, row: CheckpointRow): Promise<CheckpointFileRow[]> {
    return this.#manifests.files(tx.checkpoints, row);
  }

  async get(id: string): Promise<Checkpoint> {
    return this.#backend.transaction("read", async (tx) => {
      const row = await tx.checkpoints.getCheckpoint(id);
      if (!row)
        throw new BatonError("checkpoint_not_found", `no checkpoint "${id}"; list them with \`baton checkpoints\``, { checkpointId: id });
      return { ...toInfo(row), files: (await this.files(tx, row)).map(toFile) };
    });
  }

  async pin(id: string, pinned: boolean): Promise<CheckpointInfo> {
    return this.#backend.transaction("write", async (tx) => {
      const row = await tx.checkpoints.getCheckpoint(id);
      if (!row)
        throw new BatonError("checkpoint_not_found", `no checkpoint "${id}"; list them with \`baton checkpoints\``, { checkpointId: id });
      // Compare-and-set: a checkpoint retention prunes meanwhile is never left both pinned and pruned.
      if (!(await tx.checkpoints.setPinned(id, pinned))) {
        const prunedAt = (await tx.checkpoints.getCheckpoint(id))?.prunedAt ?? row.prunedAt ?? "just now";
        throw new BatonError("checkpoint_pruned", `checkpoint ${id} was pruned at ${prunedAt}; it cannot be pinned any more`, {
          checkpointId: id,
        });
      }
      return toInfo({ ...row, pinned });
    });
  }
}

function fileHashes(files: readonly CheckpointFile[]): string[] {
  return files.flatMap((f) => ("hash" in f ? [f.hash] : []));
}

function busy(): BatonError {
  return new BatonError(
    "storage_busy",
    "blobs were being collected by another process while this checkpoint ran, three times in a row; retry the checkpoint",
  );
}

/** The ignore files a whole-tree checkpoint stores, whose versions decide what it covered. */
export function isIgnoreFile(path: string): boolean {
  return path === ".batonignore" || path === ".gitignore" || path.endsWith("/.gitignore");
}
