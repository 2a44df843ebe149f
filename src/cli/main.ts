/**
 * The `baton` CLI. This file only declares commands; each command's code is a lazily imported
 * chunk, so `baton status` parses only what status needs (agent hooks start this process on
 * every tool call; see docs/benchmarks.md).
 */
import { Command, CommanderError, Option } from "commander";
import { BatonError } from "../errors.js";
import { Ctx, reportError } from "./context.js";
import { writeStderr, writeStdout } from "./output.js";

declare const BATON_VERSION: string | undefined;

type Handler = (ctx: Ctx, ...args: never[]) => Promise<void>;

/** Wrap a lazily loaded handler: build the context, run, report errors with exit codes. */
function lazy<M>(load: () => Promise<M>, pick: (m: M) => Handler) {
  return async (...args: unknown[]): Promise<void> => {
    const cmd = args[args.length - 1] as Command;
    const opts = cmd.optsWithGlobals() as Record<string, unknown>;
    const positional = args.slice(0, -2);
    const ctx = new Ctx(opts);
    try {
      const fn = pick(await load()) as (ctx: Ctx, ...a: unknown[]) => Promise<void>;
      await fn(ctx, ...positional, opts);
    } catch (err) {
      process.exitCode = reportError(err, ctx.json);
    } finally {
      await ctx.close().catch(() => undefined);
    }
  };
}

const journal = () => import("./commands/journal.js");
const facets = () => import("./commands/facets.js");
const flows = () => import("./commands/flows.js");
const collect = (v: string, prev: string[] = []) => [...prev, v];
const session = () => new Option("-s, --session <id>", "session id (default: the single active session)");

