/**
 * A flow file on disk (`.baton/flows/*.json`, or one named to `baton flows validate`): read and
 * checked, with its problems in a form a person reads. The validator (and its JSON parser) loads
 * on first use, so opening a workspace with no flow files never pays for it.
 */
import { readFileSync } from "node:fs";
import type { FlowDefinition } from "../core/flows/flow.js";
import type { FlowProblem } from "../core/flows/validate.js";

/** Read and validate a flow file. */
export async function loadFlowFile(file: string): Promise<{ flow?: FlowDefinition; problems: FlowProblem[]; name?: string }> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    return { problems: [{ path: "", message: `cannot read: ${(err as Error).message}` }] };
  }
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
