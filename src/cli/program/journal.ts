/** Sessions and their journal: starting and reading sessions, events, status and resume, decisions, blockers, position and progress, runs, files and context, and the work queue. */
import { type Command, Option } from "commander";
import { collect, facets, journal, lazy, required, session } from "./define.js";

export function defineJournalCommands(program: Command): void {
  program
    .command("init")
    .description("create .baton/ here (or at --root); with --store, use a shared PostgreSQL project instead of SQLite")
    .option("--store <url>", "postgres://user@host:port/database (no password: use PGPASSWORD or ~/.pgpass)")
    .option("--project <name>", "the Baton project inside that database (one schema per project)")
    .action(lazy(journal, (m) => m.init));

  const s = program.command("session").description("start, list and show sessions");
  s.command("start")
    .description("start a session")
    .addOption(required("-f, --flow <flow>", "flow: task, external-run, live-variant, or a user flow in .baton/flows/"))
    .option("--id <id>", "session id (default: generated)")
    .option("-t, --title <title>", "a human title")
    .option("--deadline <iso>", "deadline (ISO-8601); external runs time out transiently before it")
    .action(lazy(journal, (m) => m.sessionStart));
  s.command("list")
    .description("list active sessions")
    .option("-a, --all", "include completed sessions")
    .action(lazy(journal, (m) => m.sessionList));
  s.command("show [id]")
    .description("show a session's snapshot")
    .addOption(session())
    .action(lazy(journal, (m) => m.sessionShow));

  program
    .command("event <session-or-type> [type]")
    .description("append an event: `baton event <session> <type>` or `baton event <type>` for the single active session")
    .addOption(session())
    .option("-d, --data <json>", "event data, a JSON object")
    .option("--id <id>", "idempotency key (default: generated); re-sending the same id and body is a no-op")
    .option("--actor <actor>", "who produced it: agent, browser, user, system (default: user)")
    .option("--revision <n>", "client revision; a revision not newer than the last is kept as stale")
    .option("--lock <name>", "append only while --epoch holds this lock (lock_lost otherwise); default BATON_LOCK_NAME")
    .option("--epoch <n>", "the lock epoch this append is fenced by; default BATON_LOCK_EPOCH")
    .action(lazy(journal, (m) => m.event));

  program
    .command("status")
    .description("active sessions with their next action")
    .option("-a, --all", "include completed sessions")
    .addOption(session())
    .action(lazy(journal, (m) => m.status));
  program
    .command("resume [id]")
    .description("everything a fresh agent needs to take the next step")
    .addOption(session())
    .option("--unpause", "clear a spiral pause first (the user chose how to go on)")
    .option("--reason <text>", "with --unpause: what the user chose")
    .option("--lane <id>", "with --unpause: clear only this agent lane's pause (default: every pause of the session)")
    .action(lazy(journal, (m) => m.resume));
  program
    .command("lanes")
    .description("the agent sessions working in a session now: agent, host, run, files claimed, spiral state")
    .addOption(session())
    .option("-a, --all", "include lanes that ended or crashed")
    .action(lazy(journal, (m) => m.lanes));
  program
    .command("complete [id]")
    .description("complete a session (refused while source markers remain)")
    .addOption(session())
    .option("--force", "complete even though markers remain")
    .action(lazy(journal, (m) => m.complete));
  program
    .command("state [id]")
    .description("render STATE.md for a session")
    .addOption(session())
    .option("-w, --write", "write it to .baton/sessions/<id>/STATE.md")
    .action(lazy(journal, (m) => m.state));
  program
    .command("export [id]")
    .description("the session's journal as JSON Lines")
    .addOption(session())
    .option("-o, --out <file>", "write to a file instead of stdout")
    .option("--seq <n>", "only the event with this seq (e.g. dead-lettered work to handle by hand)")
    .action(lazy(journal, (m) => m.exportJournal));
  program
    .command("rebuild")
    .description("refold snapshots from the journal and repair any that disagree")
    .addOption(session())
    .action(lazy(journal, (m) => m.rebuild));

  program
    .command("decision")
    .description("record decisions")
    .command("add <decision>")
    .description("record a decision")
    .addOption(session())
    .option("--context <text>", "what prompted it")
    .option("--reason <text>", "why")
    .option("--alternative <text>", "an alternative considered (repeatable)", collect)
    .option("--reversible", "the decision can be undone")
    .option("--no-reversible", "the decision cannot be undone")
    .action(lazy(facets, (m) => m.decisionAdd));

  const bl = program.command("blocker").description("record blockers");
  bl.command("add <text>")
    .description("add an active blocker")
    .addOption(session())
    .option("--id <id>", "blocker id (default: generated)")
    .option("--affects <what>", "what it blocks")
    .option("--workaround <text>", "a known workaround")
    .action(lazy(facets, (m) => m.blockerAdd));
  bl.command("resolve <id>")
    .description("mark a blocker resolved")
    .addOption(session())
    .option("--resolution <text>", "how it was resolved")
    .action(lazy(facets, (m) => m.blockerResolve));
  bl.command("bypass <id>")
    .description("mark a blocker bypassed")
    .addOption(session())
    .addOption(required("--workaround <text>", "the workaround in use"))
    .action(lazy(facets, (m) => m.blockerBypass));

  program
    .command("position")
    .description("record the position")
    .command("set")
    .description("set phase / plan / task / wave / status")
    .addOption(session())
    .option("--phase <v>")
    .option("--plan <v>")
    .option("--task <v>")
    .option("--wave <v>")
    .option("--status <v>")
    .action(lazy(facets, (m) => m.positionSet));
  program
    .command("progress")
    .description("record progress")
    .command("set")
    .description("set totals")
    .addOption(session())
    .option("--total <n>")
    .option("--completed <n>")
    .action(lazy(facets, (m) => m.progressSet));

  const run = program.command("run").description("agent runs on a session");
  run
    .command("start")
    .description("record that an agent run started")
    .addOption(session())
    .addOption(required("--agent <name>", "agent name, e.g. claude-code"))
    .option("--run-id <id>", "run id (default: generated)")
    .option("--pid <pid>", "the agent's process id (default: the calling process)")
    .option("--ttl <ms>", "a heartbeat older than this marks the run crashed (default 1800000)")
    .action(lazy(facets, (m) => m.runStart));
  run
    .command("heartbeat <runId>")
    .description("say the run is alive (kept outside the journal); refused with run_crashed once it was marked crashed")
    .addOption(session())
    .option("--ttl <ms>", "new ttl from now (default: the run's)")
    .action(lazy(facets, (m) => m.runHeartbeat));
  run
    .command("end <runId>")
    .description("record that a run ended")
    .addOption(session())
    .option("--reason <text>", "handoff reason (e.g. context full)")
    .option("--completed-work <text>", "what the run finished")
    .option("--context-usage <n>", "context used (fraction or tokens)")
    .action(lazy(facets, (m) => m.runEnd));

  program
    .command("files")
    .description("resume context")
    .command("add <paths...>")
    .description("record modified files (hashed now, verified on resume) and notes")
    .addOption(session())
    .option("--question <text>", "an open question (repeatable)", collect)
    .option("--implementation <text>", "a key implementation note (repeatable)", collect)
    .action(lazy(facets, (m) => m.filesAdd));
  program
    .command("context")
    .description("free context")
    .command("set <pairs...>")
    .description("set key=value pairs (values parsed as JSON when they are JSON)")
    .addOption(session())
    .action(lazy(facets, (m) => m.contextSet));

  const queue = () => import("../commands/queue.js");
  program
    .command("poll")
    .description("wait for work (long-poll) and lease it; through the server when one runs")
    .addOption(new Option("-s, --session <id>", "only this session's work"))
    .option("--kinds <list>", "only these event kinds, comma-separated (e.g. accept,discard)")
    .option("--timeout <ms>", "how long to wait for work (default 30000; 0 = do not wait)")
    .option("--lease-ms <ms>", "lease length (default 60000); heartbeat to keep it longer")
    .option("--owner <name>", "who holds the lease (default: cli:<parent pid>)")
    .action(lazy(queue, (m) => m.poll));
  program
    .command("ack <leaseId>")
    .description("finish leased work; --result journals the outcome in the same transaction")
    .option("--result <json>", 'the result event, e.g. \'{"type":"accepted","data":{"carbonize":true}}\'')
    .action(lazy(queue, (m) => m.ack));
  program
    .command("nack <leaseId>")
    .description("give leased work back (a failed attempt)")
    .option("--delay <ms>", "not before this many milliseconds")
    .option("--reason <text>", "why")
    .action(lazy(queue, (m) => m.nack));
  const leaseCmd = program.command("lease").description("leases");
  leaseCmd
    .command("heartbeat <leaseId>")
    .description("extend a lease")
    .option("--lease-ms <ms>", "new length from now (default 60000)")
    .action(lazy(queue, (m) => m.heartbeat));
  leaseCmd
    .command("release <leaseId>")
    .description("give someone's leased work back to the queue (a nack), only while that lease still holds it")
    .option("--reason <text>", "why")
    .action(lazy(queue, (m) => m.release));
  program
    .command("retry <itemId>")
    .description("deliver dead-lettered work again, with fresh attempts (its id: `baton status --json`, diagnostics)")
    .action(lazy(queue, (m) => m.retry));
}
