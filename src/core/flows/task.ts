import type { FlowDefinition } from "./flow.js";

/** A generic agent task. */
export const taskFlow: FlowDefinition = {
  name: "task",
  description: "A generic agent task: planned → in_progress ⇄ blocked → verifying → done (or abandoned).",
  initial: "planned",
  phases: {
    planned: {
      on: { start: { to: "in_progress" }, abandon: { to: "abandoned" } },
      next: { action: "start_task", reason: "The task is planned and not started yet.", command: "baton event {session} start" },
    },
    in_progress: {
      on: { block: { to: "blocked" }, verify: { to: "verifying" }, complete: { to: "done" }, abandon: { to: "abandoned" } },
      next: {
        action: "continue_task",
        reason: "The task is in progress: read the position, decisions and resume context, then carry on.",
        command: "baton resume {session} --json",
      },
    },
    blocked: {
      on: { unblock: { to: "in_progress" }, abandon: { to: "abandoned" } },
      next: {
        action: "resolve_blocker",
        reason: "The task is blocked: resolve or bypass the active blocker, then unblock.",
        command: "baton event {session} unblock",
      },
    },
    verifying: {
      on: { complete: { to: "done" }, reject: { to: "in_progress" }, abandon: { to: "abandoned" } },
      next: {
        action: "verify_work",
        reason: "The work is done and awaits verification; complete it when it passes, reject it when it does not.",
        command: "baton complete {session}",
      },
    },
    done: { terminal: true, next: { action: "none", reason: "The task is done.", command: "" } },
    abandoned: { terminal: true, next: { action: "none", reason: "The task was abandoned.", command: "" } },
  },
  global: { note: {} },
};
