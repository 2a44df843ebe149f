import { sqliteStore } from "./dashboard-store.js";
import { workSuite } from "./dashboard-work.suite.js";

workSuite(sqliteStore);
