/**
 * `.baton/server.key`: the token and port this workspace's server used last time (a restarted
 * server takes them again, so an open page reconnects, and Claude Code's HTTP hooks, which name
 * both in `.claude/settings.local.json`, reach it).
 */
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { basename, dirname, join } from "node:path";
import { trackedUnder } from "./baton-tracked.js";
import { writeFileWhole } from "./whole-file.js";
export const KEY_FILE = "server.key";

/** The token and port this workspace's server used last time, if any. */
export function readServerKey(batonDir: string): { token: string; port: number } | undefined {
  try {
    const v = JSON.parse(readFileSync(join(batonDir, KEY_FILE), "utf8")) as { token?: unknown; port?: unknown };
    if (typeof v.token === "string" && v.token.length >= 32 && typeof v.port === "number") return { token: v.token, port: v.port };
  } catch {
    // none yet, or unreadable: a new token is made
  }
  return undefined;
}

/**
 * The key a server may take again: `readServerKey`'s, unless its bytes are those git tracks. A key
 * that came with a repository (force-added by whoever made it) holds a token its author knows: a
 * server with it would answer them; then a new key replaces it. Once the server has written its
 * own, the file differs from git's copy and is kept across restarts, so a `git add -f` of it costs
 * one new token, not one per start (doctor's `baton_tracked` says to untrack it).
 */
export function ownServerKey(batonDir: string): { token: string; port: number } | undefined {
  const key = readServerKey(batonDir);
  if (key === undefined) return undefined;
  const tracked = trackedUnder(dirname(batonDir), basename(batonDir))?.find((e) => e.path.toLowerCase() === `.baton/${KEY_FILE}`);
  if (tracked === undefined) return key;
  let bytes: Buffer;
  try {
    bytes = readFileSync(join(batonDir, KEY_FILE));
  } catch {
    return undefined;
  }
  const blob = createHash(tracked.id.length === 64 ? "sha256" : "sha1")
    .update(`blob ${bytes.length}\0`)
    .update(bytes)
    .digest("hex");
  return blob === tracked.id ? undefined : key;
}

/** Persist the token and port (mode 0600, written atomically). */
export function writeServerKey(batonDir: string, key: { token: string; port: number }): void {
  writeFileWhole(join(batonDir, KEY_FILE), `${JSON.stringify(key)}\n`, { sweep: true });
}

/**
 * The workspace's key, made now when there is none: a new token and a port free at this moment
 * (the server takes it when it starts, if it is still free). `baton hooks install claude --http`
 * writes both into Claude Code's local settings, so the server must keep them from its first start.
 */
export async function ensureServerKey(batonDir: string): Promise<{ token: string; port: number; made: boolean }> {
  const key = ownServerKey(batonDir);
  if (key) return { ...key, made: false };
  const port = await freePort();
  const made = { token: randomBytes(32).toString("base64url"), port };
  writeServerKey(batonDir, made);
  return { ...made, made: true };
}

/** A loopback port free at this moment. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const addr = s.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}
