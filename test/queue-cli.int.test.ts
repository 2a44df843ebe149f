/**
 * Delivery through the real CLI: the agent's side (poll, ack with a result, nack, heartbeat) and
 * a person's (release someone's lease, retry dead-lettered work).
 */
import { afterAll, describe, expect, it } from "vitest";
import { cleanupDirs, cli, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

describe("baton poll / ack / nack / lease heartbeat", () => {
  it("delivers a browser event sent while no agent listened, and journals the agent's result with the ack", () => {
    const root = tempDir();
    const o = ["--root", root, "--json"];
    cli(["init", ...o]);
    cli(["session", "start", "--flow", "live-variant", "--id", "lv", ...o]);
    for (const [type, actor, data] of [
      ["generate", "browser", "{}"],
      ["source_wrapped", "agent", '{"file":"a.html"}'],
      ["variants_written", "agent", '{"count":2,"expected":2}'],
      ["cycling", "browser", "{}"],
      ["accept", "browser", '{"variantId":"v2","paramValues":{"hue":210}}'],
    ] as const) {
      expect(cli(["event", type, "--actor", actor, "--data", data, ...o]).code).toBe(0);
    }
    const status = cli(["status", ...o]).json().sessions[0];
    expect(status.pendingWork.map((w: { kind: string; state: string }) => [w.kind, w.state])).toEqual([["accept", "ready"]]);
    const polled = cli(["poll", "--session", "lv", "--timeout", "0", "--lease-ms", "60000", "--owner", "agent-1", ...o]).json();
    expect(polled.lease).toMatchObject({ attempt: 1, owner: "agent-1", item: { kind: "accept", seq: 6 } });
    expect(polled.lease.item.event.data).toEqual({ variantId: "v2", paramValues: { hue: 210 } });
    const leased = cli(["status", ...o]).json().sessions[0];
    expect(leased.pendingWork[0].lease).toMatchObject({ owner: "agent-1", expired: false });
    expect(cli(["lease", "heartbeat", polled.lease.leaseId, "--lease-ms", "120000", ...o]).json().expiresAt).toBeTruthy();
    const acked = cli(["ack", polled.lease.leaseId, "--result", '{"type":"accepted","data":{"carbonize":true}}', ...o]).json();
    expect(acked).toMatchObject({ duplicate: false, result: { phase: "accepted_source_pending" } });
    const again = cli(["ack", polled.lease.leaseId, "--result", '{"type":"accepted","data":{"carbonize":true}}', ...o]);
    expect(again.json().duplicate).toBe(true);
    const empty = cli(["poll", "--timeout", "50", ...o]).json();
    expect(empty).toEqual({ lease: null, via: "database", timedOut: true });
    const after = cli(["status", ...o]).json().sessions[0];
    expect(after.pendingWork).toEqual([]);
    expect(after.nextAction.action).toBe("run_carbonize_cleanup");
  });

  it("nack releases work for redelivery, and bad input is refused with exit 2", () => {
    const root = tempDir();
    const o = ["--root", root, "--json"];
    cli(["init", ...o]);
    cli(["session", "start", "--flow", "live-variant", "--id", "lv", ...o]);
    cli(["event", "generate", "--actor", "browser", ...o]);
    const first = cli(["poll", "--timeout", "0", ...o]).json().lease;
    expect(first.item.kind).toBe("generate");
    expect(cli(["nack", first.leaseId, "--reason", "not now", ...o]).json().state).toBe("ready");
    const second = cli(["poll", "--timeout", "0", ...o]).json().lease;
    expect(second).toMatchObject({ attempt: 2, item: { itemId: first.item.itemId } });
    const stale = cli(["ack", first.leaseId, ...o]);
    expect(stale.code).toBe(3);
    expect(stale.json().error.code).toBe("lease_lost");
    expect(cli(["poll", "--lease-ms", "5", ...o]).json().error.code).toBe("bad_input");
    expect(cli(["ack", second.leaseId, "--result", "[1]", ...o]).code).toBe(2);
    expect(cli(["ack", "lse_missing", ...o]).code).toBe(4);
  });

  it("a person releases a lease only while it holds the work, and retries dead-lettered work once", () => {
    const root = tempDir();
    const o = ["--root", root, "--json"];
    cli(["init", ...o]);
    cli(["session", "start", "--flow", "live-variant", "--id", "lv", ...o]);
    cli(["event", "generate", "--actor", "browser", ...o]);
    const held = cli(["poll", "--timeout", "0", "--owner", "agent-1", ...o]).json().lease;
    const released = cli(["lease", "release", held.leaseId, "--reason", "agent-1 is stuck", ...o]);
    expect(released.code, released.stderr).toBe(0);
    expect(released.json()).toMatchObject({ itemId: held.item.itemId, state: "ready" });
    for (const late of [
      ["lease", "release", held.leaseId],
      ["ack", held.leaseId],
    ]) {
      const r = cli([...late, ...o]);
      expect(r.code, late.join(" ")).toBe(3);
      expect(r.json().error.code).toBe("lease_lost");
    }
    // Out of deliveries (five by default, the released one counted): dead-lettered, with the
    // command to deliver it again.
    const states: string[] = [];
    for (let i = 0; i < 4; i++) {
      const l = cli(["poll", "--timeout", "0", ...o]).json().lease;
      expect(l.attempt).toBe(i + 2);
      states.push(cli(["nack", l.leaseId, ...o]).json().state);
    }
    expect(states).toEqual(["ready", "ready", "ready", "dead"]);
    const dead = cli(["status", ...o]).json().sessions[0];
    expect(dead.pendingWork).toEqual([]);
    expect(dead.diagnostics.find((d: { code: string }) => d.code === "work_dead_lettered").message).toContain(
      `baton retry ${held.item.itemId}`,
    );
    const retried = cli(["retry", held.item.itemId, ...o]);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.json()).toEqual({ itemId: held.item.itemId, state: "ready", kind: "generate", seq: 2 });
    const twice = cli(["retry", held.item.itemId, ...o]);
    expect(twice.code).toBe(3);
    expect(twice.json().error).toMatchObject({ code: "conflict" });
    expect(cli(["retry", "wi_missing", ...o]).code).toBe(4);
    expect(cli(["poll", "--timeout", "0", ...o]).json().lease).toMatchObject({ attempt: 1, item: { itemId: held.item.itemId } });
  });
});
