/** Baton installed as GitHub Copilot CLI's plugin (`copilot plugin marketplace add`, `copilot plugin install`), driven by the scripted model (suite.ts). */
import { copilot } from "./drivers.js";
import { agentSuite } from "./suite.js";

agentSuite(copilot, { route: "plugin" });
