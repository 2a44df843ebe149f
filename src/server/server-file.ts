/**
 * `.baton/server.json`, the server's side: claimed with O_EXCL so two servers starting at once
 * cannot both claim the workspace; mode 0600 because it holds the token; removed on clean exit.
 * A file naming a dead process is stale and replaced. Reading it and deciding whether the
 * process it names is the server is platform/server-file.ts (clients, hooks and doctor share it).
 *
 * `.baton/server.key` keeps the token and the port across restarts, so a page that was open
 * when the server stopped reconnects to the restarted server without being reloaded.
 */
import { unlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { BatonError } from "../errors.js";
import { readProcStat } from "../platform/process-facts.js";
import { readServerFile, type ServerInfo, serverAlive, serverFilePath } from "../platform/server-file.js";
import { writeFileWhole } from "../platform/whole-file.js";

/** This process's start time as the kernel records it (Linux), for `ServerInfo.startTime`. */
export function ownStartTime(): string | undefined {
  return readProcStat(process.pid)?.startTime;
}

/**
 * The answer to a client's challenge: only a holder of the token can compute it, and it names
 * the port, so a process on the port a stale file names cannot relay the real server's answer.
 */
export function challengeProof(token: string, port: number, challenge: string): string {
  const { createHmac } = createRequire(import.meta.url)("node:crypto") as typeof import("node:crypto");
  return createHmac("sha256", token).update(`baton-server-proof:${port}:${challenge}`).digest("hex");
}

/**
 * Claim the workspace for this server. Returns the live server that already holds it instead
 * of claiming. A stale file (dead pid, a pid reused by a process that does not answer on the
 * port, or unreadable) is removed and the claim retried once.
 */
export async function claimServerFile(
  batonDir: string,
  info: ServerInfo,
  isLive: (holder: ServerInfo) => Promise<boolean> = async (h) => serverAlive(h),
): Promise<{ claimed: true } | { claimed: false; holder: ServerInfo }> {
  const file = serverFilePath(batonDir);
  for (let attempt = 0; attempt < 2; attempt++) {
    if (writeFileWhole(file, `${JSON.stringify(info)}\n`, { exclusive: true, sweep: true })) return { claimed: true };
    const holder = readServerFile(batonDir);
    if (holder && holder.pid !== process.pid && (await isLive(holder))) return { claimed: false, holder };
    try {
      unlinkSync(file);
    } catch {
      // someone else removed it first; the retry decides
    }
  }
  const holder = readServerFile(batonDir);
  if (holder) return { claimed: false, holder };
  throw new BatonError("server_running", `could not create ${file}: another process keeps replacing it`);
}

export { ownServerKey, readServerKey, writeServerKey } from "../platform/server-key.js";
