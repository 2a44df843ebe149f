/**
 * Every failure Baton reports on purpose is a BatonError with a stable `code`. Callers check
 * the code (or `isBatonError`), never the class identity, so two installed copies still agree.
 * Messages say what to do next.
 */
export type ErrorCode =
  | "bad_input" // malformed arguments, JSON or options
  | "invalid_transition" // the flow does not allow this event in the current phase
  | "conflict" // same idempotency key, different body
  | "not_found" // no such session / event
  | "ambiguous_session" // several active sessions and none named
  | "session_exists" // session id already used
  | "source_dirty" // markers remain in the session's files
  | "flow_invalid" // a user flow file fails validation
  | "unknown_flow"
  | "workspace_not_found"
  | "workspace_unwritable"
  | "migration_failed"
  | "schema_too_new"
  | "storage_busy" // the database stayed locked past the busy timeout
  | "io_error" // disk or fsync failure: fatal, never retried
  | "internal";

/** Exit codes of the CLI, documented in docs/cli.md. */
export const EXIT_CODES: Readonly<Record<ErrorCode, number>> = Object.freeze({
  bad_input: 2,
  flow_invalid: 2,
  unknown_flow: 2,
  invalid_transition: 3,
  conflict: 3,
  source_dirty: 3,
  session_exists: 3,
  ambiguous_session: 3,
  not_found: 4,
  workspace_not_found: 4,
  workspace_unwritable: 5,
  migration_failed: 5,
  schema_too_new: 5,
  storage_busy: 5,
  io_error: 5,
  internal: 1,
});

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
    return { code: this.code, message: this.message, ...this.details };
  }
}

export function isBatonError(value: unknown, code?: ErrorCode): value is BatonError {
  if (typeof value !== "object" || value === null) return false;
  const v = value as { name?: unknown; code?: unknown };
  return v.name === "BatonError" && typeof v.code === "string" && (code === undefined || v.code === code);
}

export function badInput(message: string, details: Record<string, unknown> = {}): BatonError {
  return new BatonError("bad_input", message, details);
}
