/**
 * Hosts with skewed clocks sharing one PostgreSQL project agree on expiry and availability,
 * because every decision reads the database's clock (backend/postgres/pg-clock.ts). Each "host"
 * is a real `baton` process; a skewed one runs under libfaketime (Debian's `faketime`), which
 * moves the process's wall clock as an NTP step would, and a different BATON_HOST_ID (so its pid
 * proofs never apply, only expiry). On the host's own clock, each case below went wrong: a host
 * 61 s ahead took a live 60 s lease and marked a heartbeating run crashed, one 150 s ahead took a
 * live lock, and one 5 s behind could not lease work just appended.
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { CLI, tempDir } from "./helpers.js";
import { pgAvailable } from "./pg-cluster.js";
import { clusterForSuite } from "./pg-suite.js";

const available = pgAvailable();
const faketime = spawnSync("sh", ["-c", "command -v faketime"], { encoding: "utf8" }).stdout.trim();
if (available && faketime === "" && process.env.BATON_TEST_POSTGRES === "require") {
  throw new Error("the clock-skew tests need libfaketime: apt-get install -y faketime");
}

let projects = 0;

/** One `baton` run on a host whose clock is `skew` off ("+61s", "-5s"; "" for the real clock). */
function baton(root: string, env: Record<string, string>, skew: string, args: string[]) {
  const cmd = skew === "" ? [process.execPath, CLI] : [faketime, "-f", skew, process.execPath, CLI];
  const r = spawnSync(cmd[0] as string, [...cmd.slice(1), "--root", root, "--json", ...args], {
    env: { ...process.env, ...env, FAKETIME_DONT_FAKE_MONOTONIC: "1" },
    encoding: "utf8",
    timeout: 60_000,
  });
  const text = r.stdout.trim();
  let json: Record<string, any> = {};
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    throw new Error(`baton ${args.join(" ")} did not print JSON (exit ${r.status}): ${r.stdout}${r.stderr}`);
  }
  return { code: r.status ?? -1, json, out: r.stdout + r.stderr };
}

describe.skipIf(!available || faketime === "")("hosts with skewed clocks on one PostgreSQL project", () => {
  const cluster = clusterForSuite([]);
  const hosts = () => {
    const project = `skew_${process.pid}_${projects++}`;
    const store = { BATON_STORE: cluster().url, BATON_PROJECT: project };
    const a = { root: tempDir(), env: { ...store, BATON_HOST_ID: "host-a" } };
    const b = { root: tempDir(), env: { ...store, BATON_HOST_ID: "host-b" } };
    for (const h of [a, b]) expect(spawnSync(process.execPath, [CLI, "init", "--root", h.root]).status).toBe(0);
    return { a, b };
  };

  it("the skew is real: a process under faketime sees its clock 61 s ahead", () => {
    const r = spawnSync(faketime, ["-f", "+61s", process.execPath, "-e", "process.stdout.write(String(Date.now()))"], { encoding: "utf8" });
    expect(Number(r.stdout) - Date.now()).toBeGreaterThan(55_000);
  });

  it("a host 61 s ahead does not take another host's live 60 s lease; the holder's ack succeeds", () => {
    const { a, b } = hosts();
    expect(baton(a.root, a.env, "", ["session", "start", "-f", "live-variant", "--id", "s"]).code).toBe(0);
    expect(baton(a.root, a.env, "", ["event", "s", "generate", "--actor", "browser"]).code).toBe(0);
    const held = baton(a.root, a.env, "", ["poll", "--session", "s", "--timeout", "0", "--lease-ms", "60000"]);
    expect(held.json.lease?.item?.kind, held.out).toBe("generate");
    const ahead = baton(b.root, b.env, "+61s", ["poll", "--session", "s", "--timeout", "0"]);
    expect(ahead.code, ahead.out).toBe(0);
    expect(ahead.json.lease, "the lease is live on the database's clock").toBeNull();
    const ack = baton(a.root, a.env, "", ["ack", held.json.lease.leaseId]);
    expect(ack.code, ack.out).toBe(0);
  });

  it("a host 5 s behind leases work another host just appended", () => {
    const { a, b } = hosts();
    expect(baton(a.root, a.env, "", ["session", "start", "-f", "live-variant", "--id", "s"]).code).toBe(0);
    expect(baton(a.root, a.env, "", ["event", "s", "generate", "--actor", "browser"]).code).toBe(0);
    const behind = baton(b.root, b.env, "-5s", ["poll", "--session", "s", "--timeout", "0"]);
    expect(behind.json.lease?.item?.kind, behind.out).toBe("generate");
  });

  it("a host 150 s ahead does not take another host's live lock", () => {
    const { a, b } = hosts();
    const held = baton(a.root, a.env, "", ["lock", "acquire", "deploy", "--ttl", "120000", "--pid", String(process.pid)]);
    expect(held.code, held.out).toBe(0);
    const ahead = baton(b.root, b.env, "+150s", ["lock", "acquire", "deploy"]);
    expect(ahead.code, ahead.out).not.toBe(0);
    expect(ahead.json.error?.code, ahead.out).toBe("lock_held");
  });

  it("a host 31 minutes ahead does not mark another host's heartbeating run crashed", () => {
    const { a, b } = hosts();
    expect(baton(a.root, a.env, "", ["session", "start", "-f", "task", "--id", "t"]).code).toBe(0);
    const run = baton(a.root, a.env, "", ["run", "start", "--session", "t", "--agent", "claude", "--pid", String(process.pid)]);
    expect(run.code, run.out).toBe(0);
    const status = baton(b.root, b.env, "+31m", ["status", "--session", "t"]);
    expect(status.code, status.out).toBe(0);
    expect(status.json.crashedRuns ?? [], status.out).toEqual([]);
  });
});
