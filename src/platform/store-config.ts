/**
 * Which store a workspace uses: embedded SQLite (the default, no configuration), or a shared
 * PostgreSQL project named in `.baton/config.json` (`{"store": "postgres://…", "project": "…"}`,
 * written by `baton init --store … --project …`). `BATON_STORE` and `BATON_PROJECT` override the
 * file. A password is never written down: PGPASSWORD or ~/.pgpass supplies it.
 *
 * Light on purpose (no driver import): every hook process reads it.
 */
import { checkProject, checkStoreParams, redactStoreUrl, SECRET_PARAMS } from "../core/store-url.js";
import { BatonError } from "../errors.js";
import { CONFIG_FILE, configTrust, readConfigFile } from "./config-file.js";
import { recordTrust } from "./config-trust.js";
import { atomicWrite } from "./safe-fs.js";

export { checkProject, redactStoreUrl };

export type StoreChoice =
  | { kind: "sqlite"; source: "default" }
  | { kind: "postgres"; url: string; project: string; source: "config" | "env" };

/** Refuse what cannot be a PostgreSQL store URL, and any URL carrying a password when it is to be written down. */
export function checkStoreUrl(url: string, opts: { forWriting?: boolean } = {}): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    // Not the input itself: it may hold a password.
    throw new BatonError(
      "bad_input",
      "the store is not a valid URL (check the host, the port (1-65535) and that special characters are percent-encoded); use postgres://user@host:port/database",
    );
  }
  if (u.protocol !== "postgres:" && u.protocol !== "postgresql:") {
    throw new BatonError(
      "bad_input",
      `store "${u.protocol}//…" is not supported; use postgres://user@host:port/database (SQLite needs no --store)`,
    );
  }
  const secret = [...u.searchParams.keys()].find((k) => SECRET_PARAMS.has(k.toLowerCase()));
  if (opts.forWriting && (u.password !== "" || secret !== undefined)) {
    throw new BatonError(
      "bad_input",
      "the store URL has a password; Baton never writes one down: drop it from the URL and set PGPASSWORD or add it to ~/.pgpass",
    );
  }
  checkStoreParams(u);
  return u;
}

/** The store this workspace uses, from the environment, else `.baton/config.json`, else SQLite. */
export function resolveStore(batonDir: string, env: NodeJS.ProcessEnv = process.env, cfg = readConfigFile(batonDir)): StoreChoice {
  const envUrl = env.BATON_STORE?.trim() || undefined;
  const url = envUrl ?? (typeof cfg.store === "string" ? cfg.store : undefined);
  if (url === undefined || url === "sqlite") return { kind: "sqlite", source: "default" };
  checkStoreUrl(url);
  const project = env.BATON_PROJECT?.trim() || (typeof cfg.project === "string" ? cfg.project : undefined);
  if (project === undefined) {
    throw new BatonError(
      "bad_input",
      "a PostgreSQL store needs a project: run `baton init --store <url> --project <name>`, or set BATON_PROJECT",
    );
  }
  return {
    kind: "postgres",
    url,
    project: checkProject(project),
    source: envUrl !== undefined || env.BATON_PROJECT ? "env" : "config",
  };
}

/**
 * Refuse to write `.baton/config.json` over a file its user has not trusted (or that changed
 * since): Baton trusts what it writes, so keeping that file's other settings would trust them
 * unseen. Nothing is written; the user reads the file and runs `baton trust` (or removes it) first.
 */
export function checkConfigWritable(batonDir: string): void {
  const t = configTrust(batonDir);
  if (t.state !== "untrusted" && t.state !== "changed") return;
  throw new BatonError(
    "bad_input",
    `${t.file} ${t.state === "changed" ? "changed since you trusted it" : "was not written or trusted by you (a repository may have shipped it)"}, so Baton ignores it and will not write its settings back as yours: read it, run \`baton trust\` if its settings are yours (or remove the file), then run this again`,
    { file: t.file, state: t.state, keys: t.keys },
  );
}

/**
 * Write the store and project into `.baton/config.json`, keeping its other settings, and trust
 * the bytes written (Baton's own write is the user's). Only over a file that is absent or trusted.
 */
export function writeStoreConfig(batonDir: string, url: string, project: string): void {
  checkStoreUrl(url, { forWriting: true });
  checkProject(project);
  checkConfigWritable(batonDir);
  // Other settings are kept; a file that cannot be read is refused (readConfigFile), so
  // settings Baton could not parse are never overwritten. Atomic, private, never through a link.
  const bytes = Buffer.from(`${JSON.stringify({ ...readConfigFile(batonDir), store: url, project }, null, 2)}\n`);
  atomicWrite(batonDir, CONFIG_FILE, bytes, 0o600, true);
  recordTrust(batonDir, bytes);
}

/** How to name the store in doctor and status: never a password. */
export function describeStore(choice: StoreChoice, dbPath: string): { kind: string; location: string; project?: string; source: string } {
  if (choice.kind === "sqlite") return { kind: "sqlite", location: dbPath, source: choice.source };
  return { kind: "postgres", location: redactStoreUrl(choice.url), project: choice.project, source: choice.source };
}

/**
 * One line naming a store (never a password): a hook process hands its hook to the workspace's
 * server only if the server's store is the one the process would open itself (a different
 * BATON_STORE / BATON_PROJECT in the agent's environment must not write to the server's store).
 */
export function storeIdentity(s: { kind: string; location: string; project?: string }): string {
  return s.kind === "postgres" ? `postgres ${s.location} ${s.project ?? ""}` : s.kind;
}
