/**
 * The remaining query groups every backend must serve: checkpoints (tree and targeted, rollback,
 * retention), artifacts, blobs of every size, lesson full-text search,
 * migrations, and change notification across two backends on one store.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Backend } from "../../src/backend/contract.js";
import { openBaton } from "../../src/compose.js";
import type { Baton } from "../../src/index.js";
import { cleanupDirs, tempDir, writeAt } from "../helpers.js";
import type { StoreFactory } from "./journal-contract.js";

export function storeContract(name: string, factory: StoreFactory): void {
  describe(`store contract: ${name}`, () => {
    const open: Baton[] = [];
    const backends: Backend[] = [];
    afterEach(async () => {
      for (const b of open.splice(0)) await b.close();
      for (const be of backends.splice(0)) await be.close();
    });
    afterAll(() => cleanupDirs());

    async function fresh(root = tempDir(), opts: { retain?: number } = {}): Promise<Baton> {
      const b = await openBaton({ root, backend: (await factory(root)).backend, checkpoints: { retain: opts.retain ?? 100 } });
      open.push(b);
      return b;
    }

    it("checkpoints a tree, rolls back to it, and prunes by retention while the newest still restore", async () => {
      const root = tempDir();
      writeAt(root, "src/a.txt", "alpha 1\n");
      writeAt(root, "src/b.txt", "beta 1\n");
      const b = await fresh(root, { retain: 2 });
      await b.sessions.start({ flow: "task", id: "t" });
      const first = await b.checkpoints.create("t", { label: "one" });
      expect(first.checkpoint.files.map((f) => f.path).sort()).toEqual(["src/a.txt", "src/b.txt"]);
      writeFileSync(join(root, "src/a.txt"), "alpha 2\n");
      writeAt(root, "src/c.txt", "gamma\n");
      const second = await b.checkpoints.create("t", { label: "two" });
      expect(second.checkpoint.seq).toBe(first.checkpoint.seq + 1);
      const back = await b.checkpoints.rollback("t", { to: first.checkpoint.id });
      expect(back).toBeDefined();
      expect(readFileSync(join(root, "src/a.txt"), "utf8")).toBe("alpha 1\n");
      expect(existsSync(join(root, "src/c.txt"))).toBe(false);
      // More checkpoints than retained: the oldest are pruned, the newest still restore.
      for (let i = 3; i <= 5; i++) {
        writeFileSync(join(root, "src/b.txt"), `beta ${i}\n`);
        await b.checkpoints.create("t", { label: `n${i}` });
      }
      const all = await b.checkpoints.list("t", { includePruned: true });
      expect(all.filter((c) => c.prunedAt === null || c.prunedAt === undefined).length).toBeLessThanOrEqual(3);
      const live = await b.checkpoints.list("t");
      const newest = live[live.length - 1]!;
      writeFileSync(join(root, "src/b.txt"), "scribble\n");
      await b.checkpoints.rollback("t", { to: newest.id });
      expect(readFileSync(join(root, "src/b.txt"), "utf8")).toBe("beta 5\n");
      // A fresh instance on the same store sees the same checkpoints.
      const again = await fresh(root, { retain: 2 });
      expect((await again.checkpoints.list("t")).map((c) => c.id)).toEqual((await b.checkpoints.list("t")).map((c) => c.id));
    });

    it("stores artifacts and large blobs, deduplicated, readable from another instance", async () => {
      const root = tempDir();
      const b = await fresh(root);
      await b.sessions.start({ flow: "task", id: "t" });
      const big = Buffer.alloc(3 * 1024 * 1024 + 17, 7);
      const a1 = await b.artifacts.add("t", { content: big, name: "big.bin" });
      await b.artifacts.add("t", { content: big, name: "again.bin" });
      await b.artifacts.add("t", { content: Buffer.from("small"), name: "s.txt" });
      const other = await fresh(root);
      const got = await other.artifacts.get("t", "big.bin");
      expect(got.content.equals(big)).toBe(true);
      expect((await other.artifacts.list("t")).map((a) => a.name)).toEqual(["big.bin", "again.bin", "s.txt"]);
      expect(a1).toBeDefined();
    });

    it("searches lessons by full text with stemming, and finds a lesson added later", async () => {
      const root = tempDir();
      const b = await fresh(root);
      await b.lessons.add({ text: "Replace the lockfile before upgrading dependencies", scope: "workspace" });
      await b.lessons.add({ text: "Run the migrations on a copy of the database first", scope: "workspace" });
      const r = await b.lessons.search({ prompt: "replacing lockfiles" });
      expect(r.fullText).toBe(true);
      expect(r.results[0]?.lesson.text).toMatch(/lockfile/);
      await b.lessons.add({ text: "Pin the compiler version in CI", scope: "workspace" });
      const again = await b.lessons.search({ prompt: "compiler pinned" });
      expect(again.results[0]?.lesson.text).toMatch(/compiler/);
    });

    it("reports its migrations: a new store applies them all, reopening applies none", async () => {
      const root = tempDir();
      const first = (await factory(root)).backend;
      backends.push(first);
      expect(first.migration?.applied.length ?? 0).toBeGreaterThan(0);
      const second = (await factory(root)).backend;
      backends.push(second);
      expect(second.migration).toMatchObject({ applied: [], from: first.migration?.to });
    });

    it("notifies a listener on another backend of the same store when a write commits", async () => {
      const root = tempDir();
      const writer = await fresh(root);
      await writer.sessions.start({ flow: "task", id: "t" });
      const listener = (await factory(root)).backend;
      backends.push(listener);
      let heard = 0;
      const woke = new Promise<void>((resolve) => {
        const off = listener.onChange(() => {
          heard++;
          off();
          resolve();
        });
      });
      // The listener may need a moment to start listening: keep writing until it hears one.
      for (let i = 0; i < 200 && heard === 0; i++) {
        await writer.events.append("t", { type: "note:added", data: { text: `n${i}` } });
        await Promise.race([woke, new Promise((r) => setTimeout(r, 25))]);
      }
      expect(heard).toBeGreaterThan(0);
    });
  });
}
