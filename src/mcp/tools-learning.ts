/** Tools over what Baton learned and noticed: lessons, the trajectory ledger, the doctor. */
import { z } from "zod";
import type { LedgerStatus } from "../core/ledger/nodes.js";
import type { LessonIntent } from "../core/lessons/rank.js";
import { APPEND, type BatonTool, defined, defineTool, optionalSession, paths, READ, session, sessionId } from "./tool.js";

// core/ledger/nodes.ts's LEDGER_STATUSES, restated so this bundle does not carry the ledger's code.
const LEDGER_STATUSES = ["success", "error", "no_progress", "recovered", "aborted"] as const satisfies readonly LedgerStatus[];

/** The intent lessons are ranked for; every field optional (none at all: pinned lessons only). */
const intent = {
  sessionId: sessionId(),
  prompt: z
    .string()
    .max(10_000)
    .optional()
    .describe("What you are about to do, in words: the prompt or the task. Files it names (edit src/a.ts) count as paths."),
  tool: z.string().min(1).max(100).optional().describe("The tool you are about to call, e.g. Edit."),
  paths: paths("Workspace-relative paths you will touch.", 100).optional(),
  fingerprint: z.string().min(1).max(200).optional().describe("The failure fingerprint you just hit (fp-…)."),
};

async function toIntent(
  b: Parameters<BatonTool["run"]>[0],
  a: { sessionId?: string; prompt?: string; tool?: string; paths?: string[]; fingerprint?: string },
): Promise<LessonIntent> {
  return defined({ ...a, sessionId: await optionalSession(b, a.sessionId) });
}

export const learningTools: BatonTool[] = [
  defineTool({
    name: "lessons_search",
    title: "Search lessons",
    description:
      "Lessons from LESSONS.md ranked for an intent (BM25 text relevance plus tool, path and fingerprint triggers): {results: [{lesson, score, why}], fullText}.",
    input: { ...intent, k: z.number().int().min(1).max(50).default(10).describe("How many results at most.") },
    annotations: READ,
    async run(b, { k, ...a }) {
      return b.lessons.search(await toIntent(b, a), { k });
    },
  }),
  defineTool({
    name: "lessons_inject",
    title: "Lessons for a prompt",
    description:
      "The markdown block of the most relevant lessons to put in your context before acting ('## Lessons from earlier attempts', one line each, best first); empty when nothing is relevant.",
    input: {
      ...intent,
      k: z.number().int().min(0).max(20).default(5).describe("At most this many lessons."),
      maxChars: z.number().int().min(100).max(20_000).default(2000).describe("At most this many characters."),
    },
    annotations: READ,
    async run(b, { k, maxChars, ...a }) {
      return b.lessons.inject(await toIntent(b, a), { k, maxChars });
    },
  }),
  defineTool({
    name: "lessons_add",
    title: "Add a lesson",
    description:
      "Write one sentence of advice to LESSONS.md for the next attempt (after a rollback, say what to do differently). Session scope by default; workspace scope offers it to every session. Triggers (tools, paths, fingerprints) make it surface when they match.",
    input: {
      text: z.string().trim().min(1).max(2000).describe("The advice, one or two sentences."),
      scope: z
        .enum(["session", "workspace"])
        .default("session")
        .describe("session (default): offered to this session only; workspace: to every session."),
      sessionId: sessionId(),
      tools: z.array(z.string().min(1).max(100)).min(1).max(20).optional().describe("Trigger: tools it applies to, e.g. Edit."),
      paths: paths("Trigger: globs or directories it applies to, e.g. src/ui/**.", 50).optional(),
      fingerprints: z.array(z.string().min(1).max(200)).min(1).max(20).optional().describe("Trigger: failure fingerprints."),
      fromRollback: z
        .string()
        .min(1)
        .max(200)
        .optional()
        .describe("The rollback id it was learned from (ends the capture_lesson suggestion)."),
      pinned: z.boolean().default(false).describe("Always offer it when there is room."),
      expires: z.iso
        .date()
        .or(z.iso.datetime({ offset: true }))
        .optional()
        .describe("ISO date or time after which it is no longer offered, e.g. 2026-09-01."),
      id: z
        .string()
        .regex(/^[A-Za-z0-9._:-]{1,100}$/, "letters, digits, '.', '_', ':' or '-'")
        .optional()
        .describe("Lesson id. Default: generated (les-…)."),
    },
    annotations: APPEND,
    async run(b, a) {
      const sid = a.scope === "session" ? await session(b, a.sessionId) : await optionalSession(b, a.sessionId);
      const r = await b.lessons.add(
        defined({
          text: a.text,
          scope: a.scope,
          sessionId: sid,
          tools: a.tools,
          paths: a.paths,
          fingerprints: a.fingerprints,
          rollback: a.fromRollback,
          pinned: a.pinned || undefined,
          expires: a.expires,
          id: a.id,
          actor: "agent", // the MCP client is the agent
        }) as { text: string },
      );
      return {
        lesson: r.lesson,
        file: r.file,
        seq: r.journaled?.event.seq,
        diagnostics: r.diagnostics,
        ...(r.warnings ? { warnings: r.warnings } : {}),
      };
    },
  }),
  defineTool({
    name: "ledger_recent",
    title: "Recent tool calls",
    description:
      "The session's most recent tool-call attempts from the trajectory ledger, oldest first: tool, status, fingerprint, what a success recovered, redacted argument and error summaries. Use it to see what was already tried.",
    input: {
      sessionId: sessionId(),
      limit: z.number().int().min(1).max(200).default(20).describe("How many of the newest nodes."),
      status: z.enum(LEDGER_STATUSES).optional().describe("Only attempts with this status."),
      tool: z.string().min(1).max(100).optional().describe("Only calls of this tool."),
    },
    annotations: READ,
    async run(b, a) {
      const sid = await session(b, a.sessionId);
      return { sessionId: sid, nodes: await b.ledger.list(sid, defined({ limit: a.limit, status: a.status, tool: a.tool })) };
    },
  }),
  defineTool({
    name: "doctor",
    title: "Check the workspace",
    description:
      "Check the database, journal vs snapshots, leases, locks, runs, blobs, files, markers, the server file and the ledger: {ok, findings: [{check, code, severity, message, evidence, fix, safe}], repairs, summary}. fix: true applies only the safe repairs (a list of codes: only those findings'). Never returns prompt or answer text.",
    input: {
      sessionId: z
        .string()
        .min(1)
        .max(128)
        .optional()
        .describe("Only this session (adds its phase, runs, locks and next action). Default: the whole workspace."),
      fix: z
        .union([z.boolean(), z.array(z.string().min(1).max(64)).min(1).max(20)])
        .default(false)
        .describe('true: apply every safe repair and report each; a list of finding codes (e.g. ["lease_expired"]): only theirs.'),
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    async run(b, a) {
      return b.health.doctor(defined({ sessionId: a.sessionId, fix: a.fix }));
    },
  }),
];
