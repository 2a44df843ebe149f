/** The agents Baton's hooks serve, by the name `baton hook <agent>` takes. */

import { claude } from "./claude.js";
import { cline } from "./cline.js";
import { codex } from "./codex.js";
import { HOOK_AGENTS, type HookAgent } from "./config.js";
import { copilot } from "./copilot.js";
import { gemini } from "./gemini.js";
import { opencode } from "./opencode.js";
import { qwen } from "./qwen.js";
import type { AgentAdapter } from "./types.js";

export const ADAPTERS: Readonly<Record<HookAgent, AgentAdapter>> = Object.freeze({ claude, codex, gemini, qwen, copilot, opencode, cline });

export function adapterFor(agent: string | undefined): AgentAdapter | undefined {
  if (agent === undefined) return undefined;
  const a = agent.toLowerCase();
  return (HOOK_AGENTS as readonly string[]).includes(a) ? ADAPTERS[a as HookAgent] : undefined;
}
