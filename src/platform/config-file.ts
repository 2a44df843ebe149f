/**
 * `.baton/config.json`: one reader, one policy, for every setting in it (`store` and
 * `project`, `checkpoints`, `spiral`, `lanes`, `hooks`).
 *
 * - No file: no settings (every default holds).
 * - A file its user has not trusted (`baton trust`, platform/config-trust.ts), or one that changed
 *   since: no settings either, whatever it holds, readable or not. A repository can ship the file,
 *   and its settings decide where data goes, what is private and whether the agent is
 *   supervised, so they come from the user, never from a clone. `configTrust` says so for
 *   `baton doctor` (`config_untrusted`) and `baton status`. The environment (`BATON_STORE`, …)
 *   still applies.
 * - A trusted file that cannot be read, is not JSON, or is not a JSON object, and a setting with
 *   a value Baton does not take: `bad_input` naming the file and the key, and nothing is done
 *   with a guess. A setting decides what is stored, shared or refused (an exclude, a private
 *   pattern, the store itself), so it is never silently replaced by a default.
 * - What must never stop an agent stays fail-open the way every hook failure is: a hook that
 *   meets the error logs it to `.baton/logs/hooks.log` and lets the tool call through, and
 *   `baton doctor` reports it (`config_invalid`) with the message.
 *
 * Read each time it is needed (it is small): a process that stays up (the server) notices a
 * change by the file's stamp (server/hook-route.ts) rather than by caching it here, so trusting
 * or revoking touches the file's time. Light on purpose (every hook process reads it); the one
 * writer, `baton init --store`, is in store-config.ts. Every setting is documented in
 * docs/configuration.md (test/docs.test.ts fails when a key src reads is missing there).
 */
import { utimesSync } from "node:fs";
import { join } from "node:path";
import { jsonBoundsProblem } from "../core/canonical.js";
import { BatonError, badInput } from "../errors.js";
import { readTrust, recordTrust, revokeTrust, sha256, type TrustRecord } from "./config-trust.js";
import { NotASettingsFile, readSettingsBytes } from "./settings-text.js";

export const CONFIG_FILE = "config.json";

export function configPath(batonDir: string): string {
  return join(batonDir, CONFIG_FILE);
}

export type ConfigTrustState = "absent" | "trusted" | "untrusted" | "changed";

/** Whether this workspace's `.baton/config.json` applies, and what is ignored when it does not. */
export interface ConfigTrust {
  file: string;
  /** `untrusted`: never trusted here; `changed`: its bytes are not the ones trusted. */
  state: ConfigTrustState;
  /** The top-level settings the file asks for (ignored unless `trusted`). */
  keys: string[];
  /** When the user trusted it (`trusted`, and `changed`: the earlier trust). */
  trustedAt?: string;
}

type Raw = { kind: "absent" } | { kind: "bytes"; bytes: Buffer } | { kind: "unreadable"; err: Error };

function readRaw(file: string): Raw {
  try {
    const bytes = readSettingsBytes(file);
    return bytes === undefined ? { kind: "absent" } : { kind: "bytes", bytes };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { kind: "absent" };
    return { kind: "unreadable", err: err as Error };
  }
}

function stateOf(raw: Raw, record: TrustRecord | undefined): ConfigTrustState {
  if (raw.kind === "absent") return "absent";
  if (record === undefined) return "untrusted";
  return raw.kind === "bytes" && sha256(raw.bytes) === record.sha256 ? "trusted" : "changed";
}

