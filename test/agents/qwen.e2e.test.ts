/** Qwen Code (the real CLI from npm) driven through Baton's hooks by the scripted model (suite.ts). */
import { qwen } from "./drivers.js";
import { agentSuite } from "./suite.js";

agentSuite(qwen);
