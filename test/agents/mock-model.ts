/**
 * A scripted model on 127.0.0.1 for the real agent CLIs (node:http only). It speaks what the
 * agents call: Anthropic Messages (`POST /v1/messages`, SSE or not, `count_tokens`), OpenAI
 * Responses (`POST /v1/responses`, SSE), OpenAI Chat Completions (`POST /v1/chat/completions`,
 * SSE or not: Qwen Code, Copilot CLI and the other OpenAI-compatible clients) and Gemini
 * (`:streamGenerateContent?alt=sse`, `:generateContent`, `:countTokens`).
 *
 * A test plays a script of agent-neutral steps (write, edit, shell, read, text); each "main"
 * request (one that offers the agent's tools) gets the next step, translated to the tools the
 * agent offered in that request. Side requests (titles, classifiers, quota probes) get a short
 * text, or JSON when they ask for JSON. Every request is logged so a test can assert what
 * reached the model.
 *
 * Several agents at once: each process gets a MockModel of its own (its own script and log). A
 * step can be held (`after`) until something else happened, e.g. another agent's request
 * arrived (`arrival`), so that two agent processes are provably mid-turn at the same time.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { isAbsolute, join } from "node:path";

export type Step = (
  | { op: "write"; path: string; content: string }
  | { op: "edit"; path: string; old: string; new: string }
  | { op: "shell"; command: string }
  | { op: "read"; path: string }
  | { op: "text"; text: string }
  /** Hand work to a subagent (the agent's own tool for it: Claude Code's Agent or Task, OpenCode's task). */
  | { op: "task"; prompt: string; description?: string }
  /** Invoke a skill (Claude Code's Skill tool): its SKILL.md loads, and its own shell lines run first. */
  | { op: "skill"; name: string; args?: string }
  /** A patch of Codex's own format, as written (its apply_patch tool): a delete, a move. */
  | { op: "patch"; patch: string }
) & {
  /**
   * Answer with this step only once this settles (a function is called when the step's request
   * arrives, so it may name what happens later). Until then the agent waits on its model
   * mid-turn: its run, and the claims of what it wrote this turn, stay live. A rejection fails
   * the request.
   */
  after?: Promise<unknown> | (() => Promise<unknown>);
  /** The input tokens this answer reports, instead of the model's `inputTokens` (OpenAI and Gemini protocols). */
  inputTokens?: number;
};

export type Protocol = "anthropic" | "openai" | "chat" | "gemini";

export interface LoggedRequest {
  protocol: Protocol;
  path: string;
  body: any;
  /** The step this request was answered with (main requests only). */
  step?: Step;
  /** Answered from the subagent's script (playSubagent). */
  subagent?: boolean;
  main: boolean;
  /** When the request arrived (performance.now(), ms). */
  at: number;
}

/** A promise a test settles by hand: hold a step `after` it, then `open()`. */
export function gate(): { opened: Promise<void>; open(): void } {
  let open = () => {};
  const opened = new Promise<void>((ok) => (open = ok));
  return { opened, open };
}

/**
 * Resolves when `done` settles, or after `ms` (noting `what` in `missed`), so a step held on
 * another agent's progress never waits forever: a test then fails on `missed`, not a timeout.
 */
export function holdUntil(missed: string[], what: string, done: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((ok) => {
    const timer = setTimeout(() => {
      missed.push(what);
      ok();
    }, ms);
    done.then(
      () => {
        clearTimeout(timer);
        ok();
      },
      (err) => {
        clearTimeout(timer);
        missed.push(`${what}: ${err}`);
        ok();
      },
    );
  });
}

/** A step repeated `n` times. */
export function repeat(n: number, step: Step): Step[] {
  return Array.from({ length: n }, () => step);
}

