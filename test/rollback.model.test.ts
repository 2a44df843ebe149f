/**
 * Model-based test of checkpoints and rollback: random sequences of file writes, deletions,
 * mode changes, directories created and removed (nested), targeted checkpoints (naming files
 * that exist and files that do not yet), whole-tree checkpoints, rollbacks of N steps, to a
 * named checkpoint, of some files and directories only (`--files`), and undos (a rollback to
 * the last rollback's safety checkpoint), run on a real workspace and a real SQLite store,
 * checked against a model after every command.
 *
 * The model keeps, for every checkpoint, a copy of the whole tree as it was when it was taken
 * and what the checkpoint covers: a targeted checkpoint its named paths, a safety checkpoint
 * the paths its rollback changed, a whole-tree checkpoint every path. Restoring checkpoint T
 * puts each path as it was at the oldest checkpoint from T to now that covers it, and leaves a
 * path none covers as it is now (docs/architecture.md, "Rollback"). So a rollback to a
 * whole-tree checkpoint gives the whole tree as it was (files created since are removed), and
 * a rollback to a targeted one gives its paths as they were, and the paths later checkpoints
 * cover as they were at the first of those.
 *
 * Steps count among the non-safety checkpoints from a cursor: all of them after a checkpoint
 * is taken; after a rollback to checkpoint X, those before X (so `rollback` twice goes two
 * steps back), and X too when restoring X again would change files (they changed since that
 * rollback: one step back undoes those changes); after an undo (a rollback to a safety
 * checkpoint), the cursor that rollback started from. More steps than the cursor allows is
 * `checkpoint_not_found` and changes nothing.
 *
 * Checkpoints hold files, not directories: the trees compared are the regular files outside
 * `.baton/` (an emptied directory may stay). File and directory names never collide here, so a
 * path is never a file at one time and a directory at another.
 *
 * Files over the store's size limit (`BIG`) are recorded skipped and never changed by a
 * rollback; symbolic links, which are kept the same way, have targeted tests
 * (test/rollback-keep.int.test.ts).
 *
 * BATON_MODEL_RUNS=5000 runs longer locally.
 */
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { isBatonError, openBaton } from "../src/index.js";
import { cleanupDirs, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

/**
 * Sequences per property: 2,000 in all by default. Measured on the 2-core CI machine under a
 * load average of ~10: 27 s for both properties (13 ms a sequence, with one store per
 * property; 68 ms when each sequence opened its own store).
 */
const RUNS = Number(process.env.BATON_MODEL_RUNS ?? 1000);

const DIRS = ["d0", "d0/d1", "d0/d1/d2", "d3"] as const;
const NAMES = ["a.txt", "b.txt", "c.txt"] as const;
/** `.gitignore` (written by `ignore`, or like any file) and files its patterns can ignore. */
const FILES = [...NAMES, ...DIRS.flatMap((d) => NAMES.map((n) => `${d}/${n}`)), ".gitignore", "e.log", "d0/e.log", "d3/e.log"];
const IGNORES = ["", "*.log\n", "d0/\n", "*.log\nd3/\n"] as const;
/** The store's maxFileBytes, and a content over it: checkpoints record such a file skipped, and a rollback never changes one. */
const MAX_FILE_BYTES = 16;
const BIG = "a file over the size limit";
const big = (e: Entry | undefined) => e !== undefined && e.content.length > MAX_FILE_BYTES;

/** Whether the model's `.gitignore` text ignores `p` (only the patterns IGNORES uses). */
function ignoredBy(text: string | undefined, p: string): boolean {
  for (const line of (text ?? "").split("\n")) {
    if (line === "*.log" && p.endsWith(".log")) return true;
    if (line.endsWith("/") && p.startsWith(line)) return true;
  }
  return false;
}

interface Entry {
  content: string;
  mode: number;
}
type Tree = Map<string, Entry>;

interface ModelCp {
  id: string;
  kind: "targeted" | "tree" | "safety";
  /** The paths it covers; undefined: every path (a whole-tree checkpoint). */
  covers: ReadonlySet<string> | undefined;
  /** The whole tree when it was taken. */
  tree: Tree;
  /** Safety checkpoints: the step cursor when their rollback started, and the checkpoint it sat at. */
  cursorBefore?: number;
  atBefore?: number | undefined;
}

interface Model {
  tree: Tree;
  cps: ModelCp[];
  /** Steps count back among the first `cursor` non-safety checkpoints. */
  cursor: number;
  /**
   * The checkpoint (index in `cps`) the last rollback restored, while the cursor sits right
   * after it: it counts as a step too when restoring it again would change files.
   */
  at?: number | undefined;
}

type Cmd =
  | { t: "write"; path: string; content: string }
  | { t: "delete"; path: string }
  | { t: "chmod"; path: string; mode: number }
  | { t: "ignore"; content: string }
  | { t: "mkdir"; dir: string }
  | { t: "rmdir"; dir: string }
  | { t: "checkpoint"; files: string[] }
  | { t: "checkpointTree" }
  | { t: "rollback"; steps: number }
  | { t: "rollbackTo"; pick: number }
  | { t: "undo" }
  | { t: "rollbackFiles"; steps: number; files: string[] };

function commands(files: readonly string[], dirs: readonly string[], subset: boolean, ignores = false): fc.Arbitrary<Cmd> {
  const file = fc.constantFrom(...files);
  const dir = fc.constantFrom(...dirs);
  return fc.oneof(
    {
      weight: 5,
      arbitrary: fc.record({
        t: fc.constant("write" as const),
        path: file,
        content: ignores ? fc.constantFrom("v1", "v2", "v3", "", BIG) : fc.constantFrom("v1", "v2", "v3", ""),
      }),
    },
    { weight: 2, arbitrary: fc.record({ t: fc.constant("delete" as const), path: file }) },
    { weight: 1, arbitrary: fc.record({ t: fc.constant("chmod" as const), path: file, mode: fc.constantFrom(0o644, 0o755) }) },
    { weight: ignores ? 2 : 0, arbitrary: fc.record({ t: fc.constant("ignore" as const), content: fc.constantFrom(...IGNORES) }) },
    { weight: 1, arbitrary: fc.record({ t: fc.constant("mkdir" as const), dir }) },
    { weight: 1, arbitrary: fc.record({ t: fc.constant("rmdir" as const), dir }) },
    {
      weight: 3,
      arbitrary: fc.record({ t: fc.constant("checkpoint" as const), files: fc.uniqueArray(file, { minLength: 1, maxLength: 4 }) }),
    },
    { weight: 2, arbitrary: fc.constant({ t: "checkpointTree" as const }) },
    { weight: 3, arbitrary: fc.record({ t: fc.constant("rollback" as const), steps: fc.integer({ min: 1, max: 3 }) }) },
    { weight: 2, arbitrary: fc.record({ t: fc.constant("rollbackTo" as const), pick: fc.nat() }) },
    { weight: 2, arbitrary: fc.constant({ t: "undo" as const }) },
    {
      weight: subset ? 2 : 0,
      arbitrary: fc.record({
        t: fc.constant("rollbackFiles" as const),
        steps: fc.integer({ min: 1, max: 2 }),
        files: fc.uniqueArray(fc.oneof(file, dir), { minLength: 1, maxLength: 3 }),
      }),
    },
  );
}

/** Disjoint names: a path is always a file or always a directory. */
const cmd = commands(FILES, DIRS, true, true);

/** Shared names: `a`, `a/b`, `a/b/a`, ... each a file at one time and a directory at another. */
const SWAP_PATHS = ["a", "b"].flatMap((x) => [x, ...["a", "b"].flatMap((y) => [`${x}/${y}`, ...["a", "b"].map((z) => `${x}/${y}/${z}`)])]);
const swapCmd = commands(SWAP_PATHS, SWAP_PATHS, false);

function show(c: Cmd): string {
  switch (c.t) {
    case "write":
      return `write ${c.path}=${JSON.stringify(c.content)}`;
    case "delete":
    case "chmod":
      return c.t === "delete" ? `rm ${c.path}` : `chmod ${c.mode.toString(8)} ${c.path}`;
    case "ignore":
      return `echo ${JSON.stringify(c.content)} > .gitignore`;
    case "mkdir":
    case "rmdir":
      return `${c.t === "mkdir" ? "mkdir -p" : "rm -rf"} ${c.dir}`;
    case "checkpoint":
      return `checkpoint --files ${c.files.join(" ")}`;
    case "checkpointTree":
      return "checkpoint --all";
    case "rollback":
      return `rollback ${c.steps}`;
    case "rollbackTo":
      return `rollback --to #${c.pick}`;
    case "undo":
      return "undo";
    case "rollbackFiles":
      return `rollback ${c.steps} --files ${c.files.join(" ")}`;
  }
}

/** The regular files under `root` outside `.baton/`, with content and permission bits. */
function readTree(root: string, rel = "", out: Tree = new Map()): Tree {
  for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
    const p = rel === "" ? e.name : `${rel}/${e.name}`;
    if (p === ".baton") continue;
    if (e.isDirectory()) readTree(root, p, out);
    else if (e.isFile()) out.set(p, { content: readFileSync(join(root, p), "utf8"), mode: statSync(join(root, p)).mode & 0o777 });
    else throw new Error(`unexpected ${p}: neither file nor directory`);
  }
  return out;
}

