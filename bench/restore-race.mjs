/**
 * The restore race at length: test/fixtures/dir-swapper.mjs swaps the workspace directory
 * `sub/` with a symbolic link to an outside directory as fast as it can while rollbacks restore
 * `sub/b.txt`, N times (default 20,000; the test suite runs 1,500 library and 40 CLI rollbacks).
 * At the end the outside directory must be byte-for-byte unchanged and no rollback may have
 * answered `internal`.
 *
 *   node scripts/build.mjs --no-types && node bench/restore-race.mjs [rollbacks]
 *
 * Prints progress every 2,000 rollbacks and a summary; exits 1 if an invariant fails. Not part
 * of `bench/run.mjs`: it measures safety, not speed.
 */
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupAll, commandLine, loadBaton, REPO, tempDir } from "./lib.mjs";

const [totalArg = "20000"] = commandLine(import.meta.url, { positional: [0, 1] });
const total = Number(totalArg);
if (!Number.isInteger(total) || total < 1) {
  console.error("usage: node bench/restore-race.mjs [rollbacks=20000, a whole number ≥ 1]");
  process.exit(2);
}
const { openBaton, isBatonError } = await loadBaton();
const root = tempDir("restore-race");
const outside = tempDir("restore-race-outside");
writeFileSync(join(outside, "b.txt"), "OUTSIDE: must never change\n");
writeFileSync(join(outside, "keep.txt"), "outside neighbour\n");
const snapshot = (dir) =>
  JSON.stringify(
    readdirSync(dir)
      .sort()
      .map((n) => [n, readFileSync(join(dir, n), "utf8")]),
  );
const before = snapshot(outside);

mkdirSync(join(root, "sub"));
const b = await openBaton({ root, durability: "relaxed" });
await b.sessions.start({ flow: "task", id: "s1" });
writeFileSync(join(root, "sub", "b.txt"), "version A\n");
const a = (await b.checkpoints.create("s1", { files: ["sub/b.txt"] })).checkpoint.id;
writeFileSync(join(root, "sub", "b.txt"), "version B\n");
const bb = (await b.checkpoints.create("s1", { files: ["sub/b.txt"] })).checkpoint.id;
await b.checkpoints.pin(a);
await b.checkpoints.pin(bb);

const swapper = spawn(process.execPath, [join(REPO, "test", "fixtures", "dir-swapper.mjs"), root, outside], {
  stdio: ["ignore", "pipe", "inherit"],
});
await new Promise((resolve) => swapper.stdout.once("data", resolve));
const outcomes = {};
const started = Date.now();
let failed = false;
try {
  for (let i = 1; i <= total; i++) {
    try {
      await b.checkpoints.rollback("s1", { to: i % 2 ? a : bb });
      outcomes.ok = (outcomes.ok ?? 0) + 1;
    } catch (err) {
      if (!isBatonError(err) || err.code === "internal") {
        console.error(`rollback ${i} failed with something other than a typed error:`, err);
        failed = true;
        break;
      }
      outcomes[err.code] = (outcomes[err.code] ?? 0) + 1;
    }
    if (i % 2_000 === 0) console.log(`${i} rollbacks, ${((Date.now() - started) / 1000).toFixed(0)} s: ${JSON.stringify(outcomes)}`);
  }
} finally {
  swapper.kill("SIGKILL");
  await b.close();
}
const unchanged = snapshot(outside) === before;
console.log(`\n${total} rollbacks against a directory swapped for a link: ${JSON.stringify(outcomes)}`);
console.log(`outside directory unchanged: ${unchanged}; platform: ${process.platform}`);
cleanupAll();
if (!unchanged || failed) process.exit(1);
