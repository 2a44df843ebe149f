/**
 * The reference pages stay true to the code: every error code (docs/errors.md), every
 * environment variable and `.baton/config.json` key Baton reads (docs/configuration.md), every
 * doctor finding (docs/guide/troubleshooting.md), and every link in README.md and docs/.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import type { Command } from "commander";
import { afterAll, describe, expect, it } from "vitest";
import { buildProgram } from "../src/cli/main.js";
import { DEFAULT_SPIRAL_THRESHOLDS } from "../src/core/spiral/thresholds.js";
import { EXIT_CODES } from "../src/errors.js";
import { openBaton } from "../src/index.js";
import { cleanupDirs, REPO, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

function walk(dir: string, ext: RegExp): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) out.push(...walk(p, ext));
    else if (ext.test(e)) out.push(p);
  }
  return out.sort();
}

const read = (p: string) => readFileSync(join(REPO, p), "utf8");
const SOURCES = walk(join(REPO, "src"), /\.ts$/).map((f) => ({ file: relative(REPO, f), text: readFileSync(f, "utf8") }));
const allMatches = (re: RegExp) =>
  SOURCES.flatMap((s) => [...s.text.matchAll(re)].map((m) => ({ file: s.file, name: (m[1] ?? m[2]) as string })));

describe("docs/errors.md", () => {
  const rows = new Map(
    [...read("docs/errors.md").matchAll(/^\| `([a-z_]+)` \| (\d+) \|/gm)].map((m) => [m[1] as string, Number(m[2])] as const),
  );

  it("lists every code of src/errors.ts with its exit status, and no code that is gone", () => {
    const codes = Object.keys(EXIT_CODES).sort();
    expect([...rows.keys()].sort(), "codes in docs/errors.md vs EXIT_CODES in src/errors.ts").toEqual(codes);
    for (const [code, exit] of rows) expect(exit, `exit status of ${code}`).toBe(EXIT_CODES[code as keyof typeof EXIT_CODES]);
  });
});

describe("docs/configuration.md", () => {
  const page = read("docs/configuration.md");
  const documented = new Set([...page.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1] as string));

  /** BATON_* names in src that are build-time constants or code names, not environment variables. */
  const NOT_ENV: Record<string, RegExp> = {
    BATON_DIR: /export const BATON_DIR = /,
    BATON_VERSION: /declare const BATON_VERSION: /,
    BATON_BUILD: /declare const BATON_BUILD: /,
    BATON_PG_BUNDLE: /declare const BATON_PG_BUNDLE: /,
  };
  /** Upper-case names after `env.` in src that are not read from the environment. */
  const NOT_READ = new Set(["API_TOKEN"]); // a redaction comment's example of code that reads a secret

  it("lists every BATON_* environment variable src names, and none that src no longer names", () => {
    const named = new Set(allMatches(/\b(BATON_[A-Z0-9_]+)\b/g).map((m) => m.name));
    for (const [name, decl] of Object.entries(NOT_ENV))
      expect(
        SOURCES.some((s) => decl.test(s.text)),
        `${name} is declared as a constant in src`,
      ).toBe(true);
    const vars = [...named].filter((n) => !(n in NOT_ENV)).sort();
    expect(
      vars.filter((v) => !documented.has(v)),
      "BATON_* variables src reads that docs/configuration.md does not list",
    ).toEqual([]);
    const listed = [...documented].filter((d) => d.startsWith("BATON_"));
    expect(
      listed.filter((v) => !named.has(v)),
      "BATON_* variables docs/configuration.md lists that src never names",
    ).toEqual([]);
  });

  it("lists every other environment variable src reads", () => {
    const reads = allMatches(/(?:process\.env|\benv|\?\? process\.env\))\s*(?:\.\s*([A-Z][A-Z0-9_]+)\b|\[\s*"([A-Z][A-Z0-9_]+)"\s*\])/g);
    const names = new Set(reads.map((r) => r.name).filter((n) => n !== undefined && !NOT_READ.has(n)));
    expect(names.size, "env reads found in src").toBeGreaterThan(10);
    expect(
      [...names].filter((n) => !documented.has(n)).sort(),
      "environment variables src reads that docs/configuration.md does not list",
    ).toEqual([]);
  });

  /** Keys per `### ` heading of the config.json part: a heading naming one section lists its keys; `store`, `project` are top-level. */
  function documentedKeys(): { top: Set<string>; sub: Map<string, Set<string>> } {
    const part = page.slice(page.indexOf("## `.baton/config.json`"), page.indexOf("## Environment variables"));
    const top = new Set<string>();
    const sub = new Map<string, Set<string>>();
    for (const block of part.split(/^### /m).slice(1)) {
      const heading = block.slice(0, block.indexOf("\n"));
      const names = [...heading.matchAll(/`([a-zA-Z]+)`/g)].map((m) => m[1] as string);
      const keys = [...block.matchAll(/^\| `([a-zA-Z]+)` \|/gm)].map((m) => m[1] as string);
      if (names.length === 1) {
        top.add(names[0] as string);
        sub.set(names[0] as string, new Set(keys));
      } else for (const k of keys) top.add(k);
    }
    return { top, sub };
  }

  it("lists every .baton/config.json key src reads, and none it does not", () => {
    const { top, sub } = documentedKeys();
    // Top-level: the sections read with configSection / readConfigFile(...).x, and the store's keys.
    const sections = new Set([
      ...allMatches(/configSection\([^)]*?"([a-z][a-zA-Z]*)"/g).map((m) => m.name),
      ...allMatches(/readConfigFile\([^)]*\)\.([a-z][a-zA-Z]*)/g).map((m) => m.name),
      ...allMatches(/typeof cfg\.([a-z][a-zA-Z]*) ===/g).map((m) => m.name),
    ]);
    expect(sections.size, "config sections found in src").toBeGreaterThanOrEqual(6);
    expect([...top].sort(), "top-level keys of docs/configuration.md vs src").toEqual([...sections].sort());

    // Keys inside sections: the spiral's defaults, the checkpoint reader's checks, and every
    // `section.key` a reader of the file names in a message or comment.
    const keys = new Map<string, Set<string>>();
    const add = (s: string, k: string) => keys.set(s, (keys.get(s) ?? new Set()).add(k));
    for (const k of Object.keys(DEFAULT_SPIRAL_THRESHOLDS)) add("spiral", k);
    const cp = SOURCES.find((s) => s.file.endsWith("checkpoint-config.ts"))?.text ?? "";
    for (const m of cp.matchAll(/\bbad\("([a-zA-Z]+)"/g)) add("checkpoints", m[1] as string);
    const withSubkeys = [...sections].filter((s) => s !== "store" && s !== "project");
    const mention = new RegExp(`[\`"'](${withSubkeys.join("|")})\\.([a-z][a-zA-Z]*)\\b(?![.(])`, "g");
    let mentions = 0;
    // In the files that read the settings (others speak of other things: Codex's `[hooks.state]`).
    const readers = SOURCES.filter((f) => /\b(configSection|readConfigFile|badSetting)\(/.test(f.text));
    expect(readers.length, "files that read .baton/config.json").toBeGreaterThanOrEqual(5);
    for (const s of readers)
      for (const m of s.text.matchAll(mention))
        if (!/^(json|log|md|ts|mjs|cjs|bak)$/.test(m[2] as string)) {
          mentions++;
          add(m[1] as string, m[2] as string);
        }
    expect(mentions, "section.key mentions found in src").toBeGreaterThanOrEqual(2);
    for (const s of withSubkeys) {
      expect([...(sub.get(s) ?? [])].sort(), `keys of "${s}" in docs/configuration.md vs src`).toEqual([...(keys.get(s) ?? [])].sort());
    }
  });
});

