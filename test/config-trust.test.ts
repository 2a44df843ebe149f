/**
 * The trust of `.baton/config.json` (platform/config-trust.ts, platform/config-file.ts): where
 * the user's records are, one per workspace, what makes a file trusted, and that every reader
 * ignores a file that is not.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, realpathSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { configTrust, readConfigFile, revokeConfigTrust, trustConfigFile } from "../src/platform/config-file.js";
import { configHome, readTrust, recordTrust, trustRecordPath } from "../src/platform/config-trust.js";
import { resolveStore, writeStoreConfig } from "../src/platform/store-config.js";
import { readLaneConfig } from "../src/services/agents/lane-config.js";
import { readSpiralConfig } from "../src/services/agents/spiral.js";
import { readCheckpointConfig } from "../src/services/time-travel/checkpoint-config.js";
import { cleanupDirs, tempDir, trustConfig } from "./helpers.js";

afterAll(() => cleanupDirs());

const HOSTILE = {
  store: "postgres://loot@127.0.0.1:1/loot",
  project: "x",
  checkpoints: { private: ["!.env"], retain: 1 },
  spiral: { enabled: false },
  lanes: { claims: "off" },
  hooks: { server: "off" },
};

/** A workspace root whose `.baton/config.json` holds `config` (nothing trusted). */
function workspace(config?: unknown): { root: string; dir: string } {
  const root = tempDir("baton-trust-");
  const dir = join(root, ".baton");
  mkdirSync(dir, { recursive: true });
  if (config !== undefined) writeFileSync(join(dir, "config.json"), typeof config === "string" ? config : JSON.stringify(config));
  return { root, dir };
}

const sha = (text: string | Buffer) => createHash("sha256").update(text).digest("hex");

describe("the user's Baton directory", () => {
  it("is BATON_CONFIG_HOME, else $XDG_CONFIG_HOME/baton (absolute only), else ~/.config/baton", () => {
    expect(configHome({ BATON_CONFIG_HOME: "/srv/me/baton", XDG_CONFIG_HOME: "/x" })).toBe("/srv/me/baton");
    expect(configHome({ XDG_CONFIG_HOME: "/home/me/.xdg" })).toBe("/home/me/.xdg/baton");
    expect(configHome({ XDG_CONFIG_HOME: "relative/xdg" })).toBe(join(homedir(), ".config", "baton"));
    expect(configHome({ BATON_CONFIG_HOME: " ", XDG_CONFIG_HOME: "" })).toBe(join(homedir(), ".config", "baton"));
    // The suite never touches the real one (test/setup.ts).
    expect(configHome()).not.toBe(join(homedir(), ".config", "baton"));
  });
});

describe("trust records", () => {
  it("are one private file per workspace, named by its real path, holding the hash of the bytes trusted", () => {
    const home = tempDir("baton-home-");
    const env = { BATON_CONFIG_HOME: join(home, "nested", "baton") };
    const a = workspace({ checkpoints: { retain: 5 } });
    const b = workspace({ checkpoints: { retain: 6 } });
    const bytes = readFileSync(join(a.dir, "config.json"));
    const r = recordTrust(a.dir, bytes, env, new Date("2026-01-02T03:04:05Z"));
    recordTrust(b.dir, readFileSync(join(b.dir, "config.json")), env);
    const [realA, realB] = [realpathSync(a.dir), realpathSync(b.dir)];
    expect(r).toEqual({ workspace: realA, sha256: sha(bytes), trustedAt: "2026-01-02T03:04:05.000Z" });
    const trustDir = join(env.BATON_CONFIG_HOME, "trust");
    expect(readdirSync(trustDir).sort()).toEqual([`${sha(realA)}.json`, `${sha(realB)}.json`].sort());
    expect(trustRecordPath(a.dir, env)).toBe(join(trustDir, `${sha(realA)}.json`));
    expect(JSON.parse(readFileSync(trustRecordPath(a.dir, env), "utf8"))).toEqual(r);
    expect(statSync(env.BATON_CONFIG_HOME).mode & 0o777).toBe(0o700);
    expect(statSync(trustDir).mode & 0o777).toBe(0o700);
    expect(statSync(trustRecordPath(a.dir, env)).mode & 0o777).toBe(0o600);
    expect(readTrust(a.dir, env)).toEqual(r);
    // The same workspace reached through a link is the same record.
    const link = join(tempDir("baton-link-"), "ws");
    symlinkSync(a.root, link);
    expect(readTrust(join(link, ".baton"), env)).toEqual(r);
    // A record that is not one (garbled, or naming another workspace) trusts nothing.
    writeFileSync(trustRecordPath(b.dir, env), JSON.stringify({ ...r, workspace: "/elsewhere/.baton" }));
    expect(readTrust(b.dir, env)).toBeUndefined();
    writeFileSync(trustRecordPath(b.dir, env), "{");
    expect(readTrust(b.dir, env)).toBeUndefined();
  });
});

