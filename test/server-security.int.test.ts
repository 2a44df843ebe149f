/**
 * The local server's security rules, each against a real `baton serve` child over plain HTTP:
 * credentials (the bearer token, single-use stream tickets, never a cookie), Host allowlist, Origin allowlist, JSON content type, size
 * limits, malformed input, loopback-only binding, the server file, and graceful shutdown.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { envSettings } from "../src/env-options.js";
import { allowedHosts, allowedOrigins, BAD_PORTS, checkRequest } from "../src/server/security.js";
import { cli, tempDir } from "./helpers.js";
import { api, liveSession, raw, rawBytes, type Served, serve } from "./server-helpers.js";

async function withServer(fn: (s: Served, root: string) => Promise<void>): Promise<void> {
  const root = tempDir();
  await liveSession(root);
  const s = await serve(root);
  try {
    await fn(s, root);
  } finally {
    await s.stop();
  }
}

/** The server is still up and the journal unchanged (nothing a refused request did stuck). */
async function stillUp(s: Served, lastSeq = 1): Promise<void> {
  const h = await raw(s.port, { path: "/v1/health" });
  expect(h.status, "the server answers health after the bad request").toBe(200);
  const session = (await api(s, "GET", "/v1/sessions/hero")).json();
  expect(session.snapshot.lastSeq, "refused requests appended nothing").toBe(lastSeq);
}

const goodEvent = JSON.stringify({ type: "generate", id: "g1", actor: "browser", data: {} });

