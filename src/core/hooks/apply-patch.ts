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

/**
 * The files an apply_patch body names (`files`: every path of an Add, Update, Delete or Move
 * line once, in order), and those the patch removes before it writes them, if it ever does
 * (`unlinked`: a Delete, or the Update a Move follows). A link among the unlinked is removed
 * itself, not written through: the file it leads to is not written (services/agents,
 * workspaceFiles), so it is neither claimed nor listed. A write before the removal (an Update of
 * the link, then its Delete) went through the link, and a write after it (a Delete, then an Add)
 * makes a plain file where the link was.
 */
export function patchFiles(patch: string | undefined): { files: string[]; unlinked?: string[] } {
  const first = new Map<string, "write" | "remove">(); // each path's first operation, in order
  const note = (p: string, op: "write" | "remove") => {
    if (!first.has(p)) first.set(p, op);
  };
  let update: string | undefined; // an Update header whose next line may be its Move
  for (const raw of (patch ?? "").split(/\r?\n/)) {
    const line = raw.trimEnd();
    const header = FILE_LINE.exec(line);
    const move = header ? null : MOVE_LINE.exec(line);
    if (update !== undefined) note(update, move ? "remove" : "write");
    update = undefined;
    const p = (header?.[2] ?? move?.[1])?.trim();
    if (!p) continue;
    if (header?.[1] === "Update") update = p;
    else note(p, header?.[1] === "Delete" ? "remove" : "write");
  }
  if (update !== undefined) note(update, "write");
  const files = [...first.keys()];
  const unlinked = files.filter((p) => first.get(p) === "remove");
  return unlinked.length > 0 ? { files, unlinked } : { files };
}

/** Whether a text holds an apply_patch envelope (older Codex builds send it through the shell tool). */
export function isPatch(text: string): boolean {
  return text.includes("*** Begin Patch");
}
