/**
 * `.baton/` is private whatever the umask: created 0700 with its database, WAL, shared memory,
 * blobs and logs 0600; an existing workspace made loose is tightened on open, and `baton doctor`
 * reports what is still loose and tightens it under `--fix`. The CLI runs under `umask 022`, the
 * usual default, in which files are otherwise created 0644.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { CLI, cleanupDirs, REPO, tempDir } from "./helpers.js";
import { serve } from "./server-helpers.js";

const posix = process.platform !== "win32";

/** Run the CLI in a shell with `umask 022`. */
function baton(root: string, args: string[]): { code: number; stdout: string; stderr: string } {
  const quoted = [process.execPath, CLI, ...args, "--root", root].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
  const r = spawnSync("sh", ["-c", `umask 022 && ${quoted}`], { cwd: root, encoding: "utf8", timeout: 60_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** Replay a recorded hook payload through `baton hook claude <event>` under `umask 022`. */
function hook(root: string, fixture: string, env: Record<string, string>): void {
  const input = readFileSync(join(REPO, "test", "fixtures", "hooks", "claude", `${fixture}.json`), "utf8")
    .split("{{cwd}}")
    .join(root)
    .split("{{session}}")
    .join("agent-session-1")
    .split("{{call}}")
    .join("call-1");
  const event = JSON.parse(input).hook_event_name as string;
  const r = spawnSync("sh", ["-c", `umask 022 && '${process.execPath}' '${CLI}' hook claude ${event}`], {
    cwd: root,
    input,
    encoding: "utf8",
    env: { ...process.env, ...env },
    timeout: 60_000,
  });
  expect(r.status, `hook ${fixture}: ${r.stderr}`).toBe(0);
}

const mode = (p: string) => (statSync(p).mode & 0o777).toString(8);

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    out.push(p);
    if (e.isDirectory()) out.push(...filesUnder(p));
  }
  return out;
}

describe.runIf(posix)("private .baton/ under umask 022", () => {
  afterAll(cleanupDirs);

  function workspaceWithData(): { root: string; dir: string } {
    const root = tempDir("baton-private-");
    writeFileSync(join(root, ".env"), "DB_PASSWORD=not-a-real-one-42\n", { mode: 0o600 });
    writeFileSync(join(root, "app.ts"), "export const x = 1;\n");
    writeFileSync(join(root, "big.bin"), randomBytes(1_100_000)); // above the inline limit: a blob file
    expect(baton(root, ["init"]).code).toBe(0);
    const started = baton(root, ["session", "start", "--flow", "task", "--id", "s1", "--json"]);
    expect(started.code, started.stderr).toBe(0);
    const ck = baton(root, ["checkpoint", "--session", "s1", "--json"]);
    expect(ck.code, ck.stderr).toBe(0);
    return { root, dir: join(root, ".baton") };
  }

  it("creates .baton/ 0700 and everything in it 0600 (directories 0700), the WAL and a file blob included", () => {
    const root = tempDir("baton-private-");
    writeFileSync(join(root, "big.bin"), randomBytes(1_100_000)); // above the inline limit: a blob file
    // In one process, so the WAL and shared-memory files exist when the modes are read.
    const script = `
      const { openBaton } = await import(${JSON.stringify(pathToFileURL(join(REPO, "dist", "index.js")).href)});
      const { readdirSync, statSync } = await import("node:fs");
      const { join } = await import("node:path");
      const b = await openBaton({ root: ${JSON.stringify(root)} });
      await b.sessions.start({ flow: "task", id: "s1" });
      await b.checkpoints.create("s1", {});
      const out = {};
      const walk = (d, rel) => { for (const n of readdirSync(d)) { const p = join(d, n); const st = statSync(p); out[rel + n] = (st.mode & 0o777).toString(8); if (st.isDirectory()) walk(p, rel + n + "/"); } };
      walk(join(${JSON.stringify(root)}, ".baton"), "");
      out["."] = (statSync(join(${JSON.stringify(root)}, ".baton")).mode & 0o777).toString(8);
      console.log(JSON.stringify(out));
      await b.close();`;
    const r = spawnSync("sh", ["-c", `umask 022 && '${process.execPath}' --input-type=module -e "$SCRIPT"`], {
      cwd: root,
      encoding: "utf8",
      env: { ...process.env, SCRIPT: script },
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const modes = JSON.parse(r.stdout.trim().split("\n").pop() as string) as Record<string, string>;
    expect(modes["."], ".baton/").toBe("700");
    for (const f of ["baton.db", "baton.db-wal", "baton.db-shm"]) expect(modes[f], f).toBe("600");
    expect(
      Object.keys(modes).some((p) => /^blobs\/[0-9a-f]{2}\/[0-9a-f]+$/.test(p)),
      `a blob file: ${Object.keys(modes).join(", ")}`,
    ).toBe(true);
    const loose = Object.entries(modes).filter(([, m]) => !/^[67]00$/.test(m));
    expect(loose, "entries group or others can access").toEqual([]);
  });

  it("keeps what the CLI creates private too (separate processes, umask 022)", () => {
    const { dir } = workspaceWithData();
    expect(mode(dir), ".baton/").toBe("700");
    const loose = filesUnder(dir)
      .filter((p) => (statSync(p).mode & 0o077) !== 0)
      .map((p) => `${p.slice(dir.length)} ${mode(p)}`);
    expect(loose, "entries group or others can access").toEqual([]);
  });

  it("keeps what hooks create private: pending hand-offs, claims, sessions/ and STATE.md, hook logs", () => {
    const root = tempDir("baton-private-hooks-");
    mkdirSync(join(root, "src"));
    writeFileSync(join(root, "src", "app.ts"), "export const x = 1;\n");
    expect(baton(root, ["init"]).code).toBe(0);
    // In-process hooks: the before-edit hook leaves a pending checkpoint hand-off, PreCompact writes STATE.md.
    const env = { BATON_HOOK_SERVER: "off" };
    for (const f of ["session-start-startup", "user-prompt", "pre-edit"]) hook(root, f, env);
    const dir = join(root, ".baton");
    const during = filesUnder(dir).map((p) => p.slice(dir.length + 1));
    expect(
      during.some((p) => p.startsWith("hooks/pending/")),
      `a pending hand-off: ${during.join(", ")}`,
    ).toBe(true);
    const looseDuring = filesUnder(dir)
      .filter((p) => (statSync(p).mode & 0o077) !== 0)
      .map((p) => `${p.slice(dir.length)} ${mode(p)}`);
    for (const f of ["post-edit", "pre-compact", "stop"]) hook(root, f, env);
    const all = filesUnder(dir).map((p) => p.slice(dir.length + 1));
    expect(
      all.some((p) => /^sessions\/[^/]+\/STATE\.md$/.test(p)),
      `STATE.md written: ${all.join(", ")}`,
    ).toBe(true);
    const loose = filesUnder(dir)
      .filter((p) => (statSync(p).mode & 0o077) !== 0)
      .map((p) => `${p.slice(dir.length)} ${mode(p)}`);
    expect([...looseDuring, ...loose], "entries group or others can access").toEqual([]);
    expect(mode(dir)).toBe("700");
  });

  it("keeps what hooks create private when the server answers them (claims, their temp files)", async () => {
    const root = tempDir("baton-private-served-");
    mkdirSync(join(root, "src"));
    writeFileSync(join(root, "src", "app.ts"), "export const x = 1;\n");
    expect(baton(root, ["init"]).code).toBe(0);
    // The server inherits this process's umask: make it the usual 022 for the test's span.
    const old = process.umask(0o022);
    const s = await serve(root);
    try {
      for (const f of ["session-start-startup", "user-prompt", "pre-edit", "post-edit", "pre-compact", "stop"])
        hook(root, f, { BATON_HOOK_SERVER: "use" });
    } finally {
      await s.stop();
      process.umask(old);
    }
    const dir = join(root, ".baton");
    const all = filesUnder(dir).map((p) => p.slice(dir.length + 1));
    expect(
      all.some((p) => p.startsWith("hooks/claims/")),
      `claims taken by the server: ${all.join(", ")}`,
    ).toBe(true);
    const loose = filesUnder(dir)
      .filter((p) => (statSync(p).mode & 0o077) !== 0)
      .map((p) => `${p.slice(dir.length)} ${mode(p)}`);
    expect(loose, "entries group or others can access").toEqual([]);
  });

  it("tightens an existing loose workspace on open; doctor reports the rest and --fix tightens it", () => {
    const { root, dir } = workspaceWithData();
    const blob = filesUnder(join(dir, "blobs")).find((p) => statSync(p).isFile()) as string;
    chmodSync(dir, 0o755);
    chmodSync(join(dir, "baton.db"), 0o644);
    chmodSync(blob, 0o644);

    const doctor = baton(root, ["doctor", "--json"]);
    expect(mode(dir), ".baton/ tightened on open").toBe("700");
    expect(mode(join(dir, "baton.db")), "baton.db tightened on open").toBe("600");
    const report = JSON.parse(doctor.stdout);
    const finding = report.findings.find((f: { code: string }) => f.code === "loose_modes");
    expect(finding, `doctor findings: ${doctor.stdout}`).toBeDefined();
    expect(finding.evidence.sample.map((e: { path: string }) => e.path)).toContain(blob.slice(dir.length + 1));
    expect(finding.safe).toBe(true);
    // .baton/ itself was tightened on open: the message says the exposure is low, not that other users can read them now.
    expect(finding.message).toMatch(/\.baton\/ itself is 0700.*low exposure/);

    const fixed = JSON.parse(baton(root, ["doctor", "--fix", "--json"]).stdout);
    expect(fixed.repairs.find((r: { code: string }) => r.code === "loose_modes")?.ok).toBe(true);
    expect(mode(blob), "blob tightened by --fix").toBe("600");
    const again = JSON.parse(baton(root, ["doctor", "--json"]).stdout);
    expect(again.findings.map((f: { code: string }) => f.code)).not.toContain("loose_modes");
  });
});
