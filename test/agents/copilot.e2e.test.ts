/** GitHub Copilot CLI (the real CLI from npm) driven through Baton's hooks by the scripted model (suite.ts). */
import { copilot } from "./drivers.js";
import { agentSuite } from "./suite.js";

agentSuite(copilot);