export function buildProgram(json = false): Command {
  // Set before any subcommand is added: subcommands copy these settings when created.
  const program = new Command("baton").exitOverride();
  // Help and version go through the shared stdout path too (a closed pipe ends them quietly).
  program.configureOutput({ writeOut: writeStdout, writeErr: json ? () => undefined : writeStderr });
  program
    .description("Durable sessions for AI agents: what happened, where things stand, and what to do next.")
    .version(typeof BATON_VERSION === "string" ? BATON_VERSION : "0.0.0-dev", "-V, --version")
    .option("--json", 'machine-readable output (errors too: {"error": {code, message}} on stdout)')
    .option("--root <dir>", "workspace root (default: BATON_ROOT, else the nearest directory with .baton/)")
    .showHelpAfterError("(run with --help for usage)")
    .addHelpText(
      "after",
      "\nExit codes: 0 ok · 1 internal failure · 2 bad input · 3 refused by state (invalid transition, conflict, source_dirty, lock_held, lock_lost) · 4 not found · 5 storage failure",
    );

  program
    .command("init")
    .description("create .baton/ here (or at --root); with --store, use a shared PostgreSQL project instead of SQLite")
    .option("--store <url>", "postgres://user@host:port/database (no password: use PGPASSWORD or ~/.pgpass)")
    .option("--project <name>", "the Baton project inside that database (one schema per project)")
    .action(lazy(journal, (m) => m.init));

  const s = program.command("session").description("start, list and show sessions");
  s.command("start")
    .description("start a session")
    .requiredOption("-f, --flow <flow>", "flow: task, external-run, live-variant, or a user flow in .baton/flows/")
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
    .action(lazy(journal, (m) => m.resume));
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
    .requiredOption("--workaround <text>", "the workaround in use")
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
    .requiredOption("--agent <name>", "agent name, e.g. claude-code")
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

  const queue = () => import("./commands/queue.js");
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

  const cps = () => import("./commands/checkpoints.js");
  const ck = program
    .command("checkpoint")
    .description("record file versions to roll back to: the files a tool is about to write (--files), or the whole tree")
    .addOption(session())
    .option("--files <paths...>", "targeted: the files about to be written (missing ones are recorded as absent)")
    .option("--all", "the whole tree minus .gitignore'd files (the default without --files)")
    .option("--label <text>", "a name for this point")
    .option("--tool <name>", "the tool about to write")
    .option("--turn <n>", "the agent turn")
    .option("--run <id>", "the agent run")
    .option("--pin", "keep it whatever the retention limit")
    .action(lazy(cps, (m) => m.checkpoint));
  ck.command("pin <id>")
    .description("keep a checkpoint whatever the retention limit")
    .action(lazy(cps, (m) => m.pin));
  ck.command("unpin <id>")
    .description("let retention prune a checkpoint again")
    .action(lazy(cps, (m) => m.unpin));
  ck.command("show <id>")
    .description("a checkpoint and its files")
    .action(lazy(cps, (m) => m.show));
  program
    .command("checkpoints")
    .description("list a session's checkpoints, oldest first")
    .addOption(session())
    .option("--pruned", "include checkpoints retention pruned")
    .action(lazy(cps, (m) => m.checkpoints));
  program
    .command("rollback [steps]")
    .description("restore files: one step back (default), N steps, or --to a checkpoint; undoable")
    .addOption(session())
    .option("--to <id>", "the checkpoint to restore")
    .option("--files <paths...>", "restore only these files (or directories)")
    .option("--dry-run", "show the unified diff of what would change; change nothing")
    .option("--other-host", "restore a checkpoint another host took (a shared store) into this workspace")
    .action(lazy(cps, (m) => m.rollback));
  const art = program.command("artifact").description("files attached to a session, kept until it completes");
  art
    .command("add <file>")
    .description("attach a file (stored in .baton/blobs/)")
    .addOption(session())
    .option("--name <name>", "default: the file's name")
    .option("--label <text>", "what it is")
    .option("--type <mediaType>", "e.g. image/png")
    .action(lazy(cps, (m) => m.artifactAdd));
  art
    .command("list")
    .description("the session's artifacts")
    .addOption(session())
    .action(lazy(cps, (m) => m.artifactList));
  art
    .command("get <idOrName>")
    .description("an artifact's content (to stdout, or --out)")
    .addOption(session())
    .option("-o, --out <file>", "write it to a file")
    .action(lazy(cps, (m) => m.artifactGet));
  program
    .command("gc")
    .description("delete blobs no checkpoint or active session's artifact references")
    .option("--grace <ms>", "only those older than this (default 3600000: a checkpoint in progress elsewhere is safe)")
    .action(lazy(cps, (m) => m.gc));

  const lessons = () => import("./commands/lessons.js");
  const intentOptions = (c: Command) =>
    c
      .addOption(session())
      .option("--intent <text|json>", 'what the agent is about to do: prompt text, or {"tool","paths","prompt","fingerprint"}')
      .option("--tool <name>", "the tool about to run")
      .option("--path <path>", "a file about to be touched (repeatable)", collect)
      .option("--fingerprint <fp>", "the failure just seen");
  const ls = program.command("lessons").description("lessons: advice for agents, kept in LESSONS.md at the workspace root");
  ls.command("add <text>")
    .description("write a lesson to LESSONS.md (for the session by default; --workspace for every session)")
    .addOption(session())
    .option("--workspace", "a workspace-wide lesson rather than one for this session")
    .option("--tool <name>", "trigger: a tool name (repeatable)", collect)
    .option("--path <glob>", "trigger: a path or glob (repeatable)", collect)
    .option("--fingerprint <fp>", "trigger: a failure fingerprint (repeatable)", collect)
    .option("--from-rollback <id>", "the rollback this lesson was learned from")
    .option("--pin", "always offer it when there is room")
    .option("--expires <date>", "stop offering it after this date (ISO-8601)")
    .option("--id <id>", "lesson id (default: generated)")
    .action(lazy(lessons, (m) => m.lessonsAdd));
  ls.command("list")
    .description("lessons in LESSONS.md and any problems in the file")
    .option("-s, --session <id>", "only what this session sees (its own and workspace lessons)")
    .option("-a, --all", "include expired lessons")
    .action(lazy(lessons, (m) => m.lessonsList));
  intentOptions(ls.command("search [query...]").description("lessons ranked for an intent (BM25 + trigger boosts)"))
    .option("--k <n>", "how many (default 10)")
    .action(lazy(lessons, (m) => m.lessonsSearch));
  intentOptions(ls.command("inject").description("the markdown block of the top lessons to put in a prompt"))
    .option("--k <n>", "at most this many lessons (default 5)")
    .option("--max-chars <n>", "at most this many characters (default 2000)")
    .action(lazy(lessons, (m) => m.lessonsInject));
  ls.command("rm <id>")
    .description("remove a lesson's block from LESSONS.md")
    .action(lazy(lessons, (m) => m.lessonsRemove));
  ls.command("check")
    .description("validate LESSONS.md; exit 2 when a block does not parse")
    .action(lazy(lessons, (m) => m.lessonsCheck));

  program
    .command("turn")
    .description("agent turns, watched by the spiral detector")
    .command("record")
    .description("record one turn (a tool call and its result); pauses the session when it completes a spiral")
    .addOption(session())
    .option("--tool <name>", "the tool called (required, here or in --record)")
    .option("--args <text>", "the call's arguments (hashed; JSON is canonicalised first)")
    .option("--args-hash <hash>", "a hash of the arguments, computed by the caller")
    .option("--file <path>", "a file the call wrote, hashed and measured now (repeatable)", collect)
    .option("--status <status>", "success (default), error, no_progress or recovered")
    .option("--fingerprint <fp>", "the failure's fingerprint")
    .option("--observation <text>", "what the call returned (hashed)")
    .option("--observation-hash <hash>", "a hash of what the call returned")
    .option("--checkpoint <id>", "the checkpoint taken before this turn")
    .option("--progress", "this turn made real progress (resets the detector)")
    .option("--no-progress", "this turn made no progress")
    .option("--id <id>", "idempotency key: re-recording the same turn is a no-op")
    .option(
      "--record <json>",
      'the whole turn as JSON, e.g. \'{"tool":"Edit","argsHash":"…","files":[{"path":"a.ts","hash":"…","size":10}]}\'',
    )
    .action(
      lazy(
        () => import("./commands/turns.js"),
        (m) => m.turnRecord,
      ),
    );

  const ledger = () => import("./commands/ledger.js");
  const lg = program.command("ledger").description("the trajectory ledger: one redacted, bounded node per tool-call attempt");
  lg.command("record")
    .description("record one tool-call attempt (redacted first; a storage failure is counted, never fails the call: exit 0)")
    .addOption(session())
    .requiredOption("--tool <name>", "the tool called")
    .requiredOption("--status <status>", "success, error, no_progress, recovered or aborted")
    .option("--args <json>", "the call's arguments (JSON, else kept as text; - reads stdin); redacted and summarised")
    .option("--error <text>", "the error text (redacted; fingerprinted); - reads stdin")
    .option("--observation <text>", "what the call returned (redacted, bounded); - reads stdin")
    .option("--progress <status>", "your progress verdict, e.g. advanced, stalled, regressed")
    .option("--fingerprint <fp>", "a failure fingerprint you computed (default: from --error)")
    .option("--recovery-tool <name>", "the tool that made a recovery possible")
    .option("--evidence <handle|json>", 'evidence kept elsewhere: a handle, or {"handle","kind","mediaType","bytes","hash","label"}')
    .option("--reward <n>", "a score, if a scorer gave one")
    .option("--duration-ms <n>", "how long the call took")
    .option("--workflow <id>", "workflow id")
    .option("--tab <id>", "browser tab id")
    .option("--parent <nodeId>", "the node this follows (default: the session's previous node)")
    .option("--id <nodeId>", "node id, the idempotency key (default: generated)")
    .action(lazy(ledger, (m) => m.ledgerRecord));
  lg.command("list")
    .description("a session's nodes, oldest first")
    .addOption(session())
    .option("--status <status>", "only this status")
    .option("--tool <name>", "only this tool")
    .option("--workflow <id>", "only this workflow")
    .option("--tab <id>", "only this tab")
    .option("--limit <n>", "only the newest n")
    .action(lazy(ledger, (m) => m.ledgerList));
  lg.command("show <nodeId>")
    .description("one node")
    .action(lazy(ledger, (m) => m.ledgerShow));
  lg.command("export")
    .description("nodes as JSON Lines, or as OpenTelemetry spans (OTLP/JSON) to a file or an OTLP/HTTP endpoint")
    .addOption(session())
    .option("-a, --all", "every session's nodes")
    .option("--format <format>", "jsonl (default) or otlp (one ExportTraceServiceRequest per line)")
    .option("-o, --out <file>", "write to a file instead of stdout")
    .option("--endpoint <url>", "POST OTLP/JSON to <url>/v1/traces (e.g. http://127.0.0.1:4318)")
    .option("--header <key=value>", "an HTTP header for --endpoint (repeatable; also OTEL_EXPORTER_OTLP_HEADERS)", collect)
    .action(lazy(ledger, (m) => m.ledgerExport));
  lg.command("health")
    .description("failed ledger writes (counted, persisted in .baton/ledger-failures.json)")
    .action(lazy(ledger, (m) => m.ledgerHealth));

  const locks = () => import("./commands/locks.js");
  const lk = program.command("lock").description("named locks: heartbeated, reclaimed only on proof, fenced by their epoch");
  lk.command("acquire <name>")
    .description("take a lock for the calling process (or --pid); prints its epoch, the fencing token")
    .option("--ttl <ms>", "how long it lives without a heartbeat (default 120000)")
    .option("--wait <ms>", "wait this long for a live holder (default 0: fail at once with lock_held)")
    .option("--pid <pid>", "the holding process (default: the caller, i.e. this command's parent)")
    .option("--owner <name>", "who holds it (default: cli:<pid>)")
    .option("--run <runId>", "the agent run holding it")
    .action(lazy(locks, (m) => m.acquire));
  lk.command("release <name>")
    .description("release a lock you hold")
    .option("--epoch <n>", "the epoch you hold (default: the one held by --pid)")
    .option("--pid <pid>", "the holding process (default: the caller)")
    .action(lazy(locks, (m) => m.release));
  lk.command("heartbeat <name>")
    .description("extend a lock you hold")
    .option("--epoch <n>", "the epoch you hold (default: the one held by --pid)")
    .option("--pid <pid>", "the holding process (default: the caller)")
    .option("--ttl <ms>", "new ttl from now (default: the lock's)")
    .action(lazy(locks, (m) => m.heartbeat));
  lk.command("inspect <name>")
    .description("the holder, its epoch, and whether it is provably stale (with the proof)")
    .action(lazy(locks, (m) => m.inspect));
  lk.command("list")
    .description("every lock, held or free")
    .action(lazy(locks, (m) => m.list));
  lk.command("run <name> <command...>")
    .description("hold the lock with heartbeats while a command runs (baton lock run NAME -- CMD ARGS); exits with its code")
    .option("--ttl <ms>", "lock ttl; heartbeats every ttl/3 (default 60000)")
    .option("--wait <ms>", "wait this long for a live holder (default 0)")
    .option("--owner <name>", "who holds it (default: lock-run:<pid>)")
    .action(lazy(locks, (m) => m.run));

  const targets = () => import("./commands/targets.js");
  const tg = program.command("target").description("the external target a session is bound to (a tab, a remote job)");
  tg.command("set [session]")
    .description("bind the session to a target (URLs are kept as protocol, host and path)")
    .addOption(session())
    .requiredOption("--kind <kind>", "e.g. browser-tab, job")
    .requiredOption("--id <id>", "the target's id in its system")
    .option("--url <url>", "where it lives")
    .option("--label <text>", "a human name")
    .action(lazy(targets, (m) => m.set));
  tg.command("show [session]")
    .description("the bound target")
    .addOption(session())
    .action(lazy(targets, (m) => m.showTarget));
  tg.command("resolve [session]")
    .description("is the observed target the bound one? target_mismatch unless --navigate or --force")
    .addOption(session())
    .option("--kind <kind>", "observed kind")
    .option("--id <id>", "observed id")
    .option("--url <url>", "observed URL")
    .option("--navigate", "on a mismatch, answer `navigate` (go back to the bound target) instead of failing")
    .option("--force", "on a mismatch, rebind the session to the observed target")
    .action(lazy(targets, (m) => m.resolve));
  tg.command("clear [session]")
    .description("unbind the session's target")
    .addOption(session())
    .option("--reason <text>", "why")
    .action(lazy(targets, (m) => m.clear));

  program
    .command("watch [session]")
    .description("follow an external run until it is terminal; a timeout before the deadline is resumed as polling")
    .addOption(session())
    .option("--interval <ms>", "between ticks (default 2000)")
    .action(
      lazy(
        () => import("./commands/watch.js"),
        (m) => m.watch,
      ),
    );

  program
    .command("doctor [session]")
    .description(
      "check the database, journal, leases, locks, runs, blobs, files and server; --fix applies safe repairs (--fix <code...>: only those codes)",
    )
    .addOption(new Option("-s, --session <id>", "only this session (default: the whole workspace)"))
    .option("--fix [codes...]", "apply the safe repairs and report each; with finding codes (e.g. lease_expired), only theirs")
    .action(
      lazy(
        () => import("./commands/doctor.js"),
        (m) => m.doctor,
      ),
    );

  const hooks = () => import("./commands/hooks.js");
  program
    .command("hook <agent> <event>")
    .description(
      "run as an agent hook: reads the agent's JSON on stdin, answers in its format (claude, codex, gemini; the agent's event name, e.g. PreToolUse); never blocks the agent on a Baton failure",
    )
    .action(lazy(hooks, (m) => m.hook));
  const hk = program.command("hooks").description("Baton's entries in Claude Code, Codex and Gemini CLI hook configuration");
  hk.command("install <agent>")
    .description("merge Baton's hooks into the agent's settings (claude, codex, gemini); other hooks are kept, the old file is backed up")
    .option("--project", "this project's settings (default), e.g. .claude/settings.json")
    .option("--user", "your user settings, e.g. ~/.claude/settings.json")
    .option("--command <launcher>", 'what runs baton in the hooks (default: this node and baton by absolute path; e.g. "baton")')
    .action(lazy(hooks, (m) => m.install));
  hk.command("uninstall <agent>")
    .description("remove exactly the hooks Baton added (the old file is backed up)")
    .option("--project", "this project's settings (default)")
    .option("--user", "your user settings")
    .action(lazy(hooks, (m) => m.uninstall));
  hk.command("status [agent]")
    .description("where Baton's hooks are installed, per agent and scope")
    .action(lazy(hooks, (m) => m.status));

  const fl = program.command("flows").description("flows: built in and in .baton/flows/");
  fl.command("list")
    .description("list flows and report invalid flow files")
    .action(lazy(flows, (m) => m.flowsList));
  fl.command("validate <files...>")
    .description("validate flow files; problems name the line and field")
    .action(lazy(flows, (m) => m.flowsValidate));

  program
    .command("serve")
    .description("run the local server (JSON API, SSE, long-poll, demo page) on 127.0.0.1 until Ctrl-C")
    .option("--port <n>", "port (default: the port used last time if free, else any free port; 0 = any)")
    .option("--rotate-token", "make a new token instead of reusing this workspace's")
    .option("--allow-origin <origin>", "also serve pages from this origin, e.g. http://localhost:5173 (repeatable)", collect)
    .option("--idle-exit <duration>", "exit after this long without requests (e.g. 30m; also when .baton/config.json changes)")
    .action(
      lazy(
        () => import("./commands/serve.js"),
        (m) => m.serve,
      ),
    );

  program
    .command("dashboard")
    .description("print (with --open, open) a one-time login link to the dashboard; starts the server if none runs")
    .option("--open", "open the link in the system's browser")
    .action(
      lazy(
        () => import("./commands/dashboard.js"),
        (m) => m.dashboard,
      ),
    );

  program
    .command("mcp")
    .description("run the MCP server over stdio (tools, STATE.md and LESSONS.md resources, a resume prompt) for an agent")
    .action(
      lazy(
        () => import("./commands/mcp.js"),
        (m) => m.mcp,
      ),
    );

  program
    .command("demo")
    .description("tell three stories (recovery, delivery, time travel) for real in a temporary workspace")
    .option("--keep", "keep the temporary workspace")
    .option("--quiet", "only the final summary")
    .option("--chapter <n>", "tell only chapter n: 1 recovery, 2 delivery, 3 time travel")
    .action(
      lazy(
        () => import("../demo/demo.js"),
        (m) => m.demo,
      ),
    );

  return program;
}

export async function main(argv: string[]): Promise<void> {
  const json = argv.includes("--json");
  const program = buildProgram(json);
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === "commander.helpDisplayed" || err.code === "commander.version" || err.code === "commander.help") {
        process.exitCode = 0;
        return;
      }
      const message = err.message.replace(/^error: /, "");
      process.exitCode = 2;
      if (json) process.exitCode = reportError(new BatonError("bad_input", message), true);
      return;
    }
    process.exitCode = reportError(err, json);
  }
}

void main(process.argv);