/** The settings in `bytes`: `bad_input` when they are not a JSON object. */
function parseSettings(file: string, bytes: Buffer): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString("utf8"));
  } catch (err) {
    throw badInput(`${file} is not valid JSON (${(err as Error).message}); fix it or remove it`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw badInput(`${file} must hold a JSON object of settings, e.g. {"checkpoints": {"retain": 50}}`);
  // A repository's file nested 100,000 deep parses, then overflows whatever walks it (printing it for `baton trust`).
  const bounds = jsonBoundsProblem(value);
  if (bounds !== undefined) throw badInput(`${file}: ${bounds}; no settings file needs that: fix it or remove it`);
  return value as Record<string, unknown>;
}

/**
 * The file's settings: `{}` when there is no file or its user has not trusted it as it is now;
 * for a trusted file, `bad_input` when it is not a readable JSON object.
 */
export function readConfigFile(batonDir: string): Record<string, unknown> {
  const file = configPath(batonDir);
  const raw = readRaw(file);
  if (raw.kind === "absent") return {};
  const record = readTrust(batonDir);
  // Unreadable and trusted before: the user meant its settings to apply, so no default stands in.
  if (raw.kind === "unreadable" && record !== undefined)
    throw badInput(`cannot read ${file} (${raw.err.message}); fix its permissions or remove it`);
  if (raw.kind !== "bytes" || stateOf(raw, record) !== "trusted") return {};
  return parseSettings(file, raw.bytes);
}

/** Whether the file applies (`absent`, `trusted`) or is ignored (`untrusted`, `changed`), and the settings it asks for. */
export function configTrust(batonDir: string): ConfigTrust {
  const file = configPath(batonDir);
  const raw = readRaw(file);
  const record = raw.kind === "absent" ? undefined : readTrust(batonDir);
  const state = stateOf(raw, record);
  let keys: string[] = [];
  if (raw.kind === "bytes") {
    try {
      keys = Object.keys(parseSettings(file, raw.bytes));
    } catch {
      // not a JSON object: no keys to name
    }
  }
  return { file, state, keys, ...(record && state !== "untrusted" ? { trustedAt: record.trustedAt } : {}) };
}

/**
 * Trust the file as it is now (`baton trust`): its settings, parsed from the very bytes trusted
 * (`bad_input` when they are not a JSON object; `not_found` when there is no file), and the record.
 */
export function trustConfigFile(batonDir: string): { settings: Record<string, unknown>; record: TrustRecord; before: ConfigTrustState } {
  const file = configPath(batonDir);
  const raw = readRaw(file);
  if (raw.kind === "absent") throw new BatonError("not_found", `there is no ${file} to trust; Baton's defaults apply`);
  if (raw.kind === "unreadable")
    throw badInput(
      raw.err instanceof NotASettingsFile
        ? `cannot trust ${file}: ${raw.err.why}; make it a regular file holding a JSON object, then run \`baton trust\``
        : `cannot read ${file} (${raw.err.message}); fix its permissions, then run \`baton trust\``,
    );
  const before = stateOf(raw, readTrust(batonDir));
  const settings = parseSettings(file, raw.bytes);
  const record = recordTrust(batonDir, raw.bytes);
  touch(file);
  return { settings, record, before };
}

/** Stop trusting the file (`baton trust --revoke`). Returns whether it was trusted. */
export function revokeConfigTrust(batonDir: string): boolean {
  const had = revokeTrust(batonDir);
  if (had) touch(configPath(batonDir));
  return had;
}

/**
 * A new stamp on the file, so a running server (which read the settings once and compares the
 * file's stamp, server/hook-route.ts) hands hooks back to their own processes, which read the
 * settings as they now apply. Best effort: without it the server applies the old ones until it restarts.
 */
function touch(file: string): void {
  try {
    const now = new Date();
    utimesSync(file, now, now);
  } catch {
    // gone or not ours
  }
}

/** A setting Baton does not take: `bad_input` naming the file, the key and what it must be. */
export function badSetting(batonDir: string, key: string, want: string): BatonError {
  return badInput(`${configPath(batonDir)}: ${key} must be ${want}; fix it or remove the key`);
}

/** One section of the file (`checkpoints`, `spiral`, `hooks`): undefined when absent, `bad_input` when not an object. */
export function configSection(batonDir: string, key: string, config = readConfigFile(batonDir)): Record<string, unknown> | undefined {
  const v = config[key];
  if (v === undefined) return undefined;
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw badSetting(batonDir, key, "an object");
  return v as Record<string, unknown>;
}
