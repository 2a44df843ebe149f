import type BetterSqlite3 from "better-sqlite3";

/** A cached prepared statement for a SQL text; each query group receives one. */
export type Prepare = (sql: string) => BetterSqlite3.Statement;
