/**
 * secretlint's recommended preset as an oracle nobody here wrote. The patterns its rules search
 * with, as the installed package writes them as literals (`module/index.js`, the
 * `…PATTERN = /…/` lines: 33 in 12.0; AWS's, built at run time, are not read), are turned into
 * generators (look-arounds dropped; under `i`, the matches as written; fast-check's
 * `stringMatching`), and each generated string of 16 characters or more that secretlint itself
 * reports, standing alone in a line, must come out of Baton's redaction with nothing left of
 * what secretlint reported: no 8 characters of it in a row (of a URL's password, for the rules
 * that report the whole URL). The corpus's formats are written here, after the public
 * scanners; this holds them to one of those scanners as it ships.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { lintSource } from "@secretlint/core";
import { creator } from "@secretlint/secretlint-rule-preset-recommend";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { redactText } from "../src/core/redaction/redact.js";
import { MIN_RUN } from "../src/core/redaction/scan.js";

const PRESET = "@secretlint/secretlint-rule-preset-recommend";
const config = { rules: [{ id: PRESET, rule: creator }] };

/** The preset's search patterns, as regular expressions that generate their matches. */
function presetPatterns(): { name: string; gen: RegExp }[] {
  const main = createRequire(import.meta.url).resolve(`${PRESET}/package.json`);
  const src = readFileSync(join(dirname(main), "module", "index.js"), "utf8");
  const out: { name: string; gen: RegExp }[] = [];
  for (const m of src.matchAll(/^\s*(?:const|let|var) (\w*(?:PATTERN|Pattern|pattern)) = \/(.+)\/([a-z]*);\s*$/gm)) {
    const [, id, body, flags] = m as unknown as [string, string, string, string];
    const name = `${id} (line ${src.slice(0, m.index).split("\n").length + 1})`;
    if (id === "REGEXP_LITERAL_PATTERN") continue; // a helper, not a rule's
    // Look-arounds and word boundaries say where a match may stand, not what it is.
    const gen = body.replace(/\(\?<?[!=](?:[^()]|\([^()]*\))*\)/g, "").replace(/\\b/g, "");
    // fast-check cannot generate under `i`: the lowercase-as-written matches are generated.
    out.push({ name, gen: new RegExp(`^(?:${gen})$`, flags.replace(/[giy]/g, "")) });
  }
  return out;
}

/** What must be gone of a reported span: a URL's password (`jdbc:mysql://u:p@h` too), else the span. */
function material(span: string): string {
  const m = /:\/\/[^:@/\s]*:([^@\s]+)@/.exec(span);
  return m ? (m[1] as string) : span;
}

/**
 * Where Baton differs from the preset on purpose, each with its reason: the sample is skipped.
 * - A Slack `xapp-` without `-<digit>-` after it: every app-level token has it, and Debian's XApp
 *   packages and programs (`mate-xapp-status-applet`, `xapp-sn-watcher`) do not.
 * - A URL "password" that is a port (digits, then `/`, `?` or `#/`), or starts with `/`: that is
 *   a port and a path (`http://localhost:3000?email=bob@example.com`, `file://C:/x/@types`).
 * - A URL whose user holds `[` or `]`: that is an IPv6 host (`http://[::1]:5173/@vite/client`).
 * - A URL whose user or password holds a quote, a backtick or an angle bracket: in text, each
 *   ends the URL (`"postgres://app:pw@db"`), and the generated `mysql://e*z>UCttG*r:(,1H&@Nyy`
 *   is no URL anyone writes.
 */
/** Rules of the preset that must report on their own patterns (the test's reach, pinned). */
const EXPECTED_RULES: readonly string[] = [
  "anthropic",
  "basicauth",
  "database-connection-string",
  "databricks",
  "docker",
  "figma",
  "github",
  "gitlab",
  "grafana",
  "groq",
  "hashicorp-vault",
  "huggingface",
  "linear",
  "notion",
  "npm",
  "openai",
  "shopify",
  "slack",
  "vercel",
];

const DELIBERATE: readonly ((reported: string) => boolean)[] = [
  (r) => /^xapp-(?!\d-)/.test(r),
  (r) => /:\/\/[^:@/\s]*:(?:\d{1,5}(?:[/?]|#[/?#])|\/)/.test(r),
  (r) => /:\/\/[^:@/\s]*[[\]]/.test(r),
  (r) => /:\/\/[^@\s]*["'`<>][^@\s]*@/.test(r),
];

function leaks(out: string, secret: string): boolean {
  if (secret.length < 8) return out.includes(`:${secret}@`) || out.includes(` ${secret} `);
  for (let i = 0; i + 8 <= secret.length; i++) if (out.includes(secret.slice(i, i + 8))) return true;
  return false;
}

describe("secretlint's recommended preset as an oracle", () => {
  it("whatever its rules report in a generated match of their own patterns, Baton hides", async () => {
    const patterns = presetPatterns();
    expect(patterns.length, "patterns read from the installed preset").toBeGreaterThanOrEqual(25);
    let reported = 0;
    const rulesReporting = new Set<string>();
    const ruleIds = new Set<string>();
    const leaked: string[] = [];
    for (const p of patterns) {
      for (const s of fc.sample(fc.stringMatching(p.gen), { numRuns: 25, seed: 11 })) {
        // Baton looks for providers' tokens in runs of 16 characters or more (MIN_RUN): every real
        // format is longer, though some of the preset's patterns also take shorter strings.
        if (/\s/.test(s) || s.length < MIN_RUN) continue;
        const text = `see ${s} now`;
        const r = await lintSource({ source: { filePath: "/note.txt", content: text, contentType: "text" }, options: { config } });
        const messages = r.messages.filter((m) => !DELIBERATE.some((d) => d(text.slice(m.range[0], m.range[1]))));
        if (messages.length === 0) continue;
        reported++;
        rulesReporting.add(p.name);
        for (const m of messages) ruleIds.add(m.ruleId);
        const out = redactText(text);
        for (const m of messages) {
          const secret = material(text.slice(m.range[0], m.range[1]));
          if (leaks(out, secret)) leaked.push(`${p.name}: ${JSON.stringify(text)} → ${JSON.stringify(out)}`);
        }
      }
    }
    expect(rulesReporting.size, [...rulesReporting].join(", ")).toBeGreaterThanOrEqual(20);
    // Each of these rules must have reported on its own patterns: a rename in a new release of
    // the preset would otherwise drop its patterns unseen.
    for (const rule of EXPECTED_RULES) expect([...ruleIds], rule).toContain(`@secretlint/secretlint-rule-${rule}`);
    expect(reported).toBeGreaterThan(400);
    const byPattern = new Map<string, string[]>();
    for (const l of leaked) {
      const k = l.slice(0, l.indexOf(":"));
      byPattern.set(k, [...(byPattern.get(k) ?? []), l]);
    }
    const summary = [...byPattern].map(([k, ls]) => `${ls.length}× ${k}, e.g. ${ls[0]?.slice(k.length + 2)}`).join("\n");
    expect(leaked.length, summary).toBe(0);
  }, 120_000);
});
