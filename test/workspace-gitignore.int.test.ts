/**
 * git never sees Baton's internals (`.baton/.gitignore`): a `git add -A` after Baton checkpointed
 * a gitignored file and wrote STATE.md stages nothing of `.baton/` but the ignore file itself and
 * user flows, in a new workspace and in one an earlier build made (its ignore file is replaced
 * when the workspace is opened; one the user changed is left alone).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupDirs, cli, tempDir } from "./helpers.js";

afterEach(() => cleanupDirs());

const git = (root: string, ...args: string[]) => {
  const r = spawnSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], { cwd: root, encoding: "utf8" });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
};

/** A git repository whose .gitignore keeps a database dump out, and a Baton workspace in it that checkpointed the dump. */
function project(): string {
  const root = tempDir("baton-gitignore-");
  git(root, "init", "-q");
  writeFileSync(join(root, ".gitignore"), "dump.sql\n.env\n");
  writeFileSync(join(root, "dump.sql"), `INSERT INTO users VALUES ('admin', 'hunter2-${"x".repeat(1_200_000)}');\n`);
  writeFileSync(join(root, ".env"), "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n");
  expect(cli(["init", "--root", root]).code).toBe(0);
  const start = cli(["session", "start", "--flow", "task", "--root", root, "--json"]);
  expect(start.code, start.stderr).toBe(0);
  for (const args of [
    ["checkpoint", "--files", "dump.sql", ".env"],
    ["state", "--write"],
  ]) {
    const r = cli([...args, "--root", root]);
    expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
  }
  mkdirSync(join(root, ".baton", "flows"), { recursive: true });
  writeFileSync(join(root, ".baton", "flows", "review.json"), "{}\n");
  return root;
}

const staged = (root: string) => {
  git(root, "add", "-A");
  return git(root, "diff", "--cached", "--name-only").trim().split("\n").filter(Boolean).sort();
};

describe(".baton/ and git", () => {
  it("a new workspace: git add -A stages only Baton's ignore file and user flows, never blobs, the journal or STATE.md", () => {
    const root = project();
    expect(staged(root)).toEqual([".baton/.gitignore", ".baton/flows/review.json", ".gitignore"]);
  });

  it("a workspace an earlier build made gets the new ignore file when it is opened; one the user wrote is kept", () => {
    const root = project();
    const old = "# Baton's journal is local to this machine.\nbaton.db*\nlogs/\nserver.json\nserver.key\nledger-failures.json\nhooks/\n";
    writeFileSync(join(root, ".baton", ".gitignore"), old);
    expect(
      staged(root).some((p) => p.startsWith(".baton/blobs/")),
      "the old file let blobs through",
    ).toBe(true);
    git(root, "reset", "-q");
    expect(cli(["status", "--root", root]).code).toBe(0);
    expect(readFileSync(join(root, ".baton", ".gitignore"), "utf8")).not.toBe(old);
    expect(staged(root)).toEqual([".baton/.gitignore", ".baton/flows/review.json", ".gitignore"]);

    const mine = "# mine\n*\n";
    writeFileSync(join(root, ".baton", ".gitignore"), mine);
    expect(cli(["status", "--root", root]).code).toBe(0);
    expect(readFileSync(join(root, ".baton", ".gitignore"), "utf8")).toBe(mine);
  });
});
