/**
 * Once the reader closed stdout, only the end of output itself is a quiet exit 0: a real
 * failure after that (a storage error) still says what failed, on stderr, and exits with its
 * code. The CLI's reporter runs in a child process whose stdout pipe is closed after one line.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildSync } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupDirs, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

const SRC = join(import.meta.dirname, "../src");

/** Bundle `body` (with reportError, writeStdout, BatonError in scope) and run it with stdout closed after the first line. */
function runClosed(body: string): Promise<{ code: number | null; stderr: string }> {
  const dir = tempDir("baton-closed-");
  const entry = join(dir, "entry.ts");
  writeFileSync(
    entry,
    `import { reportError } from ${JSON.stringify(join(SRC, "cli/context.ts"))};
import { writeStdout, StdoutClosed } from ${JSON.stringify(join(SRC, "platform/output.ts"))};
import { BatonError } from ${JSON.stringify(join(SRC, "errors.ts"))};
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function main(): Promise<number> {
  try {
    writeStdout("first\\n");
    for (let i = 0; i < 100000; i++) { writeStdout("x".repeat(1000) + "\\n"); if (i % 64 === 0) await wait(1); }
  } catch (e) {
    if (!(e instanceof StdoutClosed)) throw e;
  }
  ${body}
}
main().then((code) => process.exit(code), (err) => { process.stderr.write(String(err)); process.exit(99); });
`,
  );
  const out = join(dir, "entry.cjs");
  // import.meta.url as the CLI's CommonJS bundles have it (scripts/build.mjs): the reporter
  // loads node:tty through it to colour what it says on a terminal.
  buildSync({
    entryPoints: [entry],
    bundle: true,
    platform: "node",
    format: "cjs",
    outfile: out,
    logLevel: "silent",
    define: { "import.meta.url": "__batonUrl" },
    banner: { js: 'const __batonUrl = require("node:url").pathToFileURL(__filename).href;' },
  });
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [out], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    let seen = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      seen += d;
      if (seen.includes("\n")) child.stdout.destroy();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

describe("a failure after stdout was closed", () => {
  for (const json of [false, true]) {
    it(`is reported on stderr with its exit code${json ? " (--json)" : ""}`, async () => {
      const r = await runClosed(`return reportError(new BatonError("io_error", "file system failure on the journal: EIO"), ${json});`);
      expect(r.stderr).toContain("file system failure on the journal: EIO");
      expect(r.code).toBe(5);
    }, 60_000);
  }

  it("the end of stdout itself, even wrapped, is still a quiet exit 0", async () => {
    const r = await runClosed(
      `try { writeStdout("more\\n"); return 1; } catch (e) { return reportError(new BatonError("internal", "wrapped", {}, { cause: e }), false); }`,
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  }, 60_000);
});
