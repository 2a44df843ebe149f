/**
 * Which installed baton a server answers the shell's hook clients for (server/hook-client-route.ts
 * `installedBaton`): its entry and the bundle beside it, read again once when they change, and
 * still its own while the bundle holds its build (a rebuild of the same sources), not once it
 * holds another.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { installedBaton } from "../src/server/hook-client-route.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function install(build: string): { entry: string; bundle: string } {
  const dir = mkdtempSync(join(tmpdir(), "baton-installed-"));
  dirs.push(dir);
  mkdirSync(join(dir, "bin"));
  mkdirSync(join(dir, "dist"));
  const entry = join(dir, "bin", "baton.cjs");
  const bundle = join(dir, "dist", "cli-full.cjs");
  writeFileSync(entry, "#!/bin/sh\n");
  writeFileSync(bundle, `var B=${JSON.stringify(build)};\n`);
  return { entry, bundle };
}

describe("installedBaton", () => {
  it("is the entry and bundle the server started from while the bundle holds its build", () => {
    const { entry, bundle } = install("1.0.0+aaaa");
    const installed = installedBaton(entry, "1.0.0+aaaa");
    expect(installed?.current()).toBeDefined();
    // Rewritten with the same build (a rebuild of the same sources): still this server's.
    rmSync(bundle);
    writeFileSync(bundle, `var B=${JSON.stringify("1.0.0+aaaa")};/* rebuilt */\n`);
    expect(installed?.current()).toBeDefined();
    // Another build in its place: not this server's, so Node answers every hook.
    writeFileSync(bundle, `var B=${JSON.stringify("1.0.1+bbbb")};\n`);
    expect(installed?.current()).toBeUndefined();
  });

  it("is none for a server started without an installed entry, or whose bundle is gone", () => {
    expect(installedBaton("")).toBeUndefined();
    expect(installedBaton(join(tmpdir(), "no-such-baton.cjs"))).toBeUndefined();
    const { entry, bundle } = install("1.0.0+aaaa");
    const installed = installedBaton(entry, "1.0.0+aaaa");
    rmSync(bundle);
    expect(installed?.current()).toBeUndefined();
  });
});
