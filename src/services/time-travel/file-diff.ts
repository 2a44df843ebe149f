/**
 * One file's unified diff as the rollback preview and the checkpoint comparison show it: a
 * binary file (a NUL in its first 8,000 bytes, as git decides) is named, a pair over
 * MAX_DIFF_BYTES is named with its sizes, and the diff itself is bounded in time and in edits,
 * so a pathological pair (two unrelated large texts) is named too instead of holding the server.
 *
 * Redacted: checkpoint blobs hold file contents verbatim (they must, to restore), but no view
 * shows them unredacted (the dashboard, `rollback --dry-run`, MCP). The diff is made from the
 * real texts, so a changed secret still shows as a changed line; every line it shows is taken
 * from its side redacted as a whole (a private key block spanning lines is seen as one),
 * line for line, so both sides are redacted alike and the line numbers stay the file's.
 */
import { REDACTED, redactText } from "../../core/redaction/redact.js";

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

/** The unified diff of one file (`/dev/null` as a name for an absent side), redacted. */
export async function unifiedDiff(oldName: string, newName: string, before: Uint8Array, after: Uint8Array): Promise<string> {
  if (isBinary(before) || isBinary(after)) return `Binary files ${oldName} and ${newName} differ\n`;
  if (!diffable(before.byteLength, after.byteLength)) return tooLargeDiff(oldName, newName, before.byteLength, after.byteLength);
  const { createTwoFilesPatch, diffArrays } = await import("diff");
  const a = Buffer.from(before).toString("utf8");
  const b = Buffer.from(after).toString("utf8");
  const text = createTwoFilesPatch(oldName, newName, a, b, undefined, undefined, {
    context: 3,
    timeout: DIFF_TIMEOUT_MS,
    maxEditLength: DIFF_MAX_EDITS,
  });
  if (text === undefined) return tooLargeDiff(oldName, newName, before.byteLength, after.byteLength, "too many changes to diff");
  const patch = text.replace(/^=+\n/, "");
  const ra = redactLines(a, diffArrays);
  const rb = redactLines(b, diffArrays);
  return ra || rb ? redactPatch(patch, ra ?? a.split("\n"), rb ?? b.split("\n")) : patch;
}

type DiffArrays = typeof import("diff").diffArrays;

/**
 * The text redacted as a whole, then as many lines as the text has: line i of the result stands
 * for line i of the text. A secret spanning lines (a private key block) becomes its placeholder
 * on its first line and REDACTED on each of the others. Undefined when nothing was redacted.
 */
export function redactLines(text: string, diffArrays: DiffArrays): string[] | undefined {
  const red = redactText(text);
  if (red === text) return undefined;
  const lines = text.split("\n");
  const redLines = red.split("\n");
  if (redLines.length === lines.length) return redLines;
  // Line counts differ: align the two by their unchanged lines, and fit each changed run of
  // redacted lines into the run of lines it replaced.
  const out: string[] = [];
  let gone = 0; // lines of the text whose replacement has not come yet
  let lead = ""; // replacement text that came before any line: it goes on the first line
  const place = (came: string[]) => {
    if (gone === 0) {
      // Replacement text without lines it replaced: it belongs to the line before.
      if (out.length > 0) out[out.length - 1] += ` ${came.join(" ")}`;
      else lead += `${came.join(" ")} `;
      return;
    }
    if (came.length < gone) {
      out.push(...came);
      for (let i = came.length; i < gone; i++) out.push(REDACTED);
    } else out.push(...came.slice(0, gone - 1), came.slice(gone - 1).join(" "));
    gone = 0;
  };
  for (const part of diffArrays(lines, redLines)) {
    if (part.removed) gone += part.count ?? part.value.length;
    else if (part.added) place(part.value);
    else {
      if (gone > 0) place([]);
      out.push(...part.value);
    }
  }
  if (gone > 0) place([]);
  if (lead !== "") out[0] = lead + (out[0] ?? "");
  return out;
}

/** The patch with each shown line taken from its side's redacted lines (by the hunks' line numbers). */
function redactPatch(patch: string, a: readonly string[], b: readonly string[]): string {
  let o = 0;
  let n = 0;
  let inHunk = false;
  const out: string[] = [];
  for (const line of patch.split("\n")) {
    const h = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (h) {
      o = Number(h[1]);
      n = Number(h[2]);
      // An empty side's hunk starts at 0; otherwise numbers are 1-based.
      if (o > 0) o--;
      if (n > 0) n--;
      inHunk = true;
      out.push(line);
    } else if (inHunk && line.startsWith(" ")) {
      out.push(` ${a[o++] ?? ""}`);
      n++;
    } else if (inHunk && line.startsWith("-")) out.push(`-${a[o++] ?? ""}`);
    else if (inHunk && line.startsWith("+")) out.push(`+${b[n++] ?? ""}`);
    else out.push(line);
  }
  return out.join("\n");
}
