/**
 * OpenCode's npm plugin route, as opencode-ai 1.18.33 does it: an entry `"agent-baton"` (or
 * `"agent-baton@<version>"`, or `["agent-baton", {options}]`) in the `"plugin"` list of an
 * `opencode.json` or `opencode.jsonc` (the project's, its `.opencode/` folder's, or the user's),
 * which `opencode plugin agent-baton [--global]` writes. OpenCode installs the package with npm's
 * Arborist, install scripts off, into `$XDG_CACHE_HOME/opencode/packages/<spec>/` and imports its
 * `exports["./server"]` (plugins/opencode/baton.js: the plugin `baton hooks install opencode`
 * commits), never Baton's library. A write that changes a configuration file listing Baton's
 * package is the agent switching its own supervision off (platform/plugin-files.ts).
 */
import { parse } from "jsonc-parser";
import { jsonTextDepth, SETTINGS_TEXT_DEPTH } from "../core/canonical.js";
import { readSettingsText } from "./settings-text.js";

/** Baton's package on npm, the name OpenCode's configuration lists. */
export const OPENCODE_NPM_PACKAGE = "agent-baton";

/** The names OpenCode reads its configuration from, in a folder. */
export const OPENCODE_CONFIG_NAMES = ["opencode.jsonc", "opencode.json"] as const;

/** The spec of an entry of OpenCode's `"plugin"` list: a string, or the first word of `[spec, options]`. */
function specOf(entry: unknown): string | undefined {
  const spec = Array.isArray(entry) ? entry[0] : entry;
  return typeof spec === "string" ? spec.trim() : undefined;
}

/** Whether a spec names Baton's npm package (`agent-baton`, `agent-baton@1.2.3`, `agent-baton@latest`). */
export function isBatonNpmSpec(spec: string): boolean {
  return spec === OPENCODE_NPM_PACKAGE || (spec.startsWith(`${OPENCODE_NPM_PACKAGE}@`) && !spec.includes("/"));
}

/** The specs of Baton's package in the `"plugin"` list of an opencode.json(c) text (comments and trailing commas allowed). */
export function batonNpmSpecs(text: string): string[] {
  if (jsonTextDepth(text) > SETTINGS_TEXT_DEPTH) return [];
  const value = parse(text, [], { allowTrailingComma: true }) as unknown;
  if (value === null || typeof value !== "object" || Array.isArray(value)) return [];
  const list = (value as Record<string, unknown>).plugin;
  if (!Array.isArray(list)) return [];
  return list.map(specOf).filter((s): s is string => s !== undefined && isBatonNpmSpec(s));
}

/** Whether `file` is an OpenCode configuration file that lists Baton's npm package now. */
export function listsBatonNpmPlugin(file: string): boolean {
  try {
    const text = readSettingsText(file, 1024 * 1024);
    return text !== undefined && batonNpmSpecs(text).length > 0;
  } catch {
    return false;
  }
}
