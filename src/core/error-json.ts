/** An error as the JSON every edge (HTTP, MCP) sends, with its message redacted: a path or a command in a message may carry a secret. */
import type { BatonError } from "../errors.js";
import { redactText } from "./redaction/redact.js";

export function redactedJson(err: BatonError): ReturnType<BatonError["toJSON"]> {
  const j = err.toJSON();
  return { ...j, message: redactText(j.message) };
}
