import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "./helpers.js";

interface Step {
  chapter: number;
  step: number;
  title: string;
  command: string[];
  result: Record<string, any>;
}

function jsonLines(stdout: string): any[] {
  return stdout
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => {
      try {
        return JSON.parse(l);
      } catch {
        throw new Error(`demo --json printed a line that is not JSON: ${l}`);
      }
    });
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Run `baton demo --json …`: its steps, summary, and a lookup of one step's result. */
function runJson(args: string[]) {
  const r = cli(["demo", "--json", ...args]);
  expect(r.code, `stdout: ${r.stdout}\nstderr: ${r.stderr}`).toBe(0);
  const lines = jsonLines(r.stdout);
  const steps = lines.filter((l) => "step" in l) as Step[];
  const summary = lines.at(-1)?.summary;
  expect(summary, "the last line is the summary").toBeDefined();
  for (const s of steps) {
    expect(s.title).toEqual(expect.any(String));
    expect(s.command.length, `chapter ${s.chapter} step ${s.step} ran commands`).toBeGreaterThan(0);
  }
  // Every journal call is the real CLI on the demo's own workspace.
  const ws: string = summary.workspace;
  expect(ws).toContain("baton-demo-");
  const cliCalls = steps.flatMap((s) => s.command).filter((c) => c.startsWith("baton "));
  for (const c of cliCalls) expect(c.startsWith(`baton --root ${ws} --json `), c).toBe(true);
  const at = (chapter: number, step: number) => {
    const s = steps.find((x) => x.chapter === chapter && x.step === step);
    expect(s, `chapter ${chapter} step ${step}`).toBeDefined();
    return (s as Step).result;
  };
  const numbers = (chapter: number) => steps.filter((s) => s.chapter === chapter).map((s) => s.step);
  return { steps, summary, ws, cliCalls, at, numbers };
}

/** Chapter 2's key results: pending work, via server, attempt 2 after the kill, duplicate ack, server.json removed. */
function expectDelivery(d: ReturnType<typeof runJson>) {
  const { at, steps } = d;
  const server = at(2, 1).server;
  expect(server).toMatchObject({ pid: expect.any(Number), port: expect.any(Number) });
  expect(at(2, 1).serverFile).toMatchObject({ pid: server.pid, port: server.port, mode: "600" });
  const serve = steps.find((s) => s.chapter === 2 && s.step === 1)?.command ?? [];
  expect(serve.some((c) => c.endsWith(" serve --port 0"))).toBe(true);

  // Sent over HTTP while no agent polls, and listed as pending work.
  const post = at(2, 2);
  expect(post.post).toMatchObject({ status: 201, outcome: "moved", phase: "generating" });
  expect(post.pendingWork).toEqual([{ itemId: `cta:${post.post.seq}`, kind: "generate", seq: post.post.seq, state: "ready", attempts: 0 }]);
  const http = steps.find((s) => s.chapter === 2 && s.step === 2)?.command.find((c) => c.startsWith("POST "));
  expect(http).toContain(`http://127.0.0.1:${server.port}/v1/sessions/cta/events`);
  expect(http).toContain("Authorization: Bearer <token");
  expect(http).toContain("Content-Type: application/json");

  // Leased through the server by an agent that was then killed.
  const killed = at(2, 3);
  expect(killed.signal).toBe("SIGKILL");
  expect(pidAlive(killed.pid)).toBe(false);
  expect(killed.lease).toMatchObject({ attempt: 1, via: "server", owner: expect.stringMatching(new RegExp(`^cli:${killed.pid}@`)) });
  expect(killed.pendingWork).toEqual({ state: "leased", owner: killed.lease.owner });

  // Redelivered after the lease expired: same item, attempt 2, a new lease.
  const again = at(2, 4);
  expect(again.lease).toMatchObject({ attempt: 2, via: "server", itemId: `cta:${post.post.seq}`, seq: post.post.seq });
  expect(again.lease.leaseId).not.toBe(killed.lease.leaseId);
  // Leased again only once the first lease (1.5 s) had expired.
  expect(again.firstLeaseExpiredAt).toBe(killed.lease.expiresAt);
  expect(Date.parse(again.lease.expiresAt) - 1500).toBeGreaterThanOrEqual(Date.parse(killed.lease.expiresAt));

  // Acked once; the repeat is a duplicate, the dead agent's lease is lost.
  const acked = at(2, 5);
  expect(acked.ack).toMatchObject({ leaseId: again.lease.leaseId, duplicate: false, phase: "source_wrapped" });
  expect(acked.repeat).toEqual({ duplicate: true });
  expect(acked.staleLease).toMatchObject({ leaseId: killed.lease.leaseId, exitCode: 3, error: "lease_lost" });
  expect(acked.pendingWork).toBe(0);

  // SIGTERM: the server exits 0 and removes server.json; poll falls back to the database.
  expect(at(2, 6)).toMatchObject({ signal: "SIGTERM", exitCode: 0, serverFileRemoved: true, poll: { via: "database", lease: null } });
  expect(pidAlive(server.pid)).toBe(false);
}

