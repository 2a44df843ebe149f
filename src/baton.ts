/**
 * `openBaton()` composes everything: workspace → backend → flows → journal → status. The CLI,
 * the server and the hooks are thin edges over this object.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import type { Backend } from "./backend/contract.js";
import type { SynchronousMode } from "./backend/sqlite/sqlite-backend.js";
import { randomHex } from "./core/canonical.js";
import { renderStateMd } from "./core/state-md.js";
import type { AppendResult, EventInput, JsonObject, Position, Snapshot } from "./core/types.js";
import { BatonError, badInput } from "./errors.js";
import { hashFile, workspaceRelative } from "./services/files.js";
import { FlowRegistry } from "./services/flows.js";
import { Journal, type SessionView, type StartSessionInput } from "./services/journal.js";
import { type ResumeReport, type StatusReport, StatusService } from "./services/status.js";
import { resolveWorkspace, type Workspace } from "./services/workspace.js";

export interface OpenBatonOptions {
  /** Workspace root. Default: walk up from `cwd` to the nearest `.baton/`, else `cwd`. */
  root?: string;
  cwd?: string;
  /** Create `.baton/` when missing. Default true. */
  create?: boolean;
  /** SQLite durability. Default `FULL`: an acknowledged append survives power loss. */
  synchronous?: SynchronousMode;
  /** Wait this long for another process's write lock. Default 10 000 ms. */
  busyTimeoutMs?: number;
  /** A backend to use instead of the workspace's SQLite file (tests, PostgreSQL). */
  backend?: Backend;
  /** Clock, for tests. */
  now?: () => Date;
}

export interface DecisionInput {
  decision: string;
  context?: string;
  reason?: string;
  alternatives?: string[];
  reversible?: boolean;
}

export interface BlockerInput {
  text: string;
  id?: string;
  affects?: string;
  workaround?: string;
}

export class Baton {
  readonly workspace: Workspace;
  readonly backend: Backend;
  readonly flows: FlowRegistry;
  readonly journal: Journal;
  readonly #status: StatusService;
  readonly #now: () => Date;
  #closing: Promise<void> | undefined;

  constructor(workspace: Workspace, backend: Backend, now: () => Date) {
    this.workspace = workspace;
    this.backend = backend;
    this.#now = now;
    this.flows = new FlowRegistry(workspace.flowsDir);
    this.journal = new Journal(backend, this.flows, { now });
    this.#status = new StatusService(this.journal, workspace.root, now);
  }

  get root(): string {
    return this.workspace.root;
  }

  // Sessions and events

  startSession(input: StartSessionInput): Promise<Snapshot> {
    return this.journal.startSession(input);
  }

  listSessions(opts: { includeCompleted?: boolean } = {}) {
    return this.journal.listSessions(opts);
  }

  read(sessionId: string): Promise<SessionView> {
    return this.journal.read(sessionId);
  }

  async snapshot(sessionId: string): Promise<Snapshot> {
    return (await this.journal.read(sessionId)).snapshot;
  }

  append(sessionId: string, input: EventInput): Promise<AppendResult> {
    return this.journal.append(sessionId, input);
  }

  appendBatch(sessionId: string, inputs: readonly EventInput[]): Promise<AppendResult[]> {
    return this.journal.appendBatch(sessionId, inputs);
  }

  events(sessionId: string, opts?: { afterSeq?: number; limit?: number }) {
    return this.journal.events(sessionId, opts);
  }

  rebuild(sessionId?: string) {
    return this.journal.rebuild(sessionId);
  }

  /** The session's journal as JSON Lines, one event per line (unreadable rows as `{seq, corrupt}`). */
  async *exportJsonl(sessionId: string): AsyncGenerator<string> {
    for await (const row of this.journal.exportRows(sessionId)) yield `${JSON.stringify(row)}\n`;
  }

  /**
   * The session a command means: the one named, else the single active session. With none or
   * several active, the error lists what exists.
   */
  async resolveSession(sessionId?: string): Promise<string> {
    if (sessionId) return sessionId;
    const active = await this.journal.listSessions();
    if (active.length === 1) return (active[0] as { id: string }).id;
    if (active.length === 0) {
      throw new BatonError(
        "not_found",
        "no active session; start one with `baton session start --flow <flow>`, or name one with --session",
        { sessions: [] },
      );
    }
    throw new BatonError(
      "ambiguous_session",
      `${active.length} sessions are active (${active.map((s) => s.id).join(", ")}); name one with --session <id>`,
      { sessions: active.map((s) => ({ sessionId: s.id, flow: s.flow, phase: s.phase, title: s.title })) },
    );
  }

  // Status

  status(opts: { all?: boolean; sessionId?: string } = {}): Promise<StatusReport> {
    return this.#status.status(opts);
  }

  resume(sessionId: string): Promise<ResumeReport> {
    return this.#status.resume(sessionId);
  }

  complete(sessionId: string, opts: { force?: boolean; actor?: string } = {}) {
    return this.#status.complete(sessionId, opts);
  }