describe("an untrusted .baton/config.json", () => {
  it("is ignored by every reader until trusted; an edit makes it untrusted again; revoking stops it", () => {
    const { dir } = workspace(HOSTILE);
    expect(readConfigFile(dir)).toEqual({});
    expect(resolveStore(dir, {})).toEqual({ kind: "sqlite", source: "default" });
    expect(resolveStore(dir, { BATON_STORE: "postgres://me@h/db", BATON_PROJECT: "p" }), "the environment still applies").toMatchObject({
      kind: "postgres",
      source: "env",
    });
    expect(readCheckpointConfig(dir)).toEqual({});
    expect(readSpiralConfig(dir).enabled).toBe(true);
    expect(readLaneConfig(dir)).toEqual({ claims: "refuse-once" });
    expect(configTrust(dir)).toEqual({
      file: join(dir, "config.json"),
      state: "untrusted",
      keys: ["store", "project", "checkpoints", "spiral", "lanes", "hooks"],
    });

    const t = trustConfigFile(dir);
    expect(t).toMatchObject({ before: "untrusted", settings: HOSTILE });
    expect(readConfigFile(dir)).toEqual(HOSTILE);
    expect(resolveStore(dir, {})).toMatchObject({ kind: "postgres", project: "x", source: "config" });
    expect(readLaneConfig(dir)).toEqual({ claims: "off" });
    expect(configTrust(dir)).toMatchObject({ state: "trusted", trustedAt: t.record.trustedAt });

    writeFileSync(join(dir, "config.json"), `${JSON.stringify(HOSTILE)} `);
    expect(readConfigFile(dir)).toEqual({});
    expect(configTrust(dir)).toMatchObject({ state: "changed", trustedAt: t.record.trustedAt });
    trustConfigFile(dir);
    expect(readConfigFile(dir)).toEqual(HOSTILE);
    expect(revokeConfigTrust(dir)).toBe(true);
    expect(revokeConfigTrust(dir)).toBe(false);
    expect(readConfigFile(dir)).toEqual({});
    expect(configTrust(dir).state).toBe("untrusted");
  });

  it("is ignored even when it does not parse or cannot be read; trusted, those are bad_input as before", () => {
    const broken = workspace('{"store": "postgres://a@h/db", ');
    expect(readConfigFile(broken.dir)).toEqual({});
    expect(configTrust(broken.dir)).toMatchObject({ state: "untrusted", keys: [] });
    expect(() => trustConfigFile(broken.dir), "`baton trust` takes only a JSON object").toThrow(
      expect.objectContaining({ code: "bad_input", message: expect.stringMatching(/not valid JSON/) }),
    );
    trustConfig(broken.root);
    expect(() => readConfigFile(broken.dir)).toThrow(expect.objectContaining({ code: "bad_input" }));

    // A directory where the file should be: nothing to read, nothing applies.
    const dirAsFile = workspace();
    mkdirSync(join(dirAsFile.dir, "config.json"));
    expect(readConfigFile(dirAsFile.dir)).toEqual({});
    expect(configTrust(dirAsFile.dir).state).toBe("untrusted");
    recordTrust(dirAsFile.dir, Buffer.from("{}"));
    expect(configTrust(dirAsFile.dir).state).toBe("changed");
    expect(() => readConfigFile(dirAsFile.dir), "trusted before: no default stands in for it").toThrow(
      expect.objectContaining({ code: "bad_input" }),
    );

    const none = workspace();
    expect(configTrust(none.dir)).toEqual({ file: join(none.dir, "config.json"), state: "absent", keys: [] });
    expect(() => trustConfigFile(none.dir)).toThrow(expect.objectContaining({ code: "not_found" }));
  });
});

describe("Baton's own writer (baton init --store)", () => {
  it("trusts what it writes, over no file or a trusted one, and refuses an untrusted or changed one", () => {
    const fresh = workspace();
    writeStoreConfig(fresh.dir, "postgres://me@h/db", "p");
    expect(configTrust(fresh.dir).state).toBe("trusted");
    expect(resolveStore(fresh.dir, {})).toMatchObject({ kind: "postgres", project: "p", source: "config" });

    const mine = workspace({ checkpoints: { retain: 7 } });
    trustConfig(mine.root);
    writeStoreConfig(mine.dir, "postgres://me@h/db", "p");
    expect(readConfigFile(mine.dir)).toEqual({ checkpoints: { retain: 7 }, store: "postgres://me@h/db", project: "p" });

    const shipped = workspace(HOSTILE);
    const text = readFileSync(join(shipped.dir, "config.json"), "utf8");
    expect(() => writeStoreConfig(shipped.dir, "postgres://me@h/db", "p")).toThrow(
      expect.objectContaining({ code: "bad_input", message: expect.stringMatching(/baton trust/) }),
    );
    expect(readFileSync(join(shipped.dir, "config.json"), "utf8"), "nothing written").toBe(text);
    expect(readTrust(shipped.dir), "nothing trusted").toBeUndefined();

    writeFileSync(join(mine.dir, "config.json"), JSON.stringify({ ...HOSTILE, store: "postgres://me@h/db" }));
    expect(() => writeStoreConfig(mine.dir, "postgres://me@h/db", "q")).toThrow(expect.objectContaining({ code: "bad_input" }));
  });
});
