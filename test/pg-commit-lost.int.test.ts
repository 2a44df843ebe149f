/**
 * A write that landed must not be reported as not written, nor stored twice by the natural
 * reaction (running the command again). A TCP proxy between the real `baton event` and a real
 * PostgreSQL forwards everything until the append's COMMIT has been answered, then drops that
 * answer and refuses connections for a few seconds: the journal's automatic re-send finds the
 * store still down. The event is stored; the CLI says the outcome is unknown, names the id and
 * the exact command that stores it at most once; that command finds it already there.
 */
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { cli, cliAsync, tempDir } from "./helpers.js";
import { pgAvailable } from "./pg-cluster.js";
import { clusterForSuite } from "./pg-suite.js";

const available = pgAvailable();

/**
 * The proxy. Server → client bytes are read as PostgreSQL messages (a type byte, a 4-byte
 * length): once a client has sent `INSERT INTO events`, that connection's next CommandComplete
 * "COMMIT" is not forwarded; both sides are cut, and every connection in the next `refuseMs`
 * is cut at once.
 */
function commitDropper(target: { host: string; port: number }, refuseMs: number) {
  let refuseUntil = 0;
  let dropped = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    if (Date.now() < refuseUntil) return client.destroy();
    const upstream = createConnection(target);
    sockets.add(upstream);
    upstream.on("close", () => sockets.delete(upstream));
    let armed = false;
    let pending = Buffer.alloc(0);
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", cut);
    upstream.on("error", cut);
    client.on("close", cut);
    upstream.on("close", cut);
    client.on("data", (d: Buffer) => {
      if (d.includes("INSERT INTO events")) armed = true;
      upstream.write(d);
    });
    upstream.on("data", (d: Buffer) => {
      pending = Buffer.concat([pending, d]);
      let at = 0;
      while (pending.length - at >= 5) {
        const len = pending.readInt32BE(at + 1);
        if (pending.length - at < 1 + len) break;
        const type = String.fromCharCode(pending[at] as number);
        const body = pending.subarray(at + 5, at + 1 + len);
        if (armed && type === "C" && body.toString("latin1").startsWith("COMMIT")) {
          // Everything before the COMMIT's answer goes through; the answer never does.
          client.write(pending.subarray(0, at));
          dropped++;
          refuseUntil = Date.now() + refuseMs;
          cut();
          return;
        }
        at += 1 + len;
      }
      client.write(pending.subarray(0, at));
      pending = pending.subarray(at);
    });
  });
  return {
    listen: () => new Promise<number>((r) => server.listen(0, "127.0.0.1", () => r((server.address() as { port: number }).port))),
    dropped: () => dropped,
    refusing: () => Date.now() < refuseUntil,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

const run = (args: string[], env: Record<string, string>) => cliAsync(args, { env });

describe.skipIf(!available)("an append whose COMMIT answer is lost, with the store still down at the re-send", () => {
  const open: { close(): Promise<void> }[] = [];
  const cluster = clusterForSuite(open);
  let proxy: ReturnType<typeof commitDropper> | undefined;
  afterAll(async () => {
    await proxy?.close();
  });

  /** A workspace on a fresh project with session `t`, and the environments to reach the store directly and through a proxy. */
  async function setup(project: string) {
    const root = tempDir();
    const direct = { BATON_STORE: cluster().url, BATON_PROJECT: project };
    expect(cli(["init", "--root", root]).code).toBe(0);
    expect(cli(["session", "start", "--root", root, "-f", "task", "--id", "t", "--json"], { env: direct }).code).toBe(0);
    const u = new URL(cluster().url);
    const dropper = commitDropper({ host: u.hostname, port: Number(u.port) }, 6_000);
    u.port = String(await dropper.listen());
    const viaProxy = { BATON_STORE: u.toString(), BATON_PROJECT: project, BATON_STORE_TIMEOUT_MS: "1500" };
    return { root, direct, viaProxy, dropper };
  }

  it("says the outcome is unknown with the id and the exact command; that command stores nothing twice", { timeout: 60_000 }, async () => {
    const { root, direct, viaProxy, dropper } = await setup(`lost_${process.pid}`);
    proxy = dropper;

    const args = ["event", "t", "note:added", "--root", root, "--data", '{"text":"landed"}', "--json"];
    const first = await run(args, viaProxy);
    expect(proxy.dropped(), first.stdout + first.stderr).toBe(1);
    expect(proxy.refusing(), "the re-send met the store still down").toBe(true);
    expect(first.code, first.stdout + first.stderr).toBe(5);
    const error = JSON.parse(first.stdout).error;
    expect(error).toMatchObject({ code: "storage_unavailable", outcome: "unknown" });
    expect(error.ids).toHaveLength(1);
    const id = error.ids[0] as string;
    expect(error.message).toContain("outcome is unknown");
    expect(error.retry).toContain(`--id ${id}`);
    expect(error.retry).toMatch(/^baton event t note:added /);

    // It landed, once.
    const landed = async () => {
      const probe = cli(["session", "show", "t", "--root", root, "--json"], { env: direct });
      expect(probe.code, probe.stderr).toBe(0);
      const events = cli(["export", "t", "--root", root], { env: direct });
      return events.stdout.split("\n").filter((l) => l.includes('"landed"')).length;
    };
    expect(await landed()).toBe(1);

    // The exact command it printed, once the store is back: a duplicate, nothing stored twice.
    await new Promise((r) => setTimeout(r, 6_100));
    const retryArgs = (error.retry as string).split(" ").slice(1);
    expect(retryArgs).toContain(id);
    const again = await run([...args, "--id", id], viaProxy);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ duplicate: true, event: { id } });
    expect(await landed()).toBe(1);
  });
  it("a fenced append (--lock, --epoch) whose outcome is unknown also names its id and the retry", { timeout: 60_000 }, async () => {
    const { root, direct, viaProxy, dropper } = await setup(`lostf_${process.pid}`);
    const lock = cli(["lock", "acquire", "deploy", "--pid", String(process.pid), "--root", root, "--json"], { env: direct });
    expect(lock.code, lock.stderr).toBe(0);
    const epoch = String(lock.json().epoch);

    try {
      const args = [
        "event",
        "t",
        "note:added",
        "--root",
        root,
        "--data",
        '{"text":"fenced"}',
        "--lock",
        "deploy",
        "--epoch",
        epoch,
        "--json",
      ];
      const first = await run(args, viaProxy);
      expect(dropper.dropped(), first.stdout + first.stderr).toBe(1);
      expect(first.code, first.stdout + first.stderr).toBe(5);
      const error = JSON.parse(first.stdout).error;
      expect(error).toMatchObject({ code: "storage_unavailable", outcome: "unknown" });
      const id = error.ids[0] as string;
      expect(error.retry).toContain(`--id ${id}`);
      await new Promise((r) => setTimeout(r, 6_100));
      const again = await run([...args, "--id", id], viaProxy);
      expect(again.code, again.stdout + again.stderr).toBe(0);
      expect(JSON.parse(again.stdout)).toMatchObject({ duplicate: true, event: { id } });
      const stored = cli(["export", "t", "--root", root], { env: direct })
        .stdout.split("\n")
        .filter((l) => l.includes('"fenced"'));
      expect(stored).toHaveLength(1);
    } finally {
      await dropper.close();
    }
  });
});
