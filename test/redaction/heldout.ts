/**
 * The held-out measurement: secrets and non-secrets from the tests of public scanners nobody on
 * this project wrote (gitleaks' rule tests, detect-secrets' plugin tests), extracted once by
 * `node bench/redact-heldout.mjs --extract` into heldout.json (sources, commits and licences are
 * in the file). Nothing here was used to write the rules; the file is read, never tuned to.
 *
 * What is measured (`scoreHeldOut`):
 * - **recall per placement**: each secret in each placement that can hold it: the scanners' own
 *   texts as written (`as-written`); gitleaks' sample placements (`gitleaks:<name>`, its
 *   `GenerateSampleSecrets`, which gitleaks' own tests put every secret in); and the corpus's
 *   contexts (contexts.ts: assignments in every syntax, flags, headers, URLs, prose, logs, …),
 *   under a name made from the rule's provider (`SLACK_TOKEN`). A secret the scanner finds only
 *   beside a name (gitleaks' regex or detect-secrets' plugin does not find it alone) goes only in
 *   placements that carry the name, as in the corpus. A secret counts as leaked when eight of its
 *   characters in a row survive (corpus.ts `leaks`), a planted one by its random part.
 * - **precision on the scanners' false positives**: the share returned unchanged. Those lists are
 *   what one scanner must not report, not all non-secrets: a token one character too long, a
 *   key under a name the plugin does not take. A negative that holds a positive's secret is not
 *   counted.
 * - **precision around secrets**: the lines placed before and after each placement, and what its
 *   context marks to keep, survive.
 *
 * Placeholders (`AKIAZZZZZZZZZZZZZZZZ`, `SKxxxx…`, `abcd1234abcd1234…`: six of one character in a
 * row, or one short unit repeated: `abcdefghijabcdefghij`) are not secrets, and are left out of recall.
 */
import { CONTEXTS, type Context } from "./contexts.js";
import { leaks } from "./corpus.js";
import { pick, rng } from "./rng.js";

export interface HeldOutFixture {
  about: string;
  sources: Record<string, { repository: string; commit: string; files: string; licence: string; copyright: string; notice?: string }>;
  /** gitleaks' sample placements: `{i}` its identifier, `{I}` in capitals, `{s}` the secret. */
  templates: { id: string; template: string }[];
  /** Secrets to place: `random` is what to look for (a format's fixed prefix may stay); `alone`: the scanner finds it without a name. */
  secrets: { source: string; rule: string; identifier: string; secret: string; random: string[]; alone: boolean }[];
  /** True positives as the scanners' tests wrote them, with the secrets the scanner reports in each. */
  texts: { source: string; rule: string; text: string; secrets: string[] }[];
  negatives: { source: string; rule: string; text: string }[];
}

export interface HeldOutPlacement {
  source: string;
  rule: string;
  placement: string;
  text?: string;
  value?: unknown;
  material: string[];
  before?: string;
  after?: string;
  keep: string[];
}

/**
 * Ordinary lines placed before and after each placement (fixed here, not drawn from
 * negatives.ts, whose fixtures grow: the held-out placements stay the same while the rules change).
 */
const ORDINARY: readonly string[] = [
  "commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904",
  "Merge: 7a5df4e f0b60ab",
  "request_id=9915f69e-7c4d-495b-ae78-c513bb4cc8ed duration_ms=693",
  "  at cacheService.run (/tmp/ledger/src/parse-server.go:80:26)",
  "[deploy] 9 passed, 3 skipped",
  "image: ghcr.io/acme/index:8.40.13",
  "docker build -t client:6.36.24 .",
  "https://registry.npmjs.org/journal/-/rollback-4.16.98.tgz",
  'const secretName = "prod/db/credentials";',
  "password: process.env.DB_PASSWORD",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell's `${…}`, not a template literal
  "Authorization: Bearer ${API_TOKEN}",
  'max_tokens: 4096, tokenType: "Bearer", token_count: 12',
  "Use a password manager instead of reusing passwords.",
  "The token expired; sign in again to get a new one.",
  "2025-03-02T10:54:17Z INFO query finished in 734ms (17 items)",
  "GET /api/v1/lesson?page=10&sort=asc&limit=88 200 67ms",
  'cacheKey = "v1-deps-98c5b5ef5b6bd15c867f2ca9e0e5c47e60efe26d"',
  "trace_id: 8d85b2a66545081c0fb9992a73133ae3 span_id: 5da64dcb60b93f37",
  "FROM python:3.12-slim@sha256:c3d531f343db8a2f95345756ce197117655a31179ab7f9848b731dccad82133d",
  "echo cm9sbGJhY2sgcXVldWUgc2VydmVyIGRvbmU= | base64 -d",
  '{ key: "spiral-list-item-e187ff", label: "server" }',
  '"version": "16.24.28", "node": ">=21"',
  "user@example.com sent 34 messages to #test",
  "SELECT id, name FROM spirals WHERE created_at > now() - interval '26 days';",
  "color: #1300d3; background: rgba(83, 155, 137, 0.5);",
  'if (secret === undefined) throw new Error("missing secret");',
  'password_field = page.locator("#password")',
  "export GITHUB_TOKEN=$(gh auth token)",
];