describe("docs/guide/troubleshooting.md", () => {
  it("names every finding code baton doctor reports", () => {
    const codes = new Set(
      SOURCES.filter((s) => s.file.startsWith("src/services/doctor/")).flatMap((s) =>
        [...s.text.matchAll(/\bcode: "([a-z_]+)"/g)].map((m) => m[1] as string),
      ),
    );
    expect(codes.size).toBeGreaterThan(15);
    const page = read("docs/guide/troubleshooting.md");
    expect([...codes].filter((c) => !page.includes(`\`${c}\``)).sort(), "doctor codes the page does not name").toEqual([]);
  });
});

describe("docs/guide/agents.md", () => {
  it("quotes every refusal the agent hooks can answer a tool call with", () => {
    const tools = read("src/services/agents/tools.ts");
    const said = [...tools.matchAll(/deny:[\s\S]*?userMessage: `([^`]*)`/g)].map((m) => {
      // The longest fixed part of the message (the rest is the tool, the file, the agent).
      const text = (m[1] as string).replace(/\$\{[^}]*$/, "");
      const parts = text.split(/\$\{[^}]*\}/).map((p) => p.replace(/^[\s:().]+|[\s:().]+$/g, ""));
      return parts.reduce((a, b) => (b.length > a.length ? b : a), "");
    });
    expect(said.length, "refusals found in src/services/agents/tools.ts").toBeGreaterThanOrEqual(4);
    const page = read("docs/guide/agents.md");
    expect(
      said.filter((t) => !page.includes(t)),
      "refusals docs/guide/agents.md does not quote",
    ).toEqual([]);
  });
});

describe("docs/cli.md", () => {
  it("has a row for every command, naming every option it takes", () => {
    const rows = read("docs/cli.md")
      .split("\n")
      .filter((l) => l.startsWith("| `"));
    const leaves: { name: string; options: readonly { long?: string }[] }[] = [];
    const walkCommands = (c: Command, prefix: string): void => {
      for (const sub of c.commands) {
        const name = prefix ? `${prefix} ${sub.name()}` : sub.name();
        if (sub.commands.length > 0) walkCommands(sub, name);
        else if (name !== "help") leaves.push({ name, options: sub.options });
      }
    };
    walkCommands(buildProgram(), "");
    expect(leaves.length).toBeGreaterThan(60);
    // Global options, and --session, are documented once at the top of the page.
    const once = new Set(["--json", "--root", "--quiet", "--help", "--session"]);
    const missing: string[] = [];
    for (const { name, options } of leaves) {
      const named = new RegExp(`\`${name.replace(/[-]/g, "\\-")}(?=[\` ])`);
      const mine = rows.filter((r) => named.test(r.split(" | ")[0] as string));
      if (mine.length === 0) {
        missing.push(`${name}: no row`);
        continue;
      }
      const text = mine.join("\n");
      for (const { long } of options) {
        if (!long || once.has(long)) continue;
        const positive = long.startsWith("--no-") ? `--${long.slice(5)}` : long;
        if (!text.includes(long) && !text.includes(positive)) missing.push(`${name}: ${long}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe("docs/api.md", () => {
  it("has a section for every namespace of the Baton and a row for every method in it", async () => {
    const b = await openBaton({ root: tempDir() });
    try {
      const sections = read("docs/api.md").split(/^### /m);
      const missing: string[] = [];
      for (const [name, value] of Object.entries(b)) {
        if (typeof value !== "object" || value === null || name === "workspace" || name === "store") continue;
        const section = sections.find((s) => s.startsWith(`\`${name}\``));
        if (!section) missing.push(`${name}: no section`);
        else
          for (const [method, fn] of Object.entries(value))
            if (typeof fn === "function" && !section.includes(`\`${method}(`)) missing.push(`${name}.${method}`);
      }
      expect(missing).toEqual([]);
    } finally {
      await b.close();
    }
  });
});

