/** Resources (a session's STATE.md, the workspace's LESSONS.md) and the prompt that resumes a session. */
import { type McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { Baton } from "../api.js";
import { BatonError } from "../errors.js";
import { protocolError } from "./errors.js";

export const STATE_URI = "baton://sessions/{sessionId}/STATE.md";
export const LESSONS_URI = "baton://workspace/LESSONS.md";
const MARKDOWN = "text/markdown";

type Open = () => Promise<Baton>;

/** Read through the facade; a failure becomes a JSON-RPC error carrying Baton's code. */
async function guarded<T>(fn: () => Promise<T>, resource: boolean): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw protocolError(err, { resource });
  }
}

async function activeSessionIds(open: Open): Promise<{ id: string; title?: string | null; phase: string }[]> {
  try {
    return await (await open()).sessions.list();
  } catch {
    return []; // no workspace yet: nothing to list (reading still says why)
  }
}

export function registerResources(server: McpServer, open: Open): void {
  server.registerResource(
    "state",
    new ResourceTemplate(STATE_URI, {
      list: async () => ({
        resources: (await activeSessionIds(open)).map((s) => ({
          uri: STATE_URI.replace("{sessionId}", s.id),
          name: `${s.id} STATE.md`,
          title: `STATE.md of ${s.title ?? s.id} (${s.phase})`,
          mimeType: MARKDOWN,
        })),
      }),
      complete: { sessionId: async (prefix) => (await activeSessionIds(open)).map((s) => s.id).filter((id) => id.startsWith(prefix)) },
    }),
    {
      title: "Session STATE.md",
      description: "A session rendered as markdown: next action, position, progress, decisions, blockers, runs, rollbacks, resume context.",
      mimeType: MARKDOWN,
    },
    (uri, vars) =>
      guarded(async () => {
        let id: string;
        try {
          id = decodeURIComponent(String(vars.sessionId));
        } catch {
          throw new BatonError("bad_input", `the session id in ${uri.href} is not valid percent-encoding`);
        }
        return { contents: [{ uri: uri.href, mimeType: MARKDOWN, text: await (await open()).sessions.stateMarkdown(id) }] };
      }, true),
  );

  server.registerResource(
    "lessons",
    LESSONS_URI,
    {
      title: "LESSONS.md",
      description: "The workspace's lessons (advice captured after rollbacks), as written on disk.",
      mimeType: MARKDOWN,
    },
    (uri) =>
      guarded(async () => {
        const { text } = await (await open()).lessons.file();
        const body = text ?? "<!-- LESSONS.md does not exist yet: the lessons_add tool creates it. -->\n";
        return { contents: [{ uri: uri.href, mimeType: MARKDOWN, text: body }] };
      }, true),
  );
}

export function registerPrompts(server: McpServer, open: Open): void {
  server.registerPrompt(
    "resume_session",
    {
      title: "Resume a Baton session",
      description: "Pick up a session where it was left: its next action, STATE.md, files to review and relevant lessons.",
      argsSchema: {
        sessionId: z.string().max(128).optional().describe("The session to resume. Default: the single active session."),
      },
    },
    ({ sessionId }) =>
      guarded(async () => {
        const b = await open();
        const sid = await b.sessions.resolve(sessionId || undefined);
        await b.runs.detectCrashed({ sessionId: sid });
        const [r, state] = await Promise.all([b.sessions.resume(sid), b.sessions.stateMarkdown(sid)]);
        // Lessons for what the session is about: its title and current task.
        const about = [r.title, r.position.task].filter(Boolean).join(" ");
        const lessons = await b.lessons.inject({ sessionId: sid, ...(about ? { prompt: about } : {}) });
        return {
          description: `Resume ${sid} (${r.flow}, phase ${r.phase})`,
          messages: [{ role: "user" as const, content: { type: "text" as const, text: resumeText(sid, r, state, lessons.markdown) } }],
        };
      }, false),
  );
}

function resumeText(
  sid: string,
  r: {
    phase: string;
    nextAction: { action: string; reason: string; command?: string };
    verification: { files: { path: string; state: string; review: boolean }[] };
  },
  state: string,
  lessons: string,
): string {
  const review = r.verification.files.filter((f) => f.review);
  return [
    `Resume the Baton session \`${sid}\` (phase ${r.phase}). Its record follows; it is the truth about what was done.`,
    "",
    `Next action: **${r.nextAction.action}**: ${r.nextAction.reason}`,
    ...(r.nextAction.command ? [`(CLI equivalent: \`${r.nextAction.command}\`)`] : []),
    "",
    ...(review.length
      ? ["Files changed since they were recorded; review them before continuing:", ...review.map((f) => `- ${f.path} (${f.state})`), ""]
      : []),
    ...(lessons ? [lessons.trimEnd(), ""] : []),
    "Use the baton tools as you work: record_event for the flow's events, add_decision, add_blocker / resolve_blocker, set_position, and checkpoint before risky edits (rollback with dryRun first to undo).",
    "",
    "---",
    "",
    state.trimEnd(),
  ].join("\n");
}
