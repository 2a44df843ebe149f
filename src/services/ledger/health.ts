/**
 * Counting the trajectory ledger's failed writes, where the doctor can see them. A failed write
 * may BE the database failing, so the count lives in a small file beside it
 * (`.baton/ledger-failures.json`, replaced atomically: write a temp file, rename) plus an
 * in-memory count of failures that could not reach the file either. Every process adds to the
 * same file, so the count survives restarts; two processes failing at the same instant may
 * lose one increment (the file is read, incremented and replaced without a lock).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileWhole } from "../../platform/whole-file.js";

export const LEDGER_FAILURES_FILE = "ledger-failures.json";

export interface LedgerHealth {
  /** Ledger writes that failed (the tool call itself was never failed), ever, in this workspace. */
  writeFailures: number;
  /** The last failure's message (redacted), or null. */
  lastError: string | null;
  /** When it happened (ISO-8601), or null. */
  lastAt: string | null;
}

const NONE: LedgerHealth = Object.freeze({ writeFailures: 0, lastError: null, lastAt: null });

export class LedgerHealthTracker {
  readonly file: string;
  readonly #now: () => Date;
  /** Failures this process could not write to the file. */
  #unpersisted = 0;
  #last: { error: string; at: string } | undefined;

  constructor(batonDir: string, now: () => Date) {
    this.file = join(batonDir, LEDGER_FAILURES_FILE);
    this.#now = now;
  }

  /**
   * Count one failed write, its message put through `redactText` (without it, or when it throws,
   * the message is "unknown error"). Never throws.
   */
  recordFailure(err: unknown, redactText?: (text: string) => string): void {
    let message: string;
    try {
      const raw =
        err instanceof Error
          ? `${(err as { code?: unknown }).code ? `${String((err as { code?: unknown }).code)}: ` : ""}${err.message}`
          : String(err);
      if (!redactText) throw new Error("no redaction");
      message = redactText(raw.replace(/\s+/g, " ")).slice(0, 500);
    } catch {
      message = "unknown error";
    }
    const at = this.#now().toISOString();
    this.#last = { error: message, at };
    try {
      const current = this.#read();
      const next: LedgerHealth = { writeFailures: current.writeFailures + 1, lastError: message, lastAt: at };
      writeFileWhole(this.file, `${JSON.stringify(next)}\n`, { sweep: true });
    } catch {
      this.#unpersisted++;
    }
  }

  /** Failures so far: the workspace's file plus this process's failures that could not reach it. */
  health(): LedgerHealth {
    const stored = this.#read();
    const h: LedgerHealth = { ...stored, writeFailures: stored.writeFailures + this.#unpersisted };
    if (this.#last && (h.lastAt === null || this.#last.at > h.lastAt)) {
      h.lastError = this.#last.error;
      h.lastAt = this.#last.at;
    }
    return h;
  }

  #read(): LedgerHealth {
    let text: string;
    try {
      text = readFileSync(this.file, "utf8");
    } catch {
      return { ...NONE };
    }
    try {
      const v = JSON.parse(text) as Partial<LedgerHealth>;
      return {
        writeFailures: typeof v.writeFailures === "number" && Number.isSafeInteger(v.writeFailures) ? v.writeFailures : 0,
        lastError: typeof v.lastError === "string" ? v.lastError : null,
        lastAt: typeof v.lastAt === "string" ? v.lastAt : null,
      };
    } catch {
      return { ...NONE };
    }
  }
}
