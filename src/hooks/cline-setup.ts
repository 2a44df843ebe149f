/**
 * Cline CLI's hooks are files, not entries in a settings file: one executable per hook type in a
 * hooks directory (core/hooks/cline.ts). `baton hooks install cline` writes one small script
 * per type, `<Type>.sh`, that runs `baton hook cline <Type>`; uninstall removes exactly those.
 *
 * - Project: `.clinerules/hooks/` (committed with the project): each script runs `baton` from
 *   PATH, and does nothing where there is none (CLINE_PATH_GUARD), so a teammate without Baton
 *   is not held up by a failing hook on every call.
 * - `--user`: `$CLINE_DIR/hooks/` (default `~/.cline/hooks/`, what `cline --hooks-dir` defaults
 *   to): this Node and this baton by absolute path.
 * - Cline CLI runs every file of a type, so a user's own `PreToolUse` (or `PreToolUse.py` …)
 *   keeps running beside Baton's `PreToolUse.sh`. A `<Type>.sh` that is not Baton's is never
 *   overwritten: install refuses, naming it, and changes nothing.
 * - Linux and macOS: the scripts are POSIX shell (Cline CLI on Windows runs hook files through
 *   PowerShell, which Baton does not write).
 */
import { lstatSync, rmdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { CLINE_HOOK_TYPES, CLINE_PATH_GUARD } from "../core/hooks/cline.js";
import { type InstalledHook, isBatonCommand } from "../core/hooks/config.js";
import { BatonError, badInput } from "../errors.js";
import { readSettingsText } from "../platform/settings-text.js";
import { clineHooksDir, type HookPlaceOptions } from "./places.js";
import { checkPlace, writeAtomic } from "./settings-file.js";

/**
 * The script Baton writes for one hook type. A file is Baton's only when it is exactly this
 * (batonCommandIn): a later change to the text must keep recognising this one, or an upgrade
 * would take Baton's own scripts for the user's.
 */
export function clineScript(type: string, launcher: string): string {
  const lines = ["#!/bin/sh", "# Baton's hook for Cline CLI: `baton hooks uninstall cline` removes it."];
  if (launcher === "baton") lines.push("# Without baton on PATH it does nothing.", CLINE_PATH_GUARD);
  lines.push(`exec ${launcher} hook cline ${type}`, "");
  return lines.join("\n");
}

/**
 * The Baton command a hook file runs, when the file is Baton's: a regular file whose text is
 * exactly the script Baton writes for its type (with the launcher its `exec` line names). A file
 * that only ends in Baton's `exec` line (edited, or a repository's own with `exit 0` before it)
 * is not: install leaves it alone and refuses, uninstall leaves it, status does not count it.
 */
function batonCommandIn(file: string, type: string): string | undefined {
  const text = scriptText(file);
  if (text === undefined) return undefined;
  const line = /^exec (.+)$/m.exec(text)?.[1];
  if (line === undefined || !isBatonCommand(line, "cline")) return undefined;
  const suffix = ` hook cline ${type}`;
  if (!line.endsWith(suffix)) return undefined;
  return text === clineScript(type, line.slice(0, -suffix.length)) ? line : undefined;
}

/** A hook file's text when it is a regular file no larger than a script of Baton's could be (no link followed, no FIFO waited on). */
function scriptText(file: string): string | undefined {
  try {
    return readSettingsText(file, 64 * 1024, { follow: false });
  } catch {
    return undefined;
  }
}

function exists(file: string): boolean {
  return lstatSync(file, { throwIfNoEntry: false }) !== undefined;
}

/** Baton's hook files in the directory, in Cline CLI's hook types' order. */
export function clineInstalled(dir: string): InstalledHook[] {
  const out: InstalledHook[] = [];
  for (const type of CLINE_HOOK_TYPES) {
    const command = batonCommandIn(join(dir, `${type}.sh`), type);
    if (command !== undefined) out.push({ event: type, command });
  }
  return out;
}

/** Write Baton's scripts; refuses (changing nothing) when a `<Type>.sh` there is not Baton's. */
export function installClineHooks(o: HookPlaceOptions, launcher: string): { dir: string; changed: boolean } {
  const dir = clineHooksDir(o);
  const files = CLINE_HOOK_TYPES.map((type) => ({ type, file: join(dir, `${type}.sh`) }));
  for (const f of files) checkPlace(f.file, o);
  const foreign = files.filter((f) => exists(f.file) && batonCommandIn(f.file, f.type) === undefined).map((f) => f.file);
  if (foreign.length > 0)
    throw badInput(
      `${foreign.join(", ")} ${foreign.length === 1 ? "is a hook" : "are hooks"} of your own (or Baton's, edited), where Baton's would go; Baton changed nothing. Cline CLI runs every file of a hook type, so rename yours (e.g. PreToolUse.sh to PreToolUse, or PreToolUse.py) and install again: both will run.`,
      { path: foreign[0] },
    );
  let changed = false;
  for (const { type, file } of files) {
    const text = clineScript(type, launcher);
    if (scriptText(file) === text) continue;
    writeAtomic(file, text, o, 0o755);
    changed = true;
  }
  return { dir, changed };
}

/** Remove Baton's scripts (only files that are Baton's), then the folders install made, when empty. */
export function uninstallClineHooks(o: HookPlaceOptions): { dir: string; removed: number } {
  const dir = clineHooksDir(o);
  let removed = 0;
  for (const type of CLINE_HOOK_TYPES) {
    const file = join(dir, `${type}.sh`);
    checkPlace(file, o);
    if (batonCommandIn(file, type) === undefined) continue;
    try {
      unlinkSync(file);
    } catch (err) {
      throw new BatonError("io_error", `cannot remove ${file}: ${(err as Error).message}`, { path: file }, { cause: err });
    }
    removed++;
  }
  if (removed > 0) {
    removeIfEmpty(dir);
    // A project's .clinerules/ that install's folder was alone in goes too; a user's folder stays.
    if (o.scope === "project") removeIfEmpty(join(dir, ".."));
  }
  return { dir, removed };
}

function removeIfEmpty(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // not empty, or not ours to remove: it stays
  }
}
