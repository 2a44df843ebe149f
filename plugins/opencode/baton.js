// Baton's OpenCode plugin, written by `baton hooks install opencode` (agent-baton).
// baton: {"launcher":["baton"],"events":["session.created","chat.message","tool.execute.before","tool.execute.after","tool.execute.error","experimental.session.compacting","session.compacted","session.idle","dispose"]}
//
// It sends OpenCode's tool calls, prompts and session events to Baton (checkpoints before writes
// and shell commands, the journal, "undo that", the spiral pause) and gives the model what Baton
// answers: through one `baton hook opencode --relay` process it starts and keeps, or, with a
// Baton too old for that, a `baton hook opencode <event>` process per call. Where `baton` is not on PATH,
// it does nothing. Remove it with `baton hooks uninstall opencode`; do not edit it (install rewrites it).
import { spawn } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";

const LAUNCHER = ["baton"];
const TIMEOUT_MS = 60000;
/** How long a new relay has to say it is one; a Baton without --relay says nothing. */
const HELLO_MS = 10000;

/**
 * The program to run: a `baton` from PATH is looked for in PATH's absolute folders only (a
 * relative one, such as node_modules/.bin, would run a repository's own); undefined: none.
 */
function program() {
  if (LAUNCHER[0] !== "baton") return LAUNCHER[0];
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!isAbsolute(dir)) continue;
    const file = join(dir, "baton");
    try {
      accessSync(file, constants.X_OK);
      if (statSync(file).isFile()) return file;
    } catch {}
  }
  return undefined;
}

/** The object an answer is; {} for anything else (null, a number, junk lets the call go on). */
function objectOr(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? v : {};
}