export class MockModel {
  readonly requests: LoggedRequest[] = [];
  private server: Server | undefined;
  private steps: Step[] = [];
  private cursor = 0;
  private cwd = "/";
  private sub: { marker: string; steps: Step[]; cursor: number } | undefined;
  private seq = 0;
  /** Where the current script's requests start in `requests`. */
  private playedAt = 0;
  private waiters: { n: number; resolve: (r: LoggedRequest) => void; reject: (e: Error) => void }[] = [];
  url = "";
  /** Input tokens each answer reports (a large value makes an agent compact its context). */
  inputTokens = 10;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      void this.handle(req, res).catch((err) => {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: String(err) } }));
      });
    });
    await new Promise<void>((ok) => this.server?.listen(0, "127.0.0.1", ok));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((ok) => (this.server ? this.server.close(() => ok()) : ok()));
  }

  /**
   * Answer a subagent's main requests with these steps, then "Done.", apart from the main
   * script: a request is the subagent's when its first user message holds `marker` (a phrase of
   * the instruction the parent gave it). Its requests are logged with `subagent: true`.
   */
  playSubagent(marker: string, steps: Step[]): void {
    this.sub = { marker, steps, cursor: 0 };
  }

  /** The subagent's main requests so far, once there are at least `n` of them (polled). */
  async subagentArrival(n: number, timeoutMs: number): Promise<LoggedRequest[]> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const got = this.requests.filter((r) => r.main && r.subagent);
      if (got.length >= n) return got;
      if (Date.now() > until) throw new Error(`mock model: ${got.length} of ${n} subagent requests arrived`);
      await new Promise((ok) => setTimeout(ok, 50));
    }
  }

  /** Answer the next main requests with these steps (paths relative to `cwd`), then "Done.". */
  play(steps: Step[], cwd: string): void {
    for (const w of this.waiters.splice(0)) w.reject(new Error(`mock model: a new script was played before main request ${w.n} arrived`));
    this.steps = steps;
    this.cursor = 0;
    this.sub = undefined;
    this.cwd = cwd;
    this.playedAt = this.requests.length;
  }

  /**
   * The n-th main request (from 1) of the current script, once it arrives: the one answered
   * with step n. Its arrival means the agent finished step n-1, its after-tool hooks included.
   */
  arrival(n: number): Promise<LoggedRequest> {
    const r = this.ownMains()[n - 1];
    if (r) return Promise.resolve(r);
    return new Promise((resolve, reject) => this.waiters.push({ n, resolve, reject }));
  }

  private log(r: LoggedRequest): void {
    this.requests.push(r);
    if (!r.main || this.waiters.length === 0) return;
    if (r.subagent) return;
    const n = this.ownMains().length;
    this.waiters = this.waiters.filter((w) => {
      if (w.n !== n) return true;
      w.resolve(r);
      return false;
    });
  }

  /** The current script's main requests, a subagent's (playSubagent) left out. */
  private ownMains(): LoggedRequest[] {
    return this.mains(this.playedAt).filter((r) => !r.subagent);
  }

  /** Main requests logged since index `from`. */
  mains(from = 0): LoggedRequest[] {
    return this.requests.slice(from).filter((r) => r.main);
  }

  /** Whether a request is the subagent's (playSubagent): its first user message holds the marker. */
  private isSubagent(body: any): boolean {
    if (!this.sub) return false;
    const first = [...(body.messages ?? []), ...(body.contents ?? []), ...(Array.isArray(body.input) ? body.input : [])].find(
      (m: any) => m?.role === "user",
    );
    return first !== undefined && JSON.stringify(first).includes(this.sub.marker);
  }

  private nextStep(body?: any): Step {
    if (this.sub && this.isSubagent(body)) return this.sub.steps[this.sub.cursor++] ?? { op: "text", text: "Done." };
    const s = this.steps[this.cursor];
    if (s) {
      this.cursor++;
      return s;
    }
    return { op: "text", text: "Done." };
  }

  private abs(p: string): string {
    return isAbsolute(p) ? p : join(this.cwd, p);
  }

  private id(prefix: string): string {
    this.seq++;
    return `${prefix}_${Date.now().toString(36)}${this.seq}`;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const at = performance.now();
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    let body: any = {};
    try {
      body = raw ? JSON.parse(raw) : {};
    } catch {
      body = { raw };
    }
    const url = new URL(req.url ?? "/", "http://x");
    const path = url.pathname;
    if (req.method === "GET") {
      // Model lists and other probes: an empty but well-formed answer.
      return json(res, path.includes("models") ? { data: [], models: [] } : {});
    }
    if (path.endsWith("/messages/count_tokens")) return json(res, { input_tokens: 100 });
    if (path.endsWith("/v1/messages")) return this.anthropic(path, body, res, at);
    if (path.endsWith("/responses")) return this.openai(path, body, res, at);
    if (path.endsWith("/chat/completions")) return this.chat(path, body, res, at);
    if (path.includes(":countTokens")) return json(res, { totalTokens: 100 });
    if (path.includes(":streamGenerateContent") || path.includes(":generateContent"))
      return this.gemini(path, body, res, path.includes(":stream"), at);
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: `mock model: no route for ${req.method} ${path}` } }));
  }

  // ---- Anthropic Messages ----

  private async anthropic(path: string, body: any, res: ServerResponse, at: number): Promise<void> {
    const tools: string[] = (body.tools ?? []).map((t: any) => t.name);
    const main = tools.includes("Bash") || tools.includes("Write");
    const subagent = main && this.isSubagent(body);
    const step: Step = main ? this.nextStep(body) : { op: "text", text: "Baton test" };
    this.log({ at, protocol: "anthropic", path, body, main, ...(main ? { step } : {}), ...(subagent ? { subagent } : {}) });
    if (step.after) await (typeof step.after === "function" ? step.after() : step.after);
    let block: any;
    if (step.op === "text") block = { type: "text", text: step.text };
    else {
      const [name, input] = this.claudeTool(step, tools);
      block = { type: "tool_use", id: this.id("toolu"), name, input };
    }
    const stop_reason = block.type === "tool_use" ? "tool_use" : "end_turn";
    const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    const message = { id: this.id("msg"), type: "message", role: "assistant", model: body.model ?? "claude", content: [] as any[] };
    if (!body.stream) {
      json(res, { ...message, content: [block], stop_reason, stop_sequence: null, usage });
      return;
    }
    sse(res, [
      ["message_start", { type: "message_start", message: { ...message, stop_reason: null, stop_sequence: null, usage } }],
      [
        "content_block_start",
        {
          type: "content_block_start",
          index: 0,
          content_block: block.type === "text" ? { type: "text", text: "" } : { ...block, input: {} },
        },
      ],
      [
        "content_block_delta",
        {
          type: "content_block_delta",
          index: 0,
          delta:
            block.type === "text"
              ? { type: "text_delta", text: block.text }
              : { type: "input_json_delta", partial_json: JSON.stringify(block.input) },
        },
      ],
      ["content_block_stop", { type: "content_block_stop", index: 0 }],
      ["message_delta", { type: "message_delta", delta: { stop_reason, stop_sequence: null }, usage: { output_tokens: 5 } }],
      ["message_stop", { type: "message_stop" }],
    ]);
  }

  private claudeTool(step: Exclude<Step, { op: "text" }>, tools: string[]): [string, unknown] {
    switch (step.op) {
      case "task":
        // Claude Code 2.1 calls its subagent tool Agent (Task before it).
        return [
          tools.includes("Agent") ? "Agent" : "Task",
          { description: step.description ?? "Hand off a step", prompt: step.prompt, subagent_type: "general-purpose" },
        ];
      case "write":
        return ["Write", { file_path: this.abs(step.path), content: step.content }];
      case "edit":
        return ["Edit", { file_path: this.abs(step.path), old_string: step.old, new_string: step.new }];
      case "shell":
        return ["Bash", { command: step.command, description: "run a command" }];
      case "read":
        return ["Read", { file_path: this.abs(step.path) }];
      case "skill":
        return ["Skill", { skill: step.name, ...(step.args !== undefined ? { args: step.args } : {}) }];
      case "patch":
        throw noPatch("Claude Code");
    }
  }

  // ---- OpenAI Responses ----

  private async openai(path: string, body: any, res: ServerResponse, at: number): Promise<void> {
    const tools: any[] = body.tools ?? [];
    const names = tools.map((t) => t.name ?? t.type);
    const main = names.some((n) => /shell|exec_command|apply_patch/.test(String(n)));
    const subagent = main && this.isSubagent(body);
    const step: Step = main ? this.nextStep(body) : { op: "text", text: "Baton test" };
    this.log({ at, protocol: "openai", path, body, main, ...(main ? { step } : {}), ...(subagent ? { subagent } : {}) });
    if (step.after) await (typeof step.after === "function" ? step.after() : step.after);
    const item = step.op === "text" ? this.openaiMessage(step.text) : this.codexTool(step, tools);
    const rid = this.id("resp");
    const tokens = step.inputTokens ?? this.inputTokens;
    const response = {
      id: rid,
      object: "response",
      status: "completed",
      model: body.model ?? "gpt",
      output: [item],
      usage: {
        input_tokens: tokens,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 5,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: tokens + 5,
      },
    };
    if (body.stream === false) {
      json(res, response);
      return;
    }
    sse(res, [
      ["response.created", { type: "response.created", response: { ...response, status: "in_progress", output: [] } }],
      ["response.output_item.added", { type: "response.output_item.added", output_index: 0, item }],
      ["response.output_item.done", { type: "response.output_item.done", output_index: 0, item }],
      ["response.completed", { type: "response.completed", response }],
    ]);
  }

  private openaiMessage(text: string): unknown {
    return {
      type: "message",
      id: this.id("msg"),
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text, annotations: [] }],
    };
  }

  private codexTool(step: Exclude<Step, { op: "text" }>, tools: any[]): unknown {
    if (step.op === "task") throw noSubagent("Codex");
    if (step.op === "skill") throw noSkill("Codex");
    const byName = (n: string) => tools.find((t) => t.name === n);
    const call_id = this.id("call");
    const patch = patchOf(step);
    let command = step.op === "shell" ? step.command : undefined;
    if (step.op === "read") command = `cat ${step.path}`;
    if (patch !== undefined) {
      const ap = byName("apply_patch");
      if (ap?.type === "custom")
        return { type: "custom_tool_call", id: this.id("ctc"), status: "completed", call_id, name: "apply_patch", input: patch };
      if (ap)
        return {
          type: "function_call",
          id: this.id("fc"),
          status: "completed",
          call_id,
          name: "apply_patch",
          arguments: JSON.stringify({ input: patch }),
        };
      command = `apply_patch <<'EOF'\n${patch}\nEOF`;
    }
    const cmd = command ?? "true";
    if (byName("exec_command"))
      return {
        type: "function_call",
        id: this.id("fc"),
        status: "completed",
        call_id,
        name: "exec_command",
        arguments: JSON.stringify({ cmd, workdir: this.cwd }),
      };
    if (byName("shell_command"))
      return {
        type: "function_call",
        id: this.id("fc"),
        status: "completed",
        call_id,
        name: "shell_command",
        arguments: JSON.stringify({ command: cmd, workdir: this.cwd }),
      };
    return {
      type: "function_call",
      id: this.id("fc"),
      status: "completed",
      call_id,
      name: "shell",
      arguments: JSON.stringify({ command: ["bash", "-lc", cmd], workdir: this.cwd }),
    };
  }

  // ---- OpenAI Chat Completions ----

  private async chat(path: string, body: any, res: ServerResponse, at: number): Promise<void> {
    const tools: any[] = (body.tools ?? []).map((t: any) => t.function ?? t);
    const names = tools.map((t) => String(t.name));
    // Qwen Code's tools, or Copilot CLI's (`bash`, `create`, `edit`, `view`; for GPT-5 models a
    // freeform `apply_patch`, a custom tool, instead of create and edit).
    const customPatch = (body.tools ?? []).some((t: any) => t.type === "custom" && t.custom?.name === "apply_patch");
    const copilot = names.includes("bash") && (names.includes("create") || customPatch);
    // OpenCode's tools (`bash`, `write`, `edit`, `read`), for a model that is not a GPT.
    const opencode = !copilot && names.includes("bash") && names.includes("write") && names.includes("edit");
    // Cline CLI's (3.x): `editor`, `run_commands`, `read_files` (a GPT model gets `apply_patch`
    // instead of `editor`: the suite names another model).
    const cline = names.includes("run_commands") && names.includes("editor");
    const main = copilot || opencode || cline || names.includes("run_shell_command") || names.includes("write_file");
    const wantsJson = body.response_format?.type === "json_object" || body.response_format?.type === "json_schema";
    const subagent = main && this.isSubagent(body);
    const step: Step = main
      ? this.nextStep(body)
      : { op: "text", text: wantsJson ? JSON.stringify({ reasoning: "scripted" }) : "Baton test" };
    this.log({ at, protocol: "chat", path, body, main, ...(main ? { step } : {}), ...(subagent ? { subagent } : {}) });
    if (step.after) await (typeof step.after === "function" ? step.after() : step.after);
    const id = this.id("chatcmpl");
    const created = Math.floor(Date.now() / 1000);
    const model = body.model ?? "qwen-mock";
    const tokens = step.inputTokens ?? this.inputTokens;
    const usage = { prompt_tokens: tokens, completion_tokens: 5, total_tokens: tokens + 5 };
    const call =
      step.op === "text"
        ? undefined
        : (() => {
            const patch = customPatch ? patchOf(step) : undefined;
            if (patch !== undefined) return { id: this.id("call"), type: "custom", custom: { name: "apply_patch", input: `${patch}\n` } };
            const [name, args] = copilot
              ? this.copilotTool(step, tools)
              : opencode
                ? this.opencodeTool(step)
                : cline
                  ? this.clineTool(step)
                  : this.chatTool(step, tools);
            return { id: this.id("call"), type: "function", function: { name, arguments: JSON.stringify(args) } };
          })();
    const message = call
      ? { role: "assistant", content: null, tool_calls: [call] }
      : { role: "assistant", content: (step as { text: string }).text };
    const finish_reason = call ? "tool_calls" : "stop";
    if (!body.stream) {
      json(res, { id, object: "chat.completion", created, model, choices: [{ index: 0, message, finish_reason }], usage });
      return;
    }
    const chunk = (delta: unknown, finish: string | null, extra: Record<string, unknown> = {}) =>
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
    const parts = [
      chunk(
        call ? { role: "assistant", content: null, tool_calls: [{ index: 0, ...call }] } : { role: "assistant", content: message.content },
        null,
      ),
      chunk({}, finish_reason),
    ];
    if (body.stream_options?.include_usage)
      parts.push(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [], usage })}\n\n`);
    parts.push("data: [DONE]\n\n");
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.end(parts.join(""));
  }

  /** Copilot CLI's tools (1.0.102). */
  private copilotTool(step: Exclude<Step, { op: "text" }>, tools: any[]): [string, unknown] {
    switch (step.op) {
      case "task":
        // Its task tool (1.0.102); mode "sync" waits for the agent, as OpenCode's does.
        if (tools.some((t) => t.name === "task"))
          return [
            "task",
            {
              name: "helper",
              description: step.description ?? "Hand off a step",
              prompt: step.prompt,
              agent_type: "general-purpose",
              mode: "sync",
            },
          ];
        throw noSubagent("Copilot CLI", tools);
      case "write":
        return ["create", { path: this.abs(step.path), file_text: step.content }];
      case "edit":
        return ["edit", { path: this.abs(step.path), old_str: step.old, new_str: step.new }];
      case "shell":
        return ["bash", { command: step.command, description: "run a command" }];
      case "read":
        return ["view", { path: this.abs(step.path) }];
      case "skill":
        throw noSkill("Copilot CLI");
      case "patch":
        throw noPatch("Copilot CLI");
    }
  }

  /** OpenCode's tools (opencode-ai 1.18). */
  private opencodeTool(step: Exclude<Step, { op: "text" }>): [string, unknown] {
    switch (step.op) {
      case "task":
        return ["task", { description: step.description ?? "Hand off a step", prompt: step.prompt, subagent_type: "general" }];
      case "write":
        return ["write", { filePath: this.abs(step.path), content: step.content }];
      case "edit":
        return ["edit", { filePath: this.abs(step.path), oldString: step.old, newString: step.new }];
      case "shell":
        return ["bash", { command: step.command, description: "run a command" }];
      case "read":
        return ["read", { filePath: this.abs(step.path) }];
      case "skill":
        throw noSkill("OpenCode");
      case "patch":
        throw noPatch("OpenCode");
    }
  }

  /** Cline CLI's tools (3.0.65): `editor` creates a missing file or replaces `old_text` once. */
  private clineTool(step: Exclude<Step, { op: "text" }>): [string, unknown] {
    switch (step.op) {
      case "task":
        throw noSubagent("Cline CLI");
      case "write":
        return ["editor", { path: this.abs(step.path), new_text: step.content }];
      case "edit":
        return ["editor", { path: this.abs(step.path), old_text: step.old, new_text: step.new }];
      case "shell":
        return ["run_commands", { commands: [step.command] }];
      case "read":
        return ["read_files", { files: [{ path: this.abs(step.path) }] }];
      case "skill":
        throw noSkill("Cline CLI");
      case "patch":
        throw noPatch("Cline CLI");
    }
  }

  /** Qwen Code's tools (the names Gemini CLI's had, with `edit` for `replace`). */
  private chatTool(step: Exclude<Step, { op: "text" }>, tools: any[]): [string, unknown] {
    switch (step.op) {
      case "task":
        // Qwen Code's agent tool (0.24).
        if (tools.some((t) => t.name === "agent"))
          return ["agent", { description: step.description ?? "Hand off a step", prompt: step.prompt, subagent_type: "general-purpose" }];
        throw noSubagent("Qwen Code", tools);
      case "write":
        return ["write_file", { file_path: this.abs(step.path), content: step.content }];
      case "edit":
        return ["edit", { file_path: this.abs(step.path), old_string: step.old, new_string: step.new }];
      case "shell":
        return ["run_shell_command", { command: step.command, description: "run a command", is_background: false }];
      case "read":
        return ["read_file", { file_path: this.abs(step.path) }];
      case "skill":
        throw noSkill("Qwen Code");
      case "patch":
        throw noPatch("Qwen Code");
    }
  }

  // ---- Gemini ----

  private async gemini(path: string, body: any, res: ServerResponse, stream: boolean, at: number): Promise<void> {
    const decls: any[] = (body.tools ?? []).flatMap((t: any) => t.functionDeclarations ?? []);
    const main = decls.some((d) => d.name === "run_shell_command" || d.name === "write_file");
    const wantsJson = /json/i.test(String(body.generationConfig?.responseMimeType ?? "")) || body.generationConfig?.responseJsonSchema;
    const subagent = main && this.isSubagent(body);
    const step: Step = main ? this.nextStep(body) : { op: "text", text: "Baton test" };
    this.log({ at, protocol: "gemini", path, body, main, ...(main ? { step } : {}), ...(subagent ? { subagent } : {}) });
    if (step.after) await (typeof step.after === "function" ? step.after() : step.after);
    let part: any;
    if (!main && wantsJson)
      part = {
        text: JSON.stringify({
          reasoning: "scripted",
          next_speaker: "user",
          model_choice: "flash",
          complexity_reasoning: "simple",
          complexity_score: 1,
        }),
      };
    else if (step.op === "text") part = { text: step.text };
    else part = { functionCall: this.geminiTool(step, decls) };
    const chunk = {
      candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
      usageMetadata: {
        promptTokenCount: step.inputTokens ?? this.inputTokens,
        candidatesTokenCount: 5,
        totalTokenCount: (step.inputTokens ?? this.inputTokens) + 5,
      },
      modelVersion: "gemini-mock",
    };
    if (!stream) {
      json(res, chunk);
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
  }

  private geminiTool(step: Exclude<Step, { op: "text" }>, decls: any[]): unknown {
    const pathKey = (tool: string): string => {
      const props =
        decls.find((d) => d.name === tool)?.parametersJsonSchema?.properties ??
        decls.find((d) => d.name === tool)?.parameters?.properties ??
        {};
      return "file_path" in props ? "file_path" : "absolute_path" in props ? "absolute_path" : "file_path";
    };
    switch (step.op) {
      case "task":
        throw noSubagent("Gemini CLI");
      case "skill":
        throw noSkill("Gemini CLI");
      case "patch":
        throw noPatch("Gemini CLI");
      case "write":
        return { name: "write_file", args: { [pathKey("write_file")]: this.abs(step.path), content: step.content } };
      case "edit":
        return {
          name: "replace",
          args: {
            [pathKey("replace")]: this.abs(step.path),
            old_string: step.old,
            new_string: step.new,
            instruction: "edit",
            expected_replacements: 1,
          },
        };
      case "shell":
        return { name: "run_shell_command", args: { command: step.command, description: "run a command" } };
      case "read":
        return { name: "read_file", args: { [pathKey("read_file")]: this.abs(step.path) } };
    }
  }
}

function noPatch(agent: string): Error {
  return new Error(`mock model: no patch step for ${agent} (only Codex's apply_patch is scripted here)`);
}

