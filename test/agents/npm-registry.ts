/**
 * A local npm registry for installing agent-baton the way a user does (`opencode plugin
 * agent-baton`) with no network and no published agent-baton: it serves this checkout as
 * agent-baton (an `npm pack` of it, so exactly the files the package ships) and each of its
 * dependencies from the checkout's own node_modules (the versions package-lock.json records),
 * packed on request. Anything else is a 404. better-sqlite3 goes without its compiled build/:
 * installed with scripts off, as OpenCode installs a plugin, it is never built, and Baton's
 * OpenCode plugin must not need it.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO } from "./install.js";

export interface LocalRegistry {
  url: string;
  /** The paths asked for, in order. */
  requests: string[];
  stop(): Promise<void>;
}

/** The fields of a package.json an install reads. */
function manifestOf(json: Record<string, unknown>): Record<string, unknown> {
  const { scripts: _s, devDependencies: _d, ...rest } = json;
  return rest;
}

export async function localRegistry(): Promise<LocalRegistry> {
  const packDir = mkdtempSync(join(tmpdir(), "baton-pack-"));
  const packed = spawnSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", packDir], {
    cwd: REPO,
    encoding: "utf8",
    timeout: 300_000,
  });
  if (packed.status !== 0) throw new Error(`npm pack: ${packed.stderr}`);
  const tarball = join(packDir, JSON.parse(packed.stdout)[0].filename as string);
  const self = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as Record<string, unknown>;
  const lock = JSON.parse(readFileSync(join(REPO, "package-lock.json"), "utf8")).packages as Record<
    string,
    { version?: string; link?: boolean }
  >;
  const requests: string[] = [];
  let url = "";

  /** Each version the checkout holds of `name`, with its folder. */
  function versions(name: string): Map<string, string> {
    const out = new Map<string, string>();
    for (const [key, entry] of Object.entries(lock))
      if (key.endsWith(`node_modules/${name}`) && entry.version && !entry.link) out.set(entry.version, join(REPO, key));
    return out;
  }

  const server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? "/").split("?")[0] as string);
    requests.push(`${req.method} ${path}`);
    const tgz = /^\/-\/(.+)\/([^/]+)\.tgz$/.exec(path);
    if (req.method === "GET" && tgz) {
      const [name, version] = [tgz[1] as string, tgz[2] as string];
      if (name === self.name) {
        res.writeHead(200, { "content-type": "application/octet-stream" });
        res.end(readFileSync(tarball));
        return;
      }
      const dir = versions(name).get(version);
      if (!dir) {
        res.writeHead(404).end();
        return;
      }
      const exclude = ["--exclude=./node_modules", ...(name === "better-sqlite3" ? ["--exclude=./build"] : [])];
      const tar = spawn("tar", ["-czf", "-", ...exclude, "--transform", "s,^\\.,package,", "-C", dir, "."], {
        stdio: ["ignore", "pipe", "ignore"],
      });
      res.writeHead(200, { "content-type": "application/octet-stream" });
      tar.stdout.pipe(res);
      return;
    }
    const name = path.slice(1);
    if (req.method !== "GET" || !name || name.startsWith("-/")) {
      res.writeHead(404).end();
      return;
    }
    const found =
      name === self.name ? new Map([[self.version as string, REPO]]) : new Map([...versions(name)].map(([v, dir]) => [v, dir] as const));
    if (found.size === 0) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":"Not found"}');
      return;
    }
    const doc: Record<string, unknown> = {};
    let latest = "";
    for (const [version, dir] of found) {
      const json = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Record<string, unknown>;
      doc[version] = { ...manifestOf(json), name, version, dist: { tarball: `${url}/-/${name}/${version}.tgz` } };
      latest = version;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ name, "dist-tags": { latest }, versions: doc }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    stop: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
        rmSync(packDir, { recursive: true, force: true });
      }),
  };
}
