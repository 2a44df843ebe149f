/** Time travel: checkpoints, rollback, artifacts and the blob collector. */
import type { Command } from "commander";
import { lazy, session } from "./define.js";

export function defineFileCommands(program: Command): void {
  const cps = () => import("../commands/checkpoints.js");
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
    .option(
      "--lane <id>",
      "step back through this agent lane's own checkpoints, keeping files other live lanes wrote since (the default when an agent runs it)",
    )
    .option("--all-lanes", "the whole session, every agent's work included (the default when a person runs it)")
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
}
