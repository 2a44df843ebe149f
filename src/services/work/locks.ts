/**
 * Named locks with fencing epochs.
 *
 * - A lock has at most one holder: owner, pid, host (its name and its identity), the pid's
 *   start time, an optional run id, when it was acquired, its last heartbeat and its expiry.
 *   The row lives in the store, so every process on the workspace sees the same holder.
 * - A held lock is taken from its holder only on proof (core/locks.ts `staleDecision`): it
 *   expired, or its pid is dead on this host, or its pid was reused. "This host" is the host
 *   identity (platform/process-facts.ts): two containers of one host name are two hosts. A
 *   holder that keeps heartbeating is never taken over, however long it runs.
 * - Every acquisition increments the lock's epoch, the fencing token. A write the lock guards
 *   runs in `withLock(name, epoch, fn)`: the epoch is checked in the same transaction as the
 *   write, so a holder that was paused past its expiry and lost the lock has its write refused
 *   with `lock_lost` instead of interleaving with the new holder's.
 */
import type { Backend, LockRow, StoreTx } from "../../backend/contract.js";
import { holderOfRow, LOCK_NAME, type StaleDecision, type StaleProof, staleDecision } from "../../core/locks.js";
import { BatonError, badInput } from "../../errors.js";
import { factsAbout, hostFacts, hostIdentity, identify, type ProcessFacts } from "../../platform/process-facts.js";
import { ChangeWait } from "./change-wait.js";

export interface LockServiceOptions {
  now?: () => Date;
  facts?: ProcessFacts;
}

export interface AcquireOptions {
  /** Who holds it, a free name (default `pid:<pid>`). */
  owner?: string;
  /** The holder process (default: this process). The lock is reclaimed when it dies. */
  pid?: number;
  runId?: string;
  /** How long the lock lives without a heartbeat. Default 120 000 ms. */
  ttlMs?: number;
  /** Wait this long for a live holder to release it; 0 (default) fails at once with `lock_held`. */
  waitMs?: number;
  signal?: AbortSignal;
}

export interface LockHolder {
  owner: string;
  pid?: number;
  /** The holder's host name. */
  host?: string;
  /** The holder's host identity (platform/process-facts.ts): absent on locks taken by an older Baton. */
  hostId?: string;
  startTime?: string;
  runId?: string;
  acquiredAt: string;
  heartbeatAt: string;
  expiresAt: string;
  ttlMs: number;
}

/** A lock as `inspect` shows it: the holder and, when held, whether it is provably stale. */
export interface LockInfo {
  name: string;
  /** The epoch of the current (or last) holder: the fencing token its writes carry. */
  epoch: number;
  state: "held" | "free";
  holder?: LockHolder;
  /** Held locks: whether the holder may be given up now, with the proof or why not. */
  stale?: StaleDecision;
  /** Free locks: the last holder, and when and why it let go. */
  lastHolder?: LockHolder;
  releasedAt?: string;
  releaseReason?: string;
}

/** What an acquisition returns. */
export interface LockGrant {
  name: string;
  epoch: number;
  holder: LockHolder;
  /** Set when a stale holder was given up to grant this: the proof. */
  reclaimed?: { epoch: number; proof: StaleProof; evidence: string };
}

const DEFAULT_TTL_MS = 120_000;
const MIN_TTL_MS = 10;
const MAX_TTL_MS = 24 * 60 * 60 * 1000;
/** While waiting, look again at least this often: a holder's death commits nothing to wake us. */
const MAX_WAIT_STEP_MS = 100;

export class LockService {
  readonly #backend: Backend;
  readonly #now: () => Date;
  readonly #facts: ProcessFacts;

  constructor(backend: Backend, opts: LockServiceOptions = {}) {
    this.#backend = backend;
    this.#now = opts.now ?? (() => new Date());
    this.#facts = opts.facts ?? hostFacts;
  }

  get facts(): ProcessFacts {
    return this.#facts;
  }

