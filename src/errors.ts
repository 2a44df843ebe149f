/**
 * Every failure Baton reports on purpose is a BatonError with a stable `code`. Callers check
 * the code (or `isBatonError`), never the class identity, so two installed copies still agree.
 * Messages say what to do next. docs/errors.md says what each code means and what to do
 * (test/docs.test.ts fails when a code is missing there).
 */
export type ErrorCode =
  | "bad_input" // malformed arguments, JSON or options
  | "invalid_transition" // the flow does not allow this event in the current phase
  | "conflict" // the state changed since the caller looked (a previewed plan, an edited lesson), or one id was sent with two bodies
  | "config_changed" // the server's configuration or flows changed since it started: the hook runs in its own process
  | "not_found" // no such session / event
  | "ambiguous_session" // several active sessions and none named
  | "session_exists" // session id already used
  | "source_dirty" // markers remain in the session's files
  | "flow_invalid" // a user flow file fails validation
  | "unknown_flow"
  | "workspace_not_found" // no .baton/ here: run `baton init`
  | "wrong_workspace" // the server that answered serves another workspace
  | "wrong_store" // the server serves another store than the hook's environment names: the hook runs in its own process
  | "wrong_settings" // the server was started with other settings (BATON_DURABILITY…) than the hook's environment sets: the hook runs in its own process
  | "answer_in_process" // a hook client's hook is one its own process answers (its environment, its event): the client starts it
  | "workspace_unwritable"
  | "migration_failed"
  | "schema_too_new"
  | "storage_busy" // the database stayed locked past the busy timeout, or a write raced another and should be retried
  | "shutting_down" // the server is stopping: retry in this process or against the next server
  | "storage_unavailable" // a networked store (PostgreSQL) is down or unreachable
  | "io_error" // disk or fsync failure: fatal, never retried
  | "deadline_exceeded" // a step meant to precede something (a checkpoint before a tool) could not commit in time: nothing was changed
  | "checkpoint_not_found" // no such checkpoint (or not that many steps to roll back); formerly `no_snapshot`
  | "checkpoint_pruned" // the checkpoint was pruned by retention; details name the oldest available; formerly `snapshot_expired`
  | "unsafe_path" // a path outside the workspace, in .baton/ or .git, or through a symlink
  | "blob_corrupt" // a stored blob does not match its hash (or does not decompress)
  | "blob_missing" // a checkpoint or artifact names a blob that is not in .baton/blobs/
  | "lease_lost" // the lease expired and its work went to someone else, or was finished
  | "lock_lost" // the lock was taken over (a newer epoch holds it) or released: the guarded write was refused
  | "lock_held" // a live holder has the lock (no proof it is stale), and waiting for it timed out
  | "target_mismatch" // the target observed is not the one the session is bound to
  | "run_crashed" // the run was marked crashed (stale heartbeat or dead pid); its work went back to the queue
  | "spiral_paused" // a spiral paused this agent (its lane, or the whole session): only reading works until the user unpauses
  | "server_running" // another `baton serve` already serves this workspace
  | "server_unreachable" // the workspace's server named in .baton/server.json did not answer
  | "unauthorized" // HTTP: missing or wrong token
  | "forbidden" // HTTP: foreign Host or Origin
  | "payload_too_large" // HTTP: request body over the limit
  | "unsupported_media_type" // HTTP: a write without Content-Type: application/json
  | "lesson_not_found" // no lesson with that id in LESSONS.md
  | "lessons_file_invalid" // `baton lessons check`: LESSONS.md has blocks that do not parse
  | "export_failed" // an OTLP endpoint refused the ledger export or could not be reached
  | "command_not_found" // `lock run`: the command to run does not exist (exit 127, as shells)
  | "command_not_executable" // `lock run`: the command exists but cannot be run (exit 126, as shells)
  | "internal";

