/**
 * Loading the PostgreSQL backend only when a store names it, so the SQLite path never pays for
 * the driver. `pg` is an optional dependency: when it is missing, say so and how to fix it
 * rather than failing with a module-resolution stack.
 */
import { BatonError } from "./errors.js";

type PgModule = typeof import("./backend/postgres/pg-backend.js");

export async function loadPostgres(): Promise<PgModule> {
  try {
    return await import("./backend/postgres/pg-backend.js");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException | undefined)?.code;
    const msg = err instanceof Error ? err.message : String(err);
    if ((code === "MODULE_NOT_FOUND" || code === "ERR_MODULE_NOT_FOUND") && /['"]pg['"/]/.test(msg)) {
      throw new BatonError(
        "storage_unavailable",
        "a PostgreSQL store is configured but its driver is not installed: run `npm install pg` where Baton is installed, or use SQLite (unset BATON_STORE and drop `store` from .baton/config.json)",
        { missing: "pg" },
        { cause: err },
      );
    }
    throw err;
  }
}
