import Database from "better-sqlite3";
import { SqliteBackend } from "../src/backend/sqlite/sqlite-backend.js";
import { ensureWorkspace, workspaceAt } from "../src/services/workspace.js";
import { journalContract, type StoreFactory } from "./contract/journal-contract.js";
import { ledgerContract } from "./contract/ledger-contract.js";
import { locksContract } from "./contract/locks-contract.js";
import { queueContract } from "./contract/queue-contract.js";

const sqliteStore: StoreFactory = async (root) => {
  const ws = workspaceAt(root);
  ensureWorkspace(ws);
  return {
    backend: new SqliteBackend({ path: ws.dbPath }),
    async raw(sql) {
      const db = new Database(ws.dbPath);
      try {
        db.exec(sql);
      } finally {
        db.close();
      }
    },
  };
};

journalContract("sqlite", sqliteStore);

queueContract("sqlite", sqliteStore);

ledgerContract("sqlite", sqliteStore);

locksContract("sqlite", sqliteStore);
