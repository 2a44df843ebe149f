import { healthSuite } from "./dashboard-health.suite.js";
import { sqliteStore } from "./dashboard-store.js";

healthSuite(sqliteStore);