/** A placeholder, not a secret: six of one character in a row, or one unit of up to twelve repeated. */
export function isPlaceholder(s: string): boolean {
  return /(.)\1{5,}/.test(s) || /^(.{1,12})\1+.{0,12}$/.test(s.replace(/^[A-Za-z]{2,12}[_-]/, ""));
}

const SUFFIXES = ["_API_KEY", "_TOKEN", "_SECRET", "_ACCESS_TOKEN", "_SECRET_KEY", "_CLIENT_SECRET", "_API_TOKEN", "_KEY"];

/** The name a user would keep a rule's secret under: its provider in capitals and a secret's suffix, varied from placement to placement. */
function nameFor(identifier: string, i: number): string {
  const base =
    identifier
      .toUpperCase()
      .replace(/[^A-Z0-9]+/g, "_")
      .replace(/^_|_$/g, "") || "SERVICE";
  return `${/^[0-9]/.test(base) ? `X${base}` : base}${SUFFIXES[i % SUFFIXES.length]}`;
}

function fits(c: Context, secret: string, alone: boolean): boolean {
  const block = secret.includes("-----BEGIN");
  // A context's `skip` names corpus formats; held-out secrets go everywhere their shape allows.
  switch (c.needs) {
    case "block":
      return block;
    case "named":
      return !block;
    case "distinct":
      return !block && alone && !/\s/.test(secret);
    case "urlsafe":
      return !block && /^[A-Za-z0-9._~-]+$/.test(secret);
  }
}

/** Every placement of the fixture, from a seed (the surrounding lines and the contexts' choices). */
export function heldOutPlacements(f: HeldOutFixture, seed = 32): HeldOutPlacement[] {
  const r = rng(seed);
  const lines = ORDINARY;
  const out: HeldOutPlacement[] = [];
  const surround = (p: HeldOutPlacement): HeldOutPlacement => {
    const before = pick(r, lines);
    const after = pick(r, lines);
    return { ...p, text: `${before}\n${p.text}\n${after}`, before, after };
  };
  for (const t of f.texts) {
    const material = t.secrets.filter((s) => !isPlaceholder(s));
    if (material.length === 0) continue;
    out.push({ source: t.source, rule: t.rule, placement: "as-written", text: t.text, material, keep: [] });
  }
  f.secrets.forEach((s, i) => {
    const material = (s.random.some((x) => x.length >= 8) ? s.random.filter((x) => x.length >= 8) : [s.secret]).filter(
      (x) => !isPlaceholder(x),
    );
    if (material.length === 0 || isPlaceholder(s.secret)) return;
    if (s.source === "gitleaks")
      for (const t of f.templates) {
        const text = t.template.replaceAll("{i}", s.identifier).replaceAll("{I}", s.identifier.toUpperCase()).replaceAll("{s}", s.secret);
        out.push(surround({ source: s.source, rule: s.rule, placement: `gitleaks:${t.id}`, text, material, keep: [] }));
      }
    CONTEXTS.forEach((c, j) => {
      if (!fits(c, s.secret, s.alone)) return;
      const placed = c.place(nameFor(s.identifier, i + j), s.secret, r);
      const encoded = placed.planted !== s.secret;
      const m = encoded ? [placed.planted] : material;
      const p: HeldOutPlacement = { source: s.source, rule: s.rule, placement: c.id, material: m, keep: placed.keep };
      if (placed.text === undefined) out.push({ ...p, value: placed.value });
      else if (placed.whole === true) out.push({ ...p, text: placed.text });
      else out.push(surround({ ...p, text: placed.text }));
    });
  });
  return out;
}

