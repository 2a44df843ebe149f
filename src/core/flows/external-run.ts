import type { FlowDefinition } from "./flow.js";

/**
 * A long-running run in another system. A `timeout` before the session's deadline is a
 * transient local timeout, not an outcome: the phase is terminal only after the deadline.
 */
export const externalRunFlow: FlowDefinition = {
  name: "external-run",
  description: "A long-running run in another system: sent → running → polling → complete | timeout | error | canceled.",
  initial: "sent",
  phases: {
    sent: {
      on: { started: { to: "running" }, polling: { to: "polling" } },
      next: {
        action: "wait_for_run",
        reason: "The run was sent and has not reported back; check it and record `started` or `polling`.",
        command: "baton event {session} polling",
      },
    },
    running: {
      on: { polling: { to: "polling" } },
      next: {
        action: "poll_external_run",
        reason: "The run is running; poll it until it completes.",
        command: "baton event {session} polling",
      },
    },
    polling: {
      on: { started: { to: "running" } },
      next: {
        action: "poll_external_run",
        reason: "Polling the run; record `complete`, `error` or `timeout` when it answers.",
        command: "baton resume {session} --json",
      },
    },
    timeout: {
      terminal: "after_deadline",
      on: { polling: { to: "polling" }, started: { to: "running" } },
      next: {
        action: "resume_polling",
        reason: "A local timeout before the session deadline is transient, not an outcome; resume polling.",
        command: "baton event {session} polling",
      },
    },
    complete: { terminal: true, next: { action: "none", reason: "The run completed.", command: "" } },
    error: { terminal: true, next: { action: "none", reason: "The run failed.", command: "" } },
    canceled: { terminal: true, next: { action: "none", reason: "The run was canceled.", command: "" } },
  },
  global: {
    progress: {},
    complete: { to: "complete" },
    error: { to: "error" },
    cancel: { to: "canceled" },
    timeout: { to: "timeout" },
  },
};
