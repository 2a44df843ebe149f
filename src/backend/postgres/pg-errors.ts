/** PostgreSQL and network errors → Baton error codes, with what to check. */
import { BatonError, isBatonError } from "../../errors.js";

const NETWORK = new Set(["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH"]);

/** What set the time a store call ran out of. */
export type TimeLimit =
  /** The statement bound (BATON_STORE_STATEMENT_TIMEOUT_MS, `storeStatementTimeoutMs`). */
  | "statement"
  /** The connect timeout (BATON_STORE_TIMEOUT_MS, `storeTimeoutMs`). */
  | "connect"
  /** The caller's own, shorter, connection wait (an agent hook's second). */
  | "caller"
  /** The caller's deadline (an agent hook's). */
  | "deadline";

/**
 * A connection or a statement (COMMIT included) the server did not answer in time: it is frozen,
 * cut off by the network, or far too slow. A statement's connection is unusable afterwards (its
 * answer may still come): the backend destroys it. `sent`: the statement went out (a COMMIT
 * sent and not answered may have committed); false when the deadline had passed before it.
 */
export class StoreTimeout extends Error {
  constructor(
    readonly waited: "connection" | "statement",
    readonly timeoutMs: number,
    readonly limit: TimeLimit,
    readonly sent: boolean,
    options?: ErrorOptions,
  ) {
    super(`no ${waited === "connection" ? "connection" : "answer to a statement"} within ${timeoutMs} ms`, options);
    this.name = "StoreTimeout";
  }
}

/** What to change when a limit is too short, for messages. */
export const LIMIT_HINT: Record<TimeLimit, string> = {
  statement:
    "if statements legitimately take longer here (a slow link, a loaded server), raise the statement bound: BATON_STORE_STATEMENT_TIMEOUT_MS (openBaton's storeStatementTimeoutMs; default 30 000)",
  connect: "to wait longer, raise BATON_STORE_TIMEOUT_MS (openBaton's storeTimeoutMs; default 5 000)",
  caller: "an agent hook waits this long for the store, then lets the agent go on",
  deadline: "the caller's deadline (an agent hook's) had come",
};

function timedOut(err: StoreTimeout, what: string, where: string): BatonError {
  const details = { timedOut: err.waited, timeoutMs: err.timeoutMs, limit: err.limit };
  if (err.limit === "deadline") {
    // A COMMIT cut short is not this (its outcome is unknown: pg-backend.ts says so).
    return new BatonError(
      "deadline_exceeded",
      `${what}: the caller's deadline came before PostgreSQL at ${where} answered (${err.waited === "connection" ? "no connection yet" : "a statement"}); nothing of this step was committed`,
      details,
      { cause: err },
    );
  }
  const waited =
    err.waited === "connection"
      ? `no connection to PostgreSQL at ${where} within ${err.timeoutMs} ms`
      : `PostgreSQL at ${where} did not answer a statement within ${err.timeoutMs} ms, so its connection was dropped`;
  return unavailable(
    err,
    `${what}: ${waited}. The server is stopped, frozen, unreachable or overloaded: check it (pg_isready), the network and the store URL (.baton/config.json or BATON_STORE); ${LIMIT_HINT[err.limit]}`,
    details,
  );
}

/** The server cancelled a statement that ran past the statement bound (its statement_timeout, 57014). */
function serverTimeout(err: unknown): boolean {
  return (err as { code?: unknown })?.code === "57014" && /statement timeout/i.test(err instanceof Error ? err.message : String(err));
}

/** The server is down, restarting or unreachable (nothing says the request was wrong). */
export function retriable(err: unknown): boolean {
  if (err instanceof StoreTimeout) return true;
  const code = (err as { code?: unknown })?.code;
  const msg = err instanceof Error ? err.message : String(err);
  if (typeof code === "string") {
    if (NETWORK.has(code)) return true;
    // 08: connection exception; 57P01-03: admin/crash shutdown, cannot connect now.
    if (code.startsWith("08") || code === "57P01" || code === "57P02" || code === "57P03") return true;
  }
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly/i.test(
    msg,
  );
}

export function unavailable(err: unknown, message: string, details: Record<string, unknown> = {}): BatonError {
  const code = (err as { code?: unknown })?.code;
  return new BatonError("storage_unavailable", message, { ...(typeof code === "string" ? { pg: code } : {}), ...details }, { cause: err });
}

export function mapPgError(err: unknown, what: string, where: string): BatonError {
  if (isBatonError(err)) return err;
  const code = typeof (err as { code?: unknown })?.code === "string" ? (err as { code: string }).code : "";
  const msg = err instanceof Error ? err.message : String(err);
  if (err instanceof StoreTimeout) return timedOut(err, what, where);
  if (serverTimeout(err)) {
    return unavailable(
      err,
      `${what}: PostgreSQL at ${where} cancelled a statement that ran past the statement bound (it waited for a lock, or the server is overloaded); nothing of it was kept. Retry; ${LIMIT_HINT.statement}`,
      { timedOut: "statement", limit: "statement" },
    );
  }
  if (retriable(err)) {
    return unavailable(
      err,
      `${what}: PostgreSQL at ${where} is down or unreachable (${msg}); check that the server is running and reachable from this host (pg_isready), and the store URL (.baton/config.json or BATON_STORE)`,
    );
  }
  if (code === "28P01" || code === "28000") {
    return unavailable(
      err,
      `${what}: PostgreSQL at ${where} refused the credentials (${msg}); set PGPASSWORD or add the password to ~/.pgpass (Baton never stores one)`,
    );
  }
  if (code === "3D000") {
    return unavailable(err, `${what}: the database named in ${where} does not exist (${msg}); create it (createdb) or fix the store URL`);
  }
  if (code === "42501") {
    return new BatonError(
      "workspace_unwritable",
      `${what}: the PostgreSQL user may not do this at ${where} (${msg}); grant it CREATE on the database or the project's schema`,
      { pg: code },
      { cause: err },
    );
  }
  if (code === "53100" || code === "58030" || code.startsWith("XX")) {
    return new BatonError(
      "io_error",
      `${what}: storage failure on the PostgreSQL server (${msg}); nothing after this point was acknowledged. Check the server's disk and logs`,
      { pg: code },
      { cause: err },
    );
  }
  if (code === "40P01" || code === "40001" || code === "55P03" || code === "53300") {
    return new BatonError("storage_busy", `${what}: PostgreSQL was too busy (${msg}); retry`, { pg: code }, { cause: err });
  }
  return new BatonError("internal", `${what}: ${msg}`, { pg: code || undefined }, { cause: err });
}