  /** Acquire the lock, waiting up to `waitMs` for a live holder; `lock_held` when it stays held. */
  async acquire(name: string, opts: AcquireOptions = {}): Promise<LockGrant> {
    checkName(name);
    const ttlMs = checkTtl(opts.ttlMs);
    const waitMs = opts.waitMs ?? 0;
    if (!Number.isFinite(waitMs) || waitMs < 0) throw badInput("the wait must be a number of milliseconds ≥ 0");
    const pid = opts.pid ?? process.pid;
    if (!Number.isSafeInteger(pid) || pid <= 0) throw badInput(`the holder pid must be a positive whole number, got ${opts.pid}`);
    if (opts.owner !== undefined && (opts.owner.trim() === "" || opts.owner.length > 200))
      throw badInput("the lock owner must be a non-empty name of at most 200 characters");
    const identity = identify(this.#facts, pid);
    const deadline = Date.now() + waitMs;
    const waiter = waitMs > 0 ? new ChangeWait(this.#backend, opts.signal) : undefined;
    try {
      for (;;) {
        const r = await this.#backend.transaction("write", (tx) => this.#tryAcquire(tx, name, { ...opts, pid, ttlMs }, identity));
        if ("grant" in r) return r.grant;
        if (!waiter || Date.now() >= deadline || opts.signal?.aborted) throw held(name, r.row, r.decision);
        await waiter.passOwnWrites();
        const untilExpiry = Math.max(1, r.row.expiresMs - this.#now().getTime());
        await waiter.sleep(Math.min(deadline - Date.now(), untilExpiry, MAX_WAIT_STEP_MS * (0.5 + Math.random())));
      }
    } finally {
      waiter?.close();
    }
  }

  async #tryAcquire(
    tx: StoreTx,
    name: string,
    o: AcquireOptions & { pid: number; ttlMs: number },
    identity: ReturnType<typeof identify>,
  ): Promise<{ grant: LockGrant } | { row: LockRow; decision: StaleDecision }> {
    const now = this.#now();
    const row = await tx.locks.getLock(name);
    let reclaimed: LockGrant["reclaimed"];
    if (row?.state === "held") {
      const decision = this.#decide(row, now);
      if (!decision.stale) return { row, decision };
      reclaimed = { epoch: row.epoch, proof: decision.proof, evidence: decision.evidence };
    }
    const at = now.toISOString();
    const next: LockRow = {
      name,
      epoch: (row?.epoch ?? 0) + 1,
      state: "held",
      owner: o.owner ?? `pid:${o.pid}`,
      pid: o.pid,
      host: identity.host,
      hostId: identity.hostId,
      startTime: identity.startTime ?? null,
      runId: o.runId ?? null,
      acquiredAt: at,
      heartbeatAt: at,
      expiresMs: now.getTime() + o.ttlMs,
      ttlMs: o.ttlMs,
      releasedAt: null,
      releaseReason: null,
    };
    // Compare-and-set on the epoch: a challenger on another connection that won meanwhile is
    // the holder this one reports (one winner, whatever the engine's isolation).
    if (!(await tx.locks.acquireLock(next, row?.epoch ?? null))) {
      const winner = await tx.locks.getLock(name);
      if (winner?.state === "held") return { row: winner, decision: this.#decide(winner, now) };
      throw new BatonError("storage_busy", `lock "${name}" changed hands while this process took it; retry`, { name });
    }
    if (reclaimed && row) {
      await tx.insertDiagnostic({
        sessionId: null,
        code: "lock_reclaimed",
        severity: "warning",
        message: `lock "${name}" (epoch ${row.epoch}, owner ${row.owner}) was reclaimed: ${reclaimed.proof}: ${reclaimed.evidence}`,
        at,
      });
    }
    return { grant: { name, epoch: next.epoch, holder: holderOf(next), ...(reclaimed ? { reclaimed } : {}) } };
  }

  /** Extend a held lock; `lock_lost` when this epoch no longer holds it. */
  async heartbeat(name: string, epoch: number, opts: { ttlMs?: number } = {}): Promise<{ name: string; epoch: number; expiresAt: string }> {
    checkName(name);
    return this.#backend.transaction("write", async (tx) => {
      const row = await this.assertEpoch(tx, name, epoch);
      const now = this.#now();
      const ttlMs = opts.ttlMs === undefined ? row.ttlMs : checkTtl(opts.ttlMs);
      const expiresMs = now.getTime() + ttlMs;
      await tx.locks.heartbeatLock(name, epoch, now.toISOString(), expiresMs, ttlMs);
      return { name, epoch, expiresAt: new Date(expiresMs).toISOString() };
    });
  }

  /** Release a held lock; `lock_lost` when this epoch no longer holds it. */
  async release(name: string, epoch: number): Promise<{ name: string; epoch: number; released: true }> {
    checkName(name);
    return this.#backend.transaction("write", async (tx) => {
      await this.assertEpoch(tx, name, epoch);
      await tx.locks.freeLock(name, epoch, this.#now().toISOString(), "released");
      return { name, epoch, released: true as const };
    });
  }