describe("baton serve: security", () => {
  it("health is open and reveals nothing; everything else needs the token", async () => {
    await withServer(async (s) => {
      const h = await raw(s.port, { path: "/v1/health" });
      expect(h.status).toBe(200);
      expect(h.json()).toEqual({ ok: true });
      expect(h.headers["x-powered-by"]).toBeUndefined();

      const routes: [string, string, string?][] = [
        ["GET", "/v1/status"],
        ["GET", "/v1/sessions/hero"],
        ["GET", "/v1/sessions/hero/events"],
        ["GET", "/v1/sessions/hero/stream"],
        ["GET", "/v1/poll?timeout=0"],
        ["POST", "/v1/poll", JSON.stringify({ timeout: 0 })],
        ["POST", "/v1/sessions/hero/events", goodEvent],
        ["POST", "/v1/sessions", JSON.stringify({ flow: "task" })],
        ["POST", "/v1/leases/lse_x/ack", "{}"],
        ["POST", "/v1/leases/lse_x/nack", "{}"],
        ["POST", "/v1/leases/lse_x/heartbeat", "{}"],
        ["POST", "/v1/stream-tickets", "{}"],
        ["POST", "/v1/dashboard/session", "{}"],
        [
          "POST",
          "/v1/hooks/claude/PreToolUse",
          JSON.stringify({ requestId: "abcdefgh-1", root: "/", agentPid: 1, deadline: Date.now() + 60_000, event: {} }),
        ],
      ];
      const wrong = [undefined, "Bearer ", `Bearer ${s.token}x`, `Bearer ${"A".repeat(s.token.length)}`, `Basic ${s.token}`, s.token];
      for (const [method, path, body] of routes) {
        for (const auth of wrong) {
          const r = await raw(s.port, {
            method,
            path,
            headers: { ...(auth !== undefined ? { authorization: auth } : {}), ...(body ? { "content-type": "application/json" } : {}) },
            ...(body ? { body } : {}),
          });
          expect(r.status, `${method} ${path} with authorization ${JSON.stringify(auth)}`).toBe(401);
          expect(r.json().error.code).toBe("unauthorized");
          expect(r.text).not.toContain(s.token);
        }
      }
      expect((await api(s, "GET", "/v1/status")).status).toBe(200);
      await stillUp(s);
    });
  });

  it("a stream opens with a single-use ticket, never with a cookie or the token in its URL", async () => {
    await withServer(async (s) => {
      const open = (path: string) =>
        new Promise<{ status: number; type: string | undefined; cookie: unknown }>((resolve, reject) => {
          import("node:http").then(({ get }) => {
            const req = get({ host: "127.0.0.1", port: s.port, path, agent: false }, (res) => {
              resolve({ status: res.statusCode ?? 0, type: res.headers["content-type"], cookie: res.headers["set-cookie"] });
              res.destroy();
            });
            req.on("error", reject);
          }, reject);
        });
      // The token in a URL opens nothing, not even the stream.
      expect((await raw(s.port, { path: `/v1/status?token=${s.token}` })).status, "query token on a JSON route").toBe(401);
      expect((await open(`/v1/sessions/hero/stream?token=${s.token}`)).status, "query token on the stream").toBe(401);

      const ticket = async () => {
        const r = await api(s, "POST", "/v1/stream-tickets", {});
        expect(r.status).toBe(201);
        expect(r.headers["set-cookie"], "no cookie is ever set").toBeUndefined();
        expect(r.headers["cache-control"]).toBe("no-store");
        return r.json().ticket as string;
      };
      const t = await ticket();
      expect(await open(`/v1/sessions/hero/stream?ticket=${t}`)).toEqual({ status: 200, type: "text/event-stream", cookie: undefined });
      expect((await open(`/v1/sessions/hero/stream?ticket=${t}`)).status, "a ticket opens one stream, once").toBe(401);
      for (const path of ["/v1/dashboard/stream", "/v1/dashboard/sessions/hero/stream"])
        expect((await open(`${path}?ticket=${await ticket()}`)).status, path).toBe(200);
      // A ticket opens exactly the stream routes: not a JSON read, not a write, not any path
      // that ends in /stream.
      for (const path of ["/v1/status", "/v1/sessions/stream", "/v1/status/stream", "/v1/sessions/hero/events/stream", "/v1/doctor"]) {
        const r = await raw(s.port, { path: `${path}?ticket=${await ticket()}` });
        expect(r.status, `ticket on ${path}`).toBe(401);
      }
      const write = await raw(s.port, {
        method: "POST",
        path: `/v1/sessions/hero/events?ticket=${await ticket()}`,
        headers: { "content-type": "application/json" },
        body: goodEvent,
      });
      expect(write.status, "a ticket never authorizes a write").toBe(401);

      // A cookie holding the token (what this server used to set) opens nothing.
      const cookie = `baton_token_${s.port}=${s.token}`;
      expect((await raw(s.port, { path: "/v1/status", headers: { cookie } })).status, "cookie on a read").toBe(401);
      expect((await raw(s.port, { path: "/v1/sessions/hero/events", headers: { cookie } })).status).toBe(401);

      // Leasing changes state: a GET never leases, even with the bearer token.
      expect((await api(s, "POST", "/v1/sessions/hero/events", { type: "generate", actor: "browser" })).status).toBe(201);
      expect((await api(s, "GET", "/v1/poll?timeout=0")).status, "not even a GET with the bearer token").toBe(400);
      const leased = (await api(s, "POST", "/v1/poll", { timeout: 0 })).json().lease;
      expect(leased, "the work is still there for the real agent").toMatchObject({ attempt: 1, item: { kind: "generate" } });

      // Every /v1 answer: not cached, not sniffed, not framed.
      for (const r of [await api(s, "GET", "/v1/status"), await raw(s.port, { path: "/v1/status" })]) {
        expect(r.headers["cache-control"]).toBe("no-store");
        expect(r.headers["x-content-type-options"]).toBe("nosniff");
        expect(r.headers["x-frame-options"]).toBe("DENY");
      }
      await stillUp(s, 2);
    });
  });

  it("only our exact loopback Host values are answered (DNS rebinding)", async () => {
    await withServer(async (s) => {
      const auth = { authorization: `Bearer ${s.token}` };
      for (const host of [`127.0.0.1:${s.port}`, `localhost:${s.port}`, `[::1]:${s.port}`, `LOCALHOST:${s.port}`]) {
        const r = await raw(s.port, { path: "/v1/status", headers: { ...auth, host } });
        expect(r.status, `Host ${host}`).toBe(200);
      }
      const foreign = [
        `evil.example:${s.port}`,
        `localhost6:${s.port}`,
        `127.0.0.2:${s.port}`,
        `127.0.0.1:${s.port + 1}`,
        "127.0.0.1",
        "localhost",
        `localhost.:${s.port}`,
        `127.0.0.1:${s.port}.evil.example`,
        `0.0.0.0:${s.port}`,
        "",
      ];
      for (const host of foreign) {
        for (const path of ["/v1/status", "/v1/health", "/"]) {
          const r = await raw(s.port, { path, headers: { ...auth, host } });
          expect(r.status, `Host ${JSON.stringify(host)} on ${path}`).toBe(403);
          expect(r.json().error.code).toBe("forbidden");
        }
      }
      const r = await raw(s.port, {
        method: "POST",
        path: "/v1/sessions/hero/events",
        headers: { ...auth, host: `evil.example:${s.port}`, "content-type": "application/json" },
        body: goodEvent,
      });
      expect(r.status).toBe(403);
      // HTTP/1.0 without any Host header.
      const noHost = await rawBytes(s.port, `GET /v1/health HTTP/1.0\r\n\r\n`);
      expect(noHost).toMatch(/^HTTP\/1\.[01] (400|403)/);
      await stillUp(s);
    });
  });

  it("on port 80, HTTP's default, the Host and Origin without a port are ours too (browsers and Node's client leave it out)", () => {
    const hosts = allowedHosts(80);
    const cfg = { hosts, origins: allowedOrigins(80), maxBodyBytes: 1024 };
    const ask = (host: string, origin?: string) =>
      checkRequest({ method: "GET", host, origin, contentType: undefined, contentLength: undefined }, cfg);
    for (const host of ["127.0.0.1", "localhost", "[::1]", "127.0.0.1:80"]) expect(ask(host, `http://${host}`), host).toBeUndefined();
    for (const host of ["127.0.0.2", "evil.example", "127.0.0.1:8080"]) expect(ask(host)?.code, host).toBe("forbidden");
    // Elsewhere the port must be there: a bare name is another port's (80's).
    expect([...allowedHosts(8080)].some((h) => !h.endsWith(":8080"))).toBe(false);
  });

  it("refuses a port browsers will not connect to (the fetch standard's bad ports), before anything starts; never reuses one it remembered", async () => {
    const root = tempDir();
    for (const port of ["6697", "10080", "22"]) {
      const r = cli(["--root", root, "--json", "serve", "--port", port]);
      expect([r.code, r.json().error.code], port).toEqual([2, "bad_input"]);
      expect(r.json().error.message).toMatch(/bad ports/);
    }
    // An older build took --port 6000 and remembered it: the next start takes another.
    expect(cli(["--root", root, "init"]).code).toBe(0);
    writeFileSync(join(root, ".baton", "server.key"), `${JSON.stringify({ token: "t".repeat(43), port: 6000 })}\n`);
    const s = await serve(root);
    try {
      expect(s.port).not.toBe(6000);
      expect(BAD_PORTS.has(s.port)).toBe(false);
    } finally {
      await s.stop();
    }
  });

  it("BAD_PORTS is what Node's own fetch refuses: each of them, and none of their neighbours", async () => {
    const refused = async (port: number) => {
      try {
        await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2000) });
        return false;
      } catch (err) {
        return (err as Error & { cause?: Error }).cause?.message === "bad port";
      }
    };
    for (const port of BAD_PORTS) {
      expect(await refused(port), String(port)).toBe(true);
      for (const near of [port - 1, port + 1]) if (near > 0 && !BAD_PORTS.has(near)) expect(await refused(near), String(near)).toBe(false);
    }
  });

  it("a present Origin must be one of ours; Origin: null is refused; no CORS headers ever", async () => {
    await withServer(async (s) => {
      const auth = { authorization: `Bearer ${s.token}` };
      for (const origin of [`http://127.0.0.1:${s.port}`, `http://localhost:${s.port}`, `http://[::1]:${s.port}`]) {
        const r = await raw(s.port, { path: "/v1/status", headers: { ...auth, origin } });
        expect(r.status, `Origin ${origin}`).toBe(200);
        expect(r.headers["access-control-allow-origin"]).toBeUndefined();
      }
      const foreign = [
        "null",
        "http://evil.example",
        `http://evil.example:${s.port}`,
        `https://127.0.0.1:${s.port}`,
        `http://127.0.0.1:${s.port + 1}`,
        `http://localhost6:${s.port}`,
        "file://",
        "",
      ];
      for (const origin of foreign) {
        const get = await raw(s.port, { path: "/v1/status", headers: { ...auth, origin } });
        expect(get.status, `GET with Origin ${JSON.stringify(origin)}`).toBe(403);
        const post = await raw(s.port, {
          method: "POST",
          path: "/v1/sessions/hero/events",
          headers: { ...auth, origin, "content-type": "application/json" },
          body: goodEvent,
        });
        expect(post.status, `POST with Origin ${JSON.stringify(origin)}`).toBe(403);
        expect(post.headers["access-control-allow-origin"]).toBeUndefined();
        const preflight = await raw(s.port, {
          method: "OPTIONS",
          path: "/v1/sessions/hero/events",
          headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "authorization,content-type" },
        });
        expect(preflight.status, `preflight from ${JSON.stringify(origin)}`).toBeGreaterThanOrEqual(400);
        expect(preflight.headers["access-control-allow-origin"]).toBeUndefined();
        expect(preflight.headers["access-control-allow-headers"]).toBeUndefined();
      }
      await stillUp(s);
    });
  });

  it("--allow-origin admits exactly the origins named, with exact-origin CORS and no credentials", async () => {
    const root = tempDir();
    await liveSession(root);
    const bad = cli(["--root", root, "--json", "serve", "--allow-origin", "null"]);
    expect(bad.code, bad.stdout).toBe(2);
    expect(bad.json().error.code).toBe("bad_input");
    for (const o of ["*", "http://localhost:5173/app", "localhost:5173", "ftp://localhost:5173"]) {
      expect(cli(["--root", root, "--json", "serve", "--allow-origin", o]).code, o).toBe(2);
    }
    const s = await serve(root, ["--allow-origin", "http://localhost:5173", "--allow-origin", "HTTP://Dev.Example:8080"]);
    try {
      const auth = { authorization: `Bearer ${s.token}` };
      for (const origin of ["http://localhost:5173", "http://dev.example:8080"]) {
        const r = await raw(s.port, { path: "/v1/status", headers: { ...auth, origin } });
        expect(r.status, origin).toBe(200);
        expect(r.headers["access-control-allow-origin"]).toBe(origin);
        expect(r.headers.vary).toBe("Origin");
        expect(r.headers["access-control-allow-credentials"]).toBeUndefined();
        const pre = await raw(s.port, {
          method: "OPTIONS",
          path: "/v1/sessions/hero/events",
          headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "authorization,content-type" },
        });
        expect(pre.status).toBe(204);
        expect(pre.headers["access-control-allow-origin"]).toBe(origin);
        expect(pre.headers["access-control-allow-headers"]).toBe("authorization, content-type, last-event-id");
        expect(pre.headers["access-control-allow-credentials"]).toBeUndefined();
      }
      const noToken = await raw(s.port, { path: "/v1/status", headers: { origin: "http://localhost:5173" } });
      expect(noToken.status, "an allowed origin still needs the token").toBe(401);
      for (const origin of ["http://localhost:5174", "https://localhost:5173", "null", "http://evil.example"]) {
        const r = await raw(s.port, { path: "/v1/status", headers: { ...auth, origin } });
        expect(r.status, origin).toBe(403);
        expect(r.headers["access-control-allow-origin"]).toBeUndefined();
      }
      await stillUp(s);
    } finally {
      await s.stop();
    }
  });

  it("writes need Content-Type: application/json", async () => {
    await withServer(async (s) => {
      for (const type of [
        undefined,
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/jsonx",
      ]) {
        const r = await raw(s.port, {
          method: "POST",
          path: "/v1/sessions/hero/events",
          headers: { authorization: `Bearer ${s.token}`, ...(type ? { "content-type": type } : {}) },
          body: goodEvent,
        });
        expect(r.status, `Content-Type ${type}`).toBe(415);
        expect(r.json().error.code).toBe("unsupported_media_type");
      }
      await stillUp(s);
      const ok = await raw(s.port, {
        method: "POST",
        path: "/v1/sessions/hero/events",
        headers: { authorization: `Bearer ${s.token}`, "content-type": "Application/JSON; charset=utf-8" },
        body: goodEvent,
      });
      expect(ok.status, ok.text).toBe(201);
      expect(ok.json()).toMatchObject({ seq: 2, id: "g1", duplicate: false, phase: "generating" });
    });
  });

  it("oversized bodies and headers are refused and the server stays up", async () => {
    await withServer(async (s) => {
      const big = JSON.stringify({ type: "generate", data: { blob: "x".repeat(300 * 1024) } });
      const declared = await raw(s.port, {
        method: "POST",
        path: "/v1/sessions/hero/events",
        headers: { authorization: `Bearer ${s.token}`, "content-type": "application/json" },
        body: big,
      });
      expect(declared.status).toBe(413);
      expect(declared.json().error.code).toBe("payload_too_large");
      const chunked = await raw(s.port, {
        method: "POST",
        path: "/v1/sessions/hero/events",
        headers: { authorization: `Bearer ${s.token}`, "content-type": "application/json", "transfer-encoding": "chunked" },
        body: big,
        chunked: true,
      });
      expect(chunked.status, "a chunked body is counted as it arrives").toBe(413);
      const lying = await raw(s.port, {
        method: "POST",
        path: "/v1/sessions/hero/events",
        headers: { authorization: `Bearer ${s.token}`, "content-type": "application/json", "content-length": "-1" },
      });
      expect(lying.status).toBeGreaterThanOrEqual(400);
      expect(lying.status).toBeLessThan(500);
      const headers = await raw(s.port, {
        path: "/v1/status",
        headers: { authorization: `Bearer ${s.token}`, "x-filler": "y".repeat(20_000) },
      });
      expect(headers.status).toBe(431);
      // A client that goes away mid-body, chunked or not, is its own failure: not logged as the server's.
      for (const framing of ['Transfer-Encoding: chunked\r\n\r\n8\r\n{"type":\r\n', 'Content-Length: 100\r\n\r\n{"type":']) {
        const sock = connect(s.port, "127.0.0.1");
        await new Promise<void>((resolve) => sock.once("connect", () => resolve()));
        sock.write(
          `POST /v1/sessions/hero/events HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nAuthorization: Bearer ${s.token}\r\nContent-Type: application/json\r\n${framing}`,
        );
        await new Promise((r) => setTimeout(r, 100));
        sock.resetAndDestroy();
      }
      await stillUp(s);
      expect(s.child.stderr()).not.toMatch(/failed:|ECONNRESET/);
    });
  });

  it("malformed input gets a 4xx and changes nothing", async () => {
    await withServer(async (s) => {
      const post = (body: string, path = "/v1/sessions/hero/events") =>
        raw(s.port, { method: "POST", path, headers: { authorization: `Bearer ${s.token}`, "content-type": "application/json" }, body });
      const cases: [string, string, number][] = [
        ["not JSON", "{type: generate", 400],
        ["a JSON array", "[1,2]", 400],
        ["a JSON string", '"generate"', 400],
        ["no type", "{}", 400],
        ["an invalid type", '{"type":"DROP TABLE"}', 400],
        ["data not an object", '{"type":"generate","data":[1]}', 400],
        ["a bad revision", '{"type":"checkpoint","revision":-1}', 400],
        ["a type the flow does not know", '{"type":"explode"}', 400],
        ["an event the phase does not allow", '{"type":"accept"}', 409],
        ["invalid UTF-8", "\xff\xfe{", 400],
      ];
      for (const [what, body, status] of cases) {
        const r = await post(body);
        expect(r.status, `${what}: ${r.text}`).toBe(status);
        expect(r.json().error.code, what).toEqual(expect.any(String));
      }
      expect((await post(goodEvent, "/v1/sessions/nope/events")).status).toBe(404);
      expect((await post("{}", "/v1/leases/lse_missing/ack")).status).toBeGreaterThanOrEqual(400);
      expect((await post('{"delayMs":"soon"}', "/v1/leases/lse_missing/nack")).status).toBe(400);
      expect((await api(s, "POST", "/v1/poll", { timeout: "abc" })).status).toBe(400);
      expect((await api(s, "POST", "/v1/poll", { kinds: "generate" })).status).toBe(400);
      expect((await api(s, "POST", "/v1/poll", { leaseMs: 0 })).status).toBe(400);
      expect((await api(s, "GET", "/v1/sessions/hero/events?after=-3")).status).toBe(400);
      expect((await api(s, "GET", "/v1/sessions/%E0%A4%A")).status).toBeLessThan(500);
      expect((await api(s, "GET", "/v1/nothing-here")).status).toBe(404);
      expect((await api(s, "DELETE", "/v1/sessions/hero", {})).status).toBe(404);
      for (const junk of [
        "GARBAGE\r\n\r\n",
        "GET / HTTP/9.9\r\nHost: x\r\n\r\n",
        "\x00\x01\x02\r\n\r\n",
        `GET /${"a".repeat(20_000)} HTTP/1.1\r\n\r\n`,
      ]) {
        const out = await rawBytes(s.port, junk);
        expect(out, JSON.stringify(junk.slice(0, 30))).toMatch(/^HTTP\/1\.1 4\d\d/);
      }
      await stillUp(s);
    });
  });

  it("deep and wide JSON to every route gets a clear 4xx, never a 5xx, and changes nothing", async () => {
    await withServer(async (s) => {
      // Each body is otherwise valid for the events route, so only its shape can refuse it.
      const event = (data: string) => `{"type":"generate","actor":"browser","data":{"x":${data}}}`;
      const deep = (n: number) => event(`${"[".repeat(n)}${"]".repeat(n)}`);
      const deepObject = (n: number) => event(`${'{"a":'.repeat(n)}1${"}".repeat(n)}`);
      const bodies: [string, string][] = [
        ["4,000 levels of arrays (10 KB)", deep(4_000)],
        ["4,000 levels of objects", deepObject(4_000)],
        ["65 levels", deep(63)],
        ["110,000 values", event(`[${new Array(110_000).fill("0").join(",")}]`)],
      ];
      const routes = [
        "/v1/sessions",
        "/v1/sessions/hero/events",
        "/v1/poll",
        "/v1/leases/lse_x/ack",
        "/v1/leases/lse_x/nack",
        "/v1/leases/lse_x/heartbeat",
        "/v1/stream-tickets",
        "/v1/hooks/claude/PreToolUse",
      ];
      for (const route of routes) {
        for (const [what, body] of bodies) {
          const r = await raw(s.port, {
            method: "POST",
            path: route,
            headers: { authorization: `Bearer ${s.token}`, "content-type": "application/json" },
            body,
          });
          expect(r.status, `${what} to ${route}: ${r.text.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
          expect(r.status, `${what} to ${route}: ${r.text.slice(0, 200)}`).toBeLessThan(500);
          expect(r.json().error.code, `${what} to ${route}`).toMatch(/^(bad_input|payload_too_large)$/);
        }
      }
      const r = await raw(s.port, {
        method: "POST",
        path: "/v1/sessions/hero/events",
        headers: { authorization: `Bearer ${s.token}`, "content-type": "application/json" },
        body: deep(4_000),
      });
      expect(r.json().error.message).toMatch(/nested deeper than 64 levels/);
      await stillUp(s);
    });
  });

  it("binds 127.0.0.1 only and keeps its token in a 0600 server file", async () => {
    await withServer(async (s, root) => {
      const file = join(root, ".baton", "server.json");
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const info = JSON.parse(readFileSync(file, "utf8"));
      expect(info).toEqual({
        pid: s.pid,
        port: s.port,
        token: s.token,
        startedAt: expect.any(String),
        startTime: expect.any(String),
        // The build: hooks of another build do not use this server.
        version: expect.stringMatching(/^\d+\.\d+\.\d+.*\+[0-9a-f]{12}$/),
        // What its environment set: hooks and status --json with other settings answer themselves.
        settings: envSettings(process.env),
      });
      const stat = readFileSync(`/proc/${s.pid}/stat`, "utf8");
      expect(info.startTime, "the server's own start time, so a reused pid is not taken for it").toBe(
        stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19],
      );
      expect(statSync(join(root, ".baton", "server.key")).mode & 0o777).toBe(0o600);
      const others = Object.values(networkInterfaces())
        .flat()
        .filter((i) => i && !i.internal && i.family === "IPv4")
        .map((i) => i?.address as string);
      for (const addr of others) {
        const err = await new Promise<string>((resolve) => {
          import("node:net").then(({ connect }) => {
            const sock = connect(s.port, addr);
            sock.on("connect", () => {
              sock.destroy();
              resolve("connected");
            });
            sock.on("error", (e) => resolve((e as NodeJS.ErrnoException).code ?? "error"));
          });
        });
        expect(err, `connecting to ${addr}:${s.port}`).toBe("ECONNREFUSED");
      }
    });
  });

  it("a second server refuses; a stale server file is replaced; SIGINT and SIGTERM stop it cleanly", async () => {
    const root = tempDir();
    await liveSession(root);
    const first = await serve(root);
    const file = join(root, ".baton", "server.json");
    try {
      const second = cli(["--root", root, "--json", "serve"]);
      expect(second.code, second.stdout + second.stderr).toBe(3);
      expect(second.json().error).toMatchObject({ code: "server_running", pid: first.pid, port: first.port });
      // A long-poll in flight is answered when the server shuts down.
      const poll = api(first, "POST", "/v1/poll", { timeout: 60_000 });
      await new Promise((r) => setTimeout(r, 100));
      const exit = await first.stop("SIGTERM");
      expect(exit.code).toBe(0);
      const polled = await poll;
      expect(polled.status, polled.text).toBeLessThan(500);
      expect(existsSync(file), "server.json removed on clean exit").toBe(false);
    } finally {
      await first.stop("SIGKILL");
    }

    // A file naming a dead process is stale.
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    writeFileSync(file, JSON.stringify({ pid: Number(dead.stdout), port: 1, token: "old", startedAt: "2020-01-01T00:00:00Z" }), {
      mode: 0o600,
    });
    // ...and the temp files a server killed mid-write left beside its files are swept by the next.
    const temps = ["server.json", "server.key"].map((f) => join(root, ".baton", `${f}.${Number(dead.stdout)}-0123456789ab.tmp`));
    for (const t of temps) writeFileSync(t, "half", { mode: 0o600 });
    const next = await serve(root);
    try {
      const info = JSON.parse(readFileSync(file, "utf8"));
      expect(info.pid).toBe(next.pid);
      for (const t of temps) expect(existsSync(t), t).toBe(false);
      expect((await api(next, "GET", "/v1/status")).status).toBe(200);
      const exit = await next.stop("SIGINT");
      expect(exit.code).toBe(0);
      expect(existsSync(file)).toBe(false);
    } finally {
      await next.stop("SIGKILL");
    }

    // A live pid that does not answer health on its port is a reused pid, not a server.
    writeFileSync(file, JSON.stringify({ pid: process.pid, port: 1, token: "old", startedAt: "2020-01-01T00:00:00Z" }), { mode: 0o600 });
    const third = await serve(root);
    try {
      expect(JSON.parse(readFileSync(file, "utf8")).pid).toBe(third.pid);
    } finally {
      await third.stop();
    }
  });
});
