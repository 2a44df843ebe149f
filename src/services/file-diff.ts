/**
 * One file's unified diff as the rollback preview and the checkpoint comparison show it: a
 * binary file (a NUL in its first 8,000 bytes, as git decides) is named, a pair over
 * MAX_DIFF_BYTES is named with its sizes, and the diff itself is bounded in time and in edits,
 * so a pathological pair (two unrelated large texts) is named too instead of holding the server.
 */
export const MAX_DIFF_BYTES = 1024 * 1024;
/** The line diff gives up after this long, or this many edits, and the pair is named instead. */
const DIFF_TIMEOUT_MS = 2_000;
const DIFF_MAX_EDITS = 5_000;

export function isBinary(b: Uint8Array): boolean {
  const n = Math.min(b.byteLength, 8000);
  for (let i = 0; i < n; i++) if (b[i] === 0) return true;
  return false;
}

/** The text that stands for a pair too large to diff (sizes in bytes). */
export function tooLargeDiff(oldName: string, newName: string, beforeBytes: number, afterBytes: number, why = "too large to diff"): string {
  return `--- ${oldName}\n+++ ${newName}\n(${beforeBytes} → ${afterBytes} bytes: ${why})\n`;
}

/** Whether a pair of these sizes is diffed at all (callers check before reading the blobs). */
export function diffable(beforeBytes: number, afterBytes: number): boolean {
  return beforeBytes + afterBytes <= MAX_DIFF_BYTES;
}

/** The unified diff of one file (`/dev/null` as a name for an absent side). */
export async function unifiedDiff(oldName: string, newName: string, before: Uint8Array, after: Uint8Array): Promise<string> {
  if (isBinary(before) || isBinary(after)) return `Binary files ${oldName} and ${newName} differ\n`;
  if (!diffable(before.byteLength, after.byteLength)) return tooLargeDiff(oldName, newName, before.byteLength, after.byteLength);
  const { createTwoFilesPatch } = await import("diff");
  const text = createTwoFilesPatch(
    oldName,
    newName,
    Buffer.from(before).toString("utf8"),
    Buffer.from(after).toString("utf8"),
    undefined,
    undefined,
    { context: 3, timeout: DIFF_TIMEOUT_MS, maxEditLength: DIFF_MAX_EDITS },
  );
  if (text === undefined) return tooLargeDiff(oldName, newName, before.byteLength, after.byteLength, "too many changes to diff");
  return text.replace(/^=+\n/, "");
}
