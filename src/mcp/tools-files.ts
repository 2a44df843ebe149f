/** Tools over workspace files: checkpoints and rollback. */

import { z } from "zod";
import { laneFromEnv } from "../core/lanes.js";
import { badInput } from "../errors.js";
import { APPEND, type BatonTool, DESTRUCTIVE, defined, defineTool, paths, READ, session, sessionId } from "./tool.js";

export const fileTools: BatonTool[] = [
  defineTool({
    name: "checkpoint",
    title: "Take a checkpoint",
    description:
      "Record file versions to roll back to: the files you are about to write (files; a missing one is recorded absent, so a rollback removes it), or the whole tree minus .gitignore'd files when files is omitted. Take one before risky edits.",
    input: {
      sessionId: sessionId(),
      files: paths(
        "Workspace-relative paths (or absolute inside the workspace) about to be written. Omit for the whole tree.",
        1000,
      ).optional(),
      label: z.string().trim().min(1).max(200).optional().describe("A name for this point, e.g. 'before refactor'."),
      toolName: z.string().min(1).max(100).optional().describe("The tool about to write, e.g. Edit."),
      pinned: z.boolean().default(false).describe("Keep it whatever the retention limit (default 100 per session)."),
    },
    annotations: APPEND,
    async run(b, a) {
      const r = await b.checkpoints.create(
        await session(b, a.sessionId),
        defined({ files: a.files, label: a.label, toolName: a.toolName, pinned: a.pinned || undefined }),
      );
      return { checkpointId: r.checkpoint.id, ...r };
    },
  }),
  defineTool({
    name: "list_checkpoints",
    title: "List checkpoints",
    description: "The session's checkpoints, oldest first: id, seq, kind (targeted, tree, safety), label, pinned, file count.",
    input: {
      sessionId: sessionId(),
      includePruned: z.boolean().default(false).describe("Include checkpoints retention pruned (they cannot be restored)."),
    },
    annotations: READ,
    async run(b, a) {
      const sid = await session(b, a.sessionId);
      return { sessionId: sid, checkpoints: await b.checkpoints.list(sid, { includePruned: a.includePruned }) };
    },
  }),
  defineTool({
    name: "rollback",
    title: "Roll back files",
    description:
      "Restore files: one step back (default), `steps` back, or `to` a checkpoint id; `files` restores only those paths. Call with dryRun: true first to see the unified diff. A real rollback takes a safety checkpoint first (undo: rollback to: <safety>). When the agent names its session to this server (Claude Code's CLAUDE_CODE_SESSION_ID), steps count through that agent's own checkpoints and files other agents at work changed since are kept (named in warnings). Errors: checkpoint_not_found (unknown checkpoint or too many steps), checkpoint_pruned (pruned; names the oldest available).",
    input: {
      sessionId: sessionId(),
      steps: z.number().int().min(1).max(1000).optional().describe("How many checkpoints back (default 1). Not with `to`."),
      to: z.string().min(1).max(200).optional().describe("A checkpoint id to restore (from list_checkpoints). Not with `steps`."),
      files: paths("Restore only these files or directories (workspace-relative).").optional(),
      dryRun: z.boolean().default(false).describe("Plan and diff only: change nothing, journal nothing."),
      otherHost: z
        .boolean()
        .default(false)
        .describe("Restore a checkpoint another host took (a store shared by several hosts) into this workspace."),
    },
    annotations: DESTRUCTIVE,
    async run(b, a) {
      if (a.steps !== undefined && a.to !== undefined) throw badInput("give steps or to, not both");
      const sid = await session(b, a.sessionId);
      // The agent's own lane when it names its session (core/lanes.ts): never another agent's work.
      const lane = laneFromEnv(process.env);
      const r = await b.checkpoints.rollback(
        sid,
        defined({
          steps: a.steps,
          to: a.to,
          files: a.files,
          dryRun: a.dryRun || undefined,
          otherHost: a.otherHost || undefined,
          lane,
          actor: "agent",
        }),
      );
      // A dry run's `diff` already holds every change's diff: do not send each twice.
      const changes = r.diff === undefined ? r.changes : r.changes.map(({ diff: _d, ...c }) => c);
      return { sessionId: sid, ...r, changes };
    },
  }),
];
