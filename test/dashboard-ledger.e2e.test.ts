import { ledgerSuite } from "./dashboard-ledger.suite.js";
import { sqliteStore } from "./dashboard-store.js";

ledgerSuite(sqliteStore);
