/**
 * Baton's OpenCode plugin: the file `baton hooks install opencode` writes
 * (`.opencode/plugins/baton.js` in a project, `$XDG_CONFIG_HOME/opencode/plugins/baton.js` with
 * --user), what OpenCode loads from it, and how status reads it back.
 *
 * OpenCode runs no hook commands; it loads every JS/TS module in its plugin folders into its own
 * process. Baton's plugin spawns `baton hook opencode <event>` for each hook, with the payload on
 * stdin, as the other agents' hooks do (that process asks the workspace's running server first,
 * and answers itself when none does), and maps the answer: `deny` throws (OpenCode refuses the
 * call and the model reads the reason), `context` goes where OpenCode lets a plugin put text the
 * model reads (core/hooks/opencode.ts).
 *
 * A committed plugin names no path of this machine: it runs `baton` from PATH, and where there is
 * none the spawn fails and the plugin does nothing (OpenCode goes on unsupervised, as it would
 * without the file). A user plugin runs this Node and this baton by absolute path. The file is
 * Baton's alone: its first line marks it, and the JSON on its second line says what it runs, so
 * install rewrites only a file it wrote, and status and uninstall recognise it.
 */
import { OPENCODE_EVENTS } from "../core/hooks/opencode.js";

/** The first line of every plugin Baton writes. */
export const OPENCODE_PLUGIN_MARK = "// Baton's OpenCode plugin, written by `baton hooks install opencode` (agent-baton).";

export interface OpencodePluginInfo {
  /** What the plugin runs before `hook opencode <event>`: `["baton"]`, or a Node and a baton entry. */
  launcher: string[];
  events: string[];
}

/** The plugin's information, when `text` is a plugin Baton wrote; undefined for any other file. */
export function readOpencodePlugin(text: string): OpencodePluginInfo | undefined {
  const [first, second] = text.split("\n", 2);
  if (first !== OPENCODE_PLUGIN_MARK || second === undefined) return undefined;
  const m = /^\/\/ baton: (\{.*\})$/.exec(second);
  if (!m) return undefined;
  try {
    const v = JSON.parse(m[1] as string) as Partial<OpencodePluginInfo>;
    if (!Array.isArray(v.launcher) || !v.launcher.every((w) => typeof w === "string") || v.launcher.length === 0) return undefined;
    if (!Array.isArray(v.events) || !v.events.every((e) => typeof e === "string")) return undefined;
    return { launcher: v.launcher, events: v.events };
  } catch {
    return undefined;
  }
}

/** The plugin's text for a launcher. */
export function opencodePluginText(launcher: readonly string[]): string {
  const info: OpencodePluginInfo = { launcher: [...launcher], events: [...OPENCODE_EVENTS] };
  return `${OPENCODE_PLUGIN_MARK}
// baton: ${JSON.stringify(info)}
//
// It sends OpenCode's tool calls, prompts and session events to \`baton hook opencode <event>\`
// (checkpoints before writes and shell commands, the journal, "undo that", the spiral pause) and
// gives the model what Baton answers. Where ${launcher[0] === "baton" ? "`baton` is not on PATH" : "that baton is gone"}, it does nothing.
// Remove it with \`baton hooks uninstall opencode\`; do not edit it (install rewrites it).
import { spawn } from "node:child_process";

const LAUNCHER = ${JSON.stringify(launcher)};
const TIMEOUT_MS = 60000;

/** Baton's answer to one hook: {} when Baton is missing, failed or has nothing to say. */
function hook(event, payload) {
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
    try {
      child = spawn(LAUNCHER[0], [...LAUNCHER.slice(1), "hook", "opencode", event], {
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
        // Only an object is an answer: anything else (null, a number, junk) lets the call go on.
        const v = out.trim() === "" ? {} : JSON.parse(out);
        finish(v !== null && typeof v === "object" && !Array.isArray(v) ? v : {});
      } catch {
        finish({});
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

let partSeq = 0;

export const BatonPlugin = async ({ directory }) => {
  const announced = new Set();
  const started = new Set();
  const denied = new Set();
  const afterCompact = new Map();
  const beforeContext = new Map();
  const base = (sessionID) => ({ session_id: sessionID, cwd: directory });

  return {
    event: async ({ event }) => {
      const p = event?.properties ?? {};
      if (event?.type === "session.created" && p.info?.id) {
        announced.add(p.info.id);
      } else if (event?.type === "session.idle" && p.sessionID) {
        await hook("session.idle", base(p.sessionID));
      } else if (event?.type === "session.compacted" && p.sessionID) {
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
        .join("\\n");
      const r = await hook("chat.message", { ...base(sessionID), message_id: output.message?.id ?? input.messageID, prompt });
      if (typeof r.context === "string" && r.context !== "") context.push(r.context);
      afterCompact.delete(sessionID);
      const last = parts[parts.length - 1];
      if (context.length === 0 || !last?.id) return;
      // Part ids sort in order: the next one after the message's last part.
      partSeq++;
      parts.push({
        id: \`\${last.id}baton\${String(partSeq).padStart(6, "0")}\`,
        sessionID,
        messageID: output.message?.id ?? last.messageID,
        type: "text",
        text: context.join("\\n\\n"),
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
      if (context.length > 0 && typeof output.output === "string") output.output = \`\${output.output}\\n\\n\${context.join("\\n\\n")}\`;
    },

    // The shell tool's environment names its session, as the other agents' do: a \`baton\`
    // command the agent runs there works in its own lane.
    "shell.env": async (input, output) => {
      if (input.sessionID) output.env.BATON_OPENCODE_SESSION_ID = input.sessionID;
    },

    "experimental.session.compacting": async (input) => {
      await hook("experimental.session.compacting", base(input.sessionID));
    },

    dispose: async () => {
      for (const sessionID of started) await hook("dispose", base(sessionID));
    },
  };
};
`;
}
