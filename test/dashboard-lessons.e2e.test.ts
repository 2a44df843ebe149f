import { lessonsSuite } from "./dashboard-lessons.suite.js";
import { sqliteStore } from "./dashboard-store.js";

lessonsSuite(sqliteStore);
