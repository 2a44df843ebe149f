/** Learning from mistakes: lessons, turns (the spiral detector) and the ledger. */
import type { Command } from "commander";
import { collect, lazy, required, session } from "./define.js";

export function defineLearningCommands(program: Command): void {
  const lessons = () => import("../commands/lessons.js");
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
        () => import("../commands/turns.js"),
        (m) => m.turnRecord,
      ),
    );

  const ledger = () => import("../commands/ledger.js");
  const lg = program.command("ledger").description("the trajectory ledger: one redacted, bounded node per tool-call attempt");
  lg.command("record")
    .description("record one tool-call attempt (redacted first; a storage failure is counted, never fails the call: exit 0)")
    .addOption(session())
    .addOption(required("--tool <name>", "the tool called"))
    .addOption(required("--status <status>", "success, error, no_progress, recovered or aborted"))
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
}
