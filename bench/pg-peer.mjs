/**
 * One of the two OS processes bench/postgres.mjs runs writers and waiters in (forked, with an
 * IPC channel). Each opens its own Baton, its own raw pool and its own LangGraph PostgresSaver on
 * the cluster, as two agents' processes would, and does what the parent asks. Times are wall
 * clock (`performance.timeOrigin + performance.now()`), which both processes share.
 */
import { createHash } from "node:crypto";
import { performance } from "node:perf_hooks";
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";
import { cleanupAll, loadBaton, tempDir } from "./lib.mjs";

const POOL = 16;
const wall = () => performance.timeOrigin + performance.now();
const sleepUntil = (t) => new Promise((r) => setTimeout(r, Math.max(0, t - wall())));

let baton;
let raw;
let saver;
let waiting;
/** A LISTEN of its own on the project's channel: when the notice reached this process (the first hop). */
let listener;
let heard;
/** The project's schema, which is also its NOTIFY channel. */
let schema;

/** As the PostgreSQL backend names a project's schema (pg-backend.ts `projectSchema`). */
const projectSchema = (project) => `baton_${project.replace(/-/g, "_")}_${createHash("sha256").update(project).digest("hex").slice(0, 8)}`;

/**
 * One durable append of each contestant, for writer `id`'s n-th write. Baton: `append` of one
 * small event. Raw: the session row's seq bumped and the event row inserted, in one transaction.
 * LangGraph: `put` of a checkpoint whose one channel holds the same small value (one blob row
 * and the checkpoint row, in one transaction), as a graph step that changed one channel does.
 */
const appenders = {
  async baton(id, n) {
    await baton.events.append(id, { type: "note:added", data: { text: `n${n}` } });
  },
  async raw(id, n) {
    const client = await raw.connect();
    try {
      await client.query("BEGIN");
      const s = await client.query("UPDATE raw_sessions SET last_seq = last_seq + 1 WHERE id = $1 RETURNING last_seq", [id]);
      await client.query("INSERT INTO raw_events VALUES ($1, $2, $3, 'note:added', $4, $5)", [
        id,
        s.rows[0].last_seq,
        `e${Math.random()}`,
        JSON.stringify({ text: `n${n}` }),
        new Date().toISOString(),
      ]);
      await client.query("COMMIT");
    } finally {
      client.release();
    }
  },
  async langgraph(id, n) {
    const checkpoint = { ...emptyCheckpoint(), id: uuid6(-1), channel_values: { note: { text: `n${n}` } }, channel_versions: { note: n } };
    await saver.put(
      { configurable: { thread_id: id, checkpoint_ns: "" } },
      checkpoint,
      { source: "loop", step: n, parents: {} },
      { note: n },
    );
  },
};

const handlers = {
  async open({ url, project }) {
    const { openBaton, openPostgresStore } = await loadBaton();
    baton = await openBaton({ root: tempDir("peer"), store: await openPostgresStore({ url, project, poolSize: POOL }) });
    schema = projectSchema(project);
    raw = new pg.Pool({ connectionString: url, max: POOL });
    saver = new PostgresSaver(new pg.Pool({ connectionString: url, max: POOL }), undefined, { schema: "bench_langgraph" });
    return {};
  },
  async prepare({ kind, ids }) {
    for (const id of ids) {
      if (kind === "baton") await baton.sessions.start({ flow: "task", id });
      if (kind === "raw") await raw.query("INSERT INTO raw_sessions VALUES ($1, 0)", [id]);
    }
    return {};
  },
  /** `ids.length` concurrent writers, `per` appends each (numbered after `from`), starting together at `startAt`. */
  async run({ kind, ids, per, from, startAt }) {
    await sleepUntil(startAt);
    const t0 = wall();
    const c0 = process.cpuUsage();
    await Promise.all(
      ids.map(async (id) => {
        for (let n = from + 1; n <= from + per; n++) await appenders[kind](id, n);
      }),
    );
    const c = process.cpuUsage(c0);
    return { ops: ids.length * per, t0, t1: wall(), cpuMs: (c.user + c.system) / 1000 };
  },
  /** Park a long-poll on `session` (the parent then has the other process append). */
  async park({ session }) {
    waiting = baton.work.waitFor("waiter", { sessionId: session, timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 20));
    heard = undefined;
    return {};
  },
  /** When the parked long-poll's lease arrived (it is acked at once). */
  async woken() {
    const lease = await waiting;
    const t = wall();
    if (lease) await baton.work.ack(lease.leaseId);
    return { t, heard, leased: lease !== undefined };
  },
  async append({ session, i }) {
    const t0 = wall();
    await baton.events.append(session, { type: "steer", actor: "browser", data: { i } });
    return { t0, t1: wall() };
  },
  /** The session the wake rounds use, and (opened only now, so appends are not measured with it) the LISTEN of its own. */
  async start({ url, session, listen }) {
    if (session) await baton.sessions.start({ flow: "live-variant", id: session });
    if (listen) {
      listener = new pg.Client({ connectionString: url });
      await listener.connect();
      listener.on("notification", () => {
        heard ??= wall();
      });
      await listener.query(`LISTEN ${pg.escapeIdentifier(schema)}`);
    }
    return {};
  },
  async close() {
    await listener?.end();
    await baton?.close();
    await raw?.end();
    await saver?.end();
    cleanupAll();
    return {};
  },
};

process.on("message", async (m) => {
  try {
    process.send({ id: m.id, ok: true, value: await handlers[m.op](m) });
  } catch (err) {
    process.send({ id: m.id, ok: false, error: String(err?.stack ?? err) });
  }
});
