/**
 * Codex runs a hook only once the user trusted it: `[hooks.state."<key>"] trusted_hash =
 * "sha256:…"` in `$CODEX_HOME/config.toml`, where `<key>` is `<hooks.json path>:<event>:<group
 * index>:<handler index>` and the hash covers the handler as configured (so editing an entry,
 * or installing it from another path, makes it untrusted again). A user trusts them in the TUI
 * (`/hooks`); headless, the same key and hash come from `codex app-server`'s `hooks/list`,
 * which is what this reads. `baton hooks install codex` records the trust of Baton's own hooks;
 * the suite checks Codex agrees, and trusts by hand only hooks a user added (the benchmark's).
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface CodexHookEntry {
  key: string;
  eventName: string;
  command?: string;
  currentHash?: string;
  trustStatus?: string;
  source?: string;
}

/** Every hook `codex app-server` lists for `cwd`. */
export function listCodexHooks(codex: string, cwd: string, env: Record<string, string>): Promise<CodexHookEntry[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(codex, ["app-server"], { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
    let buf = "";
    let stderr = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`codex app-server: no hooks/list answer in 30 s; stderr: ${stderr}`));
    }, 30_000);
    const send = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`);
    child.stderr.on("data", (d) => (stderr += d));
    child.stdin.on("error", () => {});
    child.on("error", reject);
    child.stdout.on("data", (d) => {
      buf += d;
      let nl = buf.indexOf("\n");
      while (nl >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        nl = buf.indexOf("\n");
        if (!line.startsWith("{")) continue;
        const m = JSON.parse(line);
        if (m.id === 1) {
          send({ jsonrpc: "2.0", method: "initialized", params: {} });
          send({ jsonrpc: "2.0", id: 2, method: "hooks/list", params: { cwds: [cwd] } });
        } else if (m.id === 2) {
          clearTimeout(timer);
          child.kill();
          if (m.error) return reject(new Error(`codex hooks/list: ${JSON.stringify(m.error)}`));
          resolve((m.result?.data ?? []).flatMap((d: any) => d.hooks ?? []));
        }
      }
    });
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { clientInfo: { name: "baton-e2e", version: "0.0.0" } } });
  });
}

/** Trust Baton's Codex hooks for this project, as a user approving them in `/hooks` would. */
export async function trustCodexHooks(codex: string, cwd: string, env: Record<string, string>, all = false): Promise<CodexHookEntry[]> {
  const hooks = (await listCodexHooks(codex, cwd, env)).filter((h) => all || /\bhook codex\b/.test(h.command ?? ""));
  if (hooks.length === 0)
    throw new Error("codex hooks/list shows none of Baton's hooks: is .codex/hooks.json installed and the project trusted?");
  const file = join(env.CODEX_HOME as string, "config.toml");
  const untrusted = hooks.filter((h) => h.trustStatus !== "trusted" && h.currentHash);
  // An entry whose command was changed after `baton hooks install` trusted it (the benchmark's
  // `true` hooks) already has a table: replace it (TOML forbids a key twice).
  let text = existsSync(file) ? readFileSync(file, "utf8") : "";
  for (const h of untrusted) {
    const table = `[hooks.state.${JSON.stringify(h.key)}]`;
    const at = text.indexOf(table);
    if (at < 0) continue;
    const next = text.indexOf("\n[", at + table.length);
    text = text.slice(0, at) + (next < 0 ? "" : text.slice(next + 1));
  }
  writeFileSync(
    file,
    text + untrusted.map((h) => `\n[hooks.state.${JSON.stringify(h.key)}]\ntrusted_hash = ${JSON.stringify(h.currentHash)}\n`).join(""),
  );
  return hooks;
}
