import { checkpointsSuite } from "./dashboard-checkpoints.suite.js";
import { sqliteStore } from "./dashboard-store.js";

checkpointsSuite(sqliteStore);
