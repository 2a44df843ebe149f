/**
 * `baton doctor`: finds a stale lock (with the proof), a crashed run, a snapshot that
 * disagrees with the journal, an expired lease, a stale server.json, orphan blobs, files
 * changed since the last checkpoint and remaining markers; changes nothing without --fix;
 * --fix applies only the safe repairs and reports each. Its output never carries prompt or
 * answer text, tokens, marker excerpts or URL queries.
 */
import { spawnSync } from "node:child_process";
import { utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { openBaton } from "../src/index.js";
import { BlobStore } from "../src/services/time-travel/blobs.js";
import { cleanupDirs, cli, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

const SECRETS = [
  "PROMPT-SECRET",
  "ANSWER-SECRET",
  "NOTE-SECRET",
  "DECISION-SECRET",
  "EXCERPT-SECRET",
  "OWNER-SECRET",
  "TOKEN-SECRET",
  "URL-SECRET",
  "PASSWORD-SECRET",
  "LEDGER-SECRET",
];

function deadPid(): number {
  return spawnSync(process.execPath, ["-e", "0"]).pid as number;
}

async function seed(root: string): Promise<{ leaseItem: string }> {
  const b = await openBaton({ root });
  // An external run with prompt and answer text in its journal, bound to a tab by a raw event.
  await b.sessions.start({ flow: "external-run", id: "job", deadline: new Date(Date.now() + 3_600_000).toISOString() });
  await b.events.append("job", { type: "started", data: { prompt: "PROMPT-SECRET write a sonnet" } });
  await b.facets.setContext("job", { answer: "ANSWER-SECRET roses are red" });
  await b.events.append("job", { type: "note:added", data: { text: "NOTE-SECRET" } });
  await b.facets.addDecision("job", { decision: "DECISION-SECRET" });
  await b.events.append("job", {
    type: "target:set",
    data: { kind: "browser-tab", id: "T9", url: "https://me:PASSWORD-SECRET@chat.example.com/c/77?token=URL-SECRET#frag" },
  });
  // A run and a lock whose processes are dead; a lock held by a live owner named with a URL.
  await b.runs.start("job", { agent: "claude-code", runId: "r-dead", pid: deadPid() });
  await b.locks.acquire("deploy", { pid: deadPid(), owner: "deployer" });
  await b.locks.acquire("session:job", { owner: "https://owner.example/agent?key=OWNER-SECRET" });
  // A live-variant session: markers in its file (with text beside them), a checkpoint, an expired lease.
  writeFileSync(join(root, "page.html"), "<div>\n<!-- baton-variants-start --> EXCERPT-SECRET\n</div>\n");
  await b.sessions.start({ flow: "live-variant", id: "lv" });
  await b.events.append("lv", { type: "generate", actor: "browser" });
  await b.events.append("lv", { type: "source_wrapped", actor: "agent", data: { file: "page.html" } });
  await b.events.append("lv", { type: "exit", actor: "browser" });
  await b.checkpoints.create("lv", { files: ["page.html"] });
  writeFileSync(join(root, "page.html"), "<div>\n<!-- baton-variants-start --> EXCERPT-SECRET changed\n</div>\n");
  const lease = await b.work.lease("agent-x", { sessionId: "lv", kinds: ["exit"], leaseMs: 50 });
  await new Promise((r) => setTimeout(r, 80));
  // An orphan blob past the grace period.
  const store = new BlobStore(join(root, ".baton", "blobs"));
  const orphan = store.put(Buffer.from("nobody needs this"));
  const old = new Date(Date.now() - 2 * 3_600_000);
  utimesSync(store.path(orphan.hash), old, old);
  await b.close();
  // The server died without removing its file (the token must never be printed).
  writeFileSync(
    join(root, ".baton", "server.json"),
    JSON.stringify({ pid: deadPid(), port: 4321, token: `TOKEN-SECRET${"x".repeat(40)}`, startedAt: new Date().toISOString() }),
  );
  // The ledger failed to write twice (its last error quotes what the tool call carried).
  writeFileSync(
    join(root, ".baton", "ledger-failures.json"),
    JSON.stringify({ writeFailures: 2, lastError: "SQLITE_FULL: LEDGER-SECRET", lastAt: "2026-05-01T10:00:00.000Z" }),
  );
  // The stored snapshot of lv is lost.
  const db = new Database(join(root, ".baton", "baton.db"));
  db.prepare("DELETE FROM snapshots WHERE session_id = 'lv'").run();
  db.close();
  return { leaseItem: lease?.item.itemId as string };
}

function codes(report: { findings: { code: string; repaired?: boolean }[] }, repaired?: boolean): string[] {
  return report.findings.filter((f) => repaired === undefined || (f.repaired === true) === repaired).map((f) => f.code);
}

describe("baton doctor", () => {
  it("reports each problem with evidence and a fix, writes nothing without --fix, repairs the safe ones with it, and never leaks", async () => {
    const root = tempDir();
    const { leaseItem } = await seed(root);
    const o = ["--root", root, "--json"];

    const first = cli(["doctor", ...o]);
    expect(first.code, first.stderr).toBe(0);
    const report = first.json();
    expect(report.ok).toBe(false);
    expect(report.scope).toBe("workspace");
    expect(codes(report).sort()).toEqual(
      [
        "blob_orphan",
        "files_changed_since_checkpoint",
        "lease_expired",
        "ledger_write_failures",
        "lock_held",
        "lock_stale",
        "markers_remain",
        "run_crashed",
        "server_file_stale",
        "snapshot_mismatch",
      ].sort(),
    );
    const byCode = (c: string) => report.findings.find((f: { code: string }) => f.code === c);
    expect(byCode("lock_stale")).toMatchObject({
      severity: "warning",
      safe: true,
      evidence: { name: "deploy", epoch: 1, proof: "dead_pid" },
    });
    expect(byCode("lock_stale").fix).toBe("baton lock inspect deploy --json");
    expect(byCode("run_crashed")).toMatchObject({ sessionId: "job", evidence: { runId: "r-dead", proof: "dead_pid" } });
    expect(byCode("snapshot_mismatch")).toMatchObject({
      sessionId: "lv",
      evidence: { problem: "missing" },
      fix: "baton rebuild --session lv",
    });
    expect(byCode("lease_expired")).toMatchObject({ sessionId: "lv", evidence: { itemId: leaseItem, owner: "agent-x" } });
    expect(byCode("markers_remain")).toMatchObject({ safe: false, evidence: { count: 1, at: ["page.html:2 variants"] } });
    expect(byCode("files_changed_since_checkpoint")).toMatchObject({ severity: "info", evidence: { changed: 1, paths: ["page.html"] } });
    expect(byCode("server_file_stale")).toMatchObject({ evidence: { port: 4321 } });
    expect(byCode("lock_held").evidence.holder.owner).toBe("https://owner.example/agent");
    expect(byCode("ledger_write_failures")).toMatchObject({ evidence: { writeFailures: 2, lastAt: "2026-05-01T10:00:00.000Z" } });
    expect(report.checks.find((c: { check: string }) => c.check === "integrity").status).toBe("ok");

    // The session view: target, the session's lock, runs, the next step; URL cut.
    const session = cli(["doctor", "job", ...o]).json();
    expect(session.session).toMatchObject({
      sessionId: "job",
      flow: "external-run",
      target: { kind: "browser-tab", id: "T9", url: "https://chat.example.com/c/77" },
      locks: [{ name: "session:job", owner: "https://owner.example/agent", stale: false }],
      runs: [{ runId: "r-dead", status: "running" }],
      nextAction: { action: "poll_external_run" },
    });
    const human = cli(["doctor", "--root", root]);
    for (const out of [first.stdout, JSON.stringify(session), human.stdout, human.stderr]) {
      for (const s of SECRETS) expect(out, `doctor output must not contain ${s}`).not.toContain(s);
    }
    expect(human.stdout).toContain('WARN  lock_stale: lock "deploy"');

    // Nothing was written by looking.
    expect(cli(["doctor", ...o]).json().findings.length).toBe(report.findings.length);
    expect(cli(["lock", "inspect", "deploy", ...o]).json()).toMatchObject({ state: "held", epoch: 1 });

    // --fix: each safe repair, reported; the unsafe ones stay.
    const fixed = cli(["doctor", "--fix", ...o]).json();
    expect(fixed.repairs.map((r: { code: string }) => r.code).sort()).toEqual(
      ["blob_orphan", "lease_expired", "lock_stale", "run_crashed", "server_file_stale", "snapshot_mismatch"].sort(),
    );
    expect(fixed.repairs.every((r: { ok: boolean }) => r.ok)).toBe(true);
    expect(codes(fixed, false).sort()).toEqual(["files_changed_since_checkpoint", "ledger_write_failures", "lock_held", "markers_remain"]);
    for (const s of SECRETS) expect(JSON.stringify(fixed)).not.toContain(s);

    const after = cli(["doctor", ...o]).json();
    expect(codes(after).sort()).toEqual(["files_changed_since_checkpoint", "ledger_write_failures", "lock_held", "markers_remain"]);
    expect(cli(["lock", "inspect", "deploy", ...o]).json()).toMatchObject({
      state: "free",
      epoch: 1,
      releaseReason: "reclaimed: dead_pid",
    });
    expect(cli(["session", "show", "job", ...o]).json().snapshot.facets.runs[0]).toMatchObject({ runId: "r-dead", status: "crashed" });
    expect(
      cli(["status", "--session", "lv", ...o])
        .json()
        .sessions[0].pendingWork.find((w: { itemId: string }) => w.itemId === leaseItem).state,
    ).toBe("ready");
  });

  it("--fix <code> applies only those findings' repairs; a code without a safe fix is bad input and changes nothing", async () => {
    const root = tempDir();
    const { leaseItem } = await seed(root);
    const o = ["--root", root, "--json"];
    const before = cli(["doctor", ...o]).json();

    // Not a code with a safe fix (or a session where a code goes): refused before anything runs.
    for (const bad of [
      ["--fix", "markers_remain"],
      ["--fix", "lv"],
      ["--fix", "lease_expired,nope"],
    ]) {
      const r = cli(["doctor", ...bad, ...o]);
      expect(r.code, `doctor ${bad.join(" ")}`).toBe(2);
      expect(r.json().error).toMatchObject({ code: "bad_input" });
      expect(r.json().error.message).toContain("lease_expired");
    }
    expect(cli(["doctor", "--fix", "lv", "--root", root]).stderr).toContain("baton doctor <session> --fix");
    expect(codes(cli(["doctor", ...o]).json())).toEqual(codes(before));

    // One code: that repair only.
    const one = cli(["doctor", "--fix", "lease_expired", ...o]);
    expect(one.code, one.stderr).toBe(0);
    expect(one.json().repairs).toEqual([
      { code: "lease_expired", subject: "expired leases", ok: true, detail: "1 expired lease(s) returned to the queue" },
    ]);
    expect(codes(one.json(), true)).toEqual(["lease_expired"]);
    const lv = cli(["status", "--session", "lv", ...o]).json().sessions[0];
    expect(lv.pendingWork.find((w: { itemId: string }) => w.itemId === leaseItem).state).toBe("ready");
    expect(cli(["lock", "inspect", "deploy", ...o]).json()).toMatchObject({ state: "held", epoch: 1 });

    // Several, as a list or comma-separated; the library takes the same list.
    const two = cli(["doctor", "--fix", "lock_stale,snapshot_mismatch", ...o]).json();
    expect(two.repairs.map((r: { code: string }) => r.code).sort()).toEqual(["lock_stale", "snapshot_mismatch"]);
    const lib = await openBaton({ root });
    try {
      const r = await lib.health.doctor({ fix: ["server_file_stale", "run_crashed"] });
      expect(r.repairs.map((x) => x.code).sort()).toEqual(["run_crashed", "server_file_stale"]);
      expect(codes(await lib.health.doctor()).sort()).toEqual(
        ["blob_orphan", "files_changed_since_checkpoint", "ledger_write_failures", "lock_held", "markers_remain"].sort(),
      );
      await expect(lib.health.doctor({ fix: [] })).rejects.toMatchObject({ code: "bad_input" });
    } finally {
      await lib.close();
    }
  });

  // issue 34 §5: every rollback was reported as files changed since the last checkpoint (its
  // safety checkpoint holds the files as they were before the rollback).
  it("after a rollback, reports only files changed since it (not the rollback's own changes)", () => {
    const root = tempDir();
    const run = (...args: string[]) => {
      const r = cli([...args, "--root", root, "--json"], { env: { BATON_DURABILITY: "relaxed" } });
      expect(r.code, `baton ${args.join(" ")}: ${r.stdout}${r.stderr}`).toBe(0);
      return r.json();
    };
    const changedFinding = () =>
      run("doctor").findings.find((f: { code: string }) => f.code === "files_changed_since_checkpoint") as
        | { message: string; evidence: Record<string, unknown> }
        | undefined;
    run("init");
    run("session", "start", "--flow", "task", "--id", "s1");
    writeFileSync(join(root, "a.txt"), "v1\n");
    writeFileSync(join(root, "b.txt"), "b1\n");
    const first = run("checkpoint").checkpointId;
    writeFileSync(join(root, "a.txt"), "v2\n");
    writeFileSync(join(root, "c.txt"), "new\n");
    expect(changedFinding()?.evidence).toMatchObject({ checkpoint: first, changed: 1, paths: ["a.txt"] });

    const rb = run("rollback");
    expect(rb.restored + rb.removed).toBe(2);
    expect(changedFinding(), "right after a rollback the files are the restored checkpoint's").toBeUndefined();

    // A real change since the rollback is still reported, against the checkpoint it restored.
    writeFileSync(join(root, "b.txt"), "b2\n");
    const since = changedFinding();
    expect(since?.evidence).toMatchObject({ checkpoint: first, rollback: rb.rollbackId, changed: 1, paths: ["b.txt"] });
    expect(since?.message).toContain(`since s1's last rollback ${rb.rollbackId}`);
    writeFileSync(join(root, "b.txt"), "b1\n");
    expect(changedFinding()).toBeUndefined();

    // Undoing the rollback: the files are as before it, which is no change either; an edit after is.
    run("rollback", "--to", rb.safety);
    expect(changedFinding()).toBeUndefined();
    writeFileSync(join(root, "c.txt"), "edited\n");
    expect(changedFinding()?.evidence).toMatchObject({ checkpoint: rb.safety, changed: 1, paths: ["c.txt"] });
  });

  it("an unknown session is not_found (exit 4)", () => {
    const root = tempDir();
    cli(["init", "--root", root]);
    const r = cli(["doctor", "nope", "--root", root, "--json"]);
    expect(r.code).toBe(4);
    expect(r.json().error.code).toBe("not_found");
    expect(cli(["doctor", "--root", root, "--json"]).json()).toMatchObject({ ok: true, findings: [] });
  });
});
