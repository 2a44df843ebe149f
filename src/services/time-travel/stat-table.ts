/**
 * The stat cache as a whole-tree checkpoint uses it: a copy in flat arrays, matched against a
 * scan by position first, and the entries a checkpoint leaves behind (services/time-travel/checkpoints.ts).
 */
import { closeSync, fstatSync, openSync, readFileSync } from "node:fs";
import type { StatCacheRow } from "../../backend/contract.js";
import type { CheckpointFile } from "../../core/time-travel/checkpoints.js";
import { READ_NO_FOLLOW } from "../../platform/safe-fs.js";
import { CTIME, INO, MODE, MTIME, SIZE, STAT_FIELDS, type TreeScan } from "./tree-scan.js";

/**
 * A copy of the stat cache in flat arrays: per entry its path, its hash ("" for a slot with no
 * entry) and ROW numbers (the stat fields of tree-scan's STAT_FIELDS, then CHECKED, when the
 * scan that hashed it started). Entries are in the order of the scan that left them, so the
 * next scan of an unchanged tree meets them in the same order.
 */
export interface StatTable {
  generation: number;
  paths: string[];
  hashes: string[];
  nums: Float64Array;
  /** Entries (slots with a hash). */
  count: number;
  /** path → slot, built on the first lookup out of order. */
  index: Map<string, number> | undefined;
}

const ROW = STAT_FIELDS + 1;
const CHECKED = STAT_FIELDS;

/** Row `k` of a stat table's numbers: the stat fields, then when the file was hashed. */
function putRow(nums: Float64Array, k: number, r: StatCacheRow): void {
  const at = k * ROW;
  nums[at + SIZE] = r.size;
  nums[at + MTIME] = r.mtimeMs;
  nums[at + CTIME] = r.ctimeMs;
  nums[at + INO] = r.ino;
  nums[at + MODE] = r.mode;
  nums[at + CHECKED] = r.checkedMs;
}

export function statTable(rows: readonly StatCacheRow[], generation: number): StatTable {
  const nums = new Float64Array(rows.length * ROW);
  rows.forEach((r, k) => {
    putRow(nums, k, r);
  });
  return { generation, paths: rows.map((r) => r.path), hashes: rows.map((r) => r.hash), nums, count: rows.length, index: undefined };
}

/** The slot of `path`, trying `hint` (where the last scan had the next file) first; -1 when it has no entry. */
function slotOf(table: StatTable, path: string, hint: number): number {
  if (table.paths[hint] === path) return table.hashes[hint] === "" ? -1 : hint;
  if (table.index === undefined) {
    table.index = new Map();
    table.paths.forEach((p, k) => {
      if (table.hashes[k] !== "") table.index?.set(p, k);
    });
  }
  return table.index.get(path) ?? -1;
}

/**
 * The files of a scan whose stat cache entry can be trusted (every stat field agrees and the
 * file is older than the scan that hashed it), in place; the indexes of the others, to read;
 * and each file's slot in the table (-1: none).
 */
export function classify(
  scan: TreeScan,
  table: StatTable,
  maxFileBytes: number,
): { slots: (CheckpointFile | undefined)[]; toRead: number[]; matched: Int32Array; known: number } {
  const n = scan.paths.length;
  const slots: (CheckpointFile | undefined)[] = new Array(n);
  const matched = new Int32Array(n);
  const toRead: number[] = [];
  const st = scan.stats;
  const nums = table.nums;
  let known = 0;
  let hint = 0;
  for (let i = 0; i < n; i++) {
    const path = scan.paths[i] as string;
    const k = slotOf(table, path, hint);
    matched[i] = k;
    const s = i * STAT_FIELDS;
    if (k >= 0) {
      known++;
      hint = k + 1;
      const c = k * ROW;
      if (
        nums[c + SIZE] === st[s + SIZE] &&
        nums[c + MTIME] === st[s + MTIME] &&
        nums[c + CTIME] === st[s + CTIME] &&
        nums[c + INO] === st[s + INO] &&
        nums[c + MODE] === st[s + MODE] &&
        (st[s + MTIME] as number) < (nums[c + CHECKED] as number)
      ) {
        slots[i] = { path, hash: table.hashes[k] as string, mode: st[s + MODE] as number, size: st[s + SIZE] as number };
        continue;
      }
    }
    if ((st[s + SIZE] as number) > maxFileBytes) slots[i] = { path, skipped: `larger than ${maxFileBytes} bytes` };
    else toRead.push(i);
  }
  return { slots, toRead, matched, known };
}

/**
 * The stat cache as this checkpoint's commit left it, in the scan's order: fresh entries for
 * the files read, the old entry for the others that had one, nothing for the rest (a file left
 * out as too large keeps whatever entry it had; vanished paths are gone).
 */
export function nextStatTable(
  old: StatTable,
  scan: TreeScan,
  matched: Int32Array,
  fresh: readonly StatCacheRow[],
  freshAt: readonly number[],
  generation: number,
): StatTable {
  const n = scan.paths.length;
  const nums = new Float64Array(n * ROW);
  const hashes: string[] = new Array(n);
  let count = 0;
  for (let i = 0; i < n; i++) {
    const k = matched[i] as number;
    if (k >= 0) {
      nums.set(old.nums.subarray(k * ROW, k * ROW + ROW), i * ROW);
      hashes[i] = old.hashes[k] as string;
      count++;
    } else {
      nums[i * ROW] = Number.NaN; // never equal: no entry
      hashes[i] = "";
    }
  }
  fresh.forEach((r, j) => {
    const i = freshAt[j] as number;
    putRow(nums, i, r);
    if (hashes[i] === "") count++;
    hashes[i] = r.hash;
  });
  return { generation, paths: scan.paths, hashes, nums, count, index: undefined };
}

/**
 * A regular file's bytes and stat, opened without following links or blocking; `gone` if it
 * vanished, `other` if a link or FIFO took its place since it was listed, `problem` if it is
 * there but could not be read (a permission). Neither of the last two is the caller's to take
 * for absent.
 */
export function readRegular(
  abs: string,
): { data: Buffer; stat: Omit<StatCacheRow, "path" | "hash" | "checkedMs"> } | { gone: true } | { other: true } | { problem: string } {
  let fd: number;
  try {
    fd = openSync(abs, READ_NO_FOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { gone: true };
    return code === "ELOOP" ? { other: true } : { problem: `unreadable (${code ?? "error"})` };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { other: true };
    const data = readFileSync(fd);
    return { data, stat: { size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, mode: st.mode & 0o777 } };
  } finally {
    closeSync(fd);
  }
}
