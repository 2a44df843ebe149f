/**
 * Baton installed as OpenCode's npm plugin (`opencode plugin agent-baton`, or `"plugin":
 * ["agent-baton"]` written by hand), as `baton hooks status`, uninstall and doctor see it: which
 * configuration file lists it, and what OpenCode installed for it in its cache (the module it
 * loads: the package's `exports["./server"]`, Baton's plugin file). OpenCode owns those files;
 * Baton reads them and never writes them (platform/opencode-npm.ts says how OpenCode reads them).
 */
import { existsSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { batonNpmSpecs } from "../platform/opencode-npm.js";
import { readSettingsText } from "../platform/settings-text.js";
import { type OpencodePluginInfo, readOpencodePlugin } from "./opencode-plugin.js";
import { opencodeConfigFiles, opencodeNpmPackageDir } from "./opencode-setup.js";
import type { SetupPlace } from "./readiness.js";

export interface OpencodeNpmInstall {
  scope: "project" | "user";
  /** The entry as the configuration writes it (`agent-baton`, `agent-baton@0.2.0`). */
  spec: string;
  /** The opencode.json(c) that lists it. */
  config: string;
  /** Where OpenCode installs the package for this spec. */
  packageDir: string;
  /** The module OpenCode loads from the installed package; undefined while it has not installed it yet. */
  module?: string;
  /** What that module runs and sends, when it is Baton's plugin. */
  info?: OpencodePluginInfo;
  /** The installed package cannot be loaded as Baton's plugin (what is wrong). */
  problem?: string;
}

function readText(file: string): string | undefined {
  try {
    return readSettingsText(file, 1024 * 1024);
  } catch {
    return undefined;
  }
}

/** The module OpenCode loads from an installed package: `exports["./server"]` (a string, or its import/default), else `main`. */
function serverEntry(pkgDir: string): { module?: string; problem?: string } {
  const text = readText(join(pkgDir, "package.json"));
  if (text === undefined) return {};
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { problem: `${join(pkgDir, "package.json")} is not JSON` };
  }
  const exp = json.exports;
  let raw: unknown = exp !== null && typeof exp === "object" ? (exp as Record<string, unknown>)["./server"] : undefined;
  if (raw !== null && typeof raw === "object") raw = (raw as Record<string, unknown>).import ?? (raw as Record<string, unknown>).default;
  const entry = typeof raw === "string" ? raw : typeof json.main === "string" ? json.main : undefined;
  if (entry === undefined) return { problem: `the installed ${pkgDir} names no module for OpenCode` };
  const module = resolve(pkgDir, entry);
  const rel = relative(pkgDir, module);
  if (rel.startsWith("..") || rel.startsWith(sep)) return { problem: `the installed ${pkgDir} names a module outside itself` };
  return { module };
}

/** Baton's npm plugin as listed at a place (the first configuration file that lists it, as OpenCode loads one package once). */
export function opencodeNpmInstall(place: SetupPlace): OpencodeNpmInstall | undefined {
  for (const config of opencodeConfigFiles(place)) {
    const text = readText(config);
    if (text === undefined) continue;
    const spec = batonNpmSpecs(text)[0];
    if (spec === undefined) continue;
    const packageDir = opencodeNpmPackageDir(place, spec);
    const out: OpencodeNpmInstall = { scope: place.scope, spec, config, packageDir };
    if (!existsSync(packageDir)) return out;
    const { module, problem } = serverEntry(packageDir);
    if (problem !== undefined) return { ...out, problem };
    if (module === undefined) return out;
    const info = readOpencodePlugin(readText(module) ?? "");
    if (!info)
      return {
        ...out,
        module,
        problem: `${module} is not Baton's plugin (an agent-baton older than its OpenCode plugin: OpenCode would load Baton's library and fail)`,
      };
    return { ...out, module, info };
  }
  return undefined;
}
