/**
 * Whether an agent will run the hooks Baton installed (agent-setup.ts, qwen-setup.ts decide it
 * per agent), and the place an install is for. Types only.
 */
import type { CodexTrust } from "./codex-trust.js";

export interface SetupPlace {
  scope: "project" | "user";
  root: string;
  home?: string;
  env?: NodeJS.ProcessEnv;
}

export interface Readiness {
  /** Whether the agent runs these hooks as things stand (as far as Baton can tell from the files). */
  willRun: boolean;
  /** What the user must still do before it does, each a complete instruction. */
  remaining: string[];
  /** Codex: each Baton hook's trust in config.toml. */
  trust?: { event: string; key: string; status: CodexTrust }[];
  /** The file that records the agent's trust (Codex: config.toml; Gemini CLI and Qwen Code: trustedFolders.json). */
  trustFile?: string;
}
