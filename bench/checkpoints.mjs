/**
 * Checkpoints and rollback, side by side in one run.
 *
 * - Whole tree: 2,000 files × 4 KB, 3 of them changed before each operation (untimed).
 *   Baton `checkpoint({ all: true })` in-process (stat cache, gitignore rules, the new blobs
 *   written in the checkpoint's transaction, one SQLite commit at synchronous=FULL) vs a shadow git repository
 *   (`git add -A` then `git commit`, two processes, as a tool keeping a shadow repo runs them)
 *   on an identical tree of its own. Goal: Baton ≤ 0.5× git's median.
 * - Targeted: `checkpoint({ files: [one file] })` of a 4 KB file whose content changed since
 *   the last one (a new blob each time). Goal: median ≤ 2 ms in-process. Beside it, for
 *   information, a raw one-row SQLite commit at FULL on the same disk: one fsync, the floor of
 *   any durable checkpoint.
 * - Rollback of 100 files: all 100 changed (untimed), then `rollback({ to })`: plan, verify
 *   every blob, safety checkpoint (one commit), two journal events, 100 atomic restores (temp
 *   file, fsync, rename, directory fsync). Reported without a goal.
 *
 * The changed files' mtimes are fresh; the other files are dated a minute back (untimed), as
 * in a workspace where only the agent's last edits are new. Git is run with its defaults,
 * which do not fsync objects; Baton fsyncs its commit, which holds the new blobs (content over
 * 1 MiB would be a file, fsynced with its directory before the commit). So two more sides, for
 * information: Baton at synchronous=NORMAL (no fsync: the CPU and I/O cost alone) and git with
 * `core.fsync=all` (as durable as Baton).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FIXED_HASH, gc, hr, info, loadBaton, openRaw, ratio, scaled, summarise, tempDir } from "./lib.mjs";

export const name = "checkpoints";
export const title = "Checkpoints and rollback (whole tree vs shadow git, targeted, rollback)";

const FILES = 2_000;
const DIRS = 40;
const SIZE = 4_096;
const CHANGED = 3;
const SESSION = "bench-cp";

const rel = (i) => `src/d${i % DIRS}/file-${i}.ts`;

/** 4 KB of text, different for every (file, version). */
function content(i, version) {
  const line = `export const value${i} = ${version}; // padding to make a realistic source line\n`;
  return line.repeat(Math.ceil(SIZE / line.length)).slice(0, SIZE);
}

function makeTree(root, n) {
  for (let d = 0; d < DIRS; d++) mkdirSync(join(root, "src", `d${d}`), { recursive: true });
  const old = new Date(Date.now() - 60_000);
  for (let i = 0; i < n; i++) {
    writeFileSync(join(root, rel(i)), content(i, 0));
    utimesSync(join(root, rel(i)), old, old);
  }
  writeFileSync(join(root, ".gitignore"), "node_modules/\n*.log\n");
}

function git(gitDir, work, args, config = []) {
  const r = spawnSync("git", [...config.flatMap((c) => ["-c", c]), `--git-dir=${gitDir}`, `--work-tree=${work}`, ...args], {
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "bench",
      GIT_AUTHOR_EMAIL: "bench@example.invalid",
      GIT_COMMITTER_NAME: "bench",
      GIT_COMMITTER_EMAIL: "bench@example.invalid",
    },
  });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")} failed: ${r.stderr}`);
}

/** One side of the whole-tree race: its own tree, an untimed setup, and a timed `op`. */
async function treeSide(label, setup) {
  const root = tempDir(`cp-${label.replace(/\W+/g, "-")}`);
  makeTree(root, FILES);
  const op = await setup(root);
  return { label, root, op };
}

async function wholeTree(openBaton) {
  const rounds = scaled(40, 6);
  const batons = [];
  const batonSide = (synchronous) => async (root) => {
    const baton = await openBaton({ root, durability: synchronous === "FULL" ? "full" : "relaxed" });
    batons.push(baton);
    await baton.sessions.start({ flow: "task", id: SESSION });
    // the first checkpoint reads everything (untimed)
    const first = await baton.checkpoints.create(SESSION, { all: true });
    if (first.checkpoint.files.length !== FILES + 1) throw new Error(`expected ${FILES + 1} files, got ${first.checkpoint.files.length}`);
    return async () => (await baton.checkpoints.create(SESSION, { all: true })).stats.read;
  };
  const gitSide = (config) => async (root) => {
    const gitDir = join(tempDir("cp-git-shadow"), "shadow.git");
    git(gitDir, root, ["init", "-q"]);
    git(gitDir, root, ["config", "commit.gpgsign", "false"]);
    git(gitDir, root, ["add", "-A"], config);
    git(gitDir, root, ["commit", "-q", "-m", "initial"], config);
    let n = 0;
    return async () => {
      git(gitDir, root, ["add", "-A"], config);
      git(gitDir, root, ["commit", "-q", "-m", `round ${n++}`], config);
      return 0;
    };
  };
  const sides = [
    await treeSide("baton", batonSide("FULL")),
    await treeSide("git", gitSide([])),
    await treeSide("baton-normal", batonSide("NORMAL")),
    await treeSide("git-fsync", gitSide(["core.fsync=all", "core.fsyncMethod=fsync"])),
  ];
  const samples = Object.fromEntries(sides.map((s) => [s.label, []]));
  let reads = 0;
  let version = 1;
  const change = (root) => {
    for (let k = 0; k < CHANGED; k++) {
      const i = (version * 7 + k * 613) % FILES;
      writeFileSync(join(root, rel(i)), content(i, version));
    }
  };
  gc();
  for (let round = 0; round < rounds; round++, version++) {
    for (let k = 0; k < sides.length; k++) {
      const side = sides[(round + k) % sides.length]; // rotate the order: drift hits every side alike
      change(side.root);
      const t0 = hr();
      const read = await side.op();
      samples[side.label].push(Number(hr() - t0));
      if (side.label === "baton") reads += read;
    }
  }
  for (const b of batons) await b.close();
  return { samples, readsPerCheckpoint: reads / rounds };
}