  /**
   * The epoch the process `pid` on this host holds the lock with; `lock_held` / `lock_lost`
   * otherwise. A holder recorded without a host identity (an older Baton) is never taken for
   * this one: name its epoch.
   */
  async epochHeldBy(name: string, pid: number): Promise<number> {
    checkName(name);
    const row = await this.#backend.transaction("read", (tx) => tx.locks.getLock(name));
    if (row?.state !== "held") throw lost(name, undefined, row);
    if (row.pid !== pid || row.hostId !== hostIdentity(this.#facts)) {
      throw new BatonError(
        "lock_held",
        `lock "${name}" is held by ${row.owner} (pid ${row.pid ?? "?"} on ${row.host ?? "?"}), not by pid ${pid} of this host; name the epoch you hold with --epoch`,
        { name, epoch: row.epoch, holder: holderOf(row) },
      );
    }
    return row.epoch;
  }

  async inspect(name: string): Promise<LockInfo> {
    checkName(name);
    const row = await this.#backend.transaction("read", (tx) => tx.locks.getLock(name));
    if (!row) throw new BatonError("not_found", `no lock "${name}" has ever been acquired; see \`baton lock list\``, { name });
    return this.#info(row);
  }

  async list(): Promise<LockInfo[]> {
    const rows = await this.#backend.transaction("read", (tx) => tx.locks.listLocks());
    return rows.map((r) => this.#info(r));
  }

  /**
   * Free a held lock whose holder is provably stale (the proof is re-checked inside the write
   * transaction). A live holder is left alone: `reclaimed: false` with the reason.
   */
  async reclaimStale(name: string): Promise<{ name: string; reclaimed: boolean; epoch?: number; proof?: StaleProof; evidence: string }> {
    checkName(name);
    return this.#backend.transaction("write", async (tx) => {
      const row = await tx.locks.getLock(name);
      if (row?.state !== "held") return { name, reclaimed: false, evidence: "the lock is not held" };
      const now = this.#now();
      const d = this.#decide(row, now);
      if (!d.stale) return { name, reclaimed: false, epoch: row.epoch, evidence: d.evidence };
      await tx.locks.freeLock(name, row.epoch, now.toISOString(), `reclaimed: ${d.proof}`);
      await tx.insertDiagnostic({
        sessionId: null,
        code: "lock_reclaimed",
        severity: "warning",
        message: `lock "${name}" (epoch ${row.epoch}, owner ${row.owner}) was reclaimed: ${d.proof}: ${d.evidence}`,
        at: now.toISOString(),
      });
      return { name, reclaimed: true, epoch: row.epoch, proof: d.proof, evidence: d.evidence };
    });
  }