/** Chapter 3's key results: spiral with ask_user, the file restored byte for byte, the lesson injected. */
function expectTimeTravel(d: ReturnType<typeof runJson>) {
  const { at } = d;
  const fp = at(3, 1).check.fingerprint;
  expect(fp).toMatch(/^fp-[0-9a-f]{16}$/);
  expect(at(3, 1).check.exitCode).toBe(1);
  const first = at(3, 2);
  for (const n of [2, 3]) expect(at(3, n)).toMatchObject({ attempt: n - 1, exitCode: 1, fingerprint: fp, detected: false });
  const third = at(3, 4);
  expect(third).toMatchObject({ attempt: 3, fingerprint: fp, detected: true, nextAction: "ask_user" });
  expect(third.spiral).toMatchObject({ pattern: "file_churn", proposedCheckpoint: first.checkpoint });
  expect(third.spiral.turns).toHaveLength(3);
  expect(at(3, 5)).toEqual({
    nextAction: "ask_user",
    pattern: "file_churn",
    proposedCheckpoint: first.checkpoint,
    choices: ["rollback", "take_over"],
  });

  const rb = at(3, 6);
  expect(rb).toMatchObject({ target: first.checkpoint, restored: 1, restoredByteForByte: true });
  expect(rb.dryRun.diffLines).toBeGreaterThan(3);
  expect(rb.safety).toMatch(/^cp-/);

  const lesson = at(3, 7);
  expect(lesson).toMatchObject({ suggestion: "capture_lesson", rollback: rb.rollbackId, unpaused: true, nextAction: "continue_task" });
  const injected = at(3, 8);
  expect(injected.included).toContain(lesson.lessonId);
  expect(injected.markdown).toMatch(/^## Lessons from earlier attempts\n- .*normalize/);
  expect(injected.markdown).toContain(`(${lesson.lessonId})`);
  expect(at(3, 9)).toMatchObject({ check: { exitCode: 0 }, phase: "done" });
  return { checkpoint: first.checkpoint as string, sha256: rb.sha256 as string, lessonId: lesson.lessonId as string };
}

describe("baton demo", () => {
  it("tells all three chapters for real under --json, then removes its workspace", () => {
    const d = runJson([]);
    const { at, summary, ws, cliCalls } = d;
    expect(d.steps.map((s) => s.chapter)).toEqual([...Array(8).fill(1), ...Array(6).fill(2), ...Array(9).fill(3)]);
    expect(d.numbers(1)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(d.numbers(2)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(d.numbers(3)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(cliCalls.length).toBeGreaterThanOrEqual(45);

    // Chapter 1, recovery.
    expect(at(1, 2)).toMatchObject({ nextAction: "write_variants", phase: "generating" });
    expect(at(1, 4)).toMatchObject({ phase: "accept_pending" });
    // A real child, really killed.
    const killed = at(1, 5);
    expect(killed.signal).toBe("SIGKILL");
    expect(killed.pid).toEqual(expect.any(Number));
    expect(pidAlive(killed.pid)).toBe(false);
    expect(killed.variantsLeftInFile).toEqual(["v2", "v3"]);
    // A fresh process learns what to do from the journal alone.
    expect(at(1, 6)).toMatchObject({
      nextAction: "run_accept_cleanup",
      phase: "accept_pending",
      variantId: "v2",
      paramValues: { hue: 210, density: "airy" },
      file: "src/Hero.html",
      deadRun: { status: "crashed", pid: killed.pid },
    });
    expect(at(1, 6).reason).toContain("v2");
    // Completing with markers left is refused with exit 3 and the finding.
    const early = at(1, 7);
    expect(early.nextAction).toBe("run_carbonize_cleanup");
    expect(early.complete).toMatchObject({ exitCode: 3, error: "source_dirty", marker: "carbonize" });
    expect(early.complete.finding).toMatch(/^src\/Hero\.html:\d+$/);
    const last = at(1, 8);
    expect(last).toMatchObject({ phase: "complete", nextAction: "no_active_session" });
    expect(last.events).toBeGreaterThanOrEqual(10);

    // Chapter 2, delivery; chapter 3, time travel. Chapter 2 ran in the workspace chapter 1 made.
    expect(d.steps.find((s) => s.chapter === 2 && s.step === 1)?.command.some((c) => c.endsWith(" init"))).toBe(false);
    expectDelivery(d);
    expectTimeTravel(d);

    expect(summary).toMatchObject({ ok: true, kept: false, elapsedMs: expect.any(Number) });
    expect(summary.chapters).toEqual([
      expect.objectContaining({ chapter: 1, name: "Recovery", variantId: "v2", signal: "SIGKILL", events: last.events }),
      expect.objectContaining({ chapter: 2, name: "Delivery", attempts: 2, duplicateAck: true, serverFileRemoved: true }),
      expect.objectContaining({ chapter: 3, name: "Time travel", pattern: "file_churn", restoredByteForByte: true, phase: "done" }),
    ]);
    expect(existsSync(ws), `${ws} should have been removed`).toBe(false);
  });

  it("--quiet prints only the summary; --keep leaves a workspace the CLI can still read", () => {
    const r = cli(["demo", "--quiet", "--keep"]);
    expect(r.code, `stdout: ${r.stdout}\nstderr: ${r.stderr}`).toBe(0);
    const ws = /Workspace kept: (\S+)/.exec(r.stdout)?.[1];
    expect(ws, r.stdout).toBeDefined();
    try {
      expect(r.stdout).not.toMatch(/^\s*\d\. /m);
      expect(r.stdout).not.toContain("$ baton");
      expect(r.stdout).toContain("Summary");
      for (const ch of ["1 · Recovery", "2 · Delivery", "3 · Time travel"]) expect(r.stdout).toContain(ch);
      const root = ws as string;
      expect(existsSync(join(root, ".baton"))).toBe(true);
      expect(existsSync(join(root, ".baton", "server.json")), "the server removed server.json").toBe(false);
      const hero = readFileSync(join(root, "src", "Hero.html"), "utf8");
      expect(hero).toContain('class="hero hero--split" data-density="airy" style="--hue: 210"');
      expect(hero).not.toContain("baton-");
      const all = cli(["status", "--all", "--json", "--root", root]).json();
      expect(all.sessions).toHaveLength(3);
      const byId = (id: string) => all.sessions.find((s: any) => s.sessionId === id);
      expect(byId("hero")).toMatchObject({ phase: "complete", status: "completed" });
      expect(byId("cta")).toMatchObject({ phase: "source_wrapped", pendingWork: [] });
      expect(byId("slugs")).toMatchObject({ phase: "done" });
      const runs = cli(["resume", "hero", "--json", "--root", root]).json().facets.runs;
      expect(runs).toEqual([expect.objectContaining({ status: "crashed", handoffReason: expect.stringMatching(/^dead_pid: /) })]);
      // The fixed module, and the lesson in LESSONS.md.
      expect(readFileSync(join(root, "src", "slug.mjs"), "utf8")).toContain('.normalize("NFD")');
      expect(readFileSync(join(root, "LESSONS.md"), "utf8")).toMatch(/- rollback: rb-/);
    } finally {
      if (ws?.includes("baton-demo-")) rmSync(ws, { recursive: true, force: true });
    }
  });

  it("--chapter 3 tells only the time-travel story, in a workspace of its own", () => {
    const d = runJson(["--chapter", "3", "--keep"]);
    try {
      expect(d.steps.every((s) => s.chapter === 3)).toBe(true);
      expect(d.numbers(3)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(d.steps[0]?.command.some((c) => c.endsWith(" init"))).toBe(true);
      const tt = expectTimeTravel(d);
      expect(d.summary.chapters).toEqual([expect.objectContaining({ chapter: 3, lessonId: tt.lessonId })]);
      // Cross-checked with the CLI: the restored bytes are the proposed checkpoint's, and the lesson is there for the next agent.
      const cp = cli(["checkpoint", "show", tt.checkpoint, "--json", "--root", d.ws]).json();
      expect(cp.files).toEqual([expect.objectContaining({ path: "src/slug.mjs", hash: tt.sha256 })]);
      const inj = cli(["lessons", "inject", "--session", "slugs", "--path", "src/slug.mjs", "--json", "--root", d.ws]).json();
      expect(inj.included.map((x: any) => x.id)).toContain(tt.lessonId);
    } finally {
      rmSync(d.ws, { recursive: true, force: true });
    }
  });

  it("--chapter 2 tells only the delivery story and leaves no server behind", () => {
    const d = runJson(["--chapter", "2"]);
    expect(d.steps.every((s) => s.chapter === 2)).toBe(true);
    expect(d.numbers(2)).toEqual([1, 2, 3, 4, 5, 6]);
    expectDelivery(d);
    expect(existsSync(d.ws)).toBe(false);
  });

  it("refuses a chapter that does not exist", () => {
    const r = cli(["demo", "--chapter", "4", "--json"]);
    expect(r.code).toBe(2);
    expect(r.json().error).toMatchObject({ code: "bad_input", message: expect.stringContaining("--chapter") });
  });
});
