/** The agents Baton's hooks serve, by the name `baton hook <agent>` takes. */
import type { HookAgent } from "../hook-config.js";
import { claude } from "./claude.js";
import { codex } from "./codex.js";
import { gemini } from "./gemini.js";
import type { AgentAdapter } from "./types.js";

export const ADAPTERS: Readonly<Record<HookAgent, AgentAdapter>> = Object.freeze({ claude, codex, gemini });

export function adapterFor(agent: string | undefined): AgentAdapter | undefined {
  if (agent === undefined) return undefined;
  const a = agent.toLowerCase();
  return a === "claude" || a === "codex" || a === "gemini" ? ADAPTERS[a] : undefined;
}
