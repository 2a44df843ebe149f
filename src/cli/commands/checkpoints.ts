/** Commands for checkpoints, rollback, artifacts and blob collection. */
import { closeSync, writeFileSync } from "node:fs";
import { isAbsolute, relative, sep } from "node:path";
import { keptLane, laneFromEnv } from "../../core/lanes.js";
import type { CheckpointInfo } from "../../core/time-travel/checkpoints.js";
import { BatonError, badInput } from "../../errors.js";
import { paintDiff } from "../../platform/colour.js";
import { writeStdoutBytes } from "../../platform/output.js";
import { absoluteFromWorkingDir } from "../../platform/workspace.js";
import { type Ctx, parseIntOption } from "../context.js";
import { progress } from "../progress.js";
import { one } from "../render.js";

type S = { session?: string };

async function target(ctx: Ctx, o: S) {
  const b = await ctx.open();
  return { b, sid: await b.sessions.resolve(o.session) };
}

export async function checkpoint(
  ctx: Ctx,
  o: S & { files?: string[]; all?: boolean; label?: string; tool?: string; turn?: string; run?: string; pin?: boolean },
): Promise<void> {
  const { b, sid } = await target(ctx, o);
  const turn = parseIntOption(o.turn, "--turn");
  const line = progress(ctx);
  const r = await b.checkpoints
    .create(sid, {
      onProgress: (p) =>
        line.update(
          () =>
            p.phase === "scan"
              ? `checkpoint: ${count(p.done)} files found…`
              : `checkpoint: ${count(p.done)}/${count(p.total ?? 0)} new or changed files stored…`,
          p.phase,
        ),
      ...(o.files?.length ? { files: o.files } : {}),
      ...(o.all ? { all: true } : {}),
      ...(o.label !== undefined ? { label: o.label } : {}),
      ...(o.tool !== undefined ? { toolName: o.tool } : {}),
      ...(turn !== undefined ? { turn } : {}),
      ...(o.run !== undefined ? { runId: o.run } : {}),
      ...(o.pin ? { pinned: true } : {}),
    })
    .finally(() => line.end());
  const c = r.checkpoint;
  ctx.out({ checkpointId: c.id, ...r }, () => {
    const lines = [
      `Checkpoint ${c.id} (${c.kind}, ${c.files.length} file(s)${c.kind === "tree" ? `: ${r.stats.read} read, ${r.stats.cached} unchanged` : ""}; ${r.stats.blobsStored} new blob(s)) on ${sid}`,
    ];
    const absent = c.files.filter((f) => "absent" in f).length;
    if (absent) lines.push(`  ${absent} absent file(s) recorded: a rollback removes them`);
    for (const f of c.files) if ("skipped" in f) lines.push(`  skipped ${f.path}: ${f.skipped}`);
    // Quoted: such a name may hold a line break or a terminal escape.
    for (const f of r.skipped ?? []) lines.push(`  left out ${JSON.stringify(f.path)}: ${f.reason} (a rollback leaves it as it is)`);
    if (r.pruned.length) lines.push(`  retention pruned ${r.pruned.length}: ${r.pruned.join(", ")}`);
    return lines.join("\n");
  });
}

function describe(c: CheckpointInfo): string {
  const flags = [c.pinned && "pinned", c.prunedAt && `pruned ${c.prunedAt}`].filter(Boolean).join(", ");
  const what = [c.toolName && `tool ${one(c.toolName)}`, c.turn !== undefined && `turn ${c.turn}`, c.label && one(c.label)]
    .filter(Boolean)
    .join(" · ");
  return `#${c.seq}  ${c.id}  ${c.kind.padEnd(8)}  ${c.createdAt}  ${String(c.fileCount).padStart(5)} file(s)${what ? `  ${what}` : ""}${flags ? `  [${flags}]` : ""}`;
}

export async function checkpoints(ctx: Ctx, o: S & { pruned?: boolean }): Promise<void> {
  const { b, sid } = await target(ctx, o);
  const list = await b.checkpoints.list(sid, { includePruned: o.pruned === true });
  ctx.out({ sessionId: sid, checkpoints: list }, () =>
    list.length === 0 ? `No checkpoints on ${sid}; take one with \`baton checkpoint\`` : list.map(describe).join("\n"),
  );
}

export async function show(ctx: Ctx, id: string): Promise<void> {
  const b = await ctx.open();
  const c = await b.checkpoints.get(id);
  ctx.out(c, () =>
    [
      describe(c),
      ...c.files.map((f) =>
        "hash" in f
          ? `  ${f.path}  ${f.size} bytes  mode ${f.mode.toString(8)}  sha256 ${f.hash.slice(0, 12)}`
          : "absent" in f
            ? `  ${f.path}  (absent)`
            : `  ${f.path}  (skipped: ${f.skipped})`,
      ),
    ].join("\n"),
  );
}

export async function pin(ctx: Ctx, id: string): Promise<void> {
  const c = await (await ctx.open()).checkpoints.pin(id, true);
  ctx.out(c, () => `Pinned ${c.id}: retention keeps it`);
}

export async function unpin(ctx: Ctx, id: string): Promise<void> {
  const c = await (await ctx.open()).checkpoints.pin(id, false);
  ctx.out(c, () => `Unpinned ${c.id}`);
}