  async stateMarkdown(sessionId: string): Promise<string> {
    const view = await this.journal.read(sessionId);
    const status = this.#status.describe(view);
    return renderStateMd(view.snapshot, status.nextAction, { generatedAt: this.#now().toISOString() });
  }

  /** Write STATE.md beside the session (`.baton/sessions/<id>/STATE.md`), atomically. */
  async writeStateMarkdown(sessionId: string): Promise<string> {
    const text = await this.stateMarkdown(sessionId);
    const dir = join(this.workspace.dir, "sessions", sessionId);
    const file = join(dir, "STATE.md");
    try {
      mkdirSync(dir, { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, text);
      const fd = openSync(tmp, "r");
      fsyncSync(fd);
      closeSync(fd);
      renameSync(tmp, file);
    } catch (err) {
      throw new BatonError("io_error", `cannot write ${file}: ${(err as Error).message}`, { path: file }, { cause: err });
    }
    return file;
  }

  // Facets: each is one journal event.

  addDecision(sessionId: string, d: DecisionInput, actor = "agent"): Promise<AppendResult> {
    return this.append(sessionId, { type: "decision:added", actor, data: compact({ ...d }) });
  }

  async addBlocker(sessionId: string, b: BlockerInput, actor = "agent"): Promise<AppendResult> {
    const id = b.id ?? `blk-${randomHex(3)}`;
    return this.append(sessionId, { type: "blocker:added", actor, data: compact({ ...b, id }) });
  }

  resolveBlocker(sessionId: string, id: string, resolution?: string, actor = "agent"): Promise<AppendResult> {
    return this.append(sessionId, { type: "blocker:resolved", actor, data: compact({ id, resolution }) });
  }

  bypassBlocker(sessionId: string, id: string, workaround: string, actor = "agent"): Promise<AppendResult> {
    return this.append(sessionId, { type: "blocker:bypassed", actor, data: { id, workaround } });
  }

  setPosition(sessionId: string, p: Position, actor = "agent"): Promise<AppendResult> {
    if (Object.values(p).every((v) => v === undefined)) throw badInput("give at least one of phase, plan, task, wave, status");
    return this.append(sessionId, { type: "position:set", actor, data: compact({ ...p }) });
  }

  setProgress(sessionId: string, p: { total?: number; completed?: number }, actor = "agent"): Promise<AppendResult> {
    return this.append(sessionId, { type: "progress:set", actor, data: compact({ ...p }) });
  }

  async startRun(sessionId: string, r: { agent: string; runId?: string; pid?: number }): Promise<{ runId: string; result: AppendResult }> {
    const runId = r.runId ?? `run-${randomHex(4)}`;
    const result = await this.append(sessionId, {
      type: "run:started",
      actor: r.agent,
      data: compact({ runId, agent: r.agent, pid: r.pid ?? process.pid, host: hostname() }),
    });
    return { runId, result };
  }

  endRun(
    sessionId: string,
    runId: string,
    r: { reason?: string; completedWork?: string; contextUsage?: number } = {},
    actor = "agent",
  ): Promise<AppendResult> {
    return this.append(sessionId, { type: "run:ended", actor, data: compact({ runId, ...r }) });
  }

  /** Record files the session modified (with their current hashes) and resume notes. */
  recordResumeContext(
    sessionId: string,
    r: { files?: string[]; keyImplementations?: string[]; openQuestions?: string[] },
    actor = "agent",
  ): Promise<AppendResult> {
    const filesModified: JsonObject[] = [];
    for (const f of r.files ?? []) {
      const rel = workspaceRelative(this.root, f);
      if (!rel) throw badInput(`${f} is outside the workspace ${this.root}`);
      const hash = hashFile(resolve(this.root, rel));
      filesModified.push(hash ? { path: rel, hash } : { path: rel });
    }
    return this.append(sessionId, {
      type: "resume:updated",
      actor,
      data: compact({
        filesModified: filesModified.length ? filesModified : undefined,
        keyImplementations: r.keyImplementations,
        openQuestions: r.openQuestions,
      }),
    });
  }

  setContext(sessionId: string, values: JsonObject, actor = "agent"): Promise<AppendResult> {
    return this.append(sessionId, { type: "context:set", actor, data: values });
  }

  /** Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.backend.close();
    return this.#closing;
  }
}

/** node:os is loaded only when a run starts; status and hooks that do not start runs skip it. */
function hostname(): string {
  return (createRequire(import.meta.url)("node:os") as typeof import("node:os")).hostname();
}

function compact(o: Record<string, unknown>): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v as JsonObject[string];
  return out;
}

export async function openBaton(opts: OpenBatonOptions = {}): Promise<Baton> {
  const ws = resolveWorkspace({
    create: opts.create ?? true,
    ...(opts.root ? { root: opts.root } : {}),
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
  });
  let backend = opts.backend;
  if (!backend) {
    const { SqliteBackend } = await import("./backend/sqlite/sqlite-backend.js");
    backend = new SqliteBackend({
      path: ws.dbPath,
      ...(opts.synchronous ? { synchronous: opts.synchronous } : {}),
      ...(opts.busyTimeoutMs !== undefined ? { busyTimeoutMs: opts.busyTimeoutMs } : {}),
    });
  }
  return new Baton(ws, backend, opts.now ?? (() => new Date()));
}