async function targeted(openBaton) {
  const n = scaled(500, 50);
  const root = tempDir("cp-targeted");
  mkdirSync(join(root, "src"), { recursive: true });
  const baton = await openBaton({ root });
  await baton.sessions.start({ flow: "task", id: SESSION });
  const file = "src/edited.ts";
  const changed = [];
  const same = [];
  const rawCommit = [];
  const raw = openRaw(join(tempDir("cp-targeted-raw"), "raw.db"), "FULL");
  const at = new Date().toISOString();
  for (let i = 0; i < scaled(50, 10); i++) {
    writeFileSync(join(root, file), content(1, -i));
    await baton.checkpoints.create(SESSION, { files: [file] });
  }
  gc();
  for (let i = 0; i < n; i++) {
    writeFileSync(join(root, file), content(1, i)); // the tool's previous write: new content
    let t0 = hr();
    await baton.checkpoints.create(SESSION, { files: [file] });
    changed.push(Number(hr() - t0));
    t0 = hr();
    await baton.checkpoints.create(SESSION, { files: [file] }); // nothing changed since: deduplicated blob
    same.push(Number(hr() - t0));
    t0 = hr();
    raw.insert.run(SESSION, i + 1, `raw-${i}`, "checkpoint", "agent", "{}", null, at, FIXED_HASH, "accepted"); // one commit, one fsync
    rawCommit.push(Number(hr() - t0));
  }
  raw.db.close();
  await baton.close();
  return { changed, same, rawCommit };
}

async function rollback100(openBaton) {
  const n = scaled(30, 5);
  const count = 100;
  const root = tempDir("cp-rollback");
  for (let d = 0; d < 10; d++) mkdirSync(join(root, "src", `d${d}`), { recursive: true });
  const files = Array.from({ length: count }, (_, i) => `src/d${i % 10}/f${i}.ts`);
  for (const [i, f] of files.entries()) writeFileSync(join(root, f), content(i, 0));
  const baton = await openBaton({ root });
  await baton.sessions.start({ flow: "task", id: SESSION });
  const cp = await baton.checkpoints.create(SESSION, { files, pinned: true });
  const samples = [];
  gc();
  for (let round = 1; round <= n; round++) {
    for (const [i, f] of files.entries()) writeFileSync(join(root, f), content(i, round));
    const t0 = hr();
    const r = await baton.checkpoints.rollback(SESSION, { to: cp.checkpoint.id });
    samples.push(Number(hr() - t0));
    if (r.restored !== count) throw new Error(`rollback restored ${r.restored} of ${count}`);
  }
  await baton.close();
  return samples;
}

export async function run() {
  const { openBaton } = await loadBaton();
  const tree = await wholeTree(openBaton);
  const t = await targeted(openBaton);
  const rb = await rollback100(openBaton);
  const s = {
    baton: summarise(tree.samples.baton),
    git: summarise(tree.samples.git),
    batonNormal: summarise(tree.samples["baton-normal"]),
    gitFsync: summarise(tree.samples["git-fsync"]),
    changed: summarise(t.changed),
    same: summarise(t.same),
    rawCommit: summarise(t.rawCommit),
    rollback: summarise(rb),
  };
  const rows = [
    { subject: `Baton whole-tree checkpoint (${FILES} × 4 KB, ${CHANGED} changed)`, ...s.baton },
    { subject: "shadow git add -A && git commit (same tree)", ...s.git },
    { subject: "Baton whole-tree checkpoint, synchronous=NORMAL (no fsync)", ...s.batonNormal },
    { subject: "shadow git with core.fsync=all", ...s.gitFsync },
    { subject: "Baton targeted checkpoint, 1 changed file", ...s.changed },
    { subject: "Baton targeted checkpoint, 1 unchanged file (dedup)", ...s.same },
    { subject: "raw SQLite one-row commit, FULL (one fsync, same disk)", ...s.rawCommit },
    { subject: "Baton rollback of 100 files (4 KB each)", ...s.rollback },
  ];
  const ratios = [
    ratio("Baton whole-tree / git add+commit (median)", s.baton.medianMs / s.git.medianMs, "<=", 0.5),
    info("Baton NORMAL / git defaults (median, neither fsyncs)", s.batonNormal.medianMs / s.git.medianMs),
    info("Baton FULL / git core.fsync=all (median, both durable)", s.baton.medianMs / s.gitFsync.medianMs),
    ratio("targeted checkpoint of one changed file (median)", s.changed.medianMs, "<=", 2, "ms"),
    info("targeted checkpoint p99", s.changed.p99Ms, "ms"),
    info("targeted checkpoint − raw one-row commit (median)", s.changed.medianMs - s.rawCommit.medianMs, "ms"),
    info("rollback of 100 files (median)", s.rollback.medianMs, "ms"),
  ];
  const notes = [
    `files read per whole-tree checkpoint: ${tree.readsPerCheckpoint.toFixed(1)} of ${FILES + 1} (the rest trusted from the stat cache)`,
    "git's defaults do not fsync objects; Baton (FULL) fsyncs its SQLite commit, which holds the new blobs",
  ];
  return { rows, ratios, notes };
}
