/** Errors over HTTP: the CLI's `{"error": {code, message, ...details}}` body with a fitting status. */
import { redactedJson } from "../core/error-json.js";
import { BatonError, type ErrorCode, EXIT_CODES, isBatonError } from "../errors.js";

const STATUS: Partial<Record<ErrorCode, number>> = {
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  workspace_not_found: 404,
  payload_too_large: 413,
  unsupported_media_type: 415,
  storage_busy: 503,
  // A server store that is down, frozen or unreachable: retry once it is back.
  storage_unavailable: 503,
  shutting_down: 503,
  deadline_exceeded: 503,
};

/** The HTTP status for an error code: explicit ones above, else by the CLI's exit-code class. */
export function httpStatus(code: string): number {
  const explicit = STATUS[code as ErrorCode];
  if (explicit !== undefined) return explicit;
  switch (EXIT_CODES[code as ErrorCode]) {
    case 2:
      return 400; // bad input: fix the request
    case 3:
      return 409; // refused by the session's state (invalid transition, conflict, lost lease)
    case 4:
      return 404;
    default:
      return 500;
  }
}

export interface ErrorBody {
  error: { code: string; message: string } & Record<string, unknown>;
}

/** The response body and status of any thrown value; unexpected failures reveal no internals. */
export function errorResponse(err: unknown): { status: number; body: ErrorBody } {
  // A message can quote what the caller sent (a command, a header): redacted on the way out.
  if (isBatonError(err)) return { status: httpStatus(err.code), body: { error: redactedJson(err) } };
  const e = new BatonError("internal", "the server failed to handle this request; see the server's log");
  return { status: 500, body: { error: e.toJSON() } };
}
