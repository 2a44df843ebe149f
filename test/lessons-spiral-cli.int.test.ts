import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupDirs, cli, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

function workspace(): { root: string; run: (...args: string[]) => ReturnType<typeof cli> } {
  const root = tempDir();
  expect(cli(["init", "--root", root]).code).toBe(0);
  return { root, run: (...args: string[]) => cli([...args, "--root", root], { env: { BATON_DURABILITY: "relaxed" } }) };
}

describe("baton lessons", () => {
  it("adds, lists, searches, injects, checks and removes lessons", () => {
    const { root, run } = workspace();
    // Per-session by default: with no session it says how to go on.
    const noSession = run("lessons", "add", "Anything.", "--json");
    expect(noSession.code).toBe(4);
    expect(noSession.json().error.message).toContain("--workspace");

    run("session", "start", "--flow", "task", "--id", "s1");
    const a = run("lessons", "add", "Read Tabs.tsx before replacing text in it.", "--tool", "Edit", "--path", "src/ui/**", "--json").json();
    expect(a.lesson).toMatchObject({ scope: "session", sessionId: "s1", tools: ["Edit"], paths: ["src/ui/**"] });
    expect(a.seq).toBeGreaterThan(1);
    const w = run(
      "lessons",
      "add",
      "Never edit generated files.",
      "--workspace",
      "--path",
      "lib/**",
      "--pin",
      "--id",
      "gen",
      "--json",
    ).json();
    expect(w.lesson).toMatchObject({ id: "gen", scope: "workspace", pinned: true });

    const list = run("lessons", "list", "--json").json();
    expect(list.lessons.map((l: { id: string }) => l.id)).toEqual([a.lesson.id, "gen"]);
    expect(run("lessons", "list").stdout).toContain("(workspace, pinned)");

    const search = run("lessons", "search", "replacing", "text", "--path", "src/ui/Tabs.tsx", "--json").json();
    expect(search.results.map((r: { lesson: { id: string } }) => r.lesson.id)).toEqual([a.lesson.id, "gen"]);
    expect(search.results[0].why).toMatchObject({ path: "src/ui/**" });

    const inject = run("lessons", "inject", "--intent", '{"tool":"Edit","paths":["src/ui/Tabs.tsx"]}', "--k", "1");
    expect(inject.code).toBe(0);
    expect(inject.stdout).toBe(`## Lessons from earlier attempts\n- Read Tabs.tsx before replacing text in it. (${a.lesson.id})\n`);
    const tiny = run("lessons", "inject", "--tool", "Edit", "--max-chars", "10", "--json").json();
    expect(tiny.markdown).toBe("");
    expect(run("lessons", "inject", "--k", "x").code).toBe(2);

    // A hand-broken block: check fails with its line; list still loads the rest and warns.
    appendFileSync(join(root, "LESSONS.md"), "\n### broken\n\nText.\n- scope: everywhere\n");
    const line = readFileSync(join(root, "LESSONS.md"), "utf8").split("\n").indexOf("- scope: everywhere") + 1;
    const check = run("lessons", "check", "--json");
    expect(check.code).toBe(2);
    expect(check.json().error).toMatchObject({ code: "lessons_file_invalid", diagnostics: [{ line, severity: "error", id: "broken" }] });
    const human = run("lessons", "list");
    expect(human.stderr).toContain(`LESSONS.md:${line}: error: scope must be "session" or "workspace"`);
    expect(human.stdout).toContain("gen");

    expect(run("lessons", "rm", "broken", "--json").json()).toMatchObject({ id: "broken", removed: 1 });
    expect(run("lessons", "check").code).toBe(0);
    const missing = run("lessons", "rm", "nope", "--json");
    expect(missing.code).toBe(4);
    expect(missing.json().error.code).toBe("lesson_not_found");
  });

  // issue 34 §3: a path written in the intent's words was not matched against lessons' paths,
  // and nothing to inject printed an empty line.
  it("matches the paths an --intent's words name against lessons' paths, as --path does; says when nothing matches", () => {
    const { root, run } = workspace();
    run("session", "start", "--flow", "task", "--id", "s1");
    expect(run("lessons", "add", "Run the bundler after changing a script.", "--workspace", "--path", "*.js", "--id", "js").code).toBe(0);
    expect(run("lessons", "add", "Seed data must stay idempotent.", "--workspace", "--path", "db/**", "--id", "db").code).toBe(0);
    const block = (id: string, text: string) => `## Lessons from earlier attempts\n- ${text} (${id})\n`;

    // No word of the lesson's text is in the intent: only its path trigger can match.
    const js = run("lessons", "inject", "--intent", "edit index.js");
    expect(js.code).toBe(0);
    expect(js.stdout).toBe(block("js", "Run the bundler after changing a script."));
    expect(run("lessons", "inject", "--intent", "fix the typo in db/seed.ts: line 3").stdout).toBe(
      block("db", "Seed data must stay idempotent."),
    );
    // As --path: workspace-relative, whether written relative or absolute inside the workspace.
    expect(run("lessons", "inject", "--intent", `look at ${join(root, "db", "seed.ts")}`).stdout).toBe(
      block("db", "Seed data must stay idempotent."),
    );
    const search = run("lessons", "search", "--intent", "rename `lib/util.js`, e.g. its exports", "--json").json();
    expect(search.results.map((r: { lesson: { id: string }; why: { path?: string } }) => [r.lesson.id, r.why.path])).toEqual([
      ["js", "*.js"],
    ]);
    // The JSON intent's prompt counts too, besides its paths.
    const both = run("lessons", "inject", "--intent", '{"prompt":"edit index.js","paths":["db/seed.ts"]}', "--json").json();
    expect(both.included.map((i: { id: string }) => i.id).sort()).toEqual(["db", "js"]);

    // Prose is not a path: "e.g.", "v1.2", "Node.js", "and/or", a URL, a path outside the workspace.
    for (const prose of ["bump v1.2, e.g. for Node.js and/or Deno", "see https://example.com/app/index.js", "edit ../other/index.js"]) {
      const none = run("lessons", "inject", "--intent", prose);
      expect(none.code, prose).toBe(0);
      expect(none.stdout, prose).toBe("No lessons match.\n");
    }
    expect(run("lessons", "search", "--intent", "edit index.ts").stdout).toBe("No lessons match.\n");
    // Under --json the output stays the result.
    expect(run("lessons", "inject", "--intent", "edit index.ts", "--json").json()).toMatchObject({
      markdown: "",
      included: [],
      omitted: [],
    });
    // Matching lessons that do not fit say so.
    expect(run("lessons", "inject", "--intent", "edit index.js", "--max-chars", "10").stdout).toBe(
      "No lesson fits in the --max-chars limit: 1 match (js); raise --max-chars.\n",
    );
  });

  it("links a lesson to a rollback with --from-rollback", () => {
    const { root, run } = workspace();
    run("session", "start", "--flow", "task", "--id", "s1");
    const r = run("lessons", "add", "Rewrite the wrapper in one edit.", "--from-rollback", "rb-12", "--json").json();
    expect(r.lesson.rollback).toBe("rb-12");
    expect(readFileSync(join(root, "LESSONS.md"), "utf8")).toContain("- rollback: rb-12");
    expect(run("lessons", "list").stdout).toContain("from rollback rb-12");
    // With two active sessions a workspace lesson is still written; a rollback link needs --session.
    run("session", "start", "--flow", "task", "--id", "s2");
    expect(run("lessons", "add", "Applies everywhere.", "--workspace", "--json").json().lesson.scope).toBe("workspace");
    expect(run("lessons", "add", "Linked.", "--workspace", "--from-rollback", "rb-13", "--json").json().error.code).toBe(
      "ambiguous_session",
    );
    expect(run("lessons", "add", "Linked.", "--workspace", "--from-rollback", "rb-13", "--session", "s2", "--json").json().seq).toBe(2);
  });
});