function noSkill(agent: string): Error {
  return new Error(`mock model: no skill step for ${agent} (only Claude Code's Skill tool is scripted here)`);
}

function noSubagent(agent: string, tools: any[] = []): Error {
  const offered = tools.map((t) => `${t.name}(${Object.keys(t.parameters?.properties ?? {}).join(",")})`).join(" ");
  return new Error(`mock model: no subagent step for ${agent} (its tool for one is not scripted here); offered: ${offered}`);
}

/** A write or edit as an apply_patch patch (paths relative to the project), else undefined. */
function patchOf(step: Step): string | undefined {
  if (step.op === "write")
    return `*** Begin Patch\n*** Add File: ${step.path}\n${step.content
      .replace(/\n$/, "")
      .split("\n")
      .map((l) => `+${l}`)
      .join("\n")}\n*** End Patch`;
  if (step.op === "edit") return `*** Begin Patch\n*** Update File: ${step.path}\n@@\n-${step.old}\n+${step.new}\n*** End Patch`;
  if (step.op === "patch") return step.patch;
  return undefined;
}

/** The text of every tool result in a logged request, whatever the protocol. */
export function toolResults(r: LoggedRequest): string[] {
  const b = r.body;
  if (r.protocol === "anthropic")
    return (b.messages ?? []).flatMap((m: any) =>
      Array.isArray(m.content) ? m.content.filter((c: any) => c.type === "tool_result").map((c: any) => JSON.stringify(c.content)) : [],
    );
  if (r.protocol === "openai")
    return (b.input ?? []).filter((i: any) => /_call_output$/.test(String(i.type))).map((i: any) => JSON.stringify(i.output));
  if (r.protocol === "chat") return (b.messages ?? []).filter((m: any) => m.role === "tool").map((m: any) => JSON.stringify(m.content));
  return (b.contents ?? []).flatMap((c: any) =>
    (c.parts ?? []).filter((p: any) => p.functionResponse).map((p: any) => JSON.stringify(p.functionResponse)),
  );
}

function json(res: ServerResponse, value: unknown): void {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

function sse(res: ServerResponse, events: [string, unknown][]): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.end(events.map(([e, d]) => `event: ${e}\ndata: ${JSON.stringify(d)}\n\n`).join(""));
}
