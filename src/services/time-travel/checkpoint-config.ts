/**
 * Checkpoint settings: the options, `.baton/config.json`'s `checkpoints` key, and the path
 * patterns no checkpoint stores (`exclude`) or that stay on this machine (`private`).
 *
 * Checkpoint blobs hold file contents verbatim: they must, to restore them. So a user can keep
 * paths out of every checkpoint (`exclude`), and on a store shared with other machines
 * (PostgreSQL: `capabilities.sharedAcrossHosts`) files that look like secret stores keep their
 * content in this workspace's `.baton/blobs/` (private to its owner, platform/private-files.ts)
 * instead of the shared database: DEFAULT_PRIVATE, plus `private` patterns.
 */
import ignore from "ignore";
import { MAX_CHECKPOINT_RETAIN } from "../../core/time-travel/checkpoints.js";
import { badSetting, configSection } from "../../platform/config-file.js";

export interface CheckpointOptions {
  /** Checkpoints kept per session, pinned ones aside. Default 100. */
  retain?: number;
  /**
   * Extra gitignore-style patterns no checkpoint stores: a whole-tree checkpoint leaves them
   * out, a targeted one records them `skipped`, and a rollback leaves them as they are.
   */
  exclude?: readonly string[];
  /**
   * Extra gitignore-style patterns of private files, after DEFAULT_PRIVATE (`!pattern` takes
   * one back). On a store shared across hosts their content stays in this workspace's
   * `.baton/blobs/`, never in the shared store.
   */
  private?: readonly string[];
  /** Files larger than this are recorded as skipped, not stored. Default 64 MiB. */
  maxFileBytes?: number;
  /** fsync blob files and restored files (default true; false matches synchronous=NORMAL). */
  durable?: boolean;
  /** Content up to this many bytes is stored in the database, larger content as a file. Default 1 MiB. */
  inlineMaxBytes?: number;
  /**
   * A whole-tree checkpoint holds at most this many bytes of new small blobs in memory; past it
   * (a first checkpoint of a large tree) it stores them ahead of its commit. Default 32 MiB.
   */
  stageAheadBytes?: number;
}

/**
 * Files that look like secret stores: environment files, private keys and certificates' keys,
 * keystores, SSH private keys, package-registry and database credentials, cloud credentials,
 * Terraform variables and state. gitignore syntax: a pattern without "/" matches a name in any
 * directory. Public keys (`id_rsa.pub`) are not in it.
 */
export const DEFAULT_PRIVATE: readonly string[] = Object.freeze([
  ".env",
  ".env.*",
  "*.env",
  ".envrc",
  "*.pem",
  "*.key",
  "*.p12",
  "*.pfx",
  "*.jks",
  "*.keystore",
  "*.ppk",
  "id_rsa",
  "id_dsa",
  "id_ecdsa",
  "id_ed25519",
  "id_ecdsa_sk",
  "id_ed25519_sk",
  ".npmrc",
  ".pypirc",
  ".pgpass",
  ".netrc",
  ".git-credentials",
  ".htpasswd",
  "**/.aws/credentials",
  "**/.docker/config.json",
  "*.tfvars",
  "*.tfstate",
  "*.tfstate.backup",
]);

/** A gitignore-style matcher of workspace-relative paths, each answer kept (paths repeat from one checkpoint to the next). */
export function pathMatcher(patterns: readonly string[]): (rel: string) => boolean {
  if (patterns.length === 0) return () => false;
  const ig = ignore().add([...patterns]);
  const seen = new Map<string, boolean>();
  return (rel) => {
    let hit = seen.get(rel);
    if (hit === undefined) {
      hit = ig.ignores(rel);
      if (seen.size > 100_000) seen.clear();
      seen.set(rel, hit);
    }
    return hit;
  };
}

/**
 * `.baton/config.json` `{"checkpoints": {"retain": 100, "exclude": ["*.log"], "private": ["*.secret"], "maxFileBytes": …}}`.
 * Options given to openBaton (and BATON_CHECKPOINT_RETAIN) win over it. A bad value is
 * `bad_input` naming the file and key: checkpoints must not silently use other settings.
 */
export function readCheckpointConfig(batonDir: string): Omit<CheckpointOptions, "durable"> {
  const c = configSection(batonDir, "checkpoints");
  if (c === undefined) return {};
  const bad = (key: string, want: string) => badSetting(batonDir, `checkpoints.${key}`, want);
  const { retain, exclude, maxFileBytes, private: secret } = c;
  const out: Omit<CheckpointOptions, "durable"> = {};
  if (retain !== undefined) {
    if (!Number.isInteger(retain) || (retain as number) < 1 || (retain as number) > MAX_CHECKPOINT_RETAIN)
      throw bad("retain", `a whole number from 1 to ${MAX_CHECKPOINT_RETAIN}`);
    out.retain = retain as number;
  }
  if (exclude !== undefined) {
    if (!Array.isArray(exclude) || !exclude.every((x) => typeof x === "string")) throw bad("exclude", "a list of gitignore patterns");
    out.exclude = exclude;
  }
  if (secret !== undefined) {
    if (!Array.isArray(secret) || !secret.every((x) => typeof x === "string")) throw bad("private", "a list of gitignore patterns");
    out.private = secret;
  }
  if (maxFileBytes !== undefined) {
    if (!Number.isInteger(maxFileBytes) || (maxFileBytes as number) < 0) throw bad("maxFileBytes", "a whole number of bytes");
    out.maxFileBytes = maxFileBytes as number;
  }
  return out;
}
