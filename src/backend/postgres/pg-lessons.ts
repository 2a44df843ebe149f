/**
 * The lessons search index on PostgreSQL: a generated tsvector column (English stemming, so
 * "replacing" finds "replace") ranked with ts_rank, plus the hash of the LESSONS.md text it
 * was built from.
 */
import type { LessonDocRow, LessonQueries } from "../contract.js";
import type { PgCtx } from "./pg-types.js";

export class PgLessonQueries implements LessonQueries {
  readonly #c: PgCtx;
  constructor(c: PgCtx) {
    this.#c = c;
  }
  async indexedHash(): Promise<string | undefined> {
    const [r] = await this.#c.rows<{ hash: string }>("SELECT hash FROM lessons_index WHERE id = 1");
    return r?.hash;
  }
  async replaceIndex(hash: string, docs: readonly LessonDocRow[], at: string): Promise<void> {
    await this.#c.run("DELETE FROM lessons_docs");
    if (docs.length > 0) {
      await this.#c.run("INSERT INTO lessons_docs (id, text) SELECT * FROM unnest($1::text[], $2::text[])", [
        docs.map((d) => d.id),
        docs.map((d) => d.text),
      ]);
    }
    await this.#c.run(
      `INSERT INTO lessons_index (id, hash, lessons, indexed_at) VALUES (1, $1, $2, $3)
       ON CONFLICT (id) DO UPDATE SET hash = excluded.hash, lessons = excluded.lessons, indexed_at = excluded.indexed_at`,
      [hash, docs.length, at],
    );
  }
  async search(terms: readonly string[], limit: number): Promise<{ id: string; relevance: number }[]> {
    if (terms.length === 0) return [];
    // Each term through plainto_tsquery (stemmed, never a syntax error), OR-ed as tsquery text
    // (cast, not re-parsed, so lexemes are not stemmed twice). Stop words alone match nothing.
    return this.#c.rows<{ id: string; relevance: number }>(
      `WITH q AS (
         SELECT string_agg('(' || x || ')', ' | ')::tsquery AS q
         FROM (SELECT plainto_tsquery('english', t)::text AS x FROM unnest($1::text[]) t) s WHERE x <> '')
       SELECT id, ts_rank(tsv, q.q)::float8 AS relevance
       FROM lessons_docs, q WHERE q.q IS NOT NULL AND tsv @@ q.q
       ORDER BY relevance DESC, id LIMIT $2`,
      [[...terms], limit],
    );
  }
}
