// Bundles the CLI and the library with esbuild. The CLI is started by agent hooks on every
// tool call, so it ships as one ESM bundle with code splitting: each command is a lazy chunk,
// and only the chunks a command needs are parsed. Native drivers stay external.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";

let esbuild;
try {
  esbuild = await import("esbuild");
} catch {
  console.warn("baton build: esbuild is not installed (production install?); skipping the build.");
  process.exit(0);
}

const started = Date.now();
rmSync("dist", { recursive: true, force: true });
await esbuild.build({
  entryPoints: { cli: "src/cli/main.ts", index: "src/index.ts" },
  outdir: "dist",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  mainFields: ["module", "main"],
  target: "node20",
  sourcemap: "linked",
  chunkNames: "chunks/[name]-[hash]",
  external: ["better-sqlite3", "pg"],
  // Bundled CommonJS dependencies call require() for Node built-ins.
  banner: {
    js: 'import { createRequire as __batonCreateRequire } from "node:module"; const require = __batonCreateRequire(import.meta.url);',
  },
  logLevel: "warning",
  define: { BATON_VERSION: JSON.stringify(JSON.parse(readFileSync("package.json", "utf8")).version) },
});
if (!process.argv.includes("--no-types") && existsSync("tsconfig.build.json")) {
  const tsc = spawnSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"], {
    stdio: "inherit",
  });
  if (tsc.status !== 0) process.exit(tsc.status ?? 1);
}
console.log(`baton build: dist/ in ${Date.now() - started} ms`);
