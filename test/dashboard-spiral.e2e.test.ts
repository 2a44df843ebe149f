import { spiralSuite } from "./dashboard-spiral.suite.js";
import { sqliteStore } from "./dashboard-store.js";

spiralSuite(sqliteStore);