describe("baton turn record and resume --unpause", () => {
  it("pauses on a spiral, status asks the user, resume --unpause clears it", () => {
    const { root, run } = workspace();
    run("session", "start", "--flow", "task", "--id", "s1");
    run("event", "start");
    writeFileSync(join(root, "a.ts"), "one\n");
    const args = ["turn", "record", "--tool", "Edit", "--args", '{"old":"x","new":"y"}', "--file", "a.ts", "--status", "error"];
    const first = run(...args, "--checkpoint", "cp-1", "--json").json();
    expect(first.turn.seq).toBeGreaterThan(0);
    expect(first.detected).toBe(false);
    run(...args, "--json");
    // Key order does not change the args hash.
    const third = run(
      "turn",
      "record",
      "--tool",
      "Edit",
      "--args",
      '{"new":"y","old":"x"}',
      "--file",
      "a.ts",
      "--status",
      "error",
      "--json",
    );
    expect(third.code).toBe(0);
    expect(third.json()).toMatchObject({ detected: true, spiral: { paused: true, pattern: "same_signature", proposedCheckpoint: "cp-1" } });

    const status = run("status", "--json").json().sessions[0];
    expect(status.nextAction.action).toBe("ask_user");
    expect(status.nextAction.command).toBe("baton rollback --session s1 --to cp-1 && baton resume s1 --unpause");
    expect(run("turn", "record", "--tool", "Edit").stdout).toContain("Session is paused by a spiral");

    const resumed = run("resume", "s1", "--unpause", "--reason", "took over", "--json").json();
    expect(resumed.unpaused).toBe(true);
    expect(resumed.nextAction.action).toBe("continue_task");
    expect(run("export", "s1").stdout).toContain('"type":"spiral:cleared","actor":"user","data":{"reason":"took over"}');
    expect(run("resume", "s1", "--unpause", "--json").json().unpaused).toBe(false);
    expect(run("resume", "s1", "--reason", "x").code).toBe(2);
  });

  it("validates its input", () => {
    const { run } = workspace();
    run("session", "start", "--flow", "task", "--id", "s1");
    expect(run("turn", "record", "--json").json().error.code).toBe("bad_input");
    expect(run("turn", "record", "--tool", "Edit", "--status", "meh", "--json").json().error.message).toContain("--status must be one of");
    expect(run("turn", "record", "--record", '{"tool":"Edit","nope":1}', "--json").json().error.message).toContain(
      '"nope" is not a turn field',
    );
    const rec = run("turn", "record", "--record", '{"tool":"Bash","argsHash":"h1","files":[{"path":"x","hash":"abc","size":3}]}', "--json");
    expect(rec.code).toBe(0);
    expect(run("export", "s1").stdout).toContain(
      '"data":{"tool":"Bash","status":"success","argsHash":"h1","files":[{"path":"x","hash":"abc","size":3}]}',
    );
  });
});
