/**
 * The lessons search index on SQLite: an FTS5 table (porter stemming, so "replacing" finds
 * "replace") ranked by BM25, plus, per workspace scope, the hash of the LESSONS.md text it
 * was built from.
 */
import type { LessonDocRow, LessonQueries } from "../contract.js";
import type { Prepare } from "./sqlite-types.js";

/** An FTS5 query matching any of the terms, each quoted so no term is read as syntax. */
export function ftsAnyOf(terms: readonly string[]): string {
  return terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(" OR ");
}

export class SqliteLessonQueries implements LessonQueries {
  readonly #stmt: Prepare;
  constructor(stmt: Prepare) {
    this.#stmt = stmt;
  }
  async indexedHash(scope: string): Promise<string | undefined> {
    const r = this.#stmt("SELECT hash FROM lessons_index WHERE scope = ?").get(scope) as { hash: string } | undefined;
    return r?.hash;
  }
  async replaceIndex(scope: string, hash: string, docs: readonly LessonDocRow[], at: string): Promise<void> {
    this.#stmt("DELETE FROM lessons_fts WHERE scope = ?").run(scope);
    const insert = this.#stmt("INSERT INTO lessons_fts (scope, id, text) VALUES (?, ?, ?)");
    for (const d of docs) insert.run(scope, d.id, d.text);
    this.#stmt(
      `INSERT INTO lessons_index (scope, hash, lessons, indexed_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (scope) DO UPDATE SET hash = excluded.hash, lessons = excluded.lessons, indexed_at = excluded.indexed_at`,
    ).run(scope, hash, docs.length, at);
  }
  async search(scope: string, terms: readonly string[], limit: number): Promise<{ id: string; relevance: number }[]> {
    if (terms.length === 0) return [];
    // bm25() is lower for better matches; negated so relevance grows with the match.
    return this.#stmt(
      `SELECT id, -bm25(lessons_fts) AS relevance FROM lessons_fts WHERE lessons_fts MATCH ? AND scope = ?
       ORDER BY bm25(lessons_fts) LIMIT ?`,
    ).all(ftsAnyOf(terms), scope, limit) as { id: string; relevance: number }[];
  }
  async dropIndexes(before: string): Promise<number> {
    const gone = this.#stmt("DELETE FROM lessons_index WHERE indexed_at < ? RETURNING scope").all(before) as { scope: string }[];
    const q = this.#stmt("DELETE FROM lessons_fts WHERE scope = ?");
    for (const g of gone) q.run(g.scope);
    return gone.length;
  }
}
