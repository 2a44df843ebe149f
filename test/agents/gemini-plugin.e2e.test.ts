/** Baton installed as Gemini CLI's extension (`gemini extensions install`), driven by the scripted model (suite.ts). */
import { gemini } from "./drivers.js";
import { agentSuite } from "./suite.js";

agentSuite(gemini, { route: "plugin" });
