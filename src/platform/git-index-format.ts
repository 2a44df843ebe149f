/**
 * git's index file format (Documentation/gitformat-index.txt), read directly: versions 2, 3 and
 * 4 (prefix-compressed paths), SHA-1 or SHA-256 object names, told apart by the checksum that
 * ends the file (up to 1 MiB; a larger index by its structure alone). An index this cannot read
 * with confidence (a checksum that does not match, another version, a split index whose entries
 * live in another file, entries that do not end where the extensions begin) reads as unknown.
 * Pure: bytes in, answers out. Where the index is and what it means for a workspace is
 * `git-index.ts`.
 */
import { createHash } from "node:crypto";

/** The smallest an entry can be: its fixed part with a SHA-1 name, a 1-byte path and its NUL. */
const MIN_ENTRY_BYTES = 64;
/** A longer path cannot be checkpointed (core/time-travel/paths.ts): its entry is passed over. */
const MAX_NAME_BYTES = 4096;
/** A version 4 name longer than this is taken for a damaged or hostile index. */
const MAX_DECODED_NAME_BYTES = 65_536;

/** An index up to this size has its checksum verified; a larger one is judged by its structure. */
const CHECKSUM_UP_TO = 1024 * 1024;

/** What git tracks, asked by path relative to the workspace. */
export interface Tracked {
  /** Whether git tracks the regular file at `rel`. */
  file(rel: string): boolean;
  /** Whether git tracks a regular file anywhere under the folder `dirRel`. */
  under(dirRel: string): boolean;
}

/**
 * An index's tracked regular files, or undefined when it is not an index this reads with
 * confidence. Versions 2 and 3 are not decoded: one pass of arithmetic over the entries'
 * name lengths finds where each name is, and a question is a binary search over the raw names
 * (git keeps them sorted bytewise). A hook's process reads an index once, cold: decoding
 * 10,000 names would cost it more than the walk's answers need. Version 4's prefix-compressed
 * names can only be decoded in order: they are, into sets.
 */
export function parseIndex(buf: Buffer, why?: { split?: boolean }): IndexFiles | undefined {
  if (buf.length < 12 || buf.toString("latin1", 0, 4) !== "DIRC") return undefined;
  const version = buf.readUInt32BE(4);
  if (version < 2 || version > 4) return undefined;
  const count = buf.readUInt32BE(8);
  if (count * MIN_ENTRY_BYTES > buf.length) return undefined; // more entries than the file can hold
  for (const hashLen of checksummed(buf)) {
    const t = version === 4 ? decoded(buf, count, hashLen, why) : located(buf, version, count, hashLen, why);
    if (t !== undefined) return t;
  }
  return undefined;
}

/**
 * The object name widths an index may have been written with: the one whose checksum (its
 * last 20 or 32 bytes: SHA-1 or SHA-256 of the rest) matches; both when it has none (git's
 * `index.skipHash` writes zeros); none when it matches neither (damaged, or not an index).
 */
function checksummed(buf: Buffer): number[] {
  // A large index's layout is told by its structure alone (entries that end exactly where the
  // extensions and a checksum of one width begin cannot also fit the other by chance): hashing
  // 20 MB on every hook's start would cost more than the walk it serves.
  if (buf.length > CHECKSUM_UP_TO) return [20, 32];
  const widths: number[] = [];
  for (const [len, algo] of [
    [20, "sha1"],
    [32, "sha256"],
  ] as const) {
    if (buf.length < 12 + len) continue;
    const tail = buf.subarray(buf.length - len);
    if (tail.every((b) => b === 0)) widths.push(len);
    else if (
      createHash(algo)
        .update(buf.subarray(0, buf.length - len))
        .digest()
        .equals(tail)
    )
      return [len];
  }
  return widths;
}