/** Exit codes of the CLI, documented in docs/cli.md and docs/errors.md. */
export const EXIT_CODES: Readonly<Record<ErrorCode, number>> = Object.freeze({
  bad_input: 2,
  flow_invalid: 2,
  unknown_flow: 2,
  invalid_transition: 3,
  conflict: 3,
  config_changed: 3,
  wrong_workspace: 3,
  wrong_store: 3,
  wrong_settings: 3,
  answer_in_process: 3,
  source_dirty: 3,
  session_exists: 3,
  ambiguous_session: 3,
  lease_lost: 3,
  lock_lost: 3,
  lock_held: 3,
  spiral_paused: 3,
  target_mismatch: 3,
  run_crashed: 3,
  server_running: 3,
  unauthorized: 2,
  forbidden: 2,
  payload_too_large: 2,
  unsupported_media_type: 2,
  unsafe_path: 2,
  checkpoint_not_found: 4,
  checkpoint_pruned: 4,
  not_found: 4,
  workspace_not_found: 4,
  workspace_unwritable: 5,
  migration_failed: 5,
  schema_too_new: 5,
  storage_busy: 5,
  shutting_down: 5,
  storage_unavailable: 5,
  io_error: 5,
  deadline_exceeded: 5,
  blob_corrupt: 5,
  blob_missing: 5,
  server_unreachable: 5,
  lesson_not_found: 4,
  lessons_file_invalid: 2,
  export_failed: 5,
  command_not_found: 127,
  command_not_executable: 126,
  internal: 1,
});

/**
 * Codes renamed so that one word means one thing ("snapshot" is the fold cache; these are
 * about checkpoints). For one release an error with a new code also carries its former one in
 * JSON (`formerCode`), and `isBatonError(err, "<former>")` still matches, so callers can move
 * at their own pace. Removed in 0.3.
 */
export const FORMER_CODES = Object.freeze({
  no_snapshot: "checkpoint_not_found",
  snapshot_expired: "checkpoint_pruned",
} as const satisfies Record<string, ErrorCode>);

export type FormerErrorCode = keyof typeof FORMER_CODES;

const FORMER_OF: Partial<Record<ErrorCode, FormerErrorCode>> = Object.fromEntries(
  Object.entries(FORMER_CODES).map(([former, code]) => [code, former as FormerErrorCode]),
);

export class BatonError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;
  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "BatonError";
    this.code = code;
    this.details = details;
  }
  toJSON(): { code: ErrorCode; message: string } & Record<string, unknown> {
    const former = FORMER_OF[this.code];
    return former === undefined
      ? { code: this.code, message: this.message, ...this.details }
      : { code: this.code, formerCode: former, message: this.message, ...this.details };
  }
}

/** Whether `value` is a BatonError (with `code`, when given; a former code matches its new name). */
export function isBatonError(value: unknown, code?: ErrorCode | FormerErrorCode): value is BatonError {
  if (typeof value !== "object" || value === null) return false;
  const v = value as { name?: unknown; code?: unknown };
  if (v.name !== "BatonError" || typeof v.code !== "string") return false;
  if (code === undefined) return true;
  const wanted = (FORMER_CODES as Record<string, ErrorCode>)[code] ?? code;
  return v.code === wanted;
}

export function badInput(message: string, details: Record<string, unknown> = {}): BatonError {
  return new BatonError("bad_input", message, details);
}

/**
 * Refuse a step past its deadline (ms since the epoch): `deadline_exceeded`, nothing changed.
 * Checked right before a commit that must land before something else happens (the checkpoint
 * before an agent's tool runs), so it never lands after.
 */
export function checkDeadline(deadline: number | undefined, what: string, now = Date.now()): void {
  if (deadline === undefined || now <= deadline) return;
  throw new BatonError(
    "deadline_exceeded",
    `${what} could not be committed by its deadline (${new Date(deadline).toISOString()}, ${now - deadline} ms ago); nothing was changed`,
    { deadline: new Date(deadline).toISOString() },
  );
}
