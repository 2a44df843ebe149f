/**
 * The token goes only to a server that proves who it is. A `.baton/server.json` can outlive its
 * server (SIGKILL, a reboot), and its pid and port can then belong to anything: clients must
 * not hand that process the bearer token, and doctor must agree with them about the file.
 */
import { writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { spawnNode } from "./child-process.js";
import { CLI, cleanupDirs, cli, initWorkspace } from "./helpers.js";

const TOKEN = "tok_impostor_must_never_see_this_0123456789";
let impostor: Server | undefined;

afterEach(async () => {
  await new Promise<void>((r) => (impostor ? impostor.close(() => r()) : r()));
  impostor = undefined;
  cleanupDirs();
});

/** A process on loopback that answers everything with 200 {"ok":true} and keeps what it was sent. */
async function listen(answer: (req: IncomingMessage) => unknown = () => ({ ok: true })) {
  const seen: string[] = [];
  impostor = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      seen.push(`${req.method} ${req.url} ${JSON.stringify(req.headers)} ${body}`);
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify(answer(req)));
    });
  });
  await new Promise<void>((r) => impostor?.listen(0, "127.0.0.1", () => r()));
  return { port: (impostor.address() as AddressInfo).port, seen };
}

function serverFile(root: string, fields: Record<string, unknown>): void {
  writeFileSync(join(root, ".baton", "server.json"), `${JSON.stringify(fields)}\n`, { mode: 0o600 });
}

async function poll(root: string): Promise<{ code: number | null; out: any; stderr: string }> {
  const child = spawnNode(CLI, ["poll", "--timeout", "0", "--json", "--root", root], "baton poll");
  const exit = await child.exited;
  return { code: exit.code, out: JSON.parse(child.lines.join("\n")), stderr: child.stderr() };
}

describe("server identity", () => {
  it("baton poll never sends the token to a live process the server file names without a start time", async () => {
    const root = initWorkspace("baton-identity-");
    const { port, seen } = await listen();
    // This test process is alive and unrelated: exactly what a reused pid looks like.
    serverFile(root, { pid: process.pid, port, token: TOKEN, startedAt: "2026-01-01T00:00:00.000Z" });
    const r = await poll(root);
    expect(r.code, r.stderr).toBe(0);
    expect(r.out).toMatchObject({ lease: null, via: "database" });
    expect(seen.join("\n")).not.toContain(TOKEN);
  });

  it("nor to a process that cannot answer the challenge only the token holder can", async () => {
    const root = initWorkspace("baton-identity-");
    const { port, seen } = await listen((req) => ({ ok: true, proof: req.url?.includes("challenge") ? "0".repeat(64) : undefined }));
    // No start time to compare: the challenge decides.
    serverFile(root, { pid: process.pid, port, token: TOKEN, startedAt: "2026-01-01T00:00:00.000Z" });
    const r = await poll(root);
    expect(r.out.via).toBe("database");
    expect(seen.some((s) => s.includes("/v1/health?challenge="))).toBe(true);
    expect(seen.join("\n")).not.toContain(TOKEN);
  });

  it.each([
    ["does not match", { startTime: "1" }],
    ["was not recorded", {}],
  ])("a hook never hands its payload and token to a process whose start time %s", async (_what, startTime) => {
    const root = initWorkspace("baton-identity-", { "src/app.ts": "v1\n" });
    const { port, seen } = await listen();
    serverFile(root, { pid: process.pid, port, token: TOKEN, startedAt: "2026-01-01T00:00:00.000Z", ...startTime });
    const input = JSON.stringify({
      session_id: "agent-session-1",
      cwd: root,
      hook_event_name: "PreToolUse",
      tool_name: "Edit",
      tool_input: { file_path: join(root, "src/app.ts"), old_string: "v1", new_string: "v2" },
      tool_use_id: "toolu_1",
    });
    const r = cli(["hook", "claude", "PreToolUse"], { cwd: root, input, env: { BATON_HOOK_SERVER: "use" } });
    expect(r.code, r.stderr).toBe(0);
    await new Promise((res) => setTimeout(res, 100)); // anything buffered reaches the listener
    expect(seen).toEqual([]);
    // The hook ran in-process: the checkpoint exists.
    const sid = cli(["status", "--json", "--root", root]).json().sessions[0].sessionId;
    expect(cli(["checkpoints", "--session", sid, "--json", "--root", root]).json().checkpoints).toHaveLength(1);
  });

  it("doctor calls a server file whose pid was reused stale, as clients do", () => {
    const root = initWorkspace("baton-identity-");
    serverFile(root, { pid: process.pid, port: 1, token: TOKEN, startedAt: "2026-01-01T00:00:00.000Z", startTime: "1" });
    const findings = cli(["doctor", "--json", "--root", root]).json().findings as { code: string; message: string }[];
    const server = findings.filter((f) => f.code.startsWith("server_"));
    expect(server.map((f) => f.code)).toEqual(["server_file_stale"]);
    expect(server[0]?.message).toMatch(/now belongs to another process/);
  });
});
