/**
 * Code nobody here wrote: every line of the installed packages' text files (node_modules,
 * pinned by package-lock.json), for the measure of how much real code redaction changes
 * (test/redact.test.ts and bench/redact-heldout.mjs count the same lines).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const TEXT = /\.(?:js|mjs|cjs|ts|mts|cts|md|json|ya?ml|toml|sh|h|c|txt)$/;

/** Each non-blank line (at most 2,000 characters) of each text file under 2 MB, with its file. */
export function* thirdPartyLines(repo: string): Generator<{ file: string; line: string }> {
  const walk = function* (dir: string): Generator<{ file: string; line: string }> {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) yield* walk(p);
      else if (e.isFile() && TEXT.test(e.name) && statSync(p).size < 2_000_000)
        for (const line of readFileSync(p, "utf8").split("\n")) {
          if (line.trim() !== "" && line.length <= 2000) yield { file: p, line };
        }
    }
  };
  yield* walk(join(repo, "node_modules"));
}
