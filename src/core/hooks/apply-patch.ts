/**
 * The files a Codex `apply_patch` call touches, read from the patch text. Pure.
 *
 * The patch format (Codex's edit tool; the hook sees the raw body as `tool_input.command`):
 *
 *     *** Begin Patch
 *     *** Add File: docs/new.md
 *     +text
 *     *** Update File: src/app.ts
 *     *** Move to: src/main.ts
 *     @@ …
 *     *** Delete File: old.txt
 *     *** End Patch
 *
 * Every path named by an Add, Update, Delete or Move line is returned once, in order: a
 * checkpoint of all of them lets a rollback undo creations, edits, deletions and renames.
 * Paths are returned as written (relative to the agent's working directory, or absolute).
 */

// OpenCode's parser takes the path after the colon with or without a space (`startsWith` and
// `trim`): so does this, or a header written without it would name no file at all.
const FILE_LINE = /^\*\*\* (?:Add|Update|Delete) File:\s*(.+?)\s*$/;
const MOVE_LINE = /^\*\*\* Move to:\s*(.+?)\s*$/;

/** Paths named in an apply_patch body, deduplicated, in order of appearance. */
export function patchPaths(patch: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const raw of patch.split(/\r?\n/)) {
    const line = raw.trimEnd();
    const m = FILE_LINE.exec(line) ?? MOVE_LINE.exec(line);
    const p = m?.[1]?.trim();
    if (p && !seen.has(p)) {
      seen.add(p);
      out.push(p);
    }
  }
  return out;
}

/** Whether a text holds an apply_patch envelope (older Codex builds send it through the shell tool). */
export function isPatch(text: string): boolean {
  return text.includes("*** Begin Patch");
}
