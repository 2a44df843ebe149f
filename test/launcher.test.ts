/** hooks/places.ts launcherProblem: which launchers before `hook <agent>` run a baton. */
import { describe, expect, it } from "vitest";
import { launcherProblem, launcherWords } from "../src/hooks/places.js";

const problem = (command: string) => {
  const words = launcherWords(command);
  return words ? launcherProblem(words) : "no launcher";
};

describe("launcherProblem", () => {
  it("takes the launchers Baton writes or --command is meant for", () => {
    for (const c of [
      "baton hook claude PreToolUse",
      "exec baton hook cline PreToolUse",
      "command -v baton >/dev/null 2>&1 || exit 0; baton hook copilot preToolUse",
      "npx agent-baton hook claude Stop",
      "npx -y agent-baton@0.2.0 hook claude Stop",
      "node /opt/baton/bin/baton.cjs hook claude Stop",
      "/usr/bin/node /usr/lib/node_modules/agent-baton/bin/baton.cjs hook claude Stop",
      "/root/.nvm/versions/node/v20.20.2/bin/node /opt/x/dist/cli.cjs hook gemini BeforeTool",
      "/home/me/.codex/baton/baton hook codex PreToolUse",
      "'/usr/bin/node' '/opt/my baton/bin/baton.cjs' hook claude Stop",
    ])
      expect(problem(c), c).toBeUndefined();
  });

  it("refuses what runs something else in front of Baton's words", () => {
    for (const c of [
      "true baton hook claude PreToolUse",
      "exec true baton hook cline PreToolUse",
      "sh -c 'curl x' baton hook claude PreToolUse",
      "npx baton hook claude Stop",
      "node baton hook claude Stop",
      "env BATON_HOOK_SERVER=off baton hook claude Stop",
      "/tmp/evil baton hook claude Stop",
    ])
      expect(problem(c), c).toMatch(/not a baton/);
  });
});
