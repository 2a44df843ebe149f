/**
 * Loading the PostgreSQL backend only when a store names it, so the SQLite path never pays for
 * the driver. `pg` is an optional dependency: when it is missing, say so and how to fix it
 * rather than failing with a module-resolution stack.
 */
import { BatonError } from "./errors.js";

type PgModule = typeof import("./backend/postgres/pg-backend.js");

/**
 * The CLI's build names the PostgreSQL backend's own bundle here (scripts/build.mjs: `pg.cjs`,
 * beside `cli.cjs`), so every command and hook on SQLite reads and compiles none of it; the
 * library's build defines it as undefined (its dynamic import is a chunk of its own), and tests
 * run the sources, where it is not defined at all.
 */
declare const BATON_PG_BUNDLE: string | undefined;

/**
 * Through bin/baton.cjs's loader when there is one (a V8 code cache, as for the CLI's other
 * bundles). The bundle carries its own copy of the shared code (errors, row shapes): errors
 * cross between the copies by name and code (`isBatonError`), never by class identity.
 */
function requirePgBundle(file: string): PgModule {
  const path = `${__dirname}/${file}`;
  const load = (globalThis as Record<symbol, ((file: string) => unknown) | undefined>)[Symbol.for("baton.load")];
  return (load ? load(path) : require(path)) as PgModule;
}

export async function loadPostgres(): Promise<PgModule> {
  try {
    if (typeof BATON_PG_BUNDLE === "string") return requirePgBundle(BATON_PG_BUNDLE);
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
