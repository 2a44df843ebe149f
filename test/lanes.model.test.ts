/**
 * A model test of lanes (core/lanes.ts) over interleavings of three agent sessions in one
 * checkout: tool writes, shell edits, "undo that", turn ends, session ends and a crash, played
 * with the real agents' payload shapes against a real workspace (test/lane-agents.ts).
 *
 * What must hold after every step:
 * - a lane's undo never changes a file whose newest write is another live lane's;
 * - no claim outlives its lane's run (turn end, session end, crash);
 * - a write is refused only for a live claim of another lane, a refused agent's retry goes
 *   through, and a first write to a file another working lane wrote since this lane was last
 *   told about it is refused;
 * - every lane's status is the model's.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import type { LaneStatus } from "../src/core/types.js";
import { openBaton } from "../src/index.js";
import { cleanupDirs, tempDir } from "./helpers.js";
import { type AgentSession, agentSession } from "./lane-agents.js";

afterEach(() => cleanupDirs());

const FILES = ["a.txt", "b.txt", "src/c.txt"];
type Op = { k: "write" | "shell"; l: number; f: number } | { k: "stop" | "end" | "undo"; l: number } | { k: "crash" };

const lane = fc.integer({ min: 0, max: 2 });
const file = fc.integer({ min: 0, max: FILES.length - 1 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ k: fc.constant("write" as const), l: lane, f: file }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant("shell" as const), l: lane, f: file }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant("stop" as const), l: lane }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("end" as const), l: lane }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant("undo" as const), l: lane }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("crash" as const) }) },
);

/** A pid no process has: the Codex lane's agent "crashes" when crash detection runs. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ["-e", "0"]);
  return r.pid as number;
}

interface LaneModel {
  status: LaneStatus;
  /** File → the op that wrote it with a tool in the current run (the lane's claims). */
  claims: Map<string, number>;
  /** File → the op at which this lane was last told of another lane's claim on it. */
  told: Map<string, number>;
}

async function play(ops: Op[]): Promise<void> {
  const root = tempDir("baton-lanes-model-");
  let t = Date.now();
  // One second a step: claims are told apart by their time, as on a real machine's clock.
  const b = await openBaton({ root, now: () => new Date(t) });
  try {
    const dead = deadPid();
    const agents: AgentSession[] = [
      agentSession(b, root, "claude", "11111111-aaaa"),
      agentSession(b, root, "claude", "22222222-bbbb"),
      agentSession(b, root, "codex", "0199cccc-0000-7000-8000-000000000003", { agentPid: dead }),
    ];
    const model: LaneModel[] = agents.map(() => ({ status: "idle", claims: new Map(), told: new Map() }));
    const newest = new Map<string, number>(); // file → the lane whose write is newest
    for (const a of agents) {
      t += 1000;
      await a.start();
    }
    for (const m of model) m.status = "working";
    const read = (f: string) => {
      try {
        return readFileSync(join(root, f), "utf8");
      } catch {
        return undefined;
      }
    };
    const sid = (await b.sessions.list())[0]?.id as string;
    const live = (i: number) => model[i]?.status === "working" || model[i]?.status === "idle";
    const wake = async (i: number) => {
      const m = model[i] as LaneModel;
      if (m.status !== "idle") return;
      t += 1000;
      await (agents[i] as AgentSession).prompt("go on");
      m.status = "working";
      m.claims.clear();
    };
    for (const [n, op] of ops.entries()) {
      t += 1000;
      const where = `step ${n} ${JSON.stringify(op)} of ${JSON.stringify(ops)}`;
      if (op.k === "crash") {
        await b.runs.detectCrashed({ sessionId: sid });
        const m = model[2] as LaneModel;
        if (m.status === "working") {
          m.status = "crashed";
          m.claims.clear();
        }
      } else {
        const i = op.l;
        const a = agents[i] as AgentSession;
        const m = model[i] as LaneModel;
        if (!live(i)) continue; // an ended or crashed agent session does nothing more
        if (op.k === "write") {
          await wake(i);
          t += 1000;
          const f = FILES[op.f] as string;
          const holders = model.flatMap((o, j) =>
            j !== i && o.status === "working" && o.claims.has(f) ? [o.claims.get(f) as number] : [],
          );
          const mustRefuse = holders.some((h) => (m.told.get(f) ?? -1) < h);
          const first = await a.write(f, `${i}:${n}\n`);
          if (first.denied) {
            expect(holders.length, `${where}: refused without another working lane's claim`).toBeGreaterThan(0);
            m.told.set(f, n);
            t += 1000;
            const again = await a.write(f, `${i}:${n}\n`);
            expect(again.denied, `${where}: the retry after a refusal must go through`).toBeUndefined();
          } else {
            expect(mustRefuse, `${where}: a fresh claim of another working lane must be told first`).toBe(false);
            if (holders.length > 0) m.told.set(f, n);
          }
          expect(read(f)).toBe(`${i}:${n}\n`);
          m.claims.set(f, n);
          newest.set(f, i);
        } else if (op.k === "shell") {
          await wake(i);
          const f = FILES[op.f] as string;
          const r = await a.bash(`echo ${i}:${n} > ${f}`, {
            run: () => spawnSync("sh", ["-c", `mkdir -p src && echo ${i}:${n} > ${f}`], { cwd: root }),
          });
          expect(r.denied, where).toBeUndefined();
          // Its agent is told of the claims its command changed: that counts as told (no refusal later).
          if (model.some((o, j) => j !== i && o.status === "working" && o.claims.has(f))) m.told.set(f, n);
          newest.set(f, i);
        } else if (op.k === "stop") {
          if (m.status !== "working") continue;
          await a.stop();
          m.status = "idle";
          m.claims.clear();
        } else if (op.k === "end") {
          await a.end();
          m.status = "ended";
          m.claims.clear();
        } else {
          const before = new Map(FILES.map((f) => [f, read(f)]));
          await a.prompt("undo that"); // starts a run when between turns, as the prompt hook does
          if (m.status === "idle") {
            m.status = "working";
            m.claims.clear();
          }
          for (const f of FILES) {
            const w = newest.get(f);
            if (w !== undefined && w !== i && live(w))
              expect(read(f), `${where}: ${f}, newest written by live lane ${w}, changed by lane ${i}'s undo`).toBe(before.get(f));
            if (read(f) !== before.get(f)) newest.set(f, i);
          }
        }
      }
      // The store agrees with the model: statuses, and no claim outlives its lane's run.
      const snap = await b.sessions.snapshot(sid);
      for (const [j, a] of agents.entries()) {
        const l = snap.facets.lanes?.[a.lane];
        expect(l?.status, `${where}: lane ${j}`).toBe((model[j] as LaneModel).status);
        for (const [k, other] of agents.entries()) {
          if (k === j) continue;
          const held = (await b.lanes.claimsOn(sid, other.lane, FILES)).filter((c) => c.lane === a.lane);
          const want = [...(model[j] as LaneModel).claims.keys()].sort();
          expect(held.map((c) => c.path).sort(), `${where}: lane ${j}'s claims as lane ${k} sees them`).toEqual(
            (model[j] as LaneModel).status === "working" ? want : [],
          );
        }
      }
    }
  } finally {
    await b.close();
  }
}

describe("lanes: a model of three agents in one checkout", () => {
  it("undo never reverts another live lane's newest write; claims end with their run; refusals are sound and never loop", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 4, maxLength: 24 }), (ops) => play(ops)),
      { numRuns: 100 },
    );
  }, 240_000);
});
