/**
 * Which `.baton/config.json` this user trusts. The file's settings decide where data goes (the
 * store), what stays private (`checkpoints`) and whether the agent is supervised (`spiral`,
 * `lanes`, `hooks`), and a repository can ship the file: a cloned repository must not choose
 * them. So the file applies only once its user trusted exactly these bytes in exactly this
 * workspace (`baton trust`, as direnv's `allow`); an edit (a `git pull`, an agent) makes it
 * untrusted again until they look at it and trust it again.
 *
 * The record is outside every workspace, in the user's own directory (configHome): one file per
 * workspace, `trust/<sha256 of the .baton directory's real path>.json` holding
 * `{workspace, sha256, trustedAt}`, so trusting two workspaces at once never races on one file.
 * The directories are 0700, the records 0600, written atomically.
 *
 * Light on purpose (every hook process reads it): node's fs and path; crypto only once a
 * config.json exists, and os only where HOME does not say the home folder (Windows, or HOME
 * unset or relative): os alone costs a hook ~0.2 ms to load.
 */
import { mkdirSync, readFileSync, realpathSync, unlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { isAbsolute, join, resolve } from "node:path";
import { userHome } from "./home.js";
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "./private-files.js";
import { atomicWrite, ioError } from "./safe-fs.js";

export interface TrustRecord {
  /** The real path of the workspace's `.baton` directory. */
  workspace: string;
  /** sha256 of the trusted file's bytes, hex. */
  sha256: string;
  trustedAt: string;
}

/**
 * The user's Baton directory: `BATON_CONFIG_HOME`, else `$XDG_CONFIG_HOME/baton`, else
 * `~/.config/baton` (absolute values only, as the XDG specification says of XDG_CONFIG_HOME).
 */
export function configHome(env: NodeJS.ProcessEnv = process.env): string {
  // An absolute path only: a relative one would move the trust records with the working directory.
  const own = env.BATON_CONFIG_HOME?.trim();
  if (own && isAbsolute(own)) return resolve(own);
  const xdg = env.XDG_CONFIG_HOME?.trim();
  if (xdg && isAbsolute(xdg)) return join(xdg, "baton");
  return join(userHome(env), ".config", "baton");
}

let crypto: typeof import("node:crypto") | undefined;

/** sha256, hex. node:crypto is loaded on first use: only a workspace with a config.json pays for it. */
export function sha256(bytes: Uint8Array | string): string {
  crypto ??= createRequire(import.meta.url)("node:crypto") as typeof import("node:crypto");
  return crypto.createHash("sha256").update(bytes).digest("hex");
}

/** The `.baton` directory as the record names it: its real path (a link or `..` in the way names the same workspace). */
function realDir(batonDir: string): string {
  try {
    return realpathSync.native(batonDir);
  } catch {
    return resolve(batonDir);
  }
}

/** The record's path inside configHome (`trust/<id>.json`). */
function recordRel(workspace: string): string {
  return `trust/${sha256(workspace)}.json`;
}

/** Where the trust record of this workspace is (whether or not there is one). */
export function trustRecordPath(batonDir: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(configHome(env), recordRel(realDir(batonDir)));
}

/** This workspace's trust record; undefined when there is none (or it is not one: never trusted on a guess). */
export function readTrust(batonDir: string, env: NodeJS.ProcessEnv = process.env): TrustRecord | undefined {
  const workspace = realDir(batonDir);
  let v: unknown;
  try {
    v = JSON.parse(readFileSync(join(configHome(env), recordRel(workspace)), "utf8"));
  } catch {
    return undefined;
  }
  const r = v as Partial<TrustRecord> | null;
  if (r === null || typeof r !== "object" || r.workspace !== workspace || typeof r.sha256 !== "string" || typeof r.trustedAt !== "string")
    return undefined;
  return { workspace, sha256: r.sha256, trustedAt: r.trustedAt };
}

/** Trust these bytes as this workspace's `.baton/config.json`, replacing any earlier record. */
export function recordTrust(batonDir: string, bytes: Uint8Array, env: NodeJS.ProcessEnv = process.env, now = new Date()): TrustRecord {
  const home = configHome(env);
  const record: TrustRecord = { workspace: realDir(batonDir), sha256: sha256(bytes), trustedAt: now.toISOString() };
  try {
    mkdirSync(home, { recursive: true, mode: PRIVATE_DIR_MODE });
  } catch (err) {
    throw ioError(`cannot create ${home} to record the trust of this workspace's settings`, err, home);
  }
  atomicWrite(
    home,
    recordRel(record.workspace),
    Buffer.from(`${JSON.stringify(record, null, 2)}\n`),
    PRIVATE_FILE_MODE,
    true,
    PRIVATE_DIR_MODE,
  );
  return record;
}

/** Remove this workspace's trust record. Returns whether there was one. */
export function revokeTrust(batonDir: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const file = trustRecordPath(batonDir, env);
  try {
    unlinkSync(file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw ioError(`cannot remove ${file}`, err, file);
  }
}
