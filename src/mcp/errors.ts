/**
 * The one place where a failure becomes an MCP error. A tool answers with a result marked
 * `isError: true` whose text is `{"error": {code, message, ...details}}`, the body the CLI
 * prints under `--json`, so the agent sees Baton's code and the message that says what to do.
 * Resources and prompts have no error results: they fail with a JSON-RPC error whose `data`
 * carries the same body.
 */
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { redactedJson } from "../core/error-json.js";
import { redactText } from "../core/redaction/redact.js";
import { BatonError, type ErrorCode, EXIT_CODES, isBatonError } from "../errors.js";

export interface ToolErrorResult {
  [key: string]: unknown;
  isError: true;
  content: { type: "text"; text: string }[];
}

/** Any thrown value as a BatonError; what Baton did not throw on purpose is `internal`. */
export function asBatonError(err: unknown): BatonError {
  if (isBatonError(err)) return err;
  return new BatonError(
    "internal",
    `unexpected failure: ${err instanceof Error ? err.message : String(err)}; please report it with the tool call you made`,
    {},
    { cause: err },
  );
}

export function toolError(err: unknown): ToolErrorResult {
  return { isError: true, content: [{ type: "text", text: JSON.stringify({ error: redactedJson(asBatonError(err)) }) }] };
}

/** JSON-RPC codes: -32002 is MCP's "resource not found"; fixable requests are invalid params. */
const RESOURCE_NOT_FOUND = -32002;
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;

export function protocolError(err: unknown, opts: { resource?: boolean } = {}): McpError {
  const e = asBatonError(err);
  const exit = EXIT_CODES[e.code as ErrorCode] ?? 1;
  const code = opts.resource && e.code === "not_found" ? RESOURCE_NOT_FOUND : exit === 1 || exit === 5 ? INTERNAL_ERROR : INVALID_PARAMS;
  return new McpError(code, `${redactText(e.message)} [${e.code}]`, { error: redactedJson(e) });
}

/** A schema violation, named field by field, as `bad_input`. */
export function invalidArguments(tool: string, issues: readonly { path: readonly PropertyKey[]; message: string }[]): BatonError {
  const list = issues.map((i) => ({ path: i.path.map(String).join("."), message: i.message }));
  const text = list.map((i) => `${i.path || "(arguments)"}: ${i.message}`).join("; ");
  return new BatonError("bad_input", `invalid arguments for ${tool}: ${text}; see the tool's input schema`, { tool, issues: list });
}
