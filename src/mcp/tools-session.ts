/** Tools over sessions and their journal: status, resume, events and facets. */
import { z } from "zod";
import type { JsonObject } from "../core/types.js";
import { badInput } from "../errors.js";
import { APPEND, type BatonTool, defined, defineTool, READ, session, sessionId, text } from "./tool.js";

const ACTORS = ["agent", "user", "browser", "system"] as const;
const actor = () => z.enum(ACTORS).default("agent").describe("Who produced it: agent (you, the default), user, browser or system.");

export const sessionTools: BatonTool[] = [
  defineTool({
    name: "start_session",
    title: "Start a session",
    description:
      "Start a durable session for a piece of work. Returns its id, phase and first next action. Use when status says no_active_session.",
    input: {
      flow: z
        .string()
        .min(1)
        .max(128)
        .default("task")
        .describe("The flow: task (default), external-run, live-variant, or a user flow in .baton/flows/."),
      title: z.string().trim().min(1).max(500).optional().describe("A human title, e.g. 'Fix the login bug'."),
      id: z
        .string()
        .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, "1-128 letters, digits, '.', '_' or '-'")
        .optional()
        .describe("Session id. Default: generated. An id already used is refused with session_exists."),
    },
    annotations: APPEND,
    async run(b, a) {
      const snap = await b.sessions.start(defined({ flow: a.flow, title: a.title, id: a.id }) as { flow: string });
      const status = await b.sessions.status({ sessionId: snap.sessionId });
      return { sessionId: snap.sessionId, flow: snap.flow, phase: snap.phase, nextAction: status.sessions[0]?.nextAction };
    },
  }),
  defineTool({
    name: "status",
    title: "Status and next action",
    description:
      "Active sessions with their phase, next action (action, reason, CLI command), pending work, position, blockers, recent decisions, markers and diagnostics. Call it first. Runs that are provably dead are marked crashed before reading (crashedRuns).",
    input: {
      sessionId: z
        .string()
        .min(1)
        .max(128)
        .optional()
        .describe("Only this session. Default: every active session (an empty list and no_active_session when there is none)."),
      all: z.boolean().default(false).describe("Include completed sessions."),
    },
    annotations: { ...READ, idempotentHint: true },
    async run(b, a) {
      const crashed = await b.runs.detectCrashed(defined({ sessionId: a.sessionId }));
      const report = await b.sessions.status(defined({ sessionId: a.sessionId, all: a.all || undefined }));
      return crashed.length > 0 ? { ...report, crashedRuns: crashed } : report;
    },
  }),
  defineTool({
    name: "resume",
    title: "Resume a session",
    description:
      "Everything needed to take the next step: status, all facets (position, decisions, blockers, runs, rollbacks, lessons, resume context), the last 20 events, and a verification of recorded files (review: true when one changed or vanished).",
    input: {
      sessionId: sessionId(),
    },
    // No unpause here: the MCP client is the agent, and clearing a spiral pause is the user's
    // decision (their prompt, their terminal), never a tool call of the paused agent.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    async run(b, a) {
      const sid = await session(b, a.sessionId);
      const crashed = await b.runs.detectCrashed({ sessionId: sid });
      const report = await b.sessions.resume(sid);
      return { ...report, ...(crashed.length ? { crashedRuns: crashed } : {}) };
    },
  }),
  defineTool({
    name: "record_event",
    title: "Record an event",
    description:
      "Append an event to the session's journal: a flow event that moves the phase (e.g. start, block, unblock, verify, complete in the task flow; the next action names the one expected) or a facet event (noun:verb, e.g. note:added). An event the phase does not allow is refused with invalid_transition, naming the phase and the allowed events.",
    input: {
      sessionId: sessionId(),
      type: z
        .string()
        .min(1)
        .max(128)
        .regex(/^[a-z][a-z0-9_]*(:[a-z][a-z0-9_]*)?$/, "an event type: lower_case, or noun:verb")
        .describe("The event type, e.g. start, complete, note:added."),
      data: z.record(z.string(), z.unknown()).optional().describe("The event's data, a JSON object (facet events have a schema)."),
      id: z
        .string()
        .min(1)
        .max(200)
        .optional()
        .describe("Idempotency key: the same id and body again is a no-op (duplicate: true); the same id with another body is a conflict."),
      actor: actor(),
      revision: z
        .number()
        .int()
        .min(0)
        .max(Number.MAX_SAFE_INTEGER)
        .optional()
        .describe("Client revision; an event not newer than the session's revision is kept as stale."),
    },
    annotations: APPEND,
    async run(b, a) {
      if (a.type === "spiral:cleared")
        throw badInput(
          'clearing a spiral pause is the user\'s decision: ask the user (they can type "unpause" or run `baton resume <session> --unpause`)',
        );
      const sid = await session(b, a.sessionId);
      return b.events.append(
        sid,
        defined({ type: a.type, data: a.data as JsonObject | undefined, id: a.id, actor: a.actor, revision: a.revision }) as {
          type: string;
        },
      );
    },
  }),
  defineTool({
    name: "add_decision",
    title: "Record a decision",
    description: "Record a decision and why, so the next agent does not reopen it.",
    input: {
      sessionId: sessionId(),
      decision: text(2000, "The decision, one sentence."),
      reason: z.string().trim().min(1).max(2000).optional().describe("Why."),
      context: z.string().trim().min(1).max(2000).optional().describe("What prompted it."),
      alternatives: z.array(z.string().trim().min(1).max(500)).max(20).optional().describe("Alternatives considered."),
      reversible: z.boolean().optional().describe("Whether the decision can be undone."),
    },
    annotations: APPEND,
    async run(b, a) {
      const sid = await session(b, a.sessionId);
      const { sessionId: _s, ...d } = a;
      return b.facets.addDecision(sid, defined(d) as { decision: string });
    },
  }),
  defineTool({
    name: "add_blocker",
    title: "Add a blocker",
    description: "Record an active blocker (something that stops the work). Returns its id, needed to resolve it.",
    input: {
      sessionId: sessionId(),
      text: text(2000, "What blocks the work."),
      id: z.string().min(1).max(100).optional().describe("Blocker id. Default: generated (blk-…)."),
      affects: z.string().trim().min(1).max(500).optional().describe("What it blocks."),
      workaround: z.string().trim().min(1).max(2000).optional().describe("A known workaround."),
    },
    annotations: APPEND,
    async run(b, a) {
      const sid = await session(b, a.sessionId);
      const { sessionId: _s, ...blk } = a;
      const r = await b.facets.addBlocker(sid, defined(blk) as { text: string });
      return { blockerId: (r.event.data as { id?: string }).id, ...r };
    },
  }),
  defineTool({
    name: "resolve_blocker",
    title: "Resolve a blocker",
    description: "Mark an active blocker resolved.",
    input: {
      sessionId: sessionId(),
      id: z.string().min(1).max(100).describe("The blocker's id (from add_blocker, or status's activeBlockers)."),
      resolution: z.string().trim().min(1).max(2000).optional().describe("How it was resolved."),
    },
    annotations: APPEND,
    async run(b, a) {
      return b.facets.resolveBlocker(await session(b, a.sessionId), a.id, a.resolution);
    },
  }),
  defineTool({
    name: "set_position",
    title: "Set the position",
    description: "Record where the work stands (give at least one field); STATE.md and status show it.",
    input: {
      sessionId: sessionId(),
      phase: z.string().trim().min(1).max(200).optional().describe("The work's own phase, e.g. 'implementation'."),
      plan: z.string().trim().min(1).max(200).optional().describe("The plan being followed."),
      task: z.string().trim().min(1).max(500).optional().describe("The current task."),
      wave: z.string().trim().min(1).max(200).optional().describe("The current wave or batch."),
      status: z.string().trim().min(1).max(500).optional().describe("A short status line."),
    },
    annotations: APPEND,
    async run(b, a) {
      const sid = await session(b, a.sessionId);
      const { sessionId: _s, ...p } = a;
      return b.facets.setPosition(sid, defined(p));
    },
  }),
];
