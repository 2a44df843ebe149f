/**
 * A minimal client of the Agent Client Protocol (JSON-RPC 2.0, one message a line on the
 * agent's stdin and stdout), enough to drive an agent that speaks it (`cline --acp`) headless
 * through several prompts of one session, across processes (`session/load`), and to cancel a
 * prompt mid-turn (`session/cancel`). It offers the agent no file system or terminal of its own
 * (the agent uses its own tools) and allows every permission it asks for.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";

export interface AcpPromptResult {
  stopReason: string;
  /** The `session/update` notifications the prompt produced. */
  updates: any[];
}

export class AcpClient {
  private child: ChildProcessWithoutNullStreams;
  private nextId = 1;
  private pending = new Map<number, { resolve(v: any): void; reject(e: Error): void }>();
  private buffer = "";
  readonly updates: any[] = [];
  stderr = "";
  /** Every line the agent wrote on stdout (for a look at a failed run). */
  readonly lines: string[] = [];
  readonly exited: Promise<number | null>;

  constructor(cmd: string, args: string[], opts: { cwd: string; env: Record<string, string> }) {
    this.child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ["pipe", "pipe", "pipe"] });
    // A CLI that is not there is an exit with no answers (below), not an unhandled error.
    this.child.on("error", (err) => (this.stderr += `\n${String(err)}`));
    this.child.stderr.setEncoding("utf8");
    this.child.stdout.setEncoding("utf8");
    this.child.stderr.on("data", (d: string) => (this.stderr += d));
    this.child.stdout.on("data", (d: string) => this.receive(d));
    // A write after the agent exited (an answer to its last request, a cancel) is lost, not a crash.
    this.child.stdin.on("error", () => {});
    this.exited = new Promise((ok) =>
      this.child.on("close", (code) => {
        for (const p of this.pending.values())
          p.reject(new Error(`the agent exited (${code}) before it answered\n${this.stderr.slice(-2000)}`));
        this.pending.clear();
        ok(code);
      }),
    );
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  private receive(chunk: string): void {
    this.buffer += chunk;
    let nl = this.buffer.indexOf("\n");
    while (nl >= 0) {
      const line = this.buffer.slice(0, nl).trim();
      this.buffer = this.buffer.slice(nl + 1);
      nl = this.buffer.indexOf("\n");
      if (!line.startsWith("{")) continue;
      this.lines.push(line);
      let msg: any;
      try {
        msg = JSON.parse(line);
      } catch {
        continue;
      }
      if (msg.method !== undefined && msg.id !== undefined) this.answer(msg);
      else if (msg.method === "session/update") this.updates.push(msg.params);
      else if (msg.id !== undefined) {
        const p = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        if (msg.error) p?.reject(new Error(`ACP error ${msg.error.code}: ${msg.error.message} ${JSON.stringify(msg.error.data ?? "")}`));
        else p?.resolve(msg.result);
      }
    }
  }

  /** The agent's own requests: permissions are allowed (the most lasting allow offered); nothing else is offered. */
  private answer(msg: any): void {
    if (msg.method === "session/request_permission") {
      const options: any[] = msg.params?.options ?? [];
      const allow = options.find((o) => o.kind === "allow_always") ?? options.find((o) => o.kind === "allow_once") ?? options[0];
      this.send({ jsonrpc: "2.0", id: msg.id, result: { outcome: { outcome: "selected", optionId: allow?.optionId } } });
      return;
    }
    this.send({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: `not offered: ${msg.method}` } });
  }

  private send(msg: unknown): void {
    this.child.stdin.write(`${JSON.stringify(msg)}\n`);
  }

  /** A request, rejected when the agent exits or gives no answer within `ms`. */
  request(method: string, params: unknown, ms = 150_000): Promise<any> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`no answer to ${method} within ${ms} ms\n${this.stderr.slice(-2000)}`));
      }, ms);
      const settle =
        <T>(f: (v: T) => void) =>
        (v: T) => {
          clearTimeout(timer);
          f(v);
        };
      this.pending.set(id, { resolve: settle(resolve), reject: settle(reject) });
      this.send({ jsonrpc: "2.0", id, method, params });
    });
  }

  /** Stop the agent at once (a test that failed before its `close`). */
  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
  }

  notify(method: string, params: unknown): void {
    this.send({ jsonrpc: "2.0", method, params });
  }

  initialize(): Promise<any> {
    return this.request("initialize", {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    });
  }

  async newSession(cwd: string): Promise<string> {
    const r = await this.request("session/new", { cwd, mcpServers: [] });
    return r.sessionId;
  }

  async loadSession(sessionId: string, cwd: string): Promise<void> {
    await this.request("session/load", { sessionId, cwd, mcpServers: [] });
  }

  async prompt(sessionId: string, text: string): Promise<AcpPromptResult> {
    const from = this.updates.length;
    const r = await this.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
    return { stopReason: r.stopReason, updates: this.updates.slice(from) };
  }

  cancel(sessionId: string): void {
    this.notify("session/cancel", { sessionId });
  }

  /** Close stdin (the agent's end of the conversation) and wait for it to exit; killed after `ms`. */
  async close(ms = 20_000): Promise<number | null> {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), ms);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }
}
