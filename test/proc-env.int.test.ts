/**
 * platform/process-facts.ts readProcEnv: a process's environment as it started, read from /proc.
 * A name the environment holds twice (execve takes any list; Node's spawn cannot make one) is
 * read the way the process itself reads it: a Node server by getenv, the first; a shell, and
 * whatever it starts, the last (the shell's hook client's view).
 */
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readProcEnv } from "../src/platform/process-facts.js";

/** execve(program, argv, env) with exactly the lists given: `<program> <argc> <argv...> <env...>`. */
const EXECVE = `
import ctypes, sys
program, argc = sys.argv[1], int(sys.argv[2])
args, env = sys.argv[3:3 + argc], sys.argv[3 + argc:]
c_list = lambda xs: (ctypes.c_char_p * (len(xs) + 1))(*[x.encode() for x in xs], None)
ctypes.CDLL(None).execve(program.encode(), c_list(args), c_list(env))
sys.exit("execve failed")
`;
const TWICE = ["BATON_ROOT=/first", "PATH=/usr/bin:/bin", "BATON_ROOT=/last"];
const execve = (program: string, args: string[]) => ["-c", EXECVE, program, String(args.length), ...args, ...TWICE];

describe.runIf(process.platform === "linux")("readProcEnv", () => {
  it("keeps the first of a name given twice, or the last when asked, as getenv and a shell read it", async () => {
    const child = spawn("python3", execve("/bin/sleep", ["sleep", "30"]), { stdio: "ignore" });
    try {
      const pid = child.pid as number;
      // Until the execve has happened the process is python's, with this process's environment.
      for (let i = 0; i < 200 && !readFileSync(`/proc/${pid}/environ`, "latin1").includes("=/last"); i++)
        await new Promise((r) => setTimeout(r, 10));
      expect(readProcEnv(pid)).toEqual({ BATON_ROOT: "/first", PATH: "/usr/bin:/bin" });
      expect(readProcEnv(pid, "last")).toEqual({ BATON_ROOT: "/last", PATH: "/usr/bin:/bin" });
    } finally {
      child.kill("SIGKILL");
    }
    // What the two read, given that environment: Node the first, a shell the last.
    const node = spawnSync("python3", execve(process.execPath, ["node", "-e", "process.stdout.write(process.env.BATON_ROOT)"]), {
      encoding: "utf8",
    });
    expect(node.stdout, node.stderr).toBe("/first");
    const shell = spawnSync("python3", execve("/bin/sh", ["sh", "-c", 'printf %s "$BATON_ROOT"']), { encoding: "utf8" });
    expect(shell.stdout, shell.stderr).toBe("/last");
  });
});
