/** Gemini CLI (the real CLI from npm) driven through Baton's hooks by the scripted model. */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentSuite } from "./suite.js";

agentSuite({
  agent: "gemini",
  async setup(p) {
    mkdirSync(join(p.home, ".gemini"), { recursive: true });
    writeFileSync(
      join(p.home, ".gemini", "settings.json"),
      `${JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } } }, null, 2)}\n`,
    );
    const r = p.baton(["hooks", "install", "gemini", "--command", "baton"]);
    if (r.code !== 0) throw new Error(`baton hooks install gemini: ${r.stderr}`);
  },
  // Gemini CLI compresses by itself before a request once the last one used more than half the
  // model's context window: two requests in the turn, the first reporting a large prompt.
  compact: {
    prompt: "Carry on.",
    inputTokens: 900_000,
    steps: [
      { op: "read", path: "a.txt" },
      { op: "text", text: "Carried on." },
    ],
  },
  args(prompt, resume) {
    return ["-p", prompt, "--yolo", "--output-format", "stream-json", ...(resume ? ["--resume", resume] : [])];
  },
  env(url) {
    return { GOOGLE_GEMINI_BASE_URL: url, GEMINI_API_KEY: "e2e-key", GEMINI_CLI_TRUST_WORKSPACE: "true" };
  },
  sessionId(run) {
    return run.events.find((e) => e.type === "init")?.session_id;
  },
  // Gemini CLI's own notice, once, the first time it meets a project's hooks (it then records
  // them as trusted): not about Baton's configuration.
  benign: [/project-level hooks have been detected/],
});
