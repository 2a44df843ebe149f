// The import graph of src/, drawn by esbuild's resolver (every runtime import, static or
// dynamic; `import type` is erased and does not count), checked against the layer map of
// docs/architecture.md. `npm run lint` runs it; `node scripts/layers.mjs --graph` prints the
// layer-to-layer edges with a count and one example each.
//
// Layers, lowest first: core (pure) → platform (this machine: files, processes, the
// workspace, the local server's address) → backend (storage engines) → services (use cases)
// → compose (the public API and openBaton) → edges (cli, server, hooks, mcp, web, browser,
// demo). A module may import its own layer and those below it, with the rules in RULES.
//
// It also checks that no two modules import each other, directly or round a circle, counting
// `import type` too (a circle of types is still a circle to read), nor two rooms (below) each
// other, and that every folder of
// src/core/ and src/services/ (a room: the files of one capability) opens with a README.md
// saying what lives there and what it may use, and that a file of src/ longer than the house's
// ~400 lines says why at its top ("Longer than …" in its opening comment).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import * as esbuild from "esbuild";

const ROOT = new URL("..", import.meta.url).pathname;
const EDGES = ["cli", "server", "hooks", "mcp", "web", "browser", "demo"];

/** The layer of a source file (relative to the repository root), or undefined outside src/. */
export function layerOf(file) {
  if (!file.startsWith("src/")) return undefined;
  const top = file.slice(4).split("/")[0];
  if (file.split("/").length === 2) {
    if (top === "errors.ts") return "core";
    return "compose"; // api.ts, compose.ts, baton.ts, index.ts, env-options.ts
  }
  if (top === "backend")
    return file.startsWith("src/backend/sqlite/")
      ? "backend/sqlite"
      : file.startsWith("src/backend/postgres/")
        ? "backend/postgres"
        : "backend";
  if (EDGES.includes(top)) return `edge/${top}`;
  return top; // core, platform, services
}

const ORDER = ["core", "platform", "backend", "services", "compose", "edge"];
const rank = (layer) => ORDER.indexOf(layer.split("/")[0]);

/**
 * The modules an edge offers other edges: the CLI launches the server, the hooks (installer
 * and in-process answer), the MCP server and the demo, and serves the pages; the server makes
 * the CLI's status and resume reports for it, and judges a hook client's hook by the hooks' own
 * rules (server-first.ts); a client of the
 * server's HTTP API, and the page's client, are for anyone to use.
 */
const EDGE_ENTRIES = new Set([
  "src/server/server.ts",
  "src/server/client.ts",
  "src/hooks/install.ts",
  "src/hooks/run.ts",
  "src/hooks/server-first.ts",
  "src/cli/reports.ts",
  "src/mcp/stdio.ts",
  "src/demo/demo.ts",
  "src/web/dashboard-html.ts",
  "src/web/demo-html.ts",
  "src/browser/index.ts",
]);

/** Node built-ins core may use: hashing and path arithmetic, no I/O. */
const CORE_BUILTINS = new Set(["node:crypto", "node:path", "node:module", "node:util"]);

/** Why `from` may not import `to` (both repository-relative), or undefined when it may. */
export function violation(from, to) {
  const a = layerOf(from);
  if (!a) return undefined;
  if (to.startsWith("node:") || !to.startsWith("src/")) {
    if (a === "core" && to.startsWith("node:") && !CORE_BUILTINS.has(to)) return `core does no I/O (${to})`;
    return undefined;
  }
  const b = layerOf(to);
  if (a === b) return undefined;
  const [ka, kb] = [a.split("/")[0], b.split("/")[0]];
  if (ka === "edge" && kb === "edge") return EDGE_ENTRIES.has(to) ? undefined : `an edge uses another edge's internals (${b})`;
  if (ka === "backend" && kb === "backend") {
    // Each engine builds on the shared contract and row shapes, never on the other engine.
    return b === "backend" ? undefined : `one storage engine imports another (${b})`;
  }
  if (ka === "edge" && (kb === "services" || kb === "backend")) return `an edge reaches past the API into ${kb}`;
  if (ka === "services" && b !== "backend" && kb === "backend") return `a service imports a storage engine (${b})`;
  if (rank(b) > rank(a)) return `${a} imports the layer above it (${b})`;
  return undefined;
}

function sources(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(p));
    else if (/\.(ts|tsx)$/.test(e.name) && !e.name.endsWith(".d.ts")) out.push(p);
  }
  return out;
}

/** Every runtime import of src/: [from, to] pairs, repository-relative (`node:x` for built-ins). */
export async function importGraph() {
  const result = await esbuild.build({
    entryPoints: sources(join(ROOT, "src")),
    bundle: true,
    write: false,
    metafile: true,
    platform: "node",
    format: "esm",
    outdir: join(ROOT, ".layers-out"),
    packages: "external",
    jsx: "automatic",
    jsxImportSource: "preact",
    // The bundles the build makes load each other by file name at run time.
    external: ["./cli.cjs", "./cli-full.cjs", "./mcp.cjs"],
    logLevel: "silent",
  });
  const edges = [];
  for (const [file, input] of Object.entries(result.metafile.inputs)) {
    for (const imp of input.imports) {
      const to = imp.external ? (imp.path.startsWith("node:") ? imp.path : `pkg:${imp.path}`) : imp.path;
      edges.push([relative(".", file), to.startsWith("node:") || to.startsWith("pkg:") ? to : relative(".", to)]);
    }
  }
  return edges;
}

