/**
 * The dashboard's checkpoints in a real Chromium against the real `baton serve`: compare a
 * checkpoint with now (unified and side by side; binary and large files named, not dumped),
 * roll back behind a confirmation, undo with its own preview and confirmation, pin and unpin, a
 * stale page acting on a checkpoint pruned meanwhile or undoing after a file changed, a
 * checkpoint that journaled nothing appearing by itself, and a checkpointed file's secrets
 * redacted in every diff. Asserts on the page, the files on disk and the journal.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { type Baton, openBaton } from "../src/index.js";
import { connection, openDashboard, screenshot, seriousViolations, suiteBrowser, tabTo } from "./dashboard-helpers.js";
import type { DashboardStore } from "./dashboard-store.js";
import { serve } from "./server-helpers.js";

/** The checkpoints view's tests, on the store given. */
export function checkpointsSuite(store: DashboardStore): void {
  describe(store.name, () => {
    const browser = suiteBrowser();

    /** A real-format GitHub token (and its rotation), and an RSA key block, planted in a checkpointed file. */
    const TOKEN = "ghp_CANARYgithub0123456789abcdefghijklmn";
    const ROTATED = "ghp_ROTATEgithub0123456789abcdefghijklmn";
    const KEY_LINE = "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF0qJkFzYdJpJ1n9mDwjNh6pKqLhk";
    const KEY = [
      "-----BEGIN RSA PRIVATE KEY-----",
      KEY_LINE,
      "q3bTzqW9Kk1o7gq3HQgT0Yd1x0x9xVzjK6fPqB2e7pG1h3J6k8l9m0n1o2p3q4r5",
      "-----END RSA PRIVATE KEY-----",
    ].join("\n");

    /** A settings module holding the token, a flag and the key (in a template literal, across lines). */
    const settings = (token: string, debug: number) =>
      `export const GITHUB_TOKEN = "${token}";\nexport const DEBUG = ${debug};\nexport const KEY = \`${KEY}\`;\n`;

    const ORIGINAL = ["export function greet(name: string) {", '  return "hello " + name;', "}", ""].join("\n");
    const EDITED = ["export function greet(name: string) {", '  return "hi " + name + "!";', "}", ""].join("\n");
    const EDITED_AGAIN = ["export function greet(name: string) {", '  return "hey " + name;', "}", "// tail", ""].join("\n");

    async function workspace(): Promise<{ root: string; lib: Baton }> {
      const root = store.workspace();
      mkdirSync(join(root, "src"));
      writeFileSync(join(root, "src/greet.ts"), ORIGINAL);
      writeFileSync(join(root, "logo.bin"), Buffer.from([0, 1, 2, 3, 0, 255]));
      writeFileSync(join(root, "big.txt"), "x".repeat(700 * 1024));
      const lib = await openBaton({ root });
      expect(lib.store.kind, "the store the suite runs on").toBe(store.name);
      await lib.sessions.start({ flow: "task", id: "cp" });
      await lib.checkpoints.create("cp", { all: true, toolName: "Edit", label: "before the greeting change" });
      writeFileSync(join(root, "src/greet.ts"), EDITED);
      writeFileSync(join(root, "logo.bin"), Buffer.from([0, 9, 9, 9, 0]));
      writeFileSync(join(root, "big.txt"), "y".repeat(700 * 1024));
      await lib.checkpoints.create("cp", { files: ["src/greet.ts"], toolName: "Bash" });
      writeFileSync(join(root, "src/greet.ts"), EDITED_AGAIN);
      return { root, lib };
    }

    async function openCheckpoints(root: string, page: Page): Promise<void> {
      await openDashboard(page, root, 'a[href="#/session/cp"]');
      await page.locator('a[href="#/session/cp"]').click();
      await connection(page, "live");
      await page.locator('table[aria-label="Checkpoints"] tbody tr').nth(1).waitFor();
    }

    function cpRow(page: Page, seq: number) {
      return page.locator('table[aria-label="Checkpoints"] tbody tr', {
        has: page.locator(`td:first-child:text-matches("^#${seq}\\\\b")`),
      });
    }

    /** The workspace above, served, and a page open on its checkpoints; everything closed after `fn`. */
    async function onCheckpointsPage(fn: (t: { root: string; lib: Baton; page: Page }) => Promise<void>): Promise<void> {
      const { root, lib } = await workspace();
      const server = await serve(root);
      const context = await browser().newContext({ bypassCSP: true });
      try {
        const page = await context.newPage();
        await openCheckpoints(root, page);
        await fn({ root, lib, page });
      } finally {
        await context.close();
        await server.stop();
        await lib.close();
      }
    }

    async function rollbacksIn(lib: Baton): Promise<string[]> {
      const { events } = await lib.events.list("cp", { afterSeq: 0, limit: 1_000 });
      return events.filter((e) => e.type.startsWith("rollback:")).map((e) => e.type);
    }

    describe("dashboard: checkpoints", () => {
      it("compares, rolls back with a confirmation, undoes, pins and unpins", () =>
        onCheckpointsPage(async ({ root, lib, page }) => {
          await cpRow(page, 1).getByText("Edit").waitFor();
          await cpRow(page, 2).getByText("Bash").waitFor();

          await cpRow(page, 1).getByRole("button", { name: "Compare with now" }).click();
          const preview = page.getByRole("region", { name: "Rollback preview" });
          await preview.getByText("3 files would change").waitFor();
          // Text: a real diff, now (-) → checkpoint (+).
          const unified = preview.getByRole("table", { name: "src/greet.ts, unified diff" });
          await unified.locator("tr.del", { hasText: 'return "hey " + name;' }).waitFor();
          await unified.locator("tr.add", { hasText: 'return "hello " + name;' }).waitFor();
          // Binary and large files are named, not dumped.
          await preview
            .locator("details", { hasText: "logo.bin" })
            .getByText(/Binary files .* differ/)
            .waitFor();
          await preview
            .locator("details", { hasText: "big.txt" })
            .getByText(/too large to diff/)
            .waitFor();
          expect(await preview.locator("details", { hasText: "big.txt" }).innerText()).not.toContain("xxxxxxxx");
          await preview.getByLabel("side by side").check();
          const split = preview.getByRole("table", { name: "src/greet.ts, side by side diff" });
          await split.locator("td.code.del", { hasText: "hey" }).waitFor();
          await split.locator("td.code.add", { hasText: "hello" }).waitFor();
          expect(await seriousViolations(page)).toEqual([]);
          await screenshot(page, "dashboard-checkpoint-diff");
          // The preview changed nothing.
          expect(readFileSync(join(root, "src/greet.ts"), "utf8")).toBe(EDITED_AGAIN);
          expect(await rollbacksIn(lib)).toEqual([]);

          // Roll back: first a confirmation, reached by keyboard.
          await preview.getByRole("button", { name: /^Roll back to #1/ }).focus();
          await page.keyboard.press("Enter");
          const confirm = page.getByRole("group", { name: "Confirm the rollback" });
          await confirm.getByText("safety checkpoint").waitFor();
          expect(readFileSync(join(root, "src/greet.ts"), "utf8")).toBe(EDITED_AGAIN);
          expect(await tabTo(page, "fieldset button")).toBe(true);
          expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Confirm rollback");
          await page.keyboard.press("Enter");
          await page.getByRole("status").filter({ hasText: "Rolled back to #1" }).waitFor();
          expect(readFileSync(join(root, "src/greet.ts"), "utf8")).toBe(ORIGINAL);
          expect(readFileSync(join(root, "logo.bin"))).toEqual(Buffer.from([0, 1, 2, 3, 0, 255]));
          expect(await rollbacksIn(lib)).toEqual(["rollback:started", "rollback:applied"]);
          const applied = (await lib.events.list("cp", { afterSeq: 0, limit: 1_000 })).events.find((e) => e.type === "rollback:applied");
          expect(applied?.actor).toBe("user");

          // Undo: first its preview (back to the files as they were before the rollback), then a confirmation.
          await page.getByRole("status").getByRole("button", { name: "Undo the rollback…" }).click();
          const undo = page.getByRole("region", { name: "Undo preview" });
          await undo.getByText("3 files would change").waitFor();
          // (still side by side, as chosen above)
          const undoDiff = undo.getByRole("table", { name: "src/greet.ts, side by side diff" });
          await undoDiff.locator("td.code.del", { hasText: 'return "hello " + name;' }).waitFor();
          await undoDiff.locator("td.code.add", { hasText: 'return "hey " + name;' }).waitFor();
          expect(await rollbacksIn(lib)).toEqual(["rollback:started", "rollback:applied"]);
          await undo.getByRole("button", { name: "Undo the rollback…" }).click();
          await page.getByRole("group", { name: "Confirm the undo" }).getByText("as they were before the rollback").waitFor();
          expect(await seriousViolations(page)).toEqual([]);
          await screenshot(page, "dashboard-checkpoint-undo");
          expect(readFileSync(join(root, "src/greet.ts"), "utf8")).toBe(ORIGINAL);
          await page.getByRole("button", { name: "Confirm undo" }).click();
          await page.getByRole("status").filter({ hasText: "Undid the rollback" }).waitFor();
          expect(readFileSync(join(root, "src/greet.ts"), "utf8")).toBe(EDITED_AGAIN);
          expect(await rollbacksIn(lib)).toEqual(["rollback:started", "rollback:applied", "rollback:started", "rollback:applied"]);

          // Pin and unpin.
          await cpRow(page, 1).getByRole("button", { name: "Pin" }).click();
          await cpRow(page, 1).locator(".badge", { hasText: "pinned" }).waitFor();
          expect((await lib.checkpoints.list("cp")).find((c) => c.seq === 1)?.pinned).toBe(true);
          await cpRow(page, 1).getByRole("button", { name: "Unpin" }).click();
          // exact: a role's name matches as a substring otherwise, and "Pin" is in "Unpin", which
          // would let the read below race the unpin.
          await cpRow(page, 1).getByRole("button", { name: "Pin", exact: true }).waitFor();
          expect((await lib.checkpoints.list("cp")).find((c) => c.seq === 1)?.pinned).toBe(false);
        }));

      it("a stale page rolling back to a checkpoint pruned meanwhile gets a clear message and changes nothing", () =>
        onCheckpointsPage(async ({ root, lib, page }) => {
          await cpRow(page, 1).getByRole("button", { name: "Compare with now" }).click();
          await page.getByRole("button", { name: /^Roll back to #1/ }).click();
          await page.getByRole("button", { name: "Confirm rollback" }).waitFor();

          // Meanwhile retention prunes it (another process, keeping only the newest checkpoint).
          const pruner = await openBaton({ root, checkpoints: { retain: 1 } });
          try {
            await pruner.checkpoints.create("cp", { files: ["src/greet.ts"], toolName: "Write" });
          } finally {
            await pruner.close();
          }
          expect((await lib.checkpoints.list("cp", { includePruned: true })).find((c) => c.seq === 1)?.prunedAt).toBeDefined();
          const before = (await lib.sessions.snapshot("cp")).lastSeq;

          await page.getByRole("button", { name: "Confirm rollback" }).click();
          const alert = page.getByRole("alert");
          await alert.waitFor();
          expect(await alert.textContent()).toMatch(/pruned/i);
          expect(readFileSync(join(root, "src/greet.ts"), "utf8")).toBe(EDITED_AGAIN);
          expect(await rollbacksIn(lib)).toEqual([]);
          expect((await lib.sessions.snapshot("cp")).lastSeq).toBe(before);
          // The list now says it is pruned, and offers nothing on it.
          await cpRow(page, 1).locator(".badge", { hasText: "pruned" }).waitFor();
          expect(await cpRow(page, 1).getByRole("button", { name: "Compare with now" }).isDisabled()).toBe(true);
          await screenshot(page, "dashboard-checkpoint-stale");
        }));
      it("an undo whose plan changed since its preview (a file written meanwhile) is refused and changes nothing", () =>
        onCheckpointsPage(async ({ root, lib, page }) => {
          await cpRow(page, 1).getByRole("button", { name: "Compare with now" }).click();
          await page.getByRole("button", { name: /^Roll back to #1/ }).click();
          await page.getByRole("button", { name: "Confirm rollback" }).click();
          await page.getByRole("status").filter({ hasText: "Rolled back to #1" }).waitFor();
          await page.getByRole("status").getByRole("button", { name: "Undo the rollback…" }).click();
          const undo = page.getByRole("region", { name: "Undo preview" });
          await undo.getByRole("button", { name: "Undo the rollback…" }).click();

          // An agent writes the file after the preview: undoing now would throw its write away unseen.
          writeFileSync(join(root, "src/greet.ts"), "// the agent's newer write\n");
          const before = (await lib.sessions.snapshot("cp")).lastSeq;
          await page.getByRole("button", { name: "Confirm undo" }).click();
          const alert = page.getByRole("alert");
          await alert.waitFor();
          expect(await alert.textContent()).toMatch(/preview/i);
          expect(readFileSync(join(root, "src/greet.ts"), "utf8")).toBe("// the agent's newer write\n");
          expect((await lib.sessions.snapshot("cp")).lastSeq).toBe(before);
          expect(await rollbacksIn(lib)).toEqual(["rollback:started", "rollback:applied"]);
        }));

      it("shows a checkpoint taken elsewhere without a journal event, and never a secret from a checkpointed file", () =>
        onCheckpointsPage(async ({ root, lib, page }) => {
          const journal = (await lib.sessions.snapshot("cp")).lastSeq;
          // A real-format token, and a private key block across lines, in a file checkpointed then edited.
          writeFileSync(join(root, "src/settings.ts"), settings(TOKEN, 1));
          await lib.checkpoints.create("cp", { files: ["src/settings.ts"], toolName: "Write", label: "settings before the rotation" });
          expect((await lib.sessions.snapshot("cp")).lastSeq).toBe(journal); // taking it journaled nothing
          await cpRow(page, 3).getByText("settings before the rotation").waitFor();
          writeFileSync(join(root, "src/settings.ts"), settings(ROTATED, 0));
          await lib.checkpoints.create("cp", { files: ["src/settings.ts"], toolName: "Write", label: "settings after the rotation" });
          await cpRow(page, 4).getByText("settings after the rotation").waitFor();

          // Compared with now (the rollback preview) and with each other: the lines that changed
          // are shown, every value redacted alike on both sides.
          writeFileSync(join(root, "src/settings.ts"), "export const DEBUG = 2;\n");
          await cpRow(page, 3).getByRole("button", { name: "Compare with now" }).click();
          const preview = page.getByRole("region", { name: "Rollback preview" });
          const now = preview.getByRole("table", { name: "src/settings.ts, unified diff" });
          await now.locator("tr.add", { hasText: 'GITHUB_TOKEN = "[redacted' }).waitFor();
          await now.locator("tr.add", { hasText: "[redacted:private-key]" }).waitFor();
          await preview.getByLabel("side by side").check();
          await preview
            .getByRole("table", { name: "src/settings.ts, side by side diff" })
            .locator("td.code.add", { hasText: 'GITHUB_TOKEN = "[redacted' })
            .waitFor();
          await page.getByLabel("Compare from checkpoint").selectOption({ label: "#3 before Write (settings before the rotation)" });
          await page.getByLabel("Compare to checkpoint").selectOption({ label: "#4 before Write (settings after the rotation)" });
          await page.getByRole("button", { name: "Compare", exact: true }).click();
          const pair = page
            .getByRole("region", { name: "Checkpoint comparison" })
            .getByRole("table", { name: "src/settings.ts, side by side diff" });
          await pair.locator("td.code.del", { hasText: 'GITHUB_TOKEN = "[redacted' }).waitFor();
          await pair.locator("td.code.add", { hasText: 'GITHUB_TOKEN = "[redacted' }).waitFor();
          await pair.locator("td.code.del", { hasText: "DEBUG = 1;" }).waitFor();
          await pair.locator("td.code.add", { hasText: "DEBUG = 0;" }).waitFor();
          const html = await page.content();
          for (const secret of [TOKEN, ROTATED, KEY_LINE])
            expect(html, "a secret from a checkpointed file in the page").not.toContain(secret);
          await screenshot(page, "dashboard-checkpoint-redacted");
          expect(readFileSync(join(root, "src/settings.ts"), "utf8")).toBe("export const DEBUG = 2;\n");
        }));

      it("compares two checkpoints file by file, naming files only one of them recorded", () =>
        onCheckpointsPage(async ({ root, lib, page }) => {
          await page.getByLabel("Compare from checkpoint").selectOption({ label: "#1 before Edit (before the greeting change)" });
          await page.getByLabel("Compare to checkpoint").selectOption({ label: "#2 before Bash" });
          await page.getByRole("button", { name: "Compare", exact: true }).click();
          const cmp = page.getByRole("region", { name: "Checkpoint comparison" });
          await cmp.getByText("1 file differs").waitFor();
          const unified = cmp.getByRole("table", { name: "src/greet.ts, unified diff" });
          await unified.locator("tr.del", { hasText: 'return "hello " + name;' }).waitFor();
          await unified.locator("tr.add", { hasText: 'return "hi " + name + "!";' }).waitFor();
          await cmp.locator("details", { hasText: "logo.bin" }).getByText("only checkpoint #1 recorded this file").waitFor();
          await screenshot(page, "dashboard-checkpoint-pair");
          // Comparing changed nothing.
          expect(readFileSync(join(root, "src/greet.ts"), "utf8")).toBe(EDITED_AGAIN);
          expect(await rollbacksIn(lib)).toEqual([]);
        }));
    });
  });
}
