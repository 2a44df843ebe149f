/**
 * The flow registry: built-in flows from code, user flows from `.baton/flows/*.json`. User
 * flows are read only when a session needs one or they are listed, so commands that touch
 * only built-in flows never read the directory.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { externalRunFlow } from "../core/flows/external-run.js";
import type { FlowDefinition } from "../core/flows/flow.js";
import { liveVariantFlow } from "../core/flows/live-variant.js";
import { taskFlow } from "../core/flows/task.js";
import type { FlowProblem } from "../core/flows/validate.js";
import { BatonError } from "../errors.js";
import { formatProblems, loadFlowFile } from "../platform/flow-file.js";
import { entryKind } from "../platform/private-files.js";

export const BUILTIN_FLOWS: Readonly<Record<string, FlowDefinition>> = Object.freeze({
  task: taskFlow,
  "external-run": externalRunFlow,
  "live-variant": liveVariantFlow,
});

/** The built-in flow of that name, if any (its own key only: "constructor" names no flow). */
function builtinFlow(name: string): FlowDefinition | undefined {
  return Object.hasOwn(BUILTIN_FLOWS, name) ? BUILTIN_FLOWS[name] : undefined;
}

export interface FlowFileReport {
  file: string;
  name?: string;
  problems: FlowProblem[];
}

export class FlowRegistry {
  readonly #dir: string;
  #user: Map<string, FlowDefinition> | undefined;
  #reports: FlowFileReport[] = [];

  constructor(flowsDir: string) {
    this.#dir = flowsDir;
  }

  /** A flow by name. Built-in flows never touch the disk; user flows are read on first need. */
  async get(name: string): Promise<FlowDefinition> {
    const builtin = builtinFlow(name);
    if (builtin) return builtin;
    const user = (await this.#loadUser()).get(name);
    if (user) return user;
    const bad = this.#reports.find((r) => r.name === name && r.problems.length > 0);
    if (bad) {
      throw new BatonError("flow_invalid", `flow "${name}" in ${bad.file} is invalid: ${formatProblems(bad.problems)}`, {
        file: bad.file,
        problems: bad.problems,
      });
    }
    throw new BatonError("unknown_flow", `no flow named "${name}"; available: ${(await this.names()).join(", ")}`, { flow: name });
  }

  async names(): Promise<string[]> {
    return [...Object.keys(BUILTIN_FLOWS), ...(await this.#loadUser()).keys()];
  }

  /** Every user flow file with its problems (empty for a valid one). */
  async reports(): Promise<FlowFileReport[]> {
    await this.#loadUser();
    return this.#reports;
  }

  async #loadUser(): Promise<Map<string, FlowDefinition>> {
    if (this.#user) return this.#user;
    const user = new Map<string, FlowDefinition>();
    let files: string[] = [];
    if (entryKind(this.#dir) === "link") {
      // A repository's link to a folder elsewhere: its files are not the workspace's flows.
      this.#reports.push({
        file: this.#dir,
        problems: [{ path: "", message: "is a symbolic link: user flows are read only from a real .baton/flows folder" }],
      });
    } else {
      try {
        files = readdirSync(this.#dir)
          .filter((f) => f.endsWith(".json"))
          .sort();
      } catch {
        files = []; // no flows directory: only built-ins
      }
    }
    for (const f of files) {
      const file = join(this.#dir, f);
      const { flow, problems, name } = await loadFlowFile(file, { follow: false });
      if (flow && builtinFlow(flow.name)) {
        this.#reports.push({
          file,
          name: flow.name,
          problems: [{ path: "name", message: `"${flow.name}" is a built-in flow; choose another name` }],
        });
        continue;
      }
      this.#reports.push({ file, ...(name ? { name } : {}), problems });
      if (flow) user.set(flow.name, flow);
    }
    this.#user = user;
    return user;
  }
}
