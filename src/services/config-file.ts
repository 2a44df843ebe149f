/**
 * `.baton/config.json`: one reader, one policy, for every setting in it (`store` and
 * `project`, `checkpoints`, `spiral`, `hooks`).
 *
 * - No file: no settings (every default holds).
 * - A file that cannot be read, is not JSON, or is not a JSON object, and a setting with a
 *   value Baton does not take: `bad_input` naming the file and the key, and nothing is done
 *   with a guess. A setting decides what is stored, shared or refused (an exclude, a private
 *   pattern, the store itself), so it is never silently replaced by a default.
 * - What must never stop an agent stays fail-open the way every hook failure is: a hook that
 *   meets the error logs it to `.baton/logs/hooks.log` and lets the tool call through, and
 *   `baton doctor` reports it (`config_invalid`) with the message.
 *
 * Read each time it is needed (it is small): a process that stays up (the server) notices a
 * change by the file's stamp (server/hook-route.ts) rather than by caching it here. Light on
 * purpose (every hook process reads it); the one writer, `baton init --store`, is in
 * store-config.ts.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type BatonError, badInput } from "../errors.js";

export const CONFIG_FILE = "config.json";

export function configPath(batonDir: string): string {
  return join(batonDir, CONFIG_FILE);
}

/** The file's settings: `{}` when there is no file; `bad_input` when it is not a readable JSON object. */
export function readConfigFile(batonDir: string): Record<string, unknown> {
  const file = configPath(batonDir);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return {};
    throw badInput(`cannot read ${file} (${(err as Error).message}); fix its permissions or remove it`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw badInput(`${file} is not valid JSON (${(err as Error).message}); fix it or remove it`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw badInput(`${file} must hold a JSON object of settings, e.g. {"checkpoints": {"retain": 50}}`);
  return value as Record<string, unknown>;
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
