// Bundles the library (dist/index.js, ESM) and the CLI (dist/cli.cjs) with esbuild, then
// emits type declarations. Native drivers stay external.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

let esbuild;
try {
  esbuild = await import("esbuild");
} catch {
  console.error("baton build: esbuild is not installed: run `npm ci` (the build needs the devDependencies)");
  process.exit(1);
}

const started = Date.now();
const version = JSON.parse(readFileSync("package.json", "utf8")).version;
// This build: its version and a hash of its sources. A hook hands its event only to a server of
// the same build (src/core/build.ts): another may read it differently.
const sources = createHash("sha256");
const hashDir = (dir) => {
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = join(dir, e.name);
    if (e.isDirectory()) hashDir(p);
    else sources.update(`${p}\0`).update(readFileSync(p)).update("\0");
  }
};
hashDir("src");
// …and of what else shapes dist/: this script and the locked dependencies (for `--if-changed`).
for (const f of ["scripts/build.mjs", "package-lock.json"])
  if (existsSync(f)) sources.update(`${f}\0`).update(readFileSync(f)).update("\0");
const build = `${version}+${sources.digest("hex").slice(0, 12)}`;
// `--if-changed` (`npm run demo`): nothing to do when dist/ was built from these sources.
const stamp = join("dist", ".build");
if (process.argv.includes("--if-changed") && existsSync(stamp) && readFileSync(stamp, "utf8") === build) process.exit(0);
rmSync("dist", { recursive: true, force: true });
const common = {
  bundle: true,
  platform: "node",
  mainFields: ["module", "main"],
  target: "node20",
  sourcemap: "linked",
  external: ["better-sqlite3", "pg"],
  logLevel: "warning",
  define: { BATON_VERSION: JSON.stringify(version), BATON_BUILD: JSON.stringify(build) },
};
// The library: ESM, split so the SQLite driver loads only when a backend is opened.
await esbuild.build({
  ...common,
  // The PostgreSQL backend is a chunk of its own here (src/pg-loader.ts).
  define: { ...common.define, BATON_PG_BUNDLE: "undefined" },
  entryPoints: { index: "src/index.ts" },
  outdir: "dist",
  splitting: true,
  format: "esm",
  chunkNames: "chunks/[name]-[hash]",
  // Bundled CommonJS dependencies call require() for Node built-ins.
  banner: {
    js: 'import { createRequire as __batonCreateRequire } from "node:module"; const require = __batonCreateRequire(import.meta.url);',
  },
});
// The CLI: one CommonJS file. Node starts a CommonJS entry ~9 ms faster than an ES module one
// (measured on this machine, docs/benchmarks.md), and hooks start it on every tool call.
// cli.cjs is the entry with a fast path for hot commands (src/cli/entry.ts); cli-full.cjs
// holds the whole command table. Commands stay lazy inside each: esbuild wraps a dynamically
// imported module in an init function that runs only when the command is used.
await esbuild.build({
  ...common,
  entryPoints: { cli: "src/cli/entry.ts", "cli-full": "src/cli/full.ts" },
  outdir: "dist",
  outExtension: { ".js": ".cjs" },
  format: "cjs",
  minify: process.env.BATON_BUILD_MINIFY !== "0",
  // better-sqlite3's JavaScript is bundled (ten fewer files to resolve and compile at start);
  // its native addon is loaded by path (see sqlite-backend.ts).
  external: ["pg", "./cli-full.cjs", "./mcp.cjs"],
  // import.meta.url for the CommonJS build, computed on first use (node:url costs ~1 ms). The
  // PostgreSQL backend is dist/pg.cjs (below), required only when a store names it: the define
  // takes that path in src/pg-loader.ts, and the plugin keeps the other one (a dynamic
  // import, which esbuild would still bundle) out.
  define: { ...common.define, "import.meta.url": "__batonMeta.url", BATON_PG_BUNDLE: '"pg.cjs"' },
  plugins: [
    {
      name: "postgres-apart",
      setup(build) {
        build.onResolve({ filter: /postgres\/pg-backend\.js$/ }, () => ({ path: "./pg.cjs", external: true }));
      },
    },
  ],
  banner: { js: 'const __batonMeta = { get url() { return require("node:url").pathToFileURL(__filename).href; } };' },
});
// The PostgreSQL backend (src/backend/postgres/, ~45 KB minified) for the CLI: inside cli.cjs it
// was read and compiled by every command and every hook process, SQLite or not. It carries its
// own copy of the little it shares (errors, row shapes, the store URL rules); errors are
// recognised across copies by name and code (isBatonError), never by class.
await esbuild.build({
  ...common,
  entryPoints: { pg: "src/backend/postgres/pg-backend.ts" },
  outdir: "dist",
  outExtension: { ".js": ".cjs" },
  format: "cjs",
  minify: process.env.BATON_BUILD_MINIFY !== "0",
  external: ["pg"],
});
// `baton hook` (src/hooks/entry.ts): the adapters and the client that hands a hook to the
// workspace's running server, without the rest of the CLI (~1/15 of cli.cjs to read and
// compile on every tool call). It loads cli.cjs when the hook is answered in its own process.
// `baton status --json` and `resume --json` (src/cli/ask.ts) likewise ask the server first.
await esbuild.build({
  ...common,
  entryPoints: { hook: "src/hooks/entry.ts", ask: "src/cli/ask.ts" },
  outdir: "dist",
  outExtension: { ".js": ".cjs" },
  format: "cjs",
  minify: process.env.BATON_BUILD_MINIFY !== "0",
  external: ["pg", "better-sqlite3", "./cli.cjs"],
  define: { ...common.define, "import.meta.url": "__batonMeta.url" },
  banner: { js: 'const __batonMeta = { get url() { return require("node:url").pathToFileURL(__filename).href; } };' },
});
// `baton mcp` (src/mcp/): the MCP SDK and zod in a bundle of their own that the `mcp` command
// requires on use. Inside cli-full.cjs they would be lazily initialised but still read and
// compiled by every command that loads it (~750 KB minified, over half of it zod: more than
// the rest of the CLI); hooks start those commands on every tool call. Bundled rather than
// left external: the SDK then loads as one file instead of ~100 resolved from node_modules.
// It gets the `Baton` from the CLI, so it carries none of Baton's services.
await esbuild.build({
  ...common,
  entryPoints: { mcp: "src/mcp/stdio.ts" },
  outdir: "dist",
  outExtension: { ".js": ".cjs" },
  format: "cjs",
  minify: process.env.BATON_BUILD_MINIFY !== "0",
  // The shared code it carries (core/canonical.ts loads node:crypto through import.meta.url)
  // needs import.meta.url as the CLI's bundles have it: empty in CommonJS otherwise.
  define: { ...common.define, "import.meta.url": "__batonMeta.url" },
  banner: { js: 'const __batonMeta = { get url() { return require("node:url").pathToFileURL(__filename).href; } };' },
});
// The browser client (`baton/browser`, no dependencies) and the demo page's script that
// `baton serve` serves: ESM for browsers.
await esbuild.build({
  entryPoints: { browser: "src/browser/index.ts", "web/demo": "src/web/demo.ts" },
  outdir: "dist",
  bundle: true,
  platform: "browser",
  format: "esm",
  target: "es2022",
  sourcemap: "linked",
  logLevel: "warning",
});
// The dashboard (src/web/dashboard/): Preact, uPlot and the diff renderer in one browser bundle
// of its own, served by `baton serve` at /dashboard. Never imported by the CLI or the hooks.
await esbuild.build({
  entryPoints: { "web/dashboard": "src/web/dashboard/main.tsx" },
  outdir: "dist",
  bundle: true,
  platform: "browser",
  format: "esm",
  target: "es2022",
  jsx: "automatic",
  jsxImportSource: "preact",
  // uPlot's stylesheet comes in as text and is put in a <style> by the page: one script, no extra request.
  loader: { ".css": "text" },
  minify: process.env.BATON_BUILD_MINIFY !== "0",
  sourcemap: "linked",
  logLevel: "warning",
});
// The bundles a hook or an agent's status starts stay ASCII: one other character makes V8 hold
// the whole source as two-byte text, which reading cli.cjs alone took 0.8 ms longer to decode.
for (const f of ["cli.cjs", "hook.cjs", "ask.cjs"]) {
  const text = readFileSync(join("dist", f), "latin1");
  const at = text.search(/[^\x00-\x7f]/);
  if (at >= 0)
    throw new Error(
      `baton build: dist/${f} is not ASCII near ${JSON.stringify(text.slice(Math.max(0, at - 60), at + 20))}; escape the character in the source`,
    );
}
// The CLI bundles' V8 code caches, from runs of the commands whose start-up matters.
if (!process.argv.includes("--no-warm")) {
  const warm = spawnSync(process.execPath, ["scripts/warm-cache.mjs"], { stdio: "inherit" });
  if (warm.status !== 0) console.warn("baton build: warming the code caches failed; they are written by the first commands run");
}
if (!process.argv.includes("--no-types") && existsSync("tsconfig.build.json")) {
  const tsc = spawnSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"], {
    stdio: "inherit",
  });
  if (tsc.status !== 0) process.exit(tsc.status ?? 1);
  // dist/browser.d.ts beside dist/browser.js, for tools that look there rather than in exports.
  writeFileSync("dist/browser.d.ts", 'export * from "./types/browser/index.js";\n');
}
checkRuntimeDependencies();
writeFileSync(stamp, build);
console.log(`baton build: dist/ in ${Date.now() - started} ms`);

