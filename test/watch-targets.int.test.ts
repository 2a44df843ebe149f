/**
 * External runs: `watch` turns a transient local timeout (before the deadline) back into
 * polling under the session's command lock, with a warning, and keeps a timeout after the
 * deadline terminal; targets never fall back to "whatever is active".
 */
import { afterAll, describe, expect, it } from "vitest";
import { cutUrl, cutUrlsIn } from "../src/core/session/targets.js";
import { isBatonError, openBaton } from "../src/index.js";
import { killAll, spawnNode, waitExit } from "./child-process.js";
import { CLI, cleanupDirs, cli, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

function clock(start = "2026-05-01T10:00:00.000Z") {
  let t = Date.parse(start);
  return {
    now: () => new Date(t),
    advance: (ms: number) => {
      t += ms;
    },
  };
}

describe("watch", () => {
  it("flips a transient timeout back to polling with a warning, and keeps a post-deadline timeout terminal", async () => {
    const c = clock();
    const b = await openBaton({ root: tempDir(), now: c.now });
    await b.sessions.start({ flow: "external-run", id: "job", deadline: "2026-05-01T11:00:00.000Z" });
    await b.events.append("job", { type: "started" });
    await b.events.append("job", { type: "timeout" }); // a local poll gave up at 10:00, the run goes on

    const lines: { type: string; phase: string; warnings?: { code: string }[] }[] = [];
    const last = await b.targets.watchRun("job", { intervalMs: 10, maxTicks: 2, onLine: (l) => lines.push(l) });
    expect(lines[0]).toMatchObject({ type: "start", phase: "timeout", deadline: "2026-05-01T11:00:00.000Z" });
    expect(lines[1]).toMatchObject({ type: "tick", phase: "polling", terminal: false, warnings: [{ code: "transient_timeout" }] });
    expect(last).toMatchObject({ type: "stopped", phase: "polling" });
    const { events } = await b.events.list("job");
    expect(events.slice(-2).map((e) => [e.type, e.actor])).toEqual([
      ["polling", "watch"],
      ["note:added", "watch"],
    ]);
    // The flip was made under the session's command lock, which is free again.
    expect(await b.locks.inspect("session:job")).toMatchObject({ state: "free", epoch: 1 });

    // A command that holds the session's lock is not raced: the flip waits for the next tick.
    await b.events.append("job", { type: "timeout" });
    const held = await b.locks.acquire("session:job", { owner: "poll" });
    expect(await b.targets.watchTick("job")).toMatchObject({ phase: "timeout", terminal: false, warnings: [{ code: "lock_busy" }] });
    await b.locks.release("session:job", held.epoch);
    expect(await b.targets.watchTick("job")).toMatchObject({ phase: "polling", warnings: [{ code: "transient_timeout" }] });

    // After the deadline a timeout is the outcome: terminal, nothing appended.
    await b.events.append("job", { type: "timeout" });
    c.advance(60 * 60 * 1000);
    const before = (await b.sessions.snapshot("job")).lastSeq;
    const end = await b.targets.watchRun("job", { intervalMs: 10 });
    expect(end).toMatchObject({ type: "terminal", phase: "timeout", terminal: true });
    expect(end.reason).toContain("after the deadline");
    expect((await b.sessions.snapshot("job")).lastSeq).toBe(before);
    await b.close();
  });

  it("baton watch --json prints start, ticks and terminal lines, following another process's events", async () => {
    const root = tempDir();
    const o = ["--root", root, "--json"];
    cli(["init", ...o]);
    cli(["session", "start", "--flow", "external-run", "--id", "job", "--deadline", new Date(Date.now() + 3_600_000).toISOString(), ...o]);
    cli(["event", "job", "timeout", ...o]);
    const w = spawnNode(CLI, ["watch", "job", "--interval", "50", ...o], "baton watch");
    await w.waitForLine((l) => l.includes('"transient_timeout"'), 20_000, "the transient timeout warning");
    try {
      expect(cli(["session", "show", "job", ...o]).json().snapshot.phase).toBe("polling");
      cli(["event", "job", "complete", ...o]);
      expect(await waitExit(w, 20_000)).toEqual({ code: 0, signal: null });
    } finally {
      await killAll([w]);
    }
    const parsed = w.lines.map((l) => JSON.parse(l));
    expect(parsed[0]).toMatchObject({ type: "start", sessionId: "job", phase: "timeout" });
    expect(parsed[1]).toMatchObject({ type: "tick", phase: "polling", warnings: [{ code: "transient_timeout" }] });
    expect(parsed.at(-1)).toMatchObject({ type: "terminal", phase: "complete", terminal: true });
    expect(parsed.slice(1, -1).every((l) => l.type === "tick")).toBe(true);
  });
});

describe("targets", () => {
  it("resolves the bound target, reports a mismatch unless navigation or force is allowed, and keeps URLs cut", async () => {
    const b = await openBaton({ root: tempDir() });
    await b.sessions.start({ flow: "external-run", id: "job" });
    expect(await b.targets.resolve("job").catch((e) => e.code)).toBe("not_found");
    const { target } = await b.targets.set("job", { kind: "browser-tab", id: "T1", url: "https://user:pw@chat.example.com/?ref=x#top" });
    expect(target).toMatchObject({ kind: "browser-tab", id: "T1", url: "https://chat.example.com/" });
    expect(await b.targets.resolve("job")).toMatchObject({ status: "bound", target: { id: "T1" } });
    // The root page turning into a conversation page is the same target.
    const drift = await b.targets.resolve("job", { kind: "browser-tab", id: "T1", url: "https://chat.example.com/c/42?token=s3cret" });
    expect(drift.status).toBe("matched");
    expect(drift.warnings[0]).toContain("https://chat.example.com/c/42");
    expect(JSON.stringify(drift)).not.toContain("s3cret");
    // Another tab is never silently used.
    const err = await b.targets.resolve("job", { kind: "browser-tab", id: "T2" }).catch((e) => e);
    expect(isBatonError(err, "target_mismatch")).toBe(true);
    expect(err.details).toMatchObject({ differences: ["id"], bound: { id: "T1" }, observed: { id: "T2" } });
    const other = await b.targets.resolve("job", { kind: "browser-tab", id: "T1", url: "https://evil.example.net/" }).catch((e) => e.code);
    expect(other).toBe("target_mismatch");
    expect(await b.targets.resolve("job", { id: "T2" }, { allowNavigate: true })).toMatchObject({
      status: "navigate",
      target: { id: "T1" },
    });
    expect((await b.targets.get("job"))?.id).toBe("T1"); // navigation writes nothing
    const forced = await b.targets.resolve("job", { kind: "browser-tab", id: "T2" }, { force: true });
    expect(forced).toMatchObject({ status: "rebound", target: { id: "T2", reason: "forced" } });
    await b.targets.clear("job");
    expect(await b.targets.get("job")).toBeUndefined();
    expect(await b.targets.set("job", { kind: "Bad Kind", id: "x" }).catch((e) => e.code)).toBe("bad_input");
    await b.close();
  });

  it("cuts URLs to protocol, host and path", () => {
    expect(cutUrl("https://a:b@h.example:8443/p/q?x=1#f")).toBe("https://h.example:8443/p/q");
    expect(cutUrlsIn("see https://h/x?token=1 and wss://w/s#k")).toBe("see https://h/x and wss://w/s");
  });

  it("through the CLI: target set / resolve exit 3 on a mismatch", () => {
    const root = tempDir();
    const o = ["--root", root, "--json"];
    cli(["init", ...o]);
    cli(["session", "start", "--flow", "external-run", "--id", "job", ...o]);
    const set = cli([
      "target",
      "set",
      "job",
      "--kind",
      "job",
      "--id",
      "remote-7",
      "--url",
      "https://ci.example.com/runs/7?sig=abc",
      ...o,
    ]).json();
    expect(set.target).toMatchObject({ kind: "job", id: "remote-7", url: "https://ci.example.com/runs/7" });
    const bad = cli(["target", "resolve", "job", "--kind", "job", "--id", "remote-8", ...o]);
    expect(bad.code).toBe(3);
    expect(bad.json().error.code).toBe("target_mismatch");
    expect(cli(["target", "resolve", "job", "--id", "remote-8", "--navigate", ...o]).json().status).toBe("navigate");
    expect(cli(["target", "show", "job", ...o]).json().target.id).toBe("remote-7");
  });
});
