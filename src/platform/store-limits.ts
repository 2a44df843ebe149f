/**
 * Limits a caller puts on its own store calls, beyond the store's bounds: an agent hook must be
 * answered by its deadline and waits at most a second for a connection, whatever the store's
 * connect timeout and statement bound (docs/architecture.md, "PostgreSQL"). The server sets them
 * around each hook it answers (`withStoreLimits`); a hook process sets them for its whole store
 * (openBaton's internal `storeLimits`). The PostgreSQL backend reads them before each connection
 * and statement; SQLite has nothing to wait for on a network and ignores them.
 *
 * Scoped with AsyncLocalStorage, created on first use: a process that never sets a scope (the
 * CLI, a hook process, a program) pays nothing for it. One per process, kept on globalThis: the
 * CLI's build puts the PostgreSQL backend in a bundle of its own (pg.cjs), with its own copy of
 * this module, and the server's scope must be the one the backend reads.
 */
import { AsyncLocalStorage } from "node:async_hooks";

export interface StoreCallLimits {
  /** No connection is waited for, and no statement sent or waited for, past this time (ms since the epoch). */
  deadline?: number;
  /** Wait at most this long for a connection (less than the store's own connect timeout; a longer one changes nothing). */
  connectTimeoutMs?: number;
}

/** How long an agent hook waits to reach a server store (PostgreSQL) before it fails open. */
export const HOOK_STORE_CONNECT_MS = 1_000;

const SCOPE = Symbol.for("baton.storeLimits");
type Scopes = Record<symbol, AsyncLocalStorage<StoreCallLimits> | undefined>;

/** Run `fn` with these limits on every store call it makes, directly or through anything it starts. */
export function withStoreLimits<T>(limits: StoreCallLimits, fn: () => T): T {
  const g = globalThis as unknown as Scopes;
  g[SCOPE] ??= new AsyncLocalStorage<StoreCallLimits>();
  return g[SCOPE].run(limits, fn);
}

/** The limits of the current scope, if any. */
export function scopedStoreLimits(): StoreCallLimits | undefined {
  return (globalThis as unknown as Scopes)[SCOPE]?.getStore();
}

/** Run `fn` outside any scope's limits: work shared by many callers (a group commit) is bound by none of theirs. */
export function withoutStoreLimits<T>(fn: () => T): T {
  const scope = (globalThis as unknown as Scopes)[SCOPE];
  return scope ? scope.exit(fn) : fn();
}
