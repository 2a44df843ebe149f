/** `baton hooks install|uninstall|status` and the help entry of `baton hook` (src/hooks/). */
import { HOOK_AGENT_LIST, type HookAgent } from "../../core/hooks/config.js";
import { badInput } from "../../errors.js";
import {
  AGENT_NAMES,
  type HookScope,
  hooksStatus,
  installCommand,
  installHooks,
  isHookAgent,
  uninstallHooks,
} from "../../hooks/install.js";
import { userHome } from "../../platform/home.js";
import { ensureWorkspace, findWorkspace, requireWorkingDir, workingDir, workspaceAt } from "../../platform/workspace.js";
import type { Ctx } from "../context.js";

interface ScopeOptions {
  project?: boolean;
  user?: boolean;
  shared?: boolean;
}

function agentOf(v: string): HookAgent {
  const a = v.toLowerCase();
  if (!isHookAgent(a)) throw badInput(`unknown agent "${v}": choose ${HOOK_AGENT_LIST}`);
  return a;
}

function scopeOf(o: ScopeOptions): HookScope {
  if (o.project && o.user) throw badInput("give --project or --user, not both");
  if (o.shared && o.user) throw badInput("--shared is for a project's settings: give --shared or --user, not both");
  return o.user ? "user" : "project";
}

/**
 * The project root: --root / BATON_ROOT, else the nearest workspace above the current directory,
 * else here. A user-scope command needs no project: without a working directory (removed under
 * the shell) it acts from the home folder.
 */
function projectRoot(ctx: Ctx, scope: "user" | "project" = "project"): string {
  if (ctx.root) return workspaceAt(ctx.root).root;
  const here = scope === "user" ? (workingDir() ?? userHome()) : requireWorkingDir();
  return findWorkspace(here)?.root ?? here;
}

export async function install(ctx: Ctx, agentArg: string, o: ScopeOptions & { command?: string; http?: boolean }): Promise<void> {
  const agent = agentOf(agentArg);
  const scope = scopeOf(o);
  const root = projectRoot(ctx, scope);
  // The hooks act only in a Baton workspace: a project install makes sure there is one.
  if (scope === "project") ensureWorkspace(workspaceAt(root));
  const r = await installHooks(agent, {
    scope,
    shared: o.shared === true,
    root,
    ...(o.command ? { launcher: o.command } : {}),
    ...(o.http ? { http: true } : {}),
  });
  ctx.out(r, () => {
    const [where, ...notes] = r.notes;
    const lines = [
      r.changed ? `Installed Baton's ${agent} hooks in ${r.file}` : `Baton's ${agent} hooks are already installed in ${r.file} (unchanged)`,
    ];
    if (where) lines.push(`  ${where}`);
    if (r.backup) lines.push(`  the file as it was before Baton's hooks: ${r.backup}`);
    for (const h of r.hooks) lines.push(`  ${h.event}${h.matcher ? ` [${h.matcher}]` : ""}: ${h.http ? "POST " : ""}${h.command}`);
    for (const n of notes) lines.push(`note: ${n}`);
    for (const l of r.limits) lines.push(`cannot: ${l}`);
    lines.push(...readinessLines(AGENT_NAMES[agent], r));
    lines.push(`Remove them with: ${installCommand(agent, { scope, shared: o.shared === true, root }, "uninstall")}`);
    return lines.join("\n");
  });
}

/** Whether the agent will run the hooks, and each step that remains. */
function readinessLines(name: string, r: { willRun: boolean; remaining: string[] }): string[] {
  if (r.willRun) return [`${name} will run these hooks.`];
  return [`${name} will not run these hooks yet. To do:`, ...r.remaining.map((x) => `  - ${x.replace(/\n/g, "\n    ")}`)];
}

export async function uninstall(ctx: Ctx, agentArg: string, o: ScopeOptions): Promise<void> {
  const agent = agentOf(agentArg);
  const scope = scopeOf(o);
  const r = await uninstallHooks(agent, { scope, shared: o.shared === true, root: projectRoot(ctx, scope) });
  ctx.out(r, () => {
    const lines = !r.changed
      ? [`No Baton ${agent} hooks in ${r.file}; nothing changed`]
      : [
          `Removed ${r.removed} Baton hook(s) from ${r.file}${
            r.deleted
              ? " (install had created it: removed)"
              : r.restored
                ? ` (it is again exactly as it was before install, ${r.file}.baton.bak)`
                : " (other changes since install kept)"
          }`,
        ];
    for (const n of r.notes) lines.push(`note: ${n}`);
    return lines.join("\n");
  });
}

function placeLabel(s: { scope: HookScope; shared: boolean; route?: string; id?: string; enabled?: boolean }): string {
  const place = s.scope === "user" ? "user" : s.shared ? "project" : "project, local";
  return s.route ? `${s.route} ${s.id}, ${place}${s.enabled ? "" : ", disabled"}` : place;
}

export async function status(ctx: Ctx, agentArg: string | undefined): Promise<void> {
  const agents = agentArg ? [agentOf(agentArg)] : undefined;
  const list = await hooksStatus({ root: projectRoot(ctx), ...(agents ? { agents } : {}) });
  ctx.out({ hooks: list }, () =>
    list
      .map((s) => {
        const head = `${s.agent} (${placeLabel(s)}) ${s.file}: `;
        if (s.problem) return `${head}cannot read it: ${s.problem}`;
        if (s.installed.length === 0) return `${head}not installed`;
        const lines = [
          `${head}${s.missing.length === 0 ? "installed" : `partly installed (missing ${s.missing.join(", ")})`}${s.stale ? "; the baton or the Node they run is gone" : ""}${s.twice ? "; TWICE (each hook runs twice)" : ""}`,
        ];
        for (const n of s.notes) lines.push(`  note: ${n}`);
        for (const l of s.limits ?? []) lines.push(`  cannot: ${l}`);
        if (s.willRun !== undefined)
          lines.push(...readinessLines(AGENT_NAMES[s.agent], { willRun: s.willRun, remaining: s.remaining ?? [] }).map((l) => `  ${l}`));
        return lines.join("\n");
      })
      .join("\n"),
  );
}

/** `baton hook` reached through the full CLI (the fast path normally takes it). */
export async function hook(ctx: Ctx, agent: string, event: string | undefined, opts: { relay?: boolean } = {}): Promise<void> {
  if (opts.relay) return (await import("../relay-bundle.js")).runRelayBundle();
  const { runHook } = await import("../../hooks/run.js");
  await runHook([agent, event ?? "", ...(ctx.root ? ["--root", ctx.root] : [])], { exit: true });
}