/** An index read: what it tracks, and the names of every regular file it lists, in its order (every stage). */
export interface IndexFiles extends Tracked {
  names(): string[];
  /** The paths of its submodules (gitlinks, mode 160000), in its order. */
  gitlinks(): string[];
  /**
   * The regular files under the folder `dirRel`, its name compared ignoring ASCII case (on a
   * case-insensitive file system `.BATON/x` is `.baton/x`), each with its object name in hex.
   */
  entriesUnder(dirRel: string): { name: string; id: string }[];
}

/** Whether `name` starts with the bytes of `lead`, ASCII letters matched in either case. */
function foldedPrefix(buf: Buffer, start: number, length: number, lead: Buffer): boolean {
  if (length < lead.length) return false;
  for (let i = 0; i < lead.length; i++) {
    let a = buf[start + i] as number;
    let b = lead[i] as number;
    if (a >= 0x41 && a <= 0x5a) a += 0x20;
    if (b >= 0x41 && b <= 0x5a) b += 0x20;
    if (a !== b) return false;
  }
  return true;
}

/** Entries of a version 2 or 3 index: regular files' name offsets and lengths, found without decoding one. */
function located(buf: Buffer, version: number, count: number, hashLen: number, why?: { split?: boolean }): IndexFiles | undefined {
  const starts = new Uint32Array(count);
  const lengths = new Uint32Array(count);
  const entries = new Uint32Array(count);
  const links: string[] = [];
  let n = 0;
  let at = 12;
  const fixed = 40 + hashLen + 2;
  const size = buf.length;
  // Plain byte reads: this loop runs cold, once per hook process, where readUInt32BE's checks cost.
  for (let i = 0; i < count; i++) {
    if (at + fixed > size) return undefined;
    const flags = ((buf[at + 40 + hashLen] as number) << 8) | (buf[at + 41 + hashLen] as number);
    let p = at + fixed;
    if (flags & 0x4000) {
      if (version < 3) return undefined;
      p += 2;
    }
    let len = flags & 0xfff;
    if (len === 0xfff) {
      const end = buf.indexOf(0, p);
      if (end < 0) return undefined;
      len = end - p;
    } else if (p + len >= size || buf[p + len] !== 0) return undefined;
    // Regular files only (mode 0o100644 or 0o100755: its 32 bits read 00 00 8x xx): not links,
    // submodules, or a sparse index's folders. (A split index's entries may have no name: its
    // "link" extension, found below, makes the whole index unknown.)
    if (len > 0 && len <= MAX_NAME_BYTES && buf[at + 24] === 0 && buf[at + 25] === 0) {
      const kind = (buf[at + 26] as number) >> 4;
      if (kind === 8) {
        starts[n] = p;
        lengths[n] = len;
        entries[n] = at;
        n++;
      } else if (kind === 0xe) links.push(buf.toString("utf8", p, p + len)); // a submodule: 0o160000
    }
    at += (p - at + len + 8) & ~7; // NUL-padded to a multiple of 8 from the entry's start
  }
  if (!extensionsEnd(buf, at, hashLen, why)) return undefined;
  /** The first entry whose name is not below `q` (bytewise, as git sorts). */
  const lowerBound = (q: Buffer): number => {
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const s = starts[mid] as number;
      if (buf.compare(q, 0, q.length, s, s + (lengths[mid] as number)) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const startsWith = (i: number, q: Buffer): boolean => {
    if (i >= n || (lengths[i] as number) < q.length) return false;
    const s = starts[i] as number;
    return buf.compare(q, 0, q.length, s, s + q.length) === 0;
  };
  return {
    file(rel) {
      const q = Buffer.from(rel, "utf8");
      const i = lowerBound(q);
      return startsWith(i, q) && lengths[i] === q.length;
    },
    under(dirRel) {
      const q = Buffer.from(`${dirRel}/`, "utf8");
      return startsWith(lowerBound(q), q);
    },
    gitlinks: () => links,
    names() {
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push(buf.toString("utf8", starts[i], (starts[i] as number) + (lengths[i] as number)));
      return out;
    },
    entriesUnder(dirRel) {
      const lead = Buffer.from(`${dirRel}/`, "utf8");
      const out: { name: string; id: string }[] = [];
      for (let i = 0; i < n; i++) {
        const s = starts[i] as number;
        const e = entries[i] as number;
        if (foldedPrefix(buf, s, lengths[i] as number, lead))
          out.push({ name: buf.toString("utf8", s, s + (lengths[i] as number)), id: buf.toString("hex", e + 40, e + 40 + hashLen) });
      }
      return out;
    },
  };
}

/** Entries of a version 4 index, each name the previous one minus some bytes at its end plus its own. */
function decoded(buf: Buffer, count: number, hashLen: number, why?: { split?: boolean }): IndexFiles | undefined {
  const names: string[] = [];
  const ids: string[] = [];
  const links: string[] = [];
  let at = 12;
  let prev: Buffer = Buffer.alloc(0);
  let decodedBytes = 0;
  const fixed = 40 + hashLen + 2;
  for (let i = 0; i < count; i++) {
    if (at + fixed > buf.length) return undefined;
    const mode = buf.readUInt32BE(at + 24);
    const flags = buf.readUInt16BE(at + 40 + hashLen);
    let p = at + fixed + (flags & 0x4000 ? 2 : 0);
    let byte = buf[p++];
    if (byte === undefined) return undefined;
    let strip = byte & 0x7f;
    while (byte & 0x80) {
      byte = buf[p++];
      if (byte === undefined || strip > 0xffffff) return undefined;
      strip = ((strip + 1) << 7) | (byte & 0x7f);
    }
    if (strip > prev.length) return undefined;
    const end = buf.indexOf(0, p);
    if (end < 0) return undefined;
    // Each name may be the previous one plus a byte: bounded, so a hostile index costs linear
    // time and memory, not quadratic.
    const length = prev.length - strip + (end - p);
    decodedBytes += length;
    if (length > MAX_DECODED_NAME_BYTES || decodedBytes > 4 * buf.length) return undefined;
    const name = Buffer.concat([prev.subarray(0, prev.length - strip), buf.subarray(p, end)]);
    prev = name;
    const entry = at;
    at = end + 1;
    if (mode >>> 12 === 0o10 && name.length > 0 && name.length <= MAX_NAME_BYTES) {
      names.push(name.toString("utf8"));
      ids.push(buf.toString("hex", entry + 40, entry + 40 + hashLen));
    } else if (mode >>> 12 === 0o16 && name.length > 0 && name.length <= MAX_NAME_BYTES) links.push(name.toString("utf8"));
  }
  if (!extensionsEnd(buf, at, hashLen, why)) return undefined;
  const files = new Set(names);
  const dirs = new Set<string>();
  for (const p of names) {
    for (let i = p.lastIndexOf("/"); i > 0; i = p.lastIndexOf("/", i - 1)) {
      const d = p.slice(0, i);
      if (dirs.has(d)) break;
      dirs.add(d);
    }
  }
  return {
    file: (rel) => files.has(rel),
    under: (dirRel) => dirs.has(dirRel),
    names: () => names,
    gitlinks: () => links,
    entriesUnder(dirRel) {
      const lead = Buffer.from(`${dirRel}/`, "utf8");
      const out: { name: string; id: string }[] = [];
      names.forEach((name, i) => {
        const raw = Buffer.from(name, "utf8");
        if (foldedPrefix(raw, 0, raw.length, lead)) out.push({ name, id: ids[i] as string });
      });
      return out;
    },
  };
}

/**
 * Whether extensions (4-byte signature, 4-byte size) run from `at` exactly to a checksum of
 * `hashLen` bytes. A split index ("link") keeps its entries in another file: not read, so no.
 */
function extensionsEnd(buf: Buffer, at: number, hashLen: number, why?: { split?: boolean }): boolean {
  while (at + 8 <= buf.length - hashLen) {
    if (buf.toString("latin1", at, at + 4) === "link") {
      if (why) why.split = true;
      return false;
    }
    at += 8 + buf.readUInt32BE(at + 4);
  }
  return at === buf.length - hashLen;
}
