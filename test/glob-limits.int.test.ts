/**
 * A path pattern from a file a repository ships must not freeze Baton (core/glob-limits.ts).
 * picomatch compiles a glob to a backtracking regular expression: one LESSONS.md lesson with
 * `paths: *(*)*(*)*(*)*(*)*(*)*(*)*(*)*(*)#` made `lessons search` run past 40 s and froze
 * `baton serve`. Such patterns are refused where they are read (the lesson is left out, and
 * doctor says so), refused by `lessons add`, refused in a flow's generatedPaths, and never
 * matched even if they reach the matcher.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { globProblem, MAX_STARS } from "../src/core/glob-limits.js";
import { parseLessonsMd } from "../src/core/lessons/lessons-md.js";
import { pathMatches } from "../src/core/lessons/rank.js";
import { cli, tempDir } from "./helpers.js";

const HOSTILE = [
  "*(*)*(*)*(*)*(*)*(*)*(*)*(*)*(*)#",
  "*(*(*(*(#",
  "**/**/**/x",
  "@(a|b)*(*)*(*)*",
  `${"{a,a}".repeat(26)}b`,
  `${"(a|a)".repeat(22)}b`,
  "{a,{b,c}}",
];
/** A file name a hostile repository could also ship: long, and full of the pattern's literals. */
const NAME = `${"(".repeat(200)}.js`;

describe("path patterns a repository ships", () => {
  it("the hostile ones are refused; everyday ones are kept", () => {
    for (const g of HOSTILE) expect(globProblem(g), g).toBeDefined();
    for (const g of ["src/**/*.ts", "*.test.ts", "**/migrations/*.sql", "docs/", "src/ui/**", "*.{js,ts,jsx,tsx}", "a*b*c", "[abc]?.md"])
      expect(globProblem(g), g).toBeUndefined();
    expect(globProblem("*".repeat(MAX_STARS + 1))).toBeDefined();
  });

  it("LESSONS.md: the lesson with such a pattern is left out with its line and reason; the others are read", () => {
    const text = `# Lessons

### les-trap
Wrap every call in a retry.
- scope: workspace
- paths: \`${HOSTILE[0]}\`

### les-good
Run the linter before committing.
- scope: workspace
- paths: \`src/**/*.ts\`
`;
    const parsed = parseLessonsMd(text);
    expect(parsed.lessons.map((l) => l.id)).toEqual(["les-good"]);
    const error = parsed.diagnostics.find((d) => d.severity === "error");
    expect(error).toMatchObject({ line: 6, id: "les-trap" });
    expect(error?.message).toContain("too long to match");
  });

  it("the matcher never runs a pattern beyond the limits", () => {
    for (const g of HOSTILE) expect(pathMatches(g, NAME)).toBe(false);
    expect(pathMatches(HOSTILE[4] as string, `${"a".repeat(40)}.js`)).toBe(false);
    expect(pathMatches("*.js", NAME)).toBe(true);
  });

  it("through the CLI: search answers, doctor names the lesson, lessons add refuses, a flow is refused", () => {
    const root = tempDir();
    expect(cli(["init", "--root", root]).code).toBe(0);
    writeFileSync(
      join(root, "LESSONS.md"),
      `# Lessons\n\n### les-trap\nWrap every call in a retry.\n- scope: workspace\n- paths: \`${HOSTILE[0]}\`\n`,
    );
    // The previous build spent minutes here; the test's own timeout (60 s) fails it.
    const search = cli(["lessons", "search", "retry", "--path", NAME, "--root", root, "--json"]);
    expect(search.code, search.stderr).toBe(0);
    expect(search.json().results).toEqual([]);
    const doctor = cli(["doctor", "--root", root, "--json"]);
    const finding = doctor.json().findings.find((f: { code: string }) => f.code === "lessons_invalid");
    expect(finding, doctor.stdout).toMatchObject({ check: "lessons", severity: "warning", evidence: { lines: [6], count: 1 } });
    const add = cli(["lessons", "add", "Retry twice", "--workspace", "--path", HOSTILE[1] as string, "--root", root, "--json"]);
    expect(add.code).toBe(2);
    expect(add.json().error.message).toContain("too long to match");

    const flow = join(root, "trap.json");
    writeFileSync(flow, JSON.stringify({ name: "trap", initial: "a", phases: { a: { on: {} } }, generatedPaths: [HOSTILE[2]] }));
    const flows = cli(["flows", "validate", flow, "--root", root, "--json"]);
    expect(flows.stdout + flows.stderr).toContain("too long to match");
  });
});