/** Baton's answer to one hook from a process of its own: the way before relays. */
function hookProcess(event, payload) {
  return new Promise((resolve) => {
    let child;
    let out = "";
    let done = false;
    const finish = (v) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(v);
    };
    const timer = setTimeout(() => {
      try {
        child?.kill();
      } catch {}
      finish({});
    }, TIMEOUT_MS);
    const bin = program();
    if (bin === undefined) return finish({});
    try {
      child = spawn(bin, [...LAUNCHER.slice(1), "hook", "opencode", event], {
        cwd: payload.cwd,
        stdio: ["pipe", "pipe", "ignore"],
      });
    } catch {
      return finish({});
    }
    child.on("error", () => finish({}));
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.on("close", () => {
      try {
        finish(objectOr(out.trim() === "" ? {} : JSON.parse(out)));
      } catch {
        finish({});
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

let relay;
let relaySeq = 0;
let perCall = false;

/** Start the relay: one baton process for this OpenCode process's hooks, kept until it ends. */
function startRelay(cwd) {
  let child;
  const bin = program();
  if (bin === undefined) return undefined;
  try {
    child = spawn(bin, [...LAUNCHER.slice(1), "hook", "opencode", "--relay"], { cwd, stdio: ["pipe", "pipe", "ignore"] });
  } catch {
    return undefined;
  }
  const r = { child, pending: new Map(), hello: false, buf: "", heard: 0 };
  const retire = () => {
    if (relay === r) relay = undefined;
    try {
      child.stdin.end();
    } catch {}
  };
  // Gone (killed, crashed, never started): what it was answering goes on without Baton.
  const gone = () => {
    if (relay === r) relay = undefined;
    clearTimeout(helloTimer);
    for (const p of [...r.pending.values()]) p.finish({});
  };
  // Silent: a Baton without --relay, reading its stdin for one payload. A process per call from now on.
  const helloTimer = setTimeout(() => {
    if (r.hello) return;
    perCall = true;
    if (relay === r) relay = undefined;
    const waiting = [...r.pending.values()];
    r.pending.clear();
    try {
      child.kill();
    } catch {}
    for (const p of waiting) p.again();
  }, HELLO_MS);
  helloTimer.unref?.();
  child.on("error", gone);
  child.on("close", gone);
  child.stdin.on("error", () => {});
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (d) => {
    r.buf += d;
    for (let i = r.buf.indexOf("\n"); i >= 0; i = r.buf.indexOf("\n")) {
      const line = r.buf.slice(0, i);
      r.buf = r.buf.slice(i + 1);
      let m;
      try {
        m = JSON.parse(line);
      } catch {
        continue;
      }
      if (m?.relay === 1) {
        r.hello = true;
        clearTimeout(helloTimer);
        continue;
      }
      const p = r.pending.get(m?.id);
      if (!p) continue;
      r.heard = Date.now();
      if (m.restart === true) {
        // Baton changed since this relay started: a new one (the new Baton) answers.
        r.pending.delete(m.id);
        retire();
        p.again();
      } else {
        p.finish(m.answer);
      }
    }
  });
  // OpenCode's own exit is never held up by the relay: only a call under way (its timer) keeps it running.
  child.unref?.();
  child.stdin.unref?.();
  child.stdout.unref?.();
  return r;
}

/** Baton's answer to one hook: {} when Baton is missing, failed or has nothing to say. */
function hook(event, payload, again = false) {
  if (perCall) return hookProcess(event, payload);
  return new Promise((resolve) => {
    relay ??= startRelay(payload.cwd);
    const r = relay;
    if (!r) return resolve({});
    const id = ++relaySeq;
    let done = false;
    const settle = () => {
      if (done) return false;
      done = true;
      clearTimeout(timer);
      r.pending.delete(id);
      return true;
    };
    const finish = (v) => {
      if (settle()) resolve(objectOr(v));
    };
    // Sent again once, to a new relay or a process of its own.
    const resend = () => {
      if (settle()) resolve(again ? {} : hook(event, payload, true));
    };
    // A call not answered in time goes on without Baton; the relay is stopped only when it
    // answered no call at all since this one was sent (stuck): the next call starts a new one.
    const sentAt = Date.now();
    const timer = setTimeout(() => {
      finish({});
      if (r.heard >= sentAt) return;
      if (relay === r) relay = undefined;
      try {
        r.child.kill();
      } catch {}
    }, TIMEOUT_MS);
    r.pending.set(id, { finish, again: resend });
    try {
      r.child.stdin.write(`${JSON.stringify({ id, event, payload })}\n`);
    } catch {
      finish({});
    }
  });
}

let partSeq = 0;

export const BatonPlugin = async ({ directory }) => {
  const announced = new Set();
  const started = new Set();
  const denied = new Set();
  const afterCompact = new Map();
  const beforeContext = new Map();
  // A subagent (the task tool) works in a child session: its calls go to its parent's lane family
  // (session_id the top session's, agent_id its own), as Claude Code's subagents' do.
  const parents = new Map();
  const top = (sessionID) => {
    let id = sessionID;
    for (let i = 0; i < 32 && parents.has(id); i++) id = parents.get(id);
    return id;
  };
  const base = (sessionID) => {
    const root = top(sessionID);
    return root === sessionID ? { session_id: sessionID, cwd: directory } : { session_id: root, agent_id: sessionID, cwd: directory };
  };
  // The child session's own prompt (the parent's instruction), turn end and compaction are not the user's session's.
  const child = (sessionID) => parents.has(sessionID);

  return {
    event: async ({ event }) => {
      const p = event?.properties ?? {};
      if (event?.type === "session.created" && p.info?.id) {
        if (typeof p.info.parentID === "string" && p.info.parentID !== "" && p.info.parentID !== p.info.id) parents.set(p.info.id, p.info.parentID);
        else announced.add(p.info.id);
      } else if (event?.type === "session.idle" && p.sessionID && !child(p.sessionID)) {
        await hook("session.idle", base(p.sessionID));
      } else if (event?.type === "session.compacted" && p.sessionID && !child(p.sessionID)) {
        await hook("session.compacted", base(p.sessionID));
        const r = await hook("session.created", { ...base(p.sessionID), source: "compact" });
        if (typeof r.context === "string" && r.context !== "") afterCompact.set(p.sessionID, r.context);
      } else if (event?.type === "message.part.updated") {
        const part = p.part;
        if (part?.type !== "tool" || part.state?.status !== "error" || denied.has(part.callID)) return;
        denied.add(part.callID);
        await hook("tool.execute.error", {
          ...base(part.sessionID),
          call_id: part.callID,
          tool: part.tool,
          args: part.state.input ?? {},
          error: String(part.state.error ?? "the tool call failed"),
        });
      }
    },

    "chat.message": async (input, output) => {
      const sessionID = input.sessionID;
      if (child(sessionID)) return;
      const parts = output.parts ?? [];
      const context = [];
      if (!started.has(sessionID)) {
        started.add(sessionID);
        const r = await hook("session.created", {
          ...base(sessionID),
          source: announced.has(sessionID) ? "startup" : "resume",
        });
        if (typeof r.context === "string" && r.context !== "") context.push(r.context);
      }
      const prompt = parts
        .filter((x) => x?.type === "text" && !x.synthetic && typeof x.text === "string")
        .map((x) => x.text)
        .join("\n");
      const r = await hook("chat.message", { ...base(sessionID), message_id: output.message?.id ?? input.messageID, prompt });
      if (typeof r.context === "string" && r.context !== "") context.push(r.context);
      afterCompact.delete(sessionID);
      const last = parts[parts.length - 1];
      if (context.length === 0 || !last?.id) return;
      // Part ids sort in order: the next one after the message's last part.
      partSeq++;
      parts.push({
        id: `${last.id}baton${String(partSeq).padStart(6, "0")}`,
        sessionID,
        messageID: output.message?.id ?? last.messageID,
        type: "text",
        text: context.join("\n\n"),
        synthetic: true,
      });
    },

    "experimental.chat.system.transform": async (input, output) => {
      const text = input.sessionID ? afterCompact.get(input.sessionID) : undefined;
      if (text) output.system.push(text);
    },

    "tool.execute.before": async (input, output) => {
      const r = await hook("tool.execute.before", {
        ...base(input.sessionID),
        call_id: input.callID,
        tool: input.tool,
        args: output.args ?? {},
      });
      if (typeof r.deny === "string") {
        denied.add(input.callID);
        throw new Error(r.deny);
      }
      if (typeof r.context === "string" && r.context !== "") beforeContext.set(input.callID, r.context);
    },

    "tool.execute.after": async (input, output) => {
      const r = await hook("tool.execute.after", {
        ...base(input.sessionID),
        call_id: input.callID,
        tool: input.tool,
        args: input.args ?? {},
        title: output.title,
        output: output.output,
        metadata: output.metadata,
      });
      const context = [beforeContext.get(input.callID), r.context].filter((c) => typeof c === "string" && c !== "");
      beforeContext.delete(input.callID);
      if (context.length > 0 && typeof output.output === "string") output.output = `${output.output}\n\n${context.join("\n\n")}`;
    },

    // The shell tool's environment names its session, as the other agents' do: a `baton`
    // command the agent runs there works in its own lane.
    "shell.env": async (input, output) => {
      if (input.sessionID) output.env.BATON_OPENCODE_SESSION_ID = top(input.sessionID);
    },

    "experimental.session.compacting": async (input) => {
      if (child(input.sessionID)) return;
      await hook("experimental.session.compacting", base(input.sessionID));
    },

    dispose: async () => {
      for (const sessionID of started) await hook("dispose", base(sessionID));
    },
  };
};
