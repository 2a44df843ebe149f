/** Baton installed as Claude Code's plugin (`claude plugin marketplace add`, `claude plugin install`), driven by the scripted model (suite.ts). */
import { claude } from "./drivers.js";
import { agentSuite } from "./suite.js";

agentSuite(claude, { route: "plugin" });