/** The scanners' false positives that count as negatives: none holding a positive's secret. */
export function heldOutNegatives(f: HeldOutFixture): { source: string; rule: string; text: string }[] {
  const secrets = new Set<string>();
  for (const s of f.secrets) secrets.add(s.secret);
  for (const t of f.texts) for (const s of t.secrets) secrets.add(s);
  const long = [...secrets].filter((s) => s.length >= 8);
  return f.negatives.filter((n) => !long.some((s) => n.text.includes(s)));
}

export interface HeldOutMiss {
  source: string;
  rule: string;
  placement: string;
  text: string;
  out: string;
}

export interface HeldOutScore {
  placements: number;
  recall: number;
  misses: HeldOutMiss[];
  /** Per placement: [placed, leaked]. */
  byPlacement: Map<string, [number, number]>;
  /** Per source and rule (`gitleaks/slack-bot-token`): [placed, leaked]. */
  byRule: Map<string, [number, number]>;
  /** Per source: [placed, leaked]. */
  bySource: Map<string, [number, number]>;
  contextPrecision: number;
  overRedacted: HeldOutMiss[];
  negatives: number;
  /** Per source: [negatives, changed]. */
  negativesBySource: Map<string, [number, number]>;
  negativePrecision: number;
  changedNegatives: HeldOutMiss[];
}

const PLACEHOLDER = /\[redacted(?::[a-z0-9-]+)?\]/g;

const bump = (m: Map<string, [number, number]>, k: string, miss: boolean) => {
  const v = m.get(k) ?? [0, 0];
  v[0]++;
  if (miss) v[1]++;
  m.set(k, v);
};

export function scoreHeldOut(
  f: HeldOutFixture,
  redactor: { text: (s: string) => string; value: (v: unknown) => unknown },
  placements = heldOutPlacements(f),
): HeldOutScore {
  const misses: HeldOutMiss[] = [];
  const overRedacted: HeldOutMiss[] = [];
  const byPlacement = new Map<string, [number, number]>();
  const byRule = new Map<string, [number, number]>();
  const bySource = new Map<string, [number, number]>();
  for (const p of placements) {
    const input = p.text ?? JSON.stringify(p.value);
    const out = p.text !== undefined ? redactor.text(p.text) : JSON.stringify(redactor.value(p.value));
    // A placeholder's own name is not the secret (`[redacted:aws-bedrock]` beside `bedrock-api-key-…`).
    const miss = leaks(out.replace(PLACEHOLDER, "\u0000"), p.material);
    const row = { source: p.source, rule: p.rule, placement: p.placement, text: input, out };
    if (miss) misses.push(row);
    bump(byPlacement, p.placement, miss);
    bump(byRule, `${p.source}/${p.rule}`, miss);
    bump(bySource, p.source, miss);
    const kept =
      (p.before === undefined || (out.startsWith(`${p.before}\n`) && out.endsWith(`\n${p.after}`))) && p.keep.every((k) => out.includes(k));
    if (!kept) overRedacted.push(row);
  }
  const negs = heldOutNegatives(f);
  const changedNegatives: HeldOutMiss[] = [];
  const negativesBySource = new Map<string, [number, number]>();
  for (const n of negs) {
    const out = redactor.text(n.text);
    const changed = out !== n.text;
    if (changed) changedNegatives.push({ ...n, placement: "negative", out });
    bump(negativesBySource, n.source, changed);
  }
  return {
    placements: placements.length,
    recall: 1 - misses.length / placements.length,
    misses,
    byPlacement,
    byRule,
    bySource,
    contextPrecision: 1 - overRedacted.length / placements.length,
    overRedacted,
    negatives: negs.length,
    negativesBySource,
    negativePrecision: 1 - changedNegatives.length / negs.length,
    changedNegatives,
  };
}
