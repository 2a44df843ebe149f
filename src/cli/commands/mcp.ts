/**
 * `baton mcp`: the MCP server over stdio (src/mcp/). The MCP SDK and zod live in their own
 * bundle, dist/mcp.cjs, required here on use: no other command loads them (agent hooks start
 * `baton` on every tool call, and zod alone costs ~100 ms to load).
 */
import type { Baton } from "../../api.js";
import { startRunSweeper } from "../../platform/run-sweeper.js";
import { Ctx } from "../context.js";

declare const BATON_VERSION: string | undefined;

type McpModule = typeof import("../../mcp/stdio.js");

export async function mcp(ctx: Ctx): Promise<void> {
  // Built next to this bundle and external to it on purpose (scripts/build.mjs).
  const { serveStdio } = require("./mcp.cjs") as McpModule;
  // The workspace is opened on the first request, not at start: a client that starts the server
  // where there is no workspace yet still lists the tools, and each call answers
  // workspace_not_found (saying to run `baton init`) until there is one.
  let opened: Ctx | undefined;
  let opening: Promise<Baton> | undefined;
  let stopSweeping: (() => void) | undefined;
  const open = (): Promise<Baton> => {
    opening ??= (async () => {
      const attempt = new Ctx({ ...(ctx.root ? { root: ctx.root } : {}) });
      try {
        const baton = await attempt.open();
        opened = attempt;
        // Long-lived like the server: crashed runs are found without anyone asking. Quietly:
        // stdout is the protocol's, and the journal records each crash.
        stopSweeping = startRunSweeper(() => baton.runs.detectCrashed());
        return baton;
      } catch (err) {
        opening = undefined;
        throw err;
      }
    })();
    return opening;
  };
  try {
    await serveStdio({ open, version: typeof BATON_VERSION === "string" ? BATON_VERSION : "0.0.0-dev" });
  } finally {
    stopSweeping?.();
    await opened?.close();
  }
}
