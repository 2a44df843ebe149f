/**
 * The command lines agents run on every turn (`baton status --json`, `baton resume --json`) are
 * read without loading Node's `util.parseArgs` (src/cli/fast-options.ts `parseCommandLine`): for
 * every command line it must answer exactly as `util.parseArgs` (strict, positionals allowed)
 * does, the same values and positionals, or the same refusal.
 */
import { parseArgs } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseCommandLine, RESUME_OPTIONS, STATUS_OPTIONS } from "../src/cli/fast-options.js";

type Outcome = { values: Record<string, unknown>; positionals: string[] } | { error: string };

function outcome(f: () => { values: Record<string, unknown>; positionals: string[] }): Outcome {
  try {
    const r = f();
    return { values: { ...r.values }, positionals: r.positionals };
  } catch (err) {
    return { error: (err as { code?: string }).code ?? String(err) };
  }
}

// Pieces of command lines: every option of both commands in each of its forms, options that do
// not exist, values (some that look like options), `--`, `-`, grouped and attached short options.
const token = fc.oneof(
  fc.constantFrom(
    "--json",
    "--root",
    "--quiet",
    "-q",
    "--session",
    "-s",
    "--all",
    "-a",
    "--unpause",
    "--reason",
    "--lane",
    "--",
    "-",
    "-aq",
    "-qa",
    "-sabc",
    "--json=true",
    "--root=/w",
    "--root=",
    "--session=s=1",
    "--nope",
    "-x",
    "--no-json",
    "--__proto__",
    "--constructor",
    "-1",
    "",
    "=",
  ),
  fc.string({ maxLength: 6 }),
  fc.string({ maxLength: 6 }).map((s) => `-${s}`),
  fc.string({ maxLength: 6 }).map((s) => `--${s}`),
);

describe("parseCommandLine", () => {
  for (const [name, options] of [
    ["status", STATUS_OPTIONS],
    ["resume", RESUME_OPTIONS],
  ] as const) {
    it(`answers as util.parseArgs does for ${name}'s options (fast-check)`, () => {
      const node = (args: readonly string[]) => parseArgs({ args: [...args], options, strict: true, allowPositionals: true });
      let plain = 0;
      fc.assert(
        fc.property(fc.array(token, { maxLength: 8 }), (args) => {
          let handedOn = false;
          const ours = outcome(() =>
            parseCommandLine(args, options, (a) => {
              handedOn = true;
              return node(a);
            }),
          );
          if (!handedOn) plain++;
          expect(ours).toEqual(outcome(() => node(args)));
        }),
        { numRuns: 5_000 },
      );
      // The plain forms were read here, not handed on: a good share of the lines tried.
      expect(plain).toBeGreaterThan(500);
    });
  }

  it("reads the plain forms itself", () => {
    const handedOn = () => {
      throw new Error("handed on to util.parseArgs");
    };
    expect(parseCommandLine(["--json", "--root", "/w", "-s", "s1", "x"], RESUME_OPTIONS, handedOn)).toEqual({
      values: Object.assign(Object.create(null), { json: true, root: "/w", session: "s1" }),
      positionals: ["x"],
    });
  });
});