function sorted(t: Tree): [string, Entry][] {
  return [...t.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

const same = (a: Entry | undefined, b: Entry | undefined) => a?.content === b?.content && a?.mode === b?.mode;

const ancestors = (p: string) =>
  p
    .split("/")
    .slice(0, -1)
    .map((_, i, a) => a.slice(0, i + 1).join("/"));

/**
 * The model's restore of `target`: each path as the oldest covering checkpoint from it on saw
 * it. Where a file and a directory traded places, two of those versions can want a file at
 * `a` and one at `a/b`: the older checkpoint wins (the other path could not exist then). A file
 * no checkpoint covers stays, and so does the path of a file wanted where such a file is in
 * the way (under it, or above it).
 */
function restored(m: Model, target: number): Tree {
  const range = m.cps.slice(target);
  const paths = new Set([...m.tree.keys(), ...range.flatMap((c) => [...c.tree.keys(), ...(c.covers ?? [])])]);
  const decided = new Map<string, { by: number; e: Entry | undefined }>();
  // A whole-tree checkpoint knows the files it listed (those its own .gitignore left to the
  // walk), and the absence of a path its own .gitignore and today's both leave to the walk;
  // one whose .gitignore it could not store (too large) knows no absence: its rules are unknown.
  const now = m.tree.get(".gitignore")?.content;
  const covers = (c: ModelCp, p: string) => {
    if (c.covers !== undefined) return c.covers.has(p);
    const then = c.tree.get(".gitignore");
    if (ignoredBy(then?.content, p)) return false;
    return c.tree.has(p) || (!big(then) && !ignoredBy(now, p));
  };
  for (const p of paths) {
    const by = range.findIndex((c) => covers(c, p));
    if (by < 0) continue;
    const e = (range[by] as ModelCp).tree.get(p);
    // Too large then (recorded skipped) or now (its safety checkpoint could not store it): it stays.
    decided.set(p, { by, e: big(e) || big(m.tree.get(p)) ? m.tree.get(p) : e });
  }
  for (const p of [...decided.keys()].sort()) {
    const d = decided.get(p) as { by: number; e: Entry | undefined };
    for (const a of ancestors(p)) {
      const da = decided.get(a);
      if (!d.e || !da?.e) continue;
      if (da.by <= d.by) d.e = undefined;
      else da.e = undefined;
    }
  }
  const stays = [...m.tree.keys()].filter((p) => !decided.has(p));
  const out: Tree = new Map();
  for (const p of paths) {
    const d = decided.get(p);
    const inTheWay = d?.e !== undefined && stays.some((q) => q.startsWith(`${p}/`) || ancestors(p).includes(q));
    const e = d && !inTheWay ? d.e : m.tree.get(p);
    if (e) out.set(p, e);
  }
  return out;
}

const isDir = (abs: string) => {
  try {
    return statSync(abs).isDirectory();
  } catch {
    return false;
  }
};

/**
 * Run `cmds` on a fresh workspace and store, checking the tree against the model after each.
 * With `swaps`, a write or mkdir replaces the files and directories in its way, as an agent's
 * `rm -rf x && mkdir x` would.
 */
async function runSequence(cmds: readonly Cmd[], swaps: boolean): Promise<void> {
  // One workspace and store per property, a fresh session and an emptied tree per sequence:
  // opening a store per sequence was half the time of a run.
  const { root, baton } = await storeFor(swaps ? 1 : 0);
  for (const name of readdirSync(root)) if (name !== ".baton") rmSync(join(root, name), { recursive: true, force: true });
  const { sessionId } = await baton.sessions.start({ flow: "task", id: `m${++sequences}` });
  const m: Model = { tree: new Map(), cps: [], cursor: 0 };
  const log: string[] = [];
  const nonSafety = () => m.cps.filter((c) => c.kind !== "safety");
  const dropUnder = (p: string) => {
    for (const k of [...m.tree.keys()]) if (k === p || k.startsWith(`${p}/`)) m.tree.delete(k);
  };
  const clearWay = (p: string, self: boolean) => {
    for (const a of [...ancestors(p), ...(self ? [p] : [])]) {
      if (!m.tree.has(a)) continue;
      rmSync(join(root, a));
      m.tree.delete(a);
    }
  };
  /** What restoring checkpoint `target` (only `files`, with them) gives, and the paths it changes. */
  const expected = (target: number, files: readonly string[] | undefined) => {
    let want = restored(m, target);
    if (files) {
      // --files: the named files, and everything under the named directories; the rest as it is.
      const sel = (p: string) => files.some((w) => p === w || p.startsWith(`${w}/`));
      const mixed: Tree = new Map();
      for (const p of new Set([...want.keys(), ...m.tree.keys()])) {
        const e = sel(p) ? want.get(p) : m.tree.get(p);
        if (e) mixed.set(p, e);
      }
      want = mixed;
    }
    const changed = [...new Set([...want.keys(), ...m.tree.keys()])].filter((p) => !same(want.get(p), m.tree.get(p)));
    return { want, changed };
  };
  /** The checkpoint `steps` back (index in `cps`), or undefined when there are not that many. */
  const stepsBack = (steps: number, files?: readonly string[]) => {
    const again = m.at !== undefined && expected(m.at, files).changed.length > 0;
    const candidates = nonSafety().slice(0, again ? m.cursor + 1 : m.cursor);
    const t = candidates[candidates.length - steps];
    return t ? m.cps.indexOf(t) : undefined;
  };
  const rollback = async (target: number | undefined, input: { steps?: number; to?: string; files?: string[] }) => {
    let res: Awaited<ReturnType<typeof baton.checkpoints.rollback>> | undefined;
    let err: unknown;
    try {
      res = await baton.checkpoints.rollback(sessionId, input);
    } catch (e) {
      err = e;
    }
    if (target === undefined) {
      expect(isBatonError(err) && err.code, `${log.join("; ")}: expected checkpoint_not_found`).toBe("checkpoint_not_found");
      return;
    }
    if (err) throw err;
    const t = m.cps[target] as ModelCp;
    expect(res?.target.id, log.join("; ")).toBe(t.id);
    const { want, changed } = expected(target, input.files);
    const acted = (res?.changes ?? []).filter((c) => c.action !== "unchanged" && c.action !== "kept").map((c) => c.path);
    expect(acted.sort(), log.join("; ")).toEqual([...changed].sort());
    m.cps.push({
      id: res?.safety as string,
      kind: "safety",
      covers: new Set(changed),
      tree: new Map(m.tree),
      cursorBefore: m.cursor,
      atBefore: m.at,
    });
    m.cursor = t.kind === "safety" ? (t.cursorBefore as number) : m.cps.slice(0, target).filter((c) => c.kind !== "safety").length;
    m.at = t.kind === "safety" ? t.atBefore : target;
    m.tree = want;
  };
  for (const c of cmds) {
    log.push(show(c));
    switch (c.t) {
      case "write": {
        const abs = join(root, c.path);
        if (swaps) {
          clearWay(c.path, false);
          if (isDir(abs)) {
            rmSync(abs, { recursive: true });
            dropUnder(c.path);
          }
        }
        mkdirSync(join(abs, ".."), { recursive: true });
        writeFileSync(abs, c.content);
        const mode = m.tree.get(c.path)?.mode ?? 0o644;
        chmodSync(abs, mode);
        m.tree.set(c.path, { content: c.content, mode });
        break;
      }
      case "ignore": {
        writeFileSync(join(root, ".gitignore"), c.content);
        const mode = m.tree.get(".gitignore")?.mode ?? 0o644;
        chmodSync(join(root, ".gitignore"), mode);
        m.tree.set(".gitignore", { content: c.content, mode });
        break;
      }
      case "delete":
        if (!m.tree.has(c.path)) break;
        rmSync(join(root, c.path));
        m.tree.delete(c.path);
        break;
      case "chmod": {
        const e = m.tree.get(c.path);
        if (!e) break;
        chmodSync(join(root, c.path), c.mode);
        m.tree.set(c.path, { ...e, mode: c.mode });
        break;
      }
      case "mkdir":
        if (swaps) clearWay(c.dir, true);
        mkdirSync(join(root, c.dir), { recursive: true });
        break;
      case "rmdir":
        if (ancestors(c.dir).some((a) => m.tree.has(a))) break; // under a file: nothing there
        rmSync(join(root, c.dir), { recursive: true, force: true });
        dropUnder(c.dir);
        break;
      case "checkpoint":
      case "checkpointTree": {
        // A targeted checkpoint of a directory records it skipped (a rollback leaves it): not modelled.
        const files = c.t === "checkpoint" ? c.files.filter((f) => !isDir(join(root, f))) : [];
        if (c.t === "checkpoint" && files.length === 0) break;
        const res = await baton.checkpoints.create(sessionId, c.t === "checkpoint" ? { files } : { all: true });
        m.cps.push({
          id: res.checkpoint.id,
          kind: c.t === "checkpoint" ? "targeted" : "tree",
          covers: c.t === "checkpoint" ? new Set(files) : undefined,
          tree: new Map(m.tree),
        });
        m.cursor = nonSafety().length;
        m.at = undefined;
        break;
      }
      case "rollback":
        await rollback(stepsBack(c.steps), { steps: c.steps });
        break;
      case "rollbackTo": {
        if (m.cps.length === 0) break;
        const target = c.pick % m.cps.length;
        await rollback(target, { to: (m.cps[target] as ModelCp).id });
        break;
      }
      case "rollbackFiles":
        await rollback(stepsBack(c.steps, c.files), { steps: c.steps, files: c.files });
        break;
      case "undo": {
        const last = m.cps.findLastIndex((x) => x.kind === "safety");
        if (last < 0) break;
        await rollback(last, { to: (m.cps[last] as ModelCp).id });
        break;
      }
    }
    expect(sorted(readTree(root)), `after: ${log.join("; ")}`).toEqual(sorted(m.tree));
  }
}

type Store = { root: string; baton: Awaited<ReturnType<typeof openBaton>> };
const stores: (Promise<Store> | undefined)[] = [];
let sequences = 0;

function storeFor(i: number): Promise<Store> {
  let s = stores[i];
  if (!s) {
    const root = tempDir("baton-rb-model-");
    s = openBaton({ root, durability: "none", checkpoints: { maxFileBytes: MAX_FILE_BYTES } }).then((baton) => ({ root, baton }));
    stores[i] = s;
  }
  return s;
}
afterAll(async () => {
  for (const s of stores) await (await s)?.baton.close();
});

// issue 10 §2.1: the second rollback brought back new.txt, which the first one removed.
const ISSUE_SEQUENCE: Cmd[] = [
  { t: "write", path: "a.txt", content: "v1" },
  { t: "checkpoint", files: ["a.txt"] },
  { t: "write", path: "a.txt", content: "v2" },
  { t: "checkpointTree" },
  { t: "write", path: "d0/c.txt", content: "x" },
  { t: "rollback", steps: 1 },
  { t: "rollback", steps: 1 },
  { t: "undo" },
  { t: "rollback", steps: 1 },
];

// issue 34 §4: after a rollback to the first checkpoint and another edit, one step back was
// refused ("only 0 step(s)") instead of restoring that checkpoint again.
const EDIT_AFTER_ROLLBACK: Cmd[] = [
  { t: "write", path: "a.txt", content: "v1" },
  { t: "checkpointTree" },
  { t: "write", path: "a.txt", content: "v2" },
  { t: "checkpoint", files: ["a.txt", "b.txt"] },
  { t: "write", path: "b.txt", content: "v1" },
  { t: "rollbackTo", pick: 0 },
  { t: "write", path: "a.txt", content: "v3" },
  { t: "rollback", steps: 1 },
  { t: "rollback", steps: 1 },
  { t: "undo" },
  { t: "write", path: "d0/c.txt", content: "v2" },
  { t: "rollbackFiles", steps: 1, files: ["d0"] },
];

// A file a tree checkpoint listed is restored even though today's rules ignore it.
const LISTED_THEN_IGNORED: Cmd[] = [
  { t: "write", path: "d0/e.log", content: "v3" },
  { t: "checkpointTree" },
  { t: "write", path: "d0/e.log", content: "v1" },
  { t: "ignore", content: "*.log\n" },
  { t: "checkpoint", files: ["a.txt"] },
  { t: "rollbackFiles", steps: 2, files: ["d0"] },
];

// A file ignored at the tree checkpoint comes back from a later one after the ignore rules changed.
const IGNORE_SEQUENCE: Cmd[] = [
  { t: "ignore", content: "*.log\n" },
  { t: "write", path: "e.log", content: "v1" },
  { t: "checkpointTree" },
  { t: "ignore", content: "" },
  { t: "checkpointTree" },
  { t: "delete", path: "e.log" },
  { t: "rollbackTo", pick: 0 },
];

describe("rollback model", () => {
  it(`restores compose over random checkpoint / edit / rollback / undo sequences (${RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(cmd, { maxLength: 20, size: "max" }), async (cmds) => {
        await runSequence(cmds, false);
      }),
      { numRuns: RUNS, examples: [[ISSUE_SEQUENCE], [IGNORE_SEQUENCE], [LISTED_THEN_IGNORED], [EDIT_AFTER_ROLLBACK]] },
    );
  }, 600_000);

  it(`a file and a directory trading places is restored both ways (${RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(swapCmd, { maxLength: 20, size: "max" }), async (cmds) => {
        await runSequence(cmds, true);
      }),
      {
        numRuns: RUNS,
        examples: [
          [
            [
              { t: "write", path: "a", content: "f" },
              { t: "checkpointTree" },
              { t: "write", path: "a/b", content: "x" },
              { t: "rollback", steps: 1 },
              { t: "undo" },
            ],
          ],
          [
            [
              { t: "write", path: "a/b", content: "x" },
              { t: "checkpointTree" },
              { t: "write", path: "a", content: "f" },
              { t: "rollback", steps: 1 },
              { t: "undo" },
            ],
          ],
        ],
      },
    );
  }, 600_000);
});
