/** OpenCode (the real CLI from npm) driven through Baton's plugin by the scripted model (suite.ts). */
import { opencode } from "./drivers.js";
import { agentSuite } from "./suite.js";

agentSuite(opencode);