const IMPORT = /(?:\bfrom|\bimport)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g;

/** Every import of src/ between its own files, types included: [from, to] pairs, repository-relative. */
export function sourceGraph(root = ROOT) {
  const files = new Set(sources(join(root, "src")).map((f) => relative(root, f)));
  const edges = [];
  for (const from of files) {
    for (const m of readFileSync(join(root, from), "utf8").matchAll(IMPORT)) {
      const base = relative(root, resolve(root, dirname(from), m[1]));
      const to = [base.replace(/\.js$/, ".ts"), base.replace(/\.js$/, ".tsx"), base].find((f) => files.has(f));
      if (to && to !== from) edges.push([from, to]);
    }
  }
  return edges;
}

/** The circles of a graph: each a list of modules that reach each other (Tarjan's algorithm). */
export function circles(edges) {
  const next = new Map();
  for (const [a, b] of edges) next.set(a, [...(next.get(a) ?? []), b]);
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const out = [];
  const visit = (v) => {
    index.set(v, index.size);
    low.set(v, index.get(v));
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) !== index.get(v)) return;
    const c = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      c.push(w);
    } while (w !== v);
    if (c.length > 1) out.push(c.sort());
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return out;
}

/**
 * The circles between rooms: the folders of src/core/ and src/services/ (each a node), with
 * their layer's shared root files each a node of its own. A room that uses another may not be
 * used by it back, or the two are one room read in two places.
 */
export function roomCircles(edges) {
  const inRooms = (f) => /^src\/(core|services)\//.test(f);
  const room = (f) => {
    const p = f.split("/");
    return p.length > 3 ? `${p[0]}/${p[1]}/${p[2]}/` : f;
  };
  const between = [];
  for (const [from, to] of edges) {
    if (!inRooms(from) || !inRooms(to)) continue;
    const [a, b] = [room(from), room(to)];
    if (a !== b) between.push([a, b]);
  }
  return circles(between);
}

/** The rooms (folders) of src/core/ and src/services/ that do not say what they hold. */
export function roomsWithoutReadme(root = ROOT) {
  const out = [];
  for (const layer of ["core", "services"]) {
    for (const e of readdirSync(join(root, "src", layer), { withFileTypes: true })) {
      if (e.isDirectory() && !existsSync(join(root, "src", layer, e.name, "README.md"))) out.push(`src/${layer}/${e.name}`);
    }
  }
  return out;
}

/** Files of src/ longer than `limit` lines whose opening comment does not say why ("Longer than …"). */
export function longWithoutReason(limit = 420) {
  const out = [];
  for (const f of sources(join(ROOT, "src"))) {
    const text = readFileSync(f, "utf8");
    const lines = text.split("\n").length;
    const opening = /^\s*\/\*\*[\s\S]*?\*\//.exec(text)?.[0] ?? "";
    if (lines > limit && !/Longer than/.test(opening)) out.push(`${relative(ROOT, f)} (${lines} lines)`);
  }
  return out;
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  process.chdir(ROOT);
  const edges = await importGraph();
  if (process.argv.includes("--graph")) {
    const counts = new Map();
    for (const [from, to] of edges) {
      if (!to.startsWith("src/")) continue;
      const key = `${layerOf(from)} → ${layerOf(to)}`;
      if (layerOf(from) === layerOf(to)) continue;
      const c = counts.get(key) ?? { n: 0, example: `${from} → ${to}` };
      c.n++;
      counts.set(key, c);
    }
    for (const [k, v] of [...counts].sort()) console.log(`${k.padEnd(40)} ${String(v.n).padStart(4)}  e.g. ${v.example}`);
  }
  const bad = edges.map(([f, t]) => [f, t, violation(f, t)]).filter((x) => x[2]);
  for (const [f, t, why] of bad) console.error(`layers: ${f} → ${t}: ${why}`);
  if (bad.length > 0) {
    console.error(`layers: ${bad.length} import(s) break the layer map (docs/architecture.md, "Layers")`);
    process.exit(1);
  }
  const graph = sourceGraph();
  const round = [...circles(graph), ...roomCircles(graph)];
  for (const c of round) console.error(`layers: these modules or rooms import each other (types count): ${c.join(", ")}`);
  if (round.length > 0) {
    console.error("layers: move what they share (often a type) into a module both can import");
    process.exit(1);
  }
  const bare = roomsWithoutReadme();
  for (const r of bare) console.error(`layers: ${r}/ has no README.md saying what lives there and what it may use`);
  if (bare.length > 0) process.exit(1);
  const long = longWithoutReason();
  for (const f of long) console.error(`layers: ${f} is longer than ~400 lines and its opening comment does not say why`);
  if (long.length > 0) process.exit(1);
  console.log(`layers: ${edges.length} imports of src/ follow the layer map, with no circles`);
}