  /**
   * Inside a transaction: the lock's row when `epoch` still holds it, else `lock_lost`. An
   * expired holder that nobody has taken over still holds it (nobody else can be writing).
   */
  async assertEpoch(tx: StoreTx, name: string, epoch: number): Promise<LockRow> {
    if (!Number.isSafeInteger(epoch) || epoch <= 0) throw badInput(`the lock epoch must be a positive whole number, got ${epoch}`);
    const row = await tx.locks.getLock(name);
    if (row?.state !== "held" || row.epoch !== epoch) throw lost(name, epoch, row);
    return row;
  }

  /** Run `fn` in one write transaction after checking that `epoch` holds `name`: the fenced write. */
  withLock<T>(name: string, epoch: number, fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    checkName(name);
    return this.#backend.transaction("write", async (tx) => {
      await this.assertEpoch(tx, name, epoch);
      return fn(tx);
    });
  }

  #decide(row: LockRow, now: Date): StaleDecision {
    const identity = holderOfRow(row);
    return staleDecision({ ...identity, expiresMs: row.expiresMs }, factsAbout(this.#facts, identity), now.getTime());
  }

  #info(row: LockRow): LockInfo {
    if (row.state === "held") {
      return { name: row.name, epoch: row.epoch, state: "held", holder: holderOf(row), stale: this.#decide(row, this.#now()) };
    }
    const info: LockInfo = { name: row.name, epoch: row.epoch, state: "free", lastHolder: holderOf(row) };
    if (row.releasedAt !== null) info.releasedAt = row.releasedAt;
    if (row.releaseReason !== null) info.releaseReason = row.releaseReason;
    return info;
  }
}

function holderOf(r: LockRow): LockHolder {
  const h: LockHolder = {
    owner: r.owner,
    acquiredAt: r.acquiredAt,
    heartbeatAt: r.heartbeatAt,
    expiresAt: new Date(r.expiresMs).toISOString(),
    ttlMs: r.ttlMs,
  };
  if (r.pid !== null) h.pid = r.pid;
  if (r.host !== null) h.host = r.host;
  if (r.hostId !== null) h.hostId = r.hostId;
  if (r.startTime !== null) h.startTime = r.startTime;
  if (r.runId !== null) h.runId = r.runId;
  return h;
}

function held(name: string, row: LockRow, d: StaleDecision): BatonError {
  return new BatonError(
    "lock_held",
    `lock "${name}" is held by ${row.owner} (epoch ${row.epoch}); there is no proof it is stale: ${d.evidence}. Wait for it (--wait <ms>) or retry later`,
    { name, epoch: row.epoch, holder: holderOf(row), evidence: d.evidence },
  );
}

function lost(name: string, epoch: number | undefined, row: LockRow | undefined): BatonError {
  const why = !row
    ? "it was never acquired"
    : row.state === "held"
      ? `epoch ${row.epoch} (${row.owner}) holds it now`
      : `it was ${row.releaseReason ?? "released"}${row.epoch !== epoch ? ` (last epoch ${row.epoch})` : ""}`;
  return new BatonError(
    "lock_lost",
    `lock "${name}"${epoch !== undefined ? ` epoch ${epoch}` : ""} no longer holds it: ${why}; the guarded write was refused. Acquire the lock again and re-read before writing`,
    { name, ...(epoch !== undefined ? { epoch } : {}), ...(row ? { currentEpoch: row.epoch, state: row.state } : {}) },
  );
}

function checkName(name: string): void {
  if (typeof name !== "string" || !LOCK_NAME.test(name))
    throw badInput(`lock name ${JSON.stringify(name)} is invalid: 1-200 letters, digits and . _ : / @ -, starting with a letter or digit`);
}

function checkTtl(ms: number | undefined): number {
  const v = ms ?? DEFAULT_TTL_MS;
  if (!Number.isInteger(v) || v < MIN_TTL_MS || v > MAX_TTL_MS)
    throw badInput(`the lock ttl must be a whole number of milliseconds between ${MIN_TTL_MS} and ${MAX_TTL_MS}, got ${ms}`);
  return v;
}
