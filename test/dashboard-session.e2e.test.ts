import { sessionSuite } from "./dashboard-session.suite.js";
import { sqliteStore } from "./dashboard-store.js";

sessionSuite(sqliteStore);