/**
 * Every package the built code loads at run time must be one the published package installs
 * (`dependencies` or `optionalDependencies`): the rest are bundled, and a devDependency that is
 * still required (a lazy `createRequire(…)("x")`, which esbuild leaves alone) works in this
 * checkout and fails in a user's install.
 */
function checkRuntimeDependencies() {
  const { builtinModules } = createRequire(import.meta.url)("node:module");
  const pkg = JSON.parse(readFileSync("package.json", "utf8"));
  const installed = new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.optionalDependencies ?? {})]);
  // The MCP SDK's validator carries `require("ajv/…")` in the source it generates for standalone
  // use, as text; it is never run.
  const templates = /^ajv(-formats)?$/;
  const spec = String.raw`"((?:@[a-z0-9][\w.~-]*\/)?[a-z0-9][\w.~-]*)(?:\/[^"]*)?"`;
  const loads = new RegExp(String.raw`(?:\brequire\(|createRequire\)?\([^()]*\)\(|\bimport\(|\bfrom ?)${spec}`, "g");
  const missing = new Map();
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== "types" && e.name !== "web") walk(p);
      } else if (/\.(c?js)$/.test(e.name)) {
        for (const m of readFileSync(p, "utf8").matchAll(loads)) {
          const name = m[1];
          if (builtinModules.includes(name) || installed.has(name) || templates.test(name)) continue;
          missing.set(name, p);
        }
      }
    }
  };
  walk("dist");
  if (missing.size > 0) {
    for (const [name, file] of missing)
      console.error(`baton build: ${file} loads "${name}" at run time, but package.json does not install it`);
    console.error("baton build: add them to dependencies (or bundle them)");
    process.exit(1);
  }
}
