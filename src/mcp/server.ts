/**
 * Baton's MCP server: the tools, resources and prompt over the `Baton` facade. Transport-free;
 * `stdio.ts` connects it to stdin/stdout for `baton mcp`.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CallToolRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Baton } from "../api.js";
import { laneFromEnv, pausedSpiral } from "../core/lanes.js";
import { BatonError, isBatonError } from "../errors.js";
import { invalidArguments, toolError } from "./errors.js";
import { registerPrompts, registerResources } from "./resources.js";
import { type BatonTool, optionalSession } from "./tool.js";
import { fileTools } from "./tools-files.js";
import { learningTools } from "./tools-learning.js";
import { sessionTools } from "./tools-session.js";

export const TOOLS: readonly BatonTool[] = [...sessionTools, ...fileTools, ...learningTools];

const INSTRUCTIONS = `Baton keeps this workspace's agent sessions durable: a journal of what happened, where things stand, and the next action.
Start with the status tool (or the resume_session prompt). Record as you go: record_event for the flow's events, add_decision, add_blocker/resolve_blocker, set_position.
Take a checkpoint before risky edits; rollback (dryRun first) undoes them; then lessons_add one sentence of advice. lessons_inject before a task offers earlier advice.
Errors are {"error": {"code", "message"}} results: the message says what to do next.`;

export interface McpServerOptions {
  /** Opens the workspace's Baton (called on each request until it succeeds, then cached by the caller). */
  open: () => Promise<Baton>;
  version: string;
}

/** Run one tool: validate its arguments, call the facade, answer JSON or a Baton error. */
export async function callTool(tool: BatonTool, args: unknown, open: () => Promise<Baton>): Promise<CallToolResult> {
  const parsed = tool.input.safeParse(args ?? {});
  if (!parsed.success) return toolError(invalidArguments(tool.name, parsed.error.issues));
  try {
    const baton = await open();
    if (!readsOnly(tool, parsed.data)) await refuseWhilePaused(baton, (parsed.data as { sessionId?: string }).sessionId);
    const result = await tool.run(baton, parsed.data);
    return { content: [{ type: "text", text: JSON.stringify(result) }] };
  } catch (err) {
    return toolError(err);
  }
}

/**
 * Whether a call only reads, as the agent hooks judge Baton commands: the read-only tools, and
 * status, resume and doctor without `fix`, which write only what the system would on its own
 * (runs provably gone marked crashed) and which a paused agent needs to see where it stands.
 */
function readsOnly(tool: BatonTool, args: unknown): boolean {
  if (tool.annotations.readOnlyHint) return true;
  if (tool.name === "status" || tool.name === "resume") return true;
  return tool.name === "doctor" && !(args as { fix?: unknown }).fix;
}

/**
 * The MCP client is the agent. While a spiral pauses it (its lane, from the agent's session in
 * the environment, or the whole session; without a lane, any paused lane of the session), only
 * reading tools run, as the agent hooks let only reading Baton commands through: a checkpoint
 * or rollback here would let the paused agent go on changing files.
 */
async function refuseWhilePaused(b: Baton, sessionId: string | undefined): Promise<void> {
  // The session the call names, else the single active one; with several active and none
  // named (a tool without a session, such as a workspace lesson), each of them.
  let sids: string[];
  try {
    const sid = await optionalSession(b, sessionId);
    sids = sid === undefined ? [] : [sid];
  } catch (err) {
    if (!isBatonError(err, "ambiguous_session")) return; // the tool answers it
    sids = (await b.sessions.list()).map((s) => s.id);
  }
  const lane = laneFromEnv(process.env);
  for (const sid of sids) {
    const paused = pausedSpiral(await b.sessions.snapshot(sid), lane);
    if (paused) pausedError(sid, paused);
  }
}

function pausedError(sid: string, paused: NonNullable<ReturnType<typeof pausedSpiral>>): never {
  const { state } = paused;
  throw new BatonError(
    "spiral_paused",
    `Baton's spiral detector paused ${paused.lane ? "this agent session" : `session ${sid}`} (${state.pattern ?? "spiral"}): only reading tools work until the user decides, since unpausing is the user's decision. Stop and ask the user: they can type "unpause", or run \`baton resume ${sid} --unpause\`${state.proposedCheckpoint ? `, or roll back to ${state.proposedCheckpoint}` : ""}.`,
    { sessionId: sid, ...(paused.lane ? { lane: paused.lane.id } : {}), ...(state.pattern ? { pattern: state.pattern } : {}) },
  );
}

export function createMcpServer(opts: McpServerOptions): McpServer {
  const server = new McpServer({ name: "baton", title: "Baton", version: opts.version }, { instructions: INSTRUCTIONS });
  const byName = new Map<string, BatonTool>();
  for (const tool of TOOLS) {
    byName.set(tool.name, tool);
    server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: tool.input, annotations: tool.annotations },
      ((args: unknown) => callTool(tool, args, opts.open)) as never,
    );
  }
  // McpServer lists the tools (their JSON Schemas come from the zod objects above) but answers a
  // schema violation with plain text. Calls are dispatched here instead (the SDK's documented
  // way to replace a request handler), so a bad argument is a `bad_input` error with the
  // offending fields, like every other failure.
  server.server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const tool = byName.get(req.params.name);
    if (!tool)
      return toolError(
        new BatonError("not_found", `no tool named "${req.params.name}"; the tools are ${[...byName.keys()].join(", ")}`, {
          tool: req.params.name,
        }),
      );
    return callTool(tool, req.params.arguments, opts.open);
  });
  registerResources(server, opts.open);
  registerPrompts(server, opts.open);
  return server;
}
