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
const FILE_LINE = /^\*\*\* (Add|Update|Delete) File:\s*(.+?)\s*$/;
const MOVE_LINE = /^\*\*\* Move to:\s*(.+?)\s*$/;

/** Paths named in an apply_patch body, deduplicated, in order of appearance. */
export function patchPaths(patch: string): string[] {
  return patchFiles(patch).files;
}

/**
 * The files a patch names (`files`, as patchPaths), and those it only deletes or moves away
 * (`unlinked`: a Delete, or the Update a Move follows, never added or written in place). A link
 * among the unlinked is removed itself: the file it leads to is not written (services/agents,
 * workspaceFiles), so it is neither checkpointed as written nor claimed.
 */
export function patchFiles(patch: string | undefined): { files: string[]; unlinked?: string[] } {
  const files: string[] = [];
  const seen = new Set<string>();
  const written = new Set<string>();
  const gone = new Set<string>();
  let update: string | undefined; // an Update header whose next line may be its Move
  for (const raw of (patch ?? "").split(/\r?\n/)) {
    const line = raw.trimEnd();
    const header = FILE_LINE.exec(line);
    const move = header ? null : MOVE_LINE.exec(line);
    if (update !== undefined) (move ? gone : written).add(update);
    update = undefined;
    const p = (header?.[2] ?? move?.[1])?.trim();
    if (!p) continue;
    if (!seen.has(p)) {
      seen.add(p);
      files.push(p);
    }
    if (move || header?.[1] === "Add") written.add(p);
    else if (header?.[1] === "Delete") gone.add(p);
    else update = p;
  }
  if (update !== undefined) written.add(update);
  const unlinked = [...gone].filter((p) => !written.has(p));
  return unlinked.length > 0 ? { files, unlinked } : { files };
}

/** Whether a text holds an apply_patch envelope (older Codex builds send it through the shell tool). */
export function isPatch(text: string): boolean {
  return text.includes("*** Begin Patch");
}
