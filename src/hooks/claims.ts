/**
 * Exactly-once hand-off of a hook to the server: `.baton/hooks/claims/<request id>`.
 *
 * A hook process that sent its payload to the server may not hear back (the server is slow,
 * stopped or killed). It must then neither lose the hook nor run it a second time (a second
 * "undo that" would roll back one step too far). Whoever creates the claim file first (O_EXCL)
 * runs the hook: the server before it acts, the hook process before it falls back to running
 * the hook itself. The server writes its answer into the claim, so a process whose response
 * got lost can still print it. Claims are swept by the server after 10 minutes.
 */
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const CLAIMS_DIR = join("hooks", "claims");
export const CLAIM_MAX_AGE_MS = 10 * 60 * 1000;
const ID = /^[A-Za-z0-9_-]{8,80}$/;

export function isRequestId(id: unknown): id is string {
  return typeof id === "string" && ID.test(id);
}

/** A request id, unique enough within one workspace (no node:crypto on the hook's path). */
export function newRequestId(): string {
  return `${process.pid.toString(36)}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 12)}`;
}

function claimPath(batonDir: string, id: string): string {
  return join(batonDir, CLAIMS_DIR, id);
}

/** Create the claim; false when someone else holds it. Throws on other failures (unwritable workspace). */
export function claim(batonDir: string, id: string): boolean {
  const file = claimPath(batonDir, id);
  for (let attempt = 0; ; attempt++) {
    try {
      closeSync(openSync(file, "wx", 0o600));
      return true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EEXIST") return false;
      if (code !== "ENOENT" || attempt > 0) throw err;
      mkdirSync(join(batonDir, CLAIMS_DIR), { recursive: true, mode: 0o700 });
    }
  }
}

/** Record the answer in a claim this process holds. Never throws (the answer also goes back on the connection). */
export function recordAnswer(batonDir: string, id: string, stdout: string): void {
  try {
    // Whole or not at all: a hook process reading the claim must never see half an answer.
    const file = claimPath(batonDir, id);
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ stdout }), { mode: 0o600 });
    renameSync(tmp, file);
  } catch {
    // the hook process reads the response; the claim is the fallback
  }
}

/** The answer recorded in a claim, or undefined while the holder has not finished (or never will). */
export function claimedAnswer(batonDir: string, id: string): string | undefined {
  try {
    const v = JSON.parse(readFileSync(claimPath(batonDir, id), "utf8")) as { stdout?: unknown };
    return typeof v.stdout === "string" ? v.stdout : undefined;
  } catch {
    return undefined;
  }
}

/** Remove claims older than `maxAgeMs` (hook processes wait far less than that). */
export function sweepClaims(batonDir: string, maxAgeMs = CLAIM_MAX_AGE_MS, now = Date.now()): void {
  const dir = join(batonDir, CLAIMS_DIR);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) {
    try {
      if (statSync(join(dir, n)).mtimeMs < now - maxAgeMs) unlinkSync(join(dir, n));
    } catch {
      // gone already
    }
  }
}
