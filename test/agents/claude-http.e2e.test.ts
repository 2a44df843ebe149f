/** Claude Code (the real CLI from npm) with its per-call hooks as HTTP hooks to the workspace's server (`baton hooks install claude --http`), driven by the scripted model (suite.ts). */
import { claude } from "./drivers.js";
import { agentSuite } from "./suite.js";

agentSuite(claude, { route: "http" });
