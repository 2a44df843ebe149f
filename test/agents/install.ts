/**
 * The agent CLIs the e2e suite drives, installed from npm at test time (never package
 * dependencies): the pinned versions are in versions.json, the installs are cached in
 * `.cache/agent-clis/<name>@<version>` (or `$BATON_AGENT_CLI_CACHE`) and reused. A failed install
 * (no registry, say) throws: the suite fails loudly rather than skipping.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

export type AgentName = "claude" | "codex" | "gemini" | "qwen" | "copilot" | "opencode" | "cline";

interface Pin {
  package: string;
  version: string;
  bin: string;
}

export const REPO = resolve(import.meta.dirname, "..", "..");
export const VERSIONS: Record<AgentName, Pin> = JSON.parse(readFileSync(join(import.meta.dirname, "versions.json"), "utf8"));

export function cacheRoot(): string {
  return process.env.BATON_AGENT_CLI_CACHE || join(REPO, ".cache", "agent-clis");
}

/** The agent's executable, installed first when the cache lacks it. */
export function agentCli(agent: AgentName): string {
  const pin = VERSIONS[agent];
  const name = pin.package.split("/").pop() as string;
  const dir = join(cacheRoot(), `${name}@${pin.version}`);
  const bin = join(dir, "node_modules", ".bin", pin.bin);
  const marker = join(dir, ".installed");
  if (existsSync(marker) && existsSync(bin)) return bin;
  // Installed beside the final place, then renamed: a half-done install is never reused.
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  writeFileSync(join(tmp, "package.json"), '{ "private": true }\n');
  const r = spawnSync(
    "npm",
    ["install", "--prefix", tmp, "--no-audit", "--no-fund", "--no-save", "--loglevel=error", `${pin.package}@${pin.version}`],
    {
      encoding: "utf8",
      timeout: 420_000, // under the test watchdog's 8 minutes (test/setup.ts)
      // spawnSync returns only once its child exits: SIGTERM can be caught or held off.
      killSignal: "SIGKILL",
    },
  );
  if (r.status !== 0) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(
      `cannot install ${pin.package}@${pin.version} from npm into ${tmp} (exit ${r.status ?? r.signal}): the agent e2e suite needs the registry.\n${r.stderr}`,
    );
  }
  const tmpBin = join(tmp, "node_modules", ".bin", pin.bin);
  const probe = spawnSync(tmpBin, ["--version"], {
    encoding: "utf8",
    timeout: 60_000,
    killSignal: "SIGKILL",
    env: { ...process.env, HOME: tmp },
  });
  if (probe.status !== 0)
    throw new Error(`${pin.package}@${pin.version} installed but \`${pin.bin} --version\` fails: ${probe.stderr}${probe.stdout}`);
  writeFileSync(join(tmp, ".installed"), `${pin.package}@${pin.version}\n`);
  try {
    renameSync(tmp, dir);
  } catch (err) {
    // Another test process finished the same install first and may be running it now: use
    // theirs, never remove it. A folder without the marker is a leftover, replaced.
    if (existsSync(marker)) {
      rmSync(tmp, { recursive: true, force: true });
      return bin;
    }
    if ((err as NodeJS.ErrnoException).code !== "ENOTEMPTY" && (err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
  }
  return bin;
}
