/**
 * Baton installed as OpenCode's npm plugin the way a user does it (`opencode plugin agent-baton`,
 * from a registry the test serves: this checkout packed, its dependencies from node_modules),
 * driven by the scripted model (suite.ts): the same story as the plugin file, then `baton hooks
 * status` sees the package, and taking it out of opencode.json removes it.
 */
import { afterAll } from "vitest";
import { opencode, stopRegistries } from "./drivers.js";
import { agentSuite } from "./suite.js";

agentSuite(opencode, { route: "plugin" });
afterAll(stopRegistries);
