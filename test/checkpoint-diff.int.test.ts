/**
 * Comparing two checkpoints (services/time-travel/checkpoint-diff.ts and `GET
 * /v1/sessions/:id/checkpoints/:cp/diff`): a text pair is diffed, a binary pair and a pair over
 * 1 MiB are named, not dumped, and only the blobs of changed pairs small enough to diff are read
 * (the manifests give the sizes), never every file of both checkpoints.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { servicesOf } from "../src/compose.js";
import { openBaton } from "../src/index.js";
import { diffCheckpoints } from "../src/services/time-travel/checkpoint-diff.js";
import { CheckpointService } from "../src/services/time-travel/checkpoints.js";
import { unifiedDiff } from "../src/services/time-travel/file-diff.js";
import { tempDir } from "./helpers.js";
import { api, serve } from "./server-helpers.js";

async function twoCheckpoints(root: string) {
  const big = (c: string) => `${c.repeat(99)}\n`.repeat(6_000); // 600 KB: a pair is over 1 MiB
  const b = await openBaton({ root });
  try {
    await b.sessions.start({ flow: "live-variant", id: "hero" });
    writeFileSync(join(root, "same.txt"), "kept\n");
    writeFileSync(join(root, "a.txt"), "one\ntwo\n");
    writeFileSync(join(root, "logo.bin"), Buffer.from([1, 0, 2, 3]));
    writeFileSync(join(root, "big.txt"), big("x"));
    const from = (await b.checkpoints.create("hero", { all: true })).checkpoint.id;
    writeFileSync(join(root, "a.txt"), "one\nthree\n");
    writeFileSync(join(root, "logo.bin"), Buffer.from([1, 0, 2, 4]));
    writeFileSync(join(root, "big.txt"), big("y"));
    const to = (await b.checkpoints.create("hero", { all: true })).checkpoint.id;
    return { from, to };
  } finally {
    await b.close();
  }
}

describe("comparing two checkpoints", () => {
  it("diffs text, names binary and large pairs, and reads only the blobs it diffs", async () => {
    const root = tempDir();
    const { from, to } = await twoCheckpoints(root);
    const b = await openBaton({ root });
    try {
      const cps = new CheckpointService(servicesOf(b).backend, root, b.workspace.dir);
      const asked: string[] = [];
      const readMany = cps.blobs.readMany.bind(cps.blobs);
      cps.blobs.readMany = (hashes) => {
        asked.push(...hashes);
        return readMany(hashes);
      };
      const r = await diffCheckpoints(cps, from, to);
      const byPath = new Map(r.files.map((f) => [f.path, f]));
      expect(byPath.get("same.txt")).toEqual({ path: "same.txt", state: "unchanged" });
      expect(byPath.get("a.txt")?.diff).toContain("-two\n+three");
      expect(byPath.get("logo.bin")?.diff).toBe("Binary files a/logo.bin and b/logo.bin differ\n");
      expect(byPath.get("big.txt")?.diff).toContain("(600000 → 600000 bytes: too large to diff)");
      // Only a.txt's and logo.bin's two versions were read.
      const [cf, ct] = [await b.checkpoints.get(from), await b.checkpoints.get(to)];
      const hash = (c: typeof cf, p: string) => {
        const f = c.files.find((x) => x.path === p);
        return f && "hash" in f ? f.hash : "";
      };
      expect(new Set(asked)).toEqual(new Set(["a.txt", "logo.bin"].flatMap((p) => [hash(cf, p), hash(ct, p)])));
    } finally {
      await b.close();
    }
  });

  it("names a pair with too many changes to diff instead of holding the server", async () => {
    const lines = (c: string) => Array.from({ length: 6_000 }, (_, i) => `${c}${i}`).join("\n");
    const d = await unifiedDiff("a/f", "b/f", Buffer.from(lines("a")), Buffer.from(lines("b")));
    expect(d).toMatch(/^--- a\/f\n\+\+\+ b\/f\n\(\d+ → \d+ bytes: too many changes to diff\)\n$/);
    expect(await unifiedDiff("a/f", "b/f", Buffer.from("x\n"), Buffer.from("y\n"))).toContain("-x\n+y");
  });

  it("answers the same over HTTP", async () => {
    const root = tempDir();
    const { from, to } = await twoCheckpoints(root);
    const s = await serve(root);
    try {
      const res = await api(s, "GET", `/v1/sessions/hero/checkpoints/${from}/diff?to=${to}`);
      expect(res.status).toBe(200);
      const files = new Map((res.json().files as { path: string; state: string; diff?: string }[]).map((f) => [f.path, f]));
      expect(files.get("logo.bin")).toMatchObject({ state: "changed", diff: "Binary files a/logo.bin and b/logo.bin differ\n" });
      expect(files.get("big.txt")?.diff).toContain("too large to diff");
      expect(files.get("a.txt")?.diff).toContain("+three");
    } finally {
      await s.stop();
    }
  });
});
