/**
 * Redaction on a held-out set: secrets and non-secrets from the tests of public scanners nobody
 * on this project wrote (gitleaks' rule tests, detect-secrets' plugin tests), in the fixture
 * test/redaction/heldout.json (sources, commits and licences inside). Prints recall per placement
 * and per source, the rules with misses, precision on the scanners' false positives and around
 * each secret, and precision on real code: the share of lines of the installed packages
 * (node_modules) that redaction changes, as test/redact.test.ts counts it. What each figure means
 * is in test/redaction/heldout.ts; test/redaction-heldout.test.ts holds them from regressing.
 *
 *   npm run build && node bench/redact-heldout.mjs              # measure dist/
 *   node bench/redact-heldout.mjs extract <gitleaks> <detect-secrets>
 *
 * `extract` rewrites the fixture from checkouts of github.com/gitleaks/gitleaks (its
 * cmd/generate/config/rules/*.go, read without Go: bench/redact-heldout-gitleaks.mjs) and
 * github.com/Yelp/detect-secrets (its tests/plugins/*_test.py, read with python3:
 * bench/redact-heldout-detect-secrets.mjs), e.g. after `git clone --depth 1` of each. The
 * random secrets gitleaks' tests generate come from a fixed seed, so the same commits give the
 * same file.
 *
 *   BATON_BENCH_TARGET=<dir>   measure another build (its dist/)
 *   BENCH_REAL_CODE=0          skip the real-code count (about a minute)
 *   BENCH_MISSES=<n>           list n misses and n changed negatives (default 20)
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commandLine, loadBaton, loadTs, REPO } from "./lib.mjs";
import { extractDetectSecrets } from "./redact-heldout-detect-secrets.mjs";
import { extractGitleaks, secretsIn } from "./redact-heldout-gitleaks.mjs";

const FIXTURE = join(REPO, "test", "redaction", "heldout.json");

const args = commandLine(import.meta.url, { positional: [0, 3] });

function commitOf(dir) {
  try {
    return execFileSync("git", ["-C", dir, "rev-parse", "HEAD"], { encoding: "utf8" }).trim();
  } catch {
    return "unknown (not a git checkout)";
  }
}

const MIT = `Permission is hereby granted, free of charge, to any person obtaining a copy of this software and associated documentation files (the "Software"), to deal in the Software without restriction, including without limitation the rights to use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies of the Software, and to permit persons to whom the Software is furnished to do so, subject to the following conditions: The above copyright notice and this permission notice shall be included in all copies or substantial portions of the Software. THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.`;

/** The part of a reported secret a leak check looks for: without a name or user before it, quotes or a `=` around it. */
function secretValue(secret) {
  let s = secret.trim().replace(/^["'`=:\s]+|["'`\s]+$/g, "");
  // `password: UyFC…`, `.dockercfg: |\n  eyJ…` (the rule's group holds the name), `elastic:P@ss…` (a user, kept on purpose).
  const named = /^[A-Za-z_.][\w.-]*["']?\s*[:=]\s*(?:[|>][-+]?\s*)?["']?([\s\S]{8,})$/.exec(s);
  if (named) s = named[1].replace(/["']$/, "");
  return s;
}

/** The maximal run of token characters in `text` around `part` (a plugin's group may hold only a prefix: `ghp`). */
function tokenAround(text, part) {
  const at = text.indexOf(part);
  if (at < 0) return part;
  let a = at;
  let b = at + part.length;
  const tok = /[^\s"'`<>]/;
  while (a > 0 && tok.test(text[a - 1])) a--;
  while (b < text.length && tok.test(text[b])) b++;
  return text.slice(a, b);
}

/** The rules whose "secret" is not a credential: a file's type marker, a binary file's name. */
const NOT_CREDENTIALS = new Set(["gcp-service-account", "pkcs12-file"]);

function extract(gitleaksDir, detectSecretsDir) {
  const gl = extractGitleaks(gitleaksDir);
  const ds = extractDetectSecrets(detectSecretsDir);
  const secrets = [];
  const texts = [];
  const negatives = [];
  const seen = new Set();
  const addSecret = (s) => {
    if (s.secret.length < 8 || seen.has(s.secret)) return;
    seen.add(s.secret);
    secrets.push(s);
  };
  for (const r of gl.rules) {
    if (NOT_CREDENTIALS.has(r.rule)) continue;
    const identifier = r.rule.split("-")[0];
    for (const s of r.samples)
      addSecret({ source: "gitleaks", rule: r.rule, identifier: s.identifier, secret: s.secret, random: s.random, alone: s.alone });
    for (const t of r.texts) {
      if (t.text.trim() === "") continue;
      const found = t.secrets
        .map((s) => (s.length < 8 ? tokenAround(t.text, s) : s))
        .map(secretValue)
        .filter((s) => s.length >= 6);
      texts.push({ source: "gitleaks", rule: r.rule, text: t.text, secrets: [...new Set(found)] });
      for (const s of found) addSecret({ source: "gitleaks", rule: r.rule, identifier, secret: s, random: [], alone: aloneIn(r, s) });
    }
    for (const n of r.negatives) if (n.trim() !== "") negatives.push({ source: "gitleaks", rule: r.rule, text: n });
  }
  for (const c of ds.cases) {
    const rule = c.plugin;
    if (!c.flag) {
      negatives.push({ source: "detect-secrets", rule, text: c.text });
      continue;
    }
    const found = (c.secrets ?? [])
      .map((raw) => ({ raw, s: secretValue(raw.length < 8 ? tokenAround(c.text, raw) : raw) }))
      .filter(({ s }) => s.length >= 6);
    if (found.length === 0) continue;
    texts.push({ source: "detect-secrets", rule, text: c.text, secrets: [...new Set(found.map(({ s }) => s))] });
    const identifier = rule === "KeywordDetector" ? "app" : rule.replace(/Detector$/, "").replace(/([a-z])([A-Z])/g, "$1_$2");
    for (const { raw, s } of found)
      addSecret({ source: "detect-secrets", rule, identifier, secret: s, random: [], alone: c.alone?.[raw] === true });
  }
  const fixture = {
    about:
      "Held-out redaction cases from public scanners' tests (bench/redact-heldout.mjs extract; read by test/redaction/heldout.ts). Strings as the scanners' tests hold them; gitleaks' random secrets generated from its regexes with a fixed seed.",
    sources: {
      gitleaks: {
        repository: "https://github.com/gitleaks/gitleaks",
        commit: commitOf(gitleaksDir),
        files: "cmd/generate/config/rules/*.go (tps and fps), cmd/generate/config/utils/generate.go (sample placements)",
        licence: "MIT",
        copyright: "Copyright (c) 2019 Zachary Rice",
        notice: MIT,
      },
      "detect-secrets": {
        repository: "https://github.com/Yelp/detect-secrets",
        commit: commitOf(detectSecretsDir),
        files: "tests/plugins/*_test.py (parametrized cases; secrets as the plugins report them)",
        licence: "Apache-2.0 (https://www.apache.org/licenses/LICENSE-2.0); test strings extracted unchanged",
        copyright: "Copyright Yelp, Inc.",
      },
    },
    templates: gl.templates,
    secrets,
    texts,
    negatives,
  };
  writeFileSync(FIXTURE, `${JSON.stringify(fixture, null, 1)}\n`);
  console.log(
    `wrote ${FIXTURE}: ${secrets.length} secrets, ${texts.length} texts, ${negatives.length} negatives, ${gl.templates.length} gitleaks placements`,
  );
  for (const s of [...gl.skipped, ...ds.skipped]) console.log(`  not read: ${s}`);
}

/** Whether a gitleaks rule finds `secret` alone, with no name before it (then it has a format of its own). */
function aloneIn(rule, secret) {
  if (rule.regex === undefined) return false;
  return (secretsIn(rule.regex, rule.group, secret) ?? []).some((f) => secretValue(f) === secret);
}

// ---------------------------------------------------------------------------------------------

const pct = (x) => `${(x * 100).toFixed(2)}%`;
const rate = ([n, missed]) => `${pct(1 - missed / n)} (${n - missed}/${n})`;

/** The share of lines of the installed packages that redaction changes (test/redact.test.ts's count). */
async function realCode(redactText) {
  const { thirdPartyLines } = await loadTs("test/redaction/third-party.ts");
  let lines = 0;
  let changed = 0;
  for (const { line } of thirdPartyLines(REPO)) {
    lines++;
    if (redactText(line) !== line) changed++;
  }
  return { lines, changed };
}

async function measure() {
  const { redactText, redactValue } = await loadBaton();
  const { scoreHeldOut, heldOutPlacements } = await loadTs("test/redaction/heldout.ts");
  const fixture = JSON.parse(readFileSync(FIXTURE, "utf8"));
  const placements = heldOutPlacements(fixture);
  const s = scoreHeldOut(fixture, { text: redactText, value: (v) => redactValue(v) }, placements);
  const show = Number(process.env.BENCH_MISSES ?? 20);
  console.log(
    `held-out set: ${Object.entries(fixture.sources)
      .map(([k, v]) => `${k} ${v.commit.slice(0, 10)}`)
      .join(", ")}`,
  );
  console.log(`\nrecall: ${pct(s.recall)} of ${s.placements} placements (${s.misses.length} leaked)`);
  for (const [k, v] of s.bySource) console.log(`  ${k.padEnd(16)} ${rate(v)}`);
  const groups = new Map();
  for (const [k, v] of s.byPlacement) {
    const g = k === "as-written" ? "as written" : k.startsWith("gitleaks:") ? "gitleaks' placements" : "corpus contexts";
    const t = groups.get(g) ?? [0, 0];
    t[0] += v[0];
    t[1] += v[1];
    groups.set(g, t);
  }
  for (const [k, v] of groups) console.log(`  ${k.padEnd(22)} ${rate(v)}`);
  console.log("\nrecall per placement (those below 100%):");
  for (const [k, v] of [...s.byPlacement].sort((a, b) => b[1][1] / b[1][0] - a[1][1] / a[1][0]))
    if (v[1] > 0) console.log(`  ${k.padEnd(36)} ${rate(v)}`);
  console.log("\nrules with misses (placements leaked / placed):");
  for (const [k, v] of [...s.byRule].sort((a, b) => b[1][1] - a[1][1])) if (v[1] > 0) console.log(`  ${k.padEnd(52)} ${v[1]}/${v[0]}`);
  console.log(`\nprecision on the scanners' false positives: ${pct(s.negativePrecision)} of ${s.negatives} unchanged`);
  for (const [k, v] of s.negativesBySource) console.log(`  ${k.padEnd(16)} ${rate(v)}`);
  console.log(
    `precision around secrets (neighbouring lines and names kept): ${pct(s.contextPrecision)} (${s.overRedacted.length} over-redacted)`,
  );
  if (process.env.BENCH_REAL_CODE !== "0") {
    const rc = await realCode(redactText);
    console.log(
      `precision on real code (node_modules lines changed): ${rc.changed} of ${rc.lines} (${((rc.changed / rc.lines) * 100).toFixed(3)}%)`,
    );
  }
  const list = (title, xs) => {
    if (show <= 0 || xs.length === 0) return;
    console.log(`\n${title} (first ${Math.min(show, xs.length)} of ${xs.length}):`);
    for (const m of xs.slice(0, show))
      console.log(
        `  ${m.source}/${m.rule} [${m.placement}]\n    in:  ${JSON.stringify(m.text).slice(0, 240)}\n    out: ${JSON.stringify(m.out).slice(0, 240)}`,
      );
  };
  list("misses", s.misses);
  list("changed false positives", s.changedNegatives);
  list("over-redacted placements", s.overRedacted);
}

if (args[0] === "extract") {
  if (args.length !== 3) {
    console.error("usage: node bench/redact-heldout.mjs extract <gitleaks checkout> <detect-secrets checkout>");
    process.exit(2);
  }
  extract(args[1], args[2]);
} else if (args.length > 0) {
  console.error("usage: node bench/redact-heldout.mjs [extract <gitleaks checkout> <detect-secrets checkout>]");
  process.exit(2);
} else await measure();
