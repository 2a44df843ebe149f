/**
 * STATE.md beside each session (`.baton/sessions/<id>/STATE.md`) and `STATE.seq`, the journal
 * seq it shows, so a hook that fires before every model request rewrites it only when the
 * journal moved on (one snapshot read and one small file read when nothing changed).
 */

import { join } from "node:path";
import { renderStateMd } from "../../core/session/state-md.js";
import { atomicWrite, readCurrent } from "../../platform/safe-fs.js";
import type { Journal } from "../journal/journal.js";
import type { StatusService } from "./status.js";

export class StateFiles {
  readonly #journal: Journal;
  readonly #status: StatusService;
  readonly #batonDir: string;
  readonly #now: () => Date;

  constructor(journal: Journal, status: StatusService, batonDir: string, now: () => Date) {
    this.#journal = journal;
    this.#status = status;
    this.#batonDir = batonDir;
    this.#now = now;
  }

  /** STATE.md's text, with the same next action as status and resume (every fact, not only the journal's). */
  async render(sessionId: string): Promise<{ text: string; seq: number }> {
    const view = await this.#journal.read(sessionId);
    const status = await this.#status.describeSession(sessionId, view);
    return {
      text: renderStateMd(view.snapshot, status.nextAction, { generatedAt: this.#now().toISOString() }),
      seq: view.snapshot.lastSeq,
    };
  }

  /** Write STATE.md and STATE.seq atomically; returns STATE.md's path. */
  async write(sessionId: string): Promise<string> {
    const { text, seq } = await this.render(sessionId);
    // Written as a restore writes: never through a link in any component (platform/safe-fs.ts).
    // sessions/ and sessions/<id>/ are private like the rest of .baton/ (platform/private-files.ts), whatever the umask.
    atomicWrite(this.#batonDir, `sessions/${sessionId}/STATE.md`, Buffer.from(text), 0o600, true, 0o700);
    atomicWrite(this.#batonDir, `sessions/${sessionId}/STATE.seq`, Buffer.from(`${seq}\n`), 0o600, false, 0o700);
    return join(this.#batonDir, "sessions", sessionId, "STATE.md");
  }

  /** Write only when the journal moved on since the last write; the path when written. */
  async refresh(sessionId: string): Promise<string | undefined> {
    const cur = readCurrent(this.#batonDir, `sessions/${sessionId}/STATE.seq`, 64);
    const written = cur.kind === "file" ? Number(cur.content.toString("utf8").trim()) : Number.NaN;
    if (written === (await this.#journal.read(sessionId)).snapshot.lastSeq) return undefined;
    return this.write(sessionId);
  }
}
