/**
 * A flow file on disk (`.baton/flows/*.json`, or one named to `baton flows validate`): read and
 * checked, with its problems in a form a person reads. The validator (and its JSON parser) loads
 * on first use, so opening a workspace with no flow files never pays for it.
 */
import type { FlowDefinition } from "../core/flows/flow.js";
import type { FlowProblem } from "../core/flows/validate.js";
import { readSettingsText } from "./settings-text.js";

/** More than any flow holds (the built-in ones are a few KiB). */
const FLOW_MAX_BYTES = 1024 * 1024;

/** Read and validate a flow file. */
export async function loadFlowFile(
  file: string,
  opts: { follow?: boolean } = {},
): Promise<{ flow?: FlowDefinition; problems: FlowProblem[]; name?: string }> {
  // A repository ships these: a file linked to /dev/zero, or a FIFO, must not hang or exhaust
  // the command (settings-text.ts); a flow is a few KiB. `follow: false`: a link is not read
  // (one a repository committed in .baton/flows would read a file from outside it).
  let text: string | undefined;
  try {
    text = readSettingsText(file, FLOW_MAX_BYTES, opts);
  } catch (err) {
    const message =
      (err as NodeJS.ErrnoException).code === "ELOOP"
        ? "a symbolic link: user flows are read only from files in .baton/flows itself"
        : `cannot read: ${(err as Error).message}`;
    return { problems: [{ path: "", message }] };
  }
  if (text === undefined) return { problems: [{ path: "", message: "cannot read: it is gone" }] };
  const { parseFlowFile } = await import("../core/flows/validate.js");
  const result = parseFlowFile(text);
  let name: string | undefined;
  try {
    const n = (JSON.parse(text) as { name?: unknown }).name;
    if (typeof n === "string") name = n;
  } catch {
    // reported by parseFlowFile
  }
  return { ...result, ...(name ? { name } : {}) };
}

export function formatProblems(problems: readonly FlowProblem[]): string {
  return problems.map((p) => `${p.line ? `line ${p.line}:${p.column} ` : ""}${p.path || "(file)"}: ${p.message}`).join("; ");
}
