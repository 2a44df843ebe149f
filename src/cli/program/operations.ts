/** Coordination and operations: locks, targets, the server, hooks, trusting the workspace's settings, flows, MCP, doctor and the demo. */
import { type Command, Option } from "commander";
import { collect, flows, lazy, required, session } from "./define.js";

export function defineOperationCommands(program: Command): void {
  const locks = () => import("../commands/locks.js");
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

  const targets = () => import("../commands/targets.js");
  const tg = program.command("target").description("the external target a session is bound to (a tab, a remote job)");
  tg.command("set [session]")
    .description("bind the session to a target (URLs are kept as protocol, host and path)")
    .addOption(session())
    .addOption(required("--kind <kind>", "e.g. browser-tab, job"))
    .addOption(required("--id <id>", "the target's id in its system"))
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
        () => import("../commands/watch.js"),
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
        () => import("../commands/doctor.js"),
        (m) => m.doctor,
      ),
    );

  const hooks = () => import("../commands/hooks.js");
  program
    .command("hook <agent> [event]")
    .description(
      "run as an agent hook: reads the agent's JSON on stdin, answers in its format (claude, codex, gemini, qwen, copilot, opencode, cline; the agent's event name, e.g. PreToolUse); never blocks the agent on a Baton failure",
    )
    .option(
      "--relay",
      "instead of one hook, answer many, one JSON line each: {id, event, payload} on stdin, {id, answer} on stdout (OpenCode's plugin keeps one such process); ends when stdin closes",
    )
    .action(lazy(hooks, (m) => m.hook));
  const hk = program
    .command("hooks")
    .description(
      "Baton's entries in Claude Code, Codex, Gemini CLI, Qwen Code and Copilot CLI hook configuration, and its OpenCode plugin",
    );
  hk.command("install <agent>")
    .description(
      "add Baton's hooks to the agent's settings (claude, codex, gemini, qwen, copilot; every other byte of the file is kept, and the file as it was before in <file>.baton.bak), or Baton's own files beside the user's (cline: a script per hook type; opencode: a plugin)",
    )
    .option(
      "--project",
      "this project's settings (default): Claude Code's local .claude/settings.local.json, .codex/hooks.json, .gemini/settings.json, .qwen/settings.json, .github/hooks/baton.json, .opencode/plugins/baton.js, .clinerules/hooks/",
    )
    .option("--shared", "Claude Code: the settings your team commits, .claude/settings.json (hooks run baton from PATH)")
    .option("--user", "your user settings, e.g. ~/.claude/settings.json")
    .option(
      "--command <launcher>",
      'what runs baton in the hooks (default: in a file the team commits "baton" from PATH, elsewhere this node and baton by absolute path)',
    )
    .option(
      "--http",
      "Claude Code, local project settings only: the per-call hooks (PreToolUse, PostToolUse, PostToolUseFailure) as HTTP hooks answered by the workspace's server, with its port and token",
    )
    .action(lazy(hooks, (m) => m.install));
  hk.command("uninstall <agent>")
    .description("remove exactly the hooks Baton added: the file is again as it was before install when nothing else changed")
    .option("--project", "this project's settings (default; Claude Code: the local file)")
    .option("--shared", "Claude Code: the settings your team commits, .claude/settings.json")
    .option("--user", "your user settings")
    .action(lazy(hooks, (m) => m.uninstall));
  hk.command("status [agent]")
    .description("where Baton's hooks are installed, per agent and scope")
    .action(lazy(hooks, (m) => m.status));

  program
    .command("trust")
    .description(
      "trust this workspace's .baton/config.json as it is now (it is ignored until you do, and again after any edit); prints the settings it trusts",
    )
    .option("--show", "say whether the file is trusted, changed since, or not trusted; change nothing")
    .option("--revoke", "stop trusting it: Baton ignores the file again")
    .action(
      lazy(
        () => import("../commands/trust.js"),
        (m) => m.trust,
      ),
    );

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
    .option(
      "--replace <pid>",
      "first stop the server with this pid, if server.json names it and it is proven to be the process that wrote it",
    )
    .option("--stop", "stop the workspace's running server (one `baton dashboard` or a hook started, too) and exit")
    .action(
      lazy(
        () => import("../commands/serve.js"),
        (m) => m.serve,
      ),
    );

  program
    .command("dashboard")
    .description("print (with --open, open) a one-time login link to the dashboard; starts the server if none runs")
    .option("--open", "open the link in the system's browser")
    .option("--demo", "a link to the live-variant demo page instead")
    .action(
      lazy(
        () => import("../commands/dashboard.js"),
        (m) => m.dashboard,
      ),
    );

  program
    .command("mcp")
    .description("run the MCP server over stdio (tools, STATE.md and LESSONS.md resources, a resume prompt) for an agent")
    .action(
      lazy(
        () => import("../commands/mcp.js"),
        (m) => m.mcp,
      ),
    );

  program
    .command("demo")
    .description("tell three stories (recovery, delivery, time travel) for real in a temporary workspace")
    .option("--keep", "keep the temporary workspace")
    .option("--chapter <n>", "tell only chapter n: 1 recovery, 2 delivery, 3 time travel")
    .action(
      lazy(
        () => import("../../demo/demo.js"),
        (m) => m.demo,
      ),
    );
}