describe("docs/http-api.md", () => {
  it("documents every route the server answers", () => {
    const doc = read("docs/http-api.md");
    const server = walk(join(REPO, "src", "server"), /\.ts$/)
      .map((f) => readFileSync(f, "utf8"))
      .join("\n");
    const routes = [...server.matchAll(/app\.(get|post|put|delete|patch)\(\s*"(\/v1\/[^"]+)"/g)].map(
      (m) => `${(m[1] as string).toUpperCase()} ${m[2]}`,
    );
    expect(routes.length).toBeGreaterThan(30);
    const escapeRe = (t: string) => t.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    expect(routes.filter((r) => !new RegExp(`${escapeRe(r)}(?![\\w/:-])`).test(doc))).toEqual([]);
  });
});

describe("links", () => {
  const pages = ["README.md", ...walk(join(REPO, "docs"), /\.md$/).map((f) => relative(REPO, f))];

  /** Text outside fenced code blocks. */
  function prose(text: string): string {
    return text.replace(/^```[\s\S]*?^```/gm, "");
  }

  /** GitHub's anchors for a page's headings. */
  function anchors(file: string): Set<string> {
    const out = new Set<string>();
    const seen = new Map<string, number>();
    for (const m of prose(readFileSync(file, "utf8")).matchAll(/^#{1,6} (.+)$/gm)) {
      const base = (m[1] as string)
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, "")
        .replace(/\s/g, "-");
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      out.add(n === 0 ? base : `${base}-${n}`);
    }
    return out;
  }

  it("every relative link in README.md and docs/ names a file that exists (and a heading it has)", () => {
    const broken: string[] = [];
    let checked = 0;
    for (const page of pages) {
      const text = prose(read(page));
      for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const target = m[1] as string;
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, mailto:
        checked++;
        const [path = "", anchor] = target.split("#");
        const file = path === "" ? join(REPO, page) : resolve(dirname(join(REPO, page)), decodeURIComponent(path));
        if (!existsSync(file)) {
          broken.push(`${page}: ${target} (no such file)`);
          continue;
        }
        if (anchor !== undefined && file.endsWith(".md") && !anchors(file).has(anchor)) broken.push(`${page}: ${target} (no such heading)`);
      }
    }
    expect(checked).toBeGreaterThan(20);
    expect(broken).toEqual([]);
  });

  // Our own pages only: docs/<page>.md and docs/guide/<page>.md (other projects' docs/hooks/… are quoted as sources).
  it("every docs/….md a page names in its text exists", () => {
    const broken: string[] = [];
    for (const page of pages)
      for (const m of read(page).matchAll(/(?<![\w/.])(docs\/(?:guide\/)?[\w.-]+\.md)\b/g))
        if (!existsSync(join(REPO, m[1] as string))) broken.push(`${page}: ${m[1]}`);
    expect(broken).toEqual([]);
  });

  it('every section a comment or page names (`docs/x.md, "Section"`) is a heading of that page', () => {
    const texts = [
      ...pages.map((p) => ({ file: p, text: read(p) })),
      ...["src", "test", "bench", "scripts"].flatMap((d) =>
        walk(join(REPO, d), /\.(ts|tsx|mjs|cjs)$/).map((f) => ({ file: relative(REPO, f), text: readFileSync(f, "utf8") })),
      ),
    ];
    const broken: string[] = [];
    for (const { file, text } of texts)
      for (const m of text.matchAll(/(docs\/[\w/-]+\.md)(?:, | \()"([^"]+)"/g)) {
        const [, page, section] = m as unknown as [string, string, string];
        if (!existsSync(join(REPO, page))) continue; // the link tests name a missing page
        const headings = read(page)
          .split("\n")
          .filter((l) => /^#{1,6} /.test(l))
          .map((l) => l.toLowerCase());
        const name = section
          .replace(/\s*\n\s*(?:\*|\/\/)?\s*/g, " ")
          .replace(/\s+/g, " ")
          .toLowerCase();
        if (!headings.some((h) => h.includes(name))) broken.push(`${file}: ${page}, "${section}"`);
      }
    expect(broken).toEqual([]);
  });

  it("the package ships every page the docs link to", () => {
    const files: string[] = JSON.parse(read("package.json")).files;
    for (const page of pages.filter((p) => p.startsWith("docs/"))) {
      const dir = dirname(page);
      expect(files, `package.json "files" covers ${page}`).toContain(`${dir}/*.md`);
    }
  });
});