export async function rollback(
  ctx: Ctx,
  steps: string | undefined,
  o: S & { to?: string; files?: string[]; dryRun?: boolean; otherHost?: boolean; lane?: string; allLanes?: boolean },
): Promise<void> {
  if (o.lane !== undefined && o.allLanes) throw badInput("give --lane <id> or --all-lanes, not both");
  // Run by an agent (its shell names its session): its own lane's steps, unless told otherwise.
  const lane = o.allLanes ? undefined : (o.lane ?? laneFromEnv(process.env));
  if (steps !== undefined && !/^\d+$/.test(steps.trim())) {
    throw badInput(`"${steps}" is not a number of steps; to restore a checkpoint by id use --to ${steps}`);
  }
  const n = parseIntOption(steps, "steps", 1);
  if (n !== undefined && o.to !== undefined) throw badInput("give a number of steps or --to <checkpoint>, not both");
  const { b, sid } = await target(ctx, o);
  const line = progress(ctx);
  const r = await b.checkpoints
    .rollback(sid, {
      onProgress: (p) =>
        line.update(
          () => `rollback: ${count(p.done)}/${count(p.total)} files ${p.phase === "prepare" ? "written beside their place" : "restored"}…`,
          p.phase,
        ),
      ...(n !== undefined ? { steps: n } : {}),
      ...(o.to !== undefined ? { to: o.to } : {}),
      ...(o.files?.length ? { files: o.files } : {}),
      ...(o.dryRun ? { dryRun: true } : {}),
      ...(o.otherHost ? { otherHost: true } : {}),
      ...(lane !== undefined ? { lane } : {}),
    })
    .finally(() => line.end());
  // The lane as the session keeps it (a Copilot CLI subagent's shell names its own session).
  const kept = lane === undefined ? undefined : keptLane((await b.sessions.snapshot(sid)).facets.lanes ?? {}, lane);
  ctx.out({ sessionId: sid, ...(kept !== undefined ? { lane: kept } : {}), ...r }, (paint) => {
    const lines: string[] = [];
    const keptFiles = r.changes.filter((c) => c.action === "kept");
    if (r.dryRun) {
      if (r.diff) lines.push(paintDiff(r.diff.trimEnd(), paint), "");
      lines.push(
        `Dry run: rolling back to ${r.target.id} would restore ${r.restored} and remove ${r.removed} file(s); ${r.unchanged} already match. Nothing was changed.`,
      );
    } else {
      lines.push(
        `Rolled back ${sid} to ${r.target.id} (${r.rollbackId}): restored ${r.restored}, removed ${r.removed}, ${r.unchanged} already matched.`,
        `Undo it with: baton rollback --session ${sid} --to ${r.safety}`,
      );
    }
    if (kept !== undefined) lines.push(`  lane ${kept}: its own steps only`);
    for (const c of keptFiles) lines.push(`  kept ${c.path}: ${c.reason}`);
    for (const w of r.warnings) lines.push(`  ${paint("yellow", "warning")}: ${w}`);
    return lines.join("\n");
  });
}

export async function artifactAdd(ctx: Ctx, file: string, o: S & { name?: string; label?: string; type?: string }): Promise<void> {
  const { b, sid } = await target(ctx, o);
  const a = await b.artifacts.add(sid, {
    file,
    ...(o.name !== undefined ? { name: o.name } : {}),
    ...(o.label !== undefined ? { label: o.label } : {}),
    ...(o.type !== undefined ? { mediaType: o.type } : {}),
  });
  ctx.out({ sessionId: sid, artifact: a }, () => `Attached ${a.name} (${a.id}, ${a.size} bytes) to ${sid}`);
}

export async function artifactList(ctx: Ctx, o: S): Promise<void> {
  const { b, sid } = await target(ctx, o);
  const list = await b.artifacts.list(sid);
  ctx.out({ sessionId: sid, artifacts: list }, () =>
    list.length === 0
      ? `No artifacts on ${sid}`
      : list
          .map(
            (a) =>
              `${a.id}  ${one(a.name)}  ${a.size} bytes  ${a.at}${a.label ? `  ${one(a.label)}` : ""}${a.present ? "" : "  [missing]"}`,
          )
          .join("\n"),
  );
}

export async function artifactGet(ctx: Ctx, idOrName: string, o: S & { out?: string }): Promise<void> {
  const { b, sid } = await target(ctx, o);
  const { artifact, content } = await b.artifacts.get(sid, idOrName);
  if (o.out !== undefined) {
    const rel = relative(b.root, absoluteFromWorkingDir(o.out)).split(sep).join("/");
    if (rel !== "" && !rel.startsWith("../") && rel !== ".." && !isAbsolute(rel)) {
      // Inside the workspace, where the agent can swap a directory for a link: written as a
      // restore writes (never through a link in any component).
      const { atomicWrite } = await import("../../platform/safe-fs.js");
      atomicWrite(b.root, rel, content, 0o644, true);
    } else {
      const { openOutFile } = await import("../out-file.js");
      const fd = openOutFile(o.out);
      try {
        writeFileSync(fd, content);
      } catch (err) {
        throw new BatonError("io_error", `cannot write ${o.out}: ${(err as Error).message}`, { path: o.out }, { cause: err });
      } finally {
        closeSync(fd);
      }
    }
    ctx.out({ sessionId: sid, artifact, out: o.out }, () => `Wrote ${artifact.name} (${content.byteLength} bytes) to ${o.out}`);
    return;
  }
  if (ctx.json) ctx.out({ sessionId: sid, artifact, contentBase64: content.toString("base64") }, () => "");
  else writeStdoutBytes(content);
}

export async function gc(ctx: Ctx, o: { grace?: string }): Promise<void> {
  const graceMs = parseIntOption(o.grace, "--grace");
  const r = await (await ctx.open()).checkpoints.collectGarbage(graceMs !== undefined ? { graceMs } : {});
  ctx.out(r, () => `Removed ${r.blobsRemoved} unreferenced blob(s) and ${r.tempsRemoved} stale temp file(s); ${r.blobsKept} blob(s) kept`);
}

/** 12,345: counts in progress lines. */
function count(n: number): string {
  return n.toLocaleString("en-US");
}
