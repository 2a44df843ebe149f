/**
 * The lessons search index on PostgreSQL: a generated tsvector column (English stemming, so
 * "replacing" finds "replace") ranked with ts_rank, plus, per workspace scope, the hash of the
 * LESSONS.md text it was built from.
 */
import type { LessonDocRow, LessonQueries } from "../contract.js";
import type { PgCtx } from "./pg-types.js";

export class PgLessonQueries implements LessonQueries {
  readonly #c: PgCtx;
  constructor(c: PgCtx) {
    this.#c = c;
  }
  async indexedHash(scope: string): Promise<string | undefined> {
    const [r] = await this.#c.rows<{ hash: string }>("SELECT hash FROM lessons_index WHERE scope = $1", [scope]);
    return r?.hash;
  }
  async replaceIndex(scope: string, hash: string, docs: readonly LessonDocRow[], at: string): Promise<void> {
    await this.#c.run("DELETE FROM lessons_docs WHERE scope = $1", [scope]);
    if (docs.length > 0) {
      await this.#c.run("INSERT INTO lessons_docs (scope, id, text) SELECT $1, * FROM unnest($2::text[], $3::text[])", [
        scope,
        docs.map((d) => d.id),
        docs.map((d) => d.text),
      ]);
    }
    await this.#c.run(
      `INSERT INTO lessons_index (scope, hash, lessons, indexed_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (scope) DO UPDATE SET hash = excluded.hash, lessons = excluded.lessons, indexed_at = excluded.indexed_at`,
      [scope, hash, docs.length, at],
    );
  }
  async search(scope: string, terms: readonly string[], limit: number): Promise<{ id: string; relevance: number }[]> {
    if (terms.length === 0) return [];
    // Each term through plainto_tsquery (stemmed, never a syntax error), OR-ed as tsquery text
    // (cast, not re-parsed, so lexemes are not stemmed twice). Stop words alone match nothing.
    return this.#c.rows<{ id: string; relevance: number }>(
      `WITH q AS (
         SELECT string_agg('(' || x || ')', ' | ')::tsquery AS q
         FROM (SELECT plainto_tsquery('english', t)::text AS x FROM unnest($2::text[]) t) s WHERE x <> '')
       SELECT id, ts_rank(tsv, q.q)::float8 AS relevance
       FROM lessons_docs, q WHERE scope = $1 AND q.q IS NOT NULL AND tsv @@ q.q
       ORDER BY relevance DESC, id LIMIT $3`,
      [scope, [...terms], limit],
    );
  }
  async dropIndexes(before: string): Promise<number> {
    const gone = await this.#c.rows<{ scope: string }>("DELETE FROM lessons_index WHERE indexed_at < $1 RETURNING scope", [before], true);
    if (gone.length > 0) await this.#c.run("DELETE FROM lessons_docs WHERE scope = ANY ($1)", [gone.map((g) => g.scope)]);
    return gone.length;
  }
}
