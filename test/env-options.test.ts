/**
 * The environment's mapping onto openBaton's options (src/env-options.ts), and the durability
 * each name gives the embedded store: read back from the SQLite connection itself.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Durability } from "../src/api.js";
import type { SqliteBackend } from "../src/backend/sqlite/sqlite-backend.js";
import { openBaton, servicesOf } from "../src/compose.js";
import { envOptions, envSettings } from "../src/env-options.js";
import { cleanupDirs, cli, initWorkspace, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

describe("BATON_DURABILITY and the former BATON_SYNCHRONOUS", () => {
  it("maps each value, prefers BATON_DURABILITY, and notes the former name", () => {
    expect(envOptions({})).toEqual({});
    expect(envOptions({ BATON_DURABILITY: "Relaxed" })).toEqual({ durability: "relaxed" });
    expect(envOptions({ BATON_SYNCHRONOUS: "normal" })).toEqual({
      durability: "relaxed",
      deprecated: [expect.stringContaining("use BATON_DURABILITY=relaxed")],
    });
    expect(envOptions({ BATON_SYNCHRONOUS: "OFF" }).durability).toBe("none");
    expect(envOptions({ BATON_SYNCHRONOUS: "FULL" }).durability).toBe("full");
    expect(envOptions({ BATON_DURABILITY: "full", BATON_SYNCHRONOUS: "OFF" })).toEqual({ durability: "full" });
    expect(() => envOptions({ BATON_DURABILITY: "fsync" })).toThrow(expect.objectContaining({ code: "bad_input" }));
  });

  it("BATON_LEDGER_DURABILITY is ledger.durability: every per-call record then waits for the disk", async () => {
    expect(envOptions({ BATON_LEDGER_DURABILITY: "Full" })).toEqual({ ledger: { durability: "full" } });
    expect(envOptions({ BATON_LEDGER_DURABILITY: "relaxed" })).toEqual({ ledger: { durability: "relaxed" } });
    expect(() => envOptions({ BATON_LEDGER_DURABILITY: "none" })).toThrow(expect.objectContaining({ code: "bad_input" }));
    const b = await openBaton({ root: tempDir(), ...envOptions({ BATON_LEDGER_DURABILITY: "full" }) });
    try {
      expect(servicesOf(b).perCallDurability).toBe("full");
    } finally {
      await b.close();
    }
  });

  it.each([
    ["full", 2],
    ["relaxed", 1],
    ["none", 0],
  ] as [Durability, number][])("durability %s is SQLite synchronous=%i on the workspace's connection", async (durability, level) => {
    const root = tempDir();
    const b = await openBaton({ root, durability });
    try {
      await b.sessions.start({ flow: "task", id: "s" });
      // The level is per connection: read it on the workspace's own connection.
      const backend = servicesOf(b).backend as SqliteBackend;
      expect(backend.synchronousLevel).toBe(level);
    } finally {
      await b.close();
    }
  });

  it("the CLI warns about the former name on stderr, and stdout stays JSON", () => {
    const root = initWorkspace("baton-env-dep-");
    const r = cli(["status", "--json", "--root", root], { env: { BATON_SYNCHRONOUS: "NORMAL" } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("BATON_SYNCHRONOUS is deprecated");
    expect(r.json()).toHaveProperty("sessions");
  });
});

describe("envSettings: what a hook and the server it hands its event to must agree on", () => {
  it("is one text in a fixed order, whatever the spelling or the variable used", () => {
    const home = { HOME: "/home/me" };
    expect(envSettings(home)).toBe("config home /home/me/.config/baton");
    expect(
      envSettings({
        ...home,
        BATON_HOST_ID: "ci-7",
        BATON_STORE_BLOB_MAX_BYTES: "01048576",
        BATON_DURABILITY: "FULL",
        BATON_CHECKPOINT_RETAIN: " 5 ",
        BATON_LEDGER_DURABILITY: "Full",
        BATON_STORE_STATEMENT_TIMEOUT_MS: "9000",
      }),
    ).toBe(
      "BATON_DURABILITY=full BATON_LEDGER_DURABILITY=full BATON_CHECKPOINT_RETAIN=5 BATON_HOST_ID=ci-7 BATON_STORE_BLOB_MAX_BYTES=1048576 config home /home/me/.config/baton",
    );
    // The former variable names the same durability: the same settings.
    expect(envSettings({ ...home, BATON_SYNCHRONOUS: "normal" })).toBe(envSettings({ ...home, BATON_DURABILITY: "relaxed" }));
    // The user's Baton directory, wherever it is set, decides which trust records apply.
    expect(envSettings({ ...home, XDG_CONFIG_HOME: "/xdg" })).toBe("config home /xdg/baton");
    expect(envSettings({ ...home, BATON_CONFIG_HOME: "/etc/baton-me" })).toBe("config home /etc/baton-me");
    // A relative directory would move with the working directory: ignored.
    expect(envSettings({ ...home, BATON_CONFIG_HOME: "baton-here" })).toBe(envSettings(home));
    // So would a relative HOME: this process's own home folder instead.
    expect(envSettings({ HOME: "relative-home" })).toBe(`config home ${join(homedir(), ".config", "baton")}`);
    // Variables it does not concern change nothing.
    expect(envSettings({ ...home, BATON_STORE: "postgres", BATON_HOOK_SERVER: "use", PATH: "/x" })).toBe(envSettings(home));
  });

  it("a bad value throws as envOptions does", () => {
    expect(() => envSettings({ BATON_LEDGER_DURABILITY: "none" })).toThrow(expect.objectContaining({ code: "bad_input" }));
  });
});
