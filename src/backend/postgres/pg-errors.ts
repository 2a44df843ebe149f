/** PostgreSQL and network errors → Baton error codes, with what to check. */
import { BatonError, isBatonError } from "../../errors.js";

const NETWORK = new Set(["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH"]);

/** The server is down, restarting or unreachable (nothing says the request was wrong). */
export function retriable(err: unknown): boolean {
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
