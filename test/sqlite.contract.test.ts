import Database from "better-sqlite3";
import { SqliteBackend } from "../src/backend/sqlite/sqlite-backend.js";
import { ensureWorkspace, workspaceAt } from "../src/services/workspace.js";
import { journalContract } from "./contract/journal-contract.js";

journalContract("sqlite", async (root) => {
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
});
