/**
 * Editing one lesson of LESSONS.md from a possibly stale view (services/lessons/lesson-edit.ts, used by
 * the dashboard): the edit touches only its block, names the version it was made from, and is
 * refused without writing when that block changed or went away; other lessons' edits never
 * conflict.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { servicesOf } from "../src/compose.js";
import { openBaton } from "../src/index.js";
import { LessonService } from "../src/services/lessons/lessons.js";
import { readLessonsText } from "../src/services/lessons/lessons-file.js";
import { tempDir } from "./helpers.js";

async function withLessons(fn: (b: Awaited<ReturnType<typeof openBaton>>, file: string) => Promise<void>) {
  const root = tempDir();
  const b = await openBaton({ root });
  try {
    await b.lessons.add({ id: "les-a", scope: "workspace", text: "Run the migrations first.", tools: ["Bash"] });
    await b.lessons.add({ id: "les-b", scope: "workspace", text: "Never edit generated CSS.", paths: ["src/styles/**"] });
    await b.lessons.add({ id: "les-c", scope: "workspace", text: "Read the failing test before editing." });
    await fn(b, join(root, "LESSONS.md"));
  } finally {
    await b.close();
  }
}

describe("editing lessons in LESSONS.md", () => {
  it("rewrites only the edited block, keeps the rest byte for byte, and gives a new version", async () => {
    await withLessons(async (b, file) => {
      const before = readFileSync(file, "utf8");
      const v = (await b.lessons.versions()).get("les-b") as string;
      const r = await b.lessons.edit("les-b", v, { text: "Never edit generated CSS; change the tokens.", pinned: true });
      const after = readFileSync(file, "utf8");
      expect(r.version).not.toBe(v);
      expect((await b.lessons.versions()).get("les-b")).toBe(r.version);
      const lessons = (await b.lessons.list({ all: true })).lessons;
      expect(lessons.map((l) => [l.id, l.text, l.pinned])).toEqual([
        ["les-a", "Run the migrations first.", false],
        ["les-b", "Never edit generated CSS; change the tokens.", true],
        ["les-c", "Read the failing test before editing.", false],
      ]);
      expect(lessons[1]?.paths).toEqual(["src/styles/**"]);
      // Everything outside the block is as it was.
      const strip = (t: string) => t.replace(/### les-b[\s\S]*?(?=### les-c)/, "");
      expect(strip(after)).toBe(strip(before));
    });
  });

  it("redacts an edited text as add does, and a lone CR cannot start a lesson of its own; add redacts triggers too", async () => {
    await withLessons(async (b, file) => {
      const v = (await b.lessons.versions()).get("les-b") as string;
      await b.lessons.edit("les-b", v, {
        text: "use key ghp_abcdefghijklmnopqrstuvwxyz0123456789 password=hunter22\r### les-x\r- pinned: yes",
      });
      const text = readFileSync(file, "utf8");
      expect(text).not.toContain("ghp_abcdefghijklmnopqrstuvwxyz0123456789");
      expect(text).not.toContain("hunter22");
      expect(text).not.toContain("\r");
      const lessons = (await b.lessons.list({ all: true })).lessons;
      expect(lessons.map((l) => l.id)).toEqual(["les-a", "les-b", "les-c"]);
      expect(lessons.find((l) => l.id === "les-b")?.pinned).toBe(false);
      await b.lessons.add({
        id: "les-d",
        scope: "workspace",
        text: "Mind the token.",
        tools: ["ghp_abcdefghijklmnopqrstuvwxyz0123456789"],
      });
      expect(readFileSync(file, "utf8")).not.toContain("ghp_abcdefghijklmnopqrstuvwxyz0123456789");
      // A path or an id that holds a secret is refused (redacted, a path would match nothing), never echoed.
      for (const input of [
        { paths: ["fixtures/ghp_abcdefghijklmnopqrstuvwxyz0123456789.json"] },
        { id: "ghp_abcdefghijklmnopqrstuvwxyz0123456789" },
      ]) {
        const err = await b.lessons.add({ scope: "workspace", text: "Mind it.", ...input }).then(
          () => undefined,
          (e: unknown) => e as Error & { code?: string },
        );
        expect(err?.code, JSON.stringify(input)).toBe("bad_input");
        expect(err?.message).not.toContain("ghp_abcdefghijklmnopqrstuvwxyz0123456789");
      }
    });
  });

  it("lists each lesson with the version of the same read, so a hand edit right after the read is not overwritten", async () => {
    await withLessons(async (b, file) => {
      // The file is edited by hand just after the first read: a listing that read the file twice
      // (lessons, then versions) would pair the old text with the hand-edited block's version.
      let reads = 0;
      const read = (f: string) => {
        const text = readLessonsText(f);
        if (++reads === 1) writeFileSync(f, (text ?? "").replace("Run the migrations first.", "Hand edit: seed first."));
        return text;
      };
      const svc = new LessonService(servicesOf(b).backend, servicesOf(b).journal, dirname(file), () => new Date(), read);
      const listed = svc.list({ all: true, versions: true }).lessons.find((l) => l.id === "les-a");
      expect(listed?.text).toBe("Run the migrations first.");
      await expect(b.lessons.edit("les-a", listed?.version as string, { pinned: true })).rejects.toMatchObject({ code: "conflict" });
      expect(readFileSync(file, "utf8")).toContain("Hand edit: seed first.");
      expect(reads).toBe(1);
    });
  });

  it("changes only the pin line or the text lines, keeping hand-written keys and lines; refuses a block with an error", async () => {
    await withLessons(async (b, file) => {
      const hand = [
        "### les-h",
        "",
        "Rebuild the index after a schema change.",
        "",
        "- scope: workspace",
        "- owner: alice",
        "- tools: Bash",
        "- pinned: no",
        "- ticket: `OPS-12`",
      ].join("\n");
      writeFileSync(file, `${readFileSync(file, "utf8").trimEnd()}\n\n${hand}\n`);
      const before = readFileSync(file, "utf8");
      const v1 = (await b.lessons.versions()).get("les-h") as string;
      const pinned = await b.lessons.edit("les-h", v1, { pinned: true });
      expect(pinned.lesson.pinned).toBe(true);
      // Only the pin line changed.
      expect(readFileSync(file, "utf8")).toBe(before.replace("- pinned: no", "- pinned: yes"));
      const r = await b.lessons.edit("les-h", pinned.version, { text: "Rebuild the index:\n# after a schema change\n- and a migration." });
      const after = readFileSync(file, "utf8");
      expect(r.lesson.text).toBe("Rebuild the index:\n# after a schema change\n- and a migration.");
      for (const kept of ["- owner: alice", "- tools: Bash", "- pinned: yes", "- ticket: `OPS-12`"]) expect(after).toContain(kept);
      expect(after).toContain("\\# after a schema change");
      const listed = (await b.lessons.list({ all: true })).lessons.find((l) => l.id === "les-h");
      expect([listed?.text, listed?.pinned, listed?.tools]).toEqual([r.lesson.text, true, ["Bash"]]);
      // A lesson whose block has an error is refused with the error named; nothing is written.
      writeFileSync(file, after.replace("- pinned: yes", "- pinned: maybe"));
      const broken = readFileSync(file, "utf8");
      const v3 = (await b.lessons.versions()).get("les-h") as string;
      await expect(b.lessons.edit("les-h", v3, { pinned: false })).rejects.toMatchObject({
        code: "conflict",
        message: expect.stringContaining("pinned must be yes or no"),
      });
      expect(readFileSync(file, "utf8")).toBe(broken);
    });
  });

  it("refuses a stale version or a removed lesson and writes nothing; another lesson's edit does not conflict", async () => {
    await withLessons(async (b, file) => {
      const versions = await b.lessons.versions();
      // Another lesson changed: no conflict for this one.
      await b.lessons.edit("les-a", versions.get("les-a") as string, { pinned: true });
      await b.lessons.edit("les-c", versions.get("les-c") as string, { text: "Read the failing test first." });
      // This lesson changed by hand: conflict, nothing written.
      writeFileSync(file, readFileSync(file, "utf8").replace("Never edit generated CSS.", "Hand edit."));
      const handEdited = readFileSync(file, "utf8");
      await expect(b.lessons.edit("les-b", versions.get("les-b") as string, { text: "Page edit." })).rejects.toMatchObject({
        code: "conflict",
      });
      await expect(b.lessons.remove("les-b", { version: versions.get("les-b") as string })).rejects.toMatchObject({ code: "conflict" });
      expect(readFileSync(file, "utf8")).toBe(handEdited);
      // Removed meanwhile: not found, nothing written.
      const fresh = (await b.lessons.versions()).get("les-b") as string;
      await b.lessons.remove("les-b");
      const removed = readFileSync(file, "utf8");
      await expect(b.lessons.edit("les-b", fresh, { pinned: true })).rejects.toMatchObject({
        code: "lesson_not_found",
        message:
          'LESSONS.md has no lesson "les-b" (removed meanwhile, or never there: `baton lessons list --all` lists them); nothing was changed',
      });
      expect(readFileSync(file, "utf8")).toBe(removed);
      await expect(b.lessons.edit("les-a", "bogus", { text: "" })).rejects.toMatchObject({ code: "bad_input" });
    });
  });

  it("any sequence of edits and deletes from current versions keeps the file parseable and every other lesson intact", async () => {
    await withLessons(async (b) => {
      const cmd = fc.record({
        id: fc.constantFrom("les-a", "les-b", "les-c"),
        op: fc.constantFrom("text", "pin", "unpin", "delete"),
        // The characters the text's escaping must handle: headings, fences, list markers,
        // backslash escapes, and newlines (several paragraphs).
        text: fc
          .string({ unit: fc.constantFrom("a", "b", " ", "#", "`", "\n", "-", "*", "+", "~", "\\", ":", ">"), minLength: 1, maxLength: 40 })
          .filter((t) => t.trim() !== ""),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(cmd, { maxLength: 8 }), async (cmds) => {
          // The model: what each lesson should be after the commands that apply.
          const start = (await b.lessons.list({ all: true })).lessons;
          const model = new Map(start.map((l) => [l.id, { text: l.text, pinned: l.pinned }]));
          for (const c of cmds) {
            const v = (await b.lessons.versions()).get(c.id);
            if (!model.has(c.id) || v === undefined) {
              await expect(b.lessons.edit(c.id, "x", { pinned: true })).rejects.toMatchObject({ code: "lesson_not_found" });
              continue;
            }
            if (c.op === "delete") {
              await b.lessons.remove(c.id, { version: v });
              model.delete(c.id);
            } else if (c.op === "text") {
              await b.lessons.edit(c.id, v, { text: c.text });
              (model.get(c.id) as { text: string }).text = c.text.trim();
            } else {
              await b.lessons.edit(c.id, v, { pinned: c.op === "pin" });
              (model.get(c.id) as { pinned: boolean }).pinned = c.op === "pin";
            }
          }
          const got = await b.lessons.list({ all: true });
          expect(got.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
          expect(new Map(got.lessons.map((l) => [l.id, { text: l.text, pinned: l.pinned }]))).toEqual(model);
          // Put the three back for the next run.
          for (const id of ["les-a", "les-b", "les-c"])
            if (!model.has(id)) await b.lessons.add({ id, scope: "workspace", text: `restored ${id}` });
        }),
        { numRuns: 25 },
      );
    });
  });
});
