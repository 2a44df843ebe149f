import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { projectSchema } from "../src/backend/postgres/pg-backend.js";
import { describeStore, redactStoreUrl, resolveStore, writeStoreConfig } from "../src/platform/store-config.js";
import { cleanupDirs, tempDir, writeConfig } from "./helpers.js";

/** A `.baton` directory holding `config` as its config.json, trusted as `baton trust` would (platform/config-trust.ts). */
function batonDir(config?: string): string {
  const root = tempDir();
  const dir = join(root, ".baton");
  mkdirSync(dir, { recursive: true });
  if (config !== undefined) writeConfig(root, config);
  return dir;
}

describe("store configuration", () => {
  afterAll(() => cleanupDirs());

  it("is SQLite with no configuration, and PostgreSQL from config.json or the environment (which wins)", () => {
    expect(resolveStore(batonDir(), {})).toEqual({ kind: "sqlite", source: "default" });
    const dir = batonDir(JSON.stringify({ store: "postgres://a@h:5432/db", project: "p1", hooks: { server: "off" } }));
    expect(resolveStore(dir, {})).toEqual({ kind: "postgres", url: "postgres://a@h:5432/db", project: "p1", source: "config" });
    expect(resolveStore(dir, { BATON_STORE: "postgres://b@other/db2", BATON_PROJECT: "p2" })).toMatchObject({
      url: "postgres://b@other/db2",
      project: "p2",
      source: "env",
    });
    expect(resolveStore(dir, { BATON_PROJECT: "p3" })).toMatchObject({ url: "postgres://a@h:5432/db", project: "p3", source: "env" });
  });

  it("refuses a URL with a password, a bad project or scheme, and a store without a project, changing nothing", () => {
    const dir = batonDir(JSON.stringify({ hooks: { server: "off" } }));
    expect(() => writeStoreConfig(dir, "postgres://a:secret@h/db", "p")).toThrow(/never writes one down/);
    expect(() => writeStoreConfig(dir, "postgres://a@h/db", "bad name!")).toThrow(/project/);
    expect(() => writeStoreConfig(dir, "mysql://a@h/db", "p")).toThrow(/not supported/);
    expect(JSON.parse(readFileSync(join(dir, "config.json"), "utf8"))).toEqual({ hooks: { server: "off" } });
    expect(() => resolveStore(dir, { BATON_STORE: "postgres://a@h/db" })).toThrow(/needs a project/);
    writeStoreConfig(dir, "postgres://a@h/db", "p");
    expect(JSON.parse(readFileSync(join(dir, "config.json"), "utf8"))).toEqual({
      hooks: { server: "off" },
      store: "postgres://a@h/db",
      project: "p",
    });
  });

  it("refuses a broken config.json whatever it names (never a silent fall back to SQLite), and never overwrites it", () => {
    for (const text of ["{ hooks: ", '{ "store": "postgres://a@h/db", ', "[1, 2]", "null"]) {
      const dir = batonDir(text);
      expect(() => resolveStore(dir, {}), text).toThrow(expect.objectContaining({ code: "bad_input" }));
      expect(() => writeStoreConfig(dir, "postgres://a@h/db", "p"), text).toThrow(expect.objectContaining({ code: "bad_input" }));
      expect(readFileSync(join(dir, "config.json"), "utf8"), "the file Baton could not read is left as it was").toBe(text);
    }
  });

  it("describes the store without a password", () => {
    const d = describeStore({ kind: "postgres", url: "postgres://a:pw@h:1/db", project: "p", source: "env" }, "/x/baton.db");
    expect(d.location).not.toContain("pw");
    expect(d).toMatchObject({ kind: "postgres", project: "p" });
  });

  it("never shows a password: not in an unparsable URL's error, not from the query string", () => {
    const bad = (() => {
      try {
        resolveStore(batonDir(), { BATON_STORE: "postgres://u:s3cret@h:99999/db", BATON_PROJECT: "p" });
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();
    expect(bad?.message).toMatch(/not a valid URL/);
    expect(bad?.message).not.toContain("s3cret");
    for (const url of [
      "postgres://u@h/db?password=s3cret",
      "postgres://u@h/db?sslmode=require&sslpassword=s3cret",
      "postgres://u:s3cret@h/db?PASSWORD=s3cret",
    ]) {
      expect(redactStoreUrl(url)).not.toContain("s3cret");
      const d = describeStore({ kind: "postgres", url, project: "p", source: "env" }, "/x/baton.db");
      expect(d.location).not.toContain("s3cret");
      const dir = batonDir("{}");
      expect(() => writeStoreConfig(dir, url, "p")).toThrow(/never writes one down/);
      expect(readFileSync(join(dir, "config.json"), "utf8")).toBe("{}");
    }
    expect(redactStoreUrl("postgres://u@h:5432/db?sslmode=require")).toBe("postgres://u@h:5432/db?sslmode=require");
    expect(redactStoreUrl("postgres://u:x@h:99999/db")).toBe("(an unparsable URL)");
  });

  it("maps project names to schemas one-to-one, refusing names that only differ in case", () => {
    for (const bad of ["Team-A", "team a", "-team", "", "x".repeat(49), "é"]) {
      expect(() => projectSchema(bad), bad).toThrow(/lowercase/);
      expect(() => writeStoreConfig(batonDir("{}"), "postgres://a@h/db", bad)).toThrow(/lowercase/);
    }
    expect(projectSchema("team-a")).not.toBe(projectSchema("team_a"));
    const name = fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,47}$/);
    fc.assert(
      fc.property(name, name, (a, b) => {
        const [sa, sb] = [projectSchema(a), projectSchema(b)];
        expect(sa).toMatch(/^baton_[a-z0-9_]+_[0-9a-f]{8}$/);
        expect(sa.length).toBeLessThanOrEqual(63);
        expect(sa === sb).toBe(a === b);
      }),
      { numRuns: 2000 },
    );
    // Near misses too: '-' and '_' in the same places.
    fc.assert(fc.property(name, (a) => a.replace(/-/g, "_") === a || projectSchema(a) !== projectSchema(a.replace(/-/g, "_"))));
  });
});
