/** What every command gets: output mode, workspace selection, and a lazily opened Baton. */
import type { Baton } from "../api.js";
import { jsonBoundsProblem } from "../core/canonical.js";
import { envOptions } from "../env-options.js";
import { BatonError, EXIT_CODES, isBatonError } from "../errors.js";
import { type Paint, paintStderr, paintStdout } from "../platform/colour.js";
import { configTrust } from "../platform/config-file.js";
import { endedByClosedStdout, stdoutIsClosed, writeHuman, writeStderr, writeStdout } from "../platform/output.js";

export interface GlobalOptions {
  json?: boolean;
  root?: string;
  quiet?: boolean;
}

export class Ctx {
  readonly json: boolean;
  readonly root: string | undefined;
  /** `--quiet`: no human output on success (JSON under --json is still printed; errors still are). */
  readonly quiet: boolean;
  #baton: Promise<Baton> | undefined;

  constructor(opts: GlobalOptions) {
    this.json = opts.json === true;
    this.quiet = opts.quiet === true;
    this.root = opts.root ?? (process.env.BATON_ROOT || undefined);
  }

  /** Open the workspace's Baton. Commands other than `init` need an existing workspace. */
  open(create = false): Promise<Baton> {
    this.#baton ??= import("../compose.js").then(async ({ openBaton }) => {
      const { deprecated, ...env } = envOptions();
      for (const d of deprecated ?? []) process.stderr.write(`baton: ${d}\n`);
      const baton = await openBaton({ create, ...(this.root ? { root: this.root } : {}), ...env });
      warnUntrusted(baton.workspace.dir);
      return baton;
    });
    return this.#baton;
  }

  /**
   * The command is done and the process is about to exit. Queued writes are flushed, but the
   * database is not closed: every write is already committed, and closing the last connection
   * checkpoints the WAL (several fsyncs, 10-15 ms measured), which the next opener or an
   * automatic checkpoint does anyway.
   */
  async close(): Promise<void> {
    if (this.#baton) await (await this.#baton.catch(() => undefined))?.flush();
  }

  /**
   * Print a result: JSON on stdout under --json, else the human rendering (nothing under
   * --quiet), which may colour itself with `paint` (platform/colour.ts decides when).
   */
  out(value: unknown, human: (paint: Paint) => string): void {
    if (this.json) writeStdout(`${JSON.stringify(value)}\n`);
    else if (!this.quiet) writeHuman(`${human(paintStdout())}\n`);
  }
}

/**
 * Say on stderr when `.baton/config.json` asks for settings that are ignored because the user has
 * not trusted it (or it changed since): after an upgrade, or a `git pull`, the workspace would
 * otherwise quietly run on the defaults (its own SQLite file instead of the team's store).
 */
function warnUntrusted(batonDir: string): void {
  const t = configTrust(batonDir);
  if ((t.state !== "untrusted" && t.state !== "changed") || t.keys.length === 0) return;
  writeStderr(
    `${paintStderr()("yellow", "baton:")} ${t.file} ${t.state === "changed" ? "changed since you trusted it" : "is not trusted here"}, so its settings (${t.keys.join(", ")}) are ignored and the defaults apply; read it, then run \`baton trust\` [config_untrusted]\n`,
  );
}

/** Report an error the way the user asked, and return the process exit code. */
export function reportError(err: unknown, json: boolean): number {
  if (endedByClosedStdout(err)) return 0; // the reader stopped early (`| head -1`): output ended, nothing failed
  const e = isBatonError(err)
    ? err
    : new BatonError(
        "internal",
        `unexpected failure: ${err instanceof Error ? err.message : String(err)}; please report it with the command you ran`,
        {},
        { cause: err },
      );
  let said = false;
  if (json && !stdoutIsClosed()) {
    try {
      writeStdout(`${JSON.stringify({ error: e.toJSON() })}\n`);
      said = true;
    } catch (closed) {
      if (!endedByClosedStdout(closed)) throw closed;
    }
  }
  if (!said) {
    // Stdout closed by its reader (or not asked for): the failure still has to be said somewhere.
    writeStderr(`${paintStderr()("red", "baton:")} ${e.message} [${e.code}]\n`);
    if (e.code === "internal" && process.env.BATON_DEBUG && err instanceof Error) writeStderr(`${err.stack}\n`);
  }
  return EXIT_CODES[e.code] ?? 1;
}

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** A duration with its unit (`500ms`, `90s`, `30m`, `2h`) in milliseconds; undefined when not given. */
export function parseDurationOption(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(text.trim());
  const ms = m ? Math.round(Number(m[1]) * (UNITS[m[2] as string] as number)) : Number.NaN;
  if (!(ms > 0) || !Number.isSafeInteger(ms))
    throw new BatonError("bad_input", `${flag} must be a positive duration with its unit (500ms, 90s, 30m, 2h), got "${text}"`);
  return ms;
}

/** Parse a --data / --result JSON option into an object. */
export function parseJsonObject(text: string | undefined, flag: string): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new BatonError("bad_input", `${flag} is not valid JSON (${(err as Error).message}); e.g. ${flag} '{"key":"value"}'`);
  }
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new BatonError("bad_input", `${flag} must be a JSON object, e.g. ${flag} '{"key":"value"}'`);
  const problem = jsonBoundsProblem(v);
  if (problem) throw new BatonError("bad_input", `${flag}: ${problem}`);
  return v as Record<string, unknown>;
}

export function parseIntOption(text: string | undefined, flag: string, min = 0): number | undefined {
  if (text === undefined) return undefined;
  if (!/^-?\d+$/.test(text.trim())) throw new BatonError("bad_input", `${flag} must be a whole number, got "${text}"`);
  const n = Number(text);
  if (n < min) throw new BatonError("bad_input", `${flag} must be ≥ ${min}, got ${n}`);
  if (!Number.isSafeInteger(n)) throw new BatonError("bad_input", `${flag} must be at most ${Number.MAX_SAFE_INTEGER}, got ${text.trim()}`);
  return n;
}
