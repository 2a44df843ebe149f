/**
 * What a store URL may carry (core/store-url.ts): a parameter that would change the schema or
 * the session's settings is refused, whoever wrote the URL (BATON_STORE or `baton init --store`),
 * and a fragment is refused and never shown.
 */
import { describe, expect, it } from "vitest";
import { checkStoreParams, redactStoreUrl } from "../src/core/store-url.js";
import { checkStoreUrl, resolveStore } from "../src/platform/store-config.js";
import { tempDir } from "./helpers.js";

const base = "postgres://baton@db.example:5432/team";

describe("store URL parameters", () => {
  it("refuses options, search_path and other settings, in any spelling; takes connection and TLS parameters", () => {
    for (const q of [
      "options=-c%20search_path%3Dother_project",
      "options=-c%20role%3Dadmin",
      "search_path=x",
      "statement_timeout=0",
      "OPTIONS=-c%20search_path%3Dx",
      "replication=database",
    ]) {
      expect(() => checkStoreParams(new URL(`${base}?${q}`)), q).toThrow(/is not taken/);
      expect(() => checkStoreUrl(`${base}?${q}`), q).toThrow(/is not taken/);
      // Through the environment too: BATON_STORE is checked like the file.
      expect(() => resolveStore(tempDir(), { BATON_STORE: `${base}?${q}`, BATON_PROJECT: "p" }), q).toThrow(/is not taken/);
    }
    for (const q of [
      "sslmode=verify-full",
      "sslrootcert=/etc/ca.pem",
      "application_name=ci",
      "host=/var/run/postgresql",
      "connect_timeout=5",
    ])
      expect(() => checkStoreUrl(`${base}?${q}`), q).not.toThrow();
  });

  it("refuses a fragment, and never shows one", () => {
    const url = `${base}#password=hunter2`;
    expect(() => checkStoreUrl(url)).toThrow(/fragment/);
    try {
      checkStoreUrl(url);
    } catch (err) {
      expect((err as Error).message).not.toContain("hunter2");
    }
    expect(redactStoreUrl(url)).not.toContain("hunter2");
  });
});
