/**
 * insideWorkspace: whether an agent's path is inside the workspace when the agent and Baton
 * name the workspace differently (one through a link to the folder, the other by its real path),
 * on real folders and links.
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { insideWorkspace } from "../src/platform/workspace.js";
import { workspaceRelative } from "../src/services/files.js";
import { cleanupDirs, tempDir } from "./helpers.js";

afterEach(() => cleanupDirs());

function layout() {
  const base = tempDir();
  const root = join(base, "real", "project");
  mkdirSync(join(root, "src"), { recursive: true });
  writeFileSync(join(root, "src", "a.ts"), "a\n");
  mkdirSync(join(base, "elsewhere"));
  writeFileSync(join(base, "elsewhere", "secret.txt"), "s\n");
  symlinkSync(root, join(base, "alias")); // a symlinked project folder
  symlinkSync(join(base, "real"), join(base, "up")); // a link to a folder above it (macOS's /tmp)
  return { base, root };
}

describe("insideWorkspace", () => {
  it("a path as written inside the root is relative to it; one outside, or the root itself, is not inside", () => {
    const { base, root } = layout();
    expect(insideWorkspace(root, join(root, "src", "a.ts"))).toBe(join("src", "a.ts"));
    expect(insideWorkspace(root, join(root, "new", "deep", "b.ts")), "not there yet").toBe(join("new", "deep", "b.ts"));
    expect(insideWorkspace(root, join(base, "elsewhere", "secret.txt"))).toBeUndefined();
    expect(insideWorkspace(root, root)).toBeUndefined();
    expect(insideWorkspace(root, join(base, "real", "project-2", "x.ts")), "a sibling that shares the prefix").toBeUndefined();
  });

  it("a path through a link to the workspace, or to a folder above it, is inside it, even for folders the tool will create", () => {
    const { base, root } = layout();
    expect(insideWorkspace(root, join(base, "alias", "src", "a.ts"))).toBe(join("src", "a.ts"));
    expect(insideWorkspace(root, join(base, "up", "project", "src", "a.ts"))).toBe(join("src", "a.ts"));
    expect(insideWorkspace(root, join(base, "alias", "gen", "new", "c.ts"))).toBe(join("gen", "new", "c.ts"));
    expect(insideWorkspace(root, join(base, "alias")), "the root itself, named through the link").toBeUndefined();
  });

  it("the other way round: the root named through a link, the path by its real folder", () => {
    const { base, root } = layout();
    expect(insideWorkspace(join(base, "alias"), join(root, "src", "a.ts"))).toBe(join("src", "a.ts"));
    expect(insideWorkspace(join(base, "up", "project"), join(root, "gen", "d.ts"))).toBe(join("gen", "d.ts"));
    expect(insideWorkspace(join(base, "alias"), join(base, "elsewhere", "secret.txt"))).toBeUndefined();
  });

  it("only folders are followed: a file link from outside into the workspace is not a path inside it", () => {
    const { base, root } = layout();
    symlinkSync(join(root, "src", "a.ts"), join(base, "elsewhere", "a-link.ts"));
    expect(insideWorkspace(root, join(base, "elsewhere", "a-link.ts"))).toBeUndefined();
    // A folder inside the workspace that links out stays what it was: inside, as written.
    symlinkSync(join(base, "elsewhere"), join(root, "out"));
    expect(insideWorkspace(root, join(root, "out", "secret.txt"))).toBe(join("out", "secret.txt"));
  });

  it("workspaceRelative: relative to the root or to a given folder, POSIX separators; a name starting with '..' is inside", () => {
    const { base, root } = layout();
    expect(workspaceRelative(root, "src/a.ts")).toBe("src/a.ts");
    expect(workspaceRelative(root, "..notes.md"), "a file named ..notes.md at the root").toBe("..notes.md");
    expect(workspaceRelative(root, "../project/src/a.ts")).toBe("src/a.ts");
    expect(workspaceRelative(root, "../elsewhere/secret.txt")).toBeUndefined();
    expect(workspaceRelative(root, "a.ts", join(root, "src")), "relative to the agent's folder").toBe("src/a.ts");
    expect(workspaceRelative(root, "src/a.ts", join(base, "alias")), "that folder named through a link").toBe("src/a.ts");
    expect(workspaceRelative(root, join(base, "alias", "src", "deep", "b.ts"))).toBe("src/deep/b.ts");
  });
});
