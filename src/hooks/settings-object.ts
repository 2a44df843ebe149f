/**
 * An agent's settings file read for what it says (a switch, a trust list), never to be written:
 * comments and trailing commas allowed, as the agents allow them. Undefined when there is none,
 * or it cannot be read as a JSON object (the agent then reports it itself).
 */
import { parse } from "jsonc-parser";
import { jsonTextDepth, SETTINGS_TEXT_DEPTH } from "../core/canonical.js";
import type { JsonObject } from "../core/types.js";
import { readSettingsText } from "../platform/settings-text.js";

export function settingsObjectAt(file: string): JsonObject | undefined {
  let text: string;
  try {
    const read = readSettingsText(file);
    if (read === undefined) return undefined;
    text = read;
  } catch {
    return undefined;
  }
  if (jsonTextDepth(text) > SETTINGS_TEXT_DEPTH) return undefined; // no settings Baton reads nest that deep
  const v: unknown = parse(text, [], { allowTrailingComma: true, disallowComments: false });
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as JsonObject) : undefined;
}
