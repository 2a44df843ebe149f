/**
 * A test worker whose event loop stops turning is out of Vitest's reach: its timeouts are timers
 * on that loop, so a synchronous wait (a `spawnSync` whose child never exits, an open of a named
 * pipe nobody writes) holds the whole run until CI cuts it, with nothing said about which test
 * it was. A thread of its own watches the loop's heartbeat; when the loop has been still for
 * `limitMs`, it writes the running test and the processes under it to the worker's stderr and
 * kills those processes, which ends the wait and fails the test where it stood. A loop still
 * stopped a while later (a wait on no child) ends the worker itself, which Vitest reports.
 */
import { Worker } from "node:worker_threads";

/** What the watchdog thread runs (plain JavaScript: it is evaluated, never compiled). */
const WATCH = `
const { workerData, parentPort } = require("node:worker_threads");
const { readdirSync, readFileSync, writeSync } = require("node:fs");
const { beat, pid, limitMs } = workerData;
const graceMs = Math.min(60_000, limitMs);
let current = "(no test started yet: the file is being collected, or a beforeAll hook runs)";
function stat(p) {
  try {
    const s = readFileSync("/proc/" + p + "/stat", "utf8");
    const rest = s.slice(s.lastIndexOf(")") + 2).split(" ");
    return { ppid: Number(rest[1]) };
  } catch { return undefined; }
}
function read(p, f) {
  try { return readFileSync("/proc/" + p + "/" + f, "utf8").replace(/\\0/g, " ").trim(); } catch { return "?"; }
}
function descendants() {
  const parent = new Map();
  for (const d of readdirSync("/proc")) if (/^\\d+$/.test(d)) { const s = stat(d); if (s) parent.set(Number(d), s.ppid); }
  const out = [];
  const walk = (p, depth) => { for (const [c, pp] of parent) if (pp === p) { out.push({ pid: c, depth }); walk(c, depth + 1); } };
  walk(pid, 0);
  return out;
}
function say(text) { try { writeSync(2, text); } catch {} }
let last = Atomics.load(beat, 0);
let stillSince = Date.now();
let fired = false;
// A new test is a turn of the loop too, however short (the heartbeat ticks every 500 ms).
parentPort.on("message", (m) => { current = m; stillSince = Date.now(); fired = false; });
setInterval(() => {
  const now = Atomics.load(beat, 0);
  if (now !== last) { last = now; stillSince = Date.now(); fired = false; return; }
  const still = Date.now() - stillSince;
  if (!fired && still >= limitMs) {
    fired = true;
    const kids = descendants();
    say("\\n[test watchdog] pid " + pid + ": the event loop has not turned for " + Math.round(still / 1000) + " s, in " + current + "\\n" +
      (kids.length ? kids.map((k) => "  ".repeat(k.depth + 1) + k.pid + " [" + read(k.pid, "wchan") + "] " + read(k.pid, "cmdline").slice(0, 300)).join("\\n") : "  (no child processes)") +
      "\\n[test watchdog] killing " + (kids.length ? "them" : "nothing") + "; the worker itself if its loop is still stopped in " + Math.round(graceMs / 1000) + " s\\n");
    for (const k of kids.reverse()) { try { process.kill(k.pid, "SIGKILL"); } catch {} }
  } else if (fired && still >= limitMs + graceMs) {
    say("[test watchdog] pid " + pid + ": still stopped, in " + current + "; ending the worker\\n");
    process.kill(pid, "SIGKILL");
  }
}, 1000);
`;

export interface Watchdog {
  /** Names the test now running, for the report. */
  running(name: string): void;
}

/** Starts the watchdog for this process (once, however many files it runs). */
export function startWatchdog(limitMs: number): Watchdog {
  const g = globalThis as { __batonTestWatchdog?: Watchdog };
  if (g.__batonTestWatchdog) return g.__batonTestWatchdog;
  const beat = new Int32Array(new SharedArrayBuffer(4));
  setInterval(() => Atomics.add(beat, 0, 1), 500).unref();
  const thread = new Worker(WATCH, { eval: true, workerData: { beat, pid: process.pid, limitMs } });
  thread.unref();
  const dog: Watchdog = { running: (name) => thread.postMessage(name) };
  g.__batonTestWatchdog = dog;
  return dog;
}
