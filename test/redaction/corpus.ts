/**
 * The redaction corpus: every provider format (providers.ts) in every context that can hold it
 * (contexts.ts), with random bodies from a seed, plus a negative set of ordinary developer text
 * (negatives.ts). `score` runs a redactor over it and reports recall and precision:
 *
 * - **recall**: the share of planted secrets of which nothing readable is left. A secret counts
 *   as leaked when any 8-character run of its random material survives (so a rule that stops
 *   early and leaves a tail counts as a miss, while a provider's fixed prefix such as `ghp_` may
 *   stay). Encoded placements (base64, `\n`-escaped) are checked as planted.
 * - **precision**: over-redaction, two ways. (1) The share of negative items returned unchanged.
 *   (2) The share of positives whose surroundings survive: the ordinary lines placed before and
 *   after the secret come back verbatim, and so does what the context marks as `keep` (the
 *   variable name, the host, the rest of the command). Both must reach the goal.
 */
import { CONTEXTS, type Context, type Placed } from "./contexts.js";
import { negatives } from "./negatives.js";
import { PROVIDERS, type Provider } from "./providers.js";
import { b64, b64url, CLASSES, chars, expand, type Generated, int, pick, type Rng, rng } from "./rng.js";

export interface Positive extends Placed {
  provider: string;
  context: string;
  /** The secret's random material, or the planted form when the context encodes it. */
  material: string[];
  before: string;
  after: string;
}

export interface Corpus {
  positives: Positive[];
  negatives: string[];
}

const WORDS = ["hunter", "dragon", "summer", "orange", "purple", "falcon", "maple", "river", "sunset", "tiger", "winter", "coffee"];

function secretFor(p: Provider, r: Rng): Generated {
  if (p.format === "JWT") {
    const header = b64url(JSON.stringify({ alg: pick(r, ["HS256", "RS256", "ES256"]), typ: "JWT" }));
    const payload = b64url(JSON.stringify({ sub: chars(r, CLASSES.n as string, 12), iat: int(r, 1.6e9, 1.8e9), scope: "read write" }));
    const sig = chars(r, CLASSES.u as string, 43);
    return { value: `${header}.${payload}.${sig}`, parts: [payload.slice(8), sig] };
  }
  if (p.format === "HUMAN") {
    // "hunter2-xyz9": a word, digits, a separator and a tail, as people choose them.
    const tail = chars(r, "abcdefghijklmnopqrstuvwxyz0123456789", 4);
    const v = `${pick(r, WORDS)}${int(r, 1, 99)}${pick(r, ["-", "!", "_", ""])}${tail}`;
    return { value: v, parts: [v] };
  }
  if (p.block) {
    const body = chars(r, CLASSES.b as string, int(r, 180, 900));
    const lines = body.match(/.{1,64}/g) ?? [];
    return {
      value: `-----BEGIN ${p.format}-----\n${lines.join("\n")}\n-----END ${p.format}-----`,
      parts: lines.filter((l) => l.length >= 8),
    };
  }
  return expand(r, p.format);
}

function fits(p: Provider, c: Context, secret: string): boolean {
  if (c.skip?.includes(p.id)) return false;
  const urlsafe = /^[A-Za-z0-9._~-]+$/.test(secret);
  switch (c.needs) {
    case "block":
      return p.block === true;
    case "named":
      return !p.block;
    case "distinct":
      return !p.block && !p.key && !/\s/.test(secret);
    case "urlsafe":
      return !p.block && urlsafe;
  }
}

/** The corpus for a seed: each provider in each context that fits it, with a fresh secret per placement. */
export function generate(seed = 11): Corpus {
  const r = rng(seed);
  const neg = negatives(r, 1500);
  const lines = neg.filter((n) => !n.includes("\n") && n.length < 100);
  const positives: Positive[] = [];
  for (const p of PROVIDERS) {
    for (const c of CONTEXTS) {
      const g = secretFor(p, r);
      if (!fits(p, c, g.value)) continue;
      const placed = c.place(p.name, g.value, r);
      const encoded = placed.planted !== g.value;
      const material = encoded ? [placed.planted] : g.parts.filter((s) => s.length >= 8);
      if (material.length === 0) material.push(g.value);
      const before = pick(r, lines);
      const after = pick(r, lines);
      if (placed.text !== undefined && placed.whole !== true) placed.text = `${before}\n${placed.text}\n${after}`;
      positives.push({ ...placed, provider: p.id, context: c.id, material, before, after });
    }
  }
  return { positives, negatives: neg };
}

/** What a redactor is given: text, or a structured value (tool arguments). */
export interface Redactor {
  text: (s: string) => string;
  value: (v: unknown) => unknown;
}

export interface Miss {
  provider: string;
  context: string;
  text: string;
  out: string;
}

export interface Score {
  positives: number;
  negatives: number;
  recall: number;
  /** Negatives unchanged. */
  negativePrecision: number;
  /** Positives whose surroundings survived. */
  contextPrecision: number;
  misses: Miss[];
  overRedacted: Miss[];
  changedNegatives: { text: string; out: string }[];
}

const WINDOW = 8;

/** Whether any `WINDOW`-character run of the secret's material is still in `out`. */
export function leaks(out: string, material: readonly string[]): boolean {
  for (const m of material) {
    if (m.length <= WINDOW) {
      if (out.includes(m)) return true;
      continue;
    }
    for (let i = 0; i + WINDOW <= m.length; i += 2) if (out.includes(m.slice(i, i + WINDOW))) return true;
  }
  return false;
}

export function score(corpus: Corpus, redactor: Redactor): Score {
  const misses: Miss[] = [];
  const overRedacted: Miss[] = [];
  for (const p of corpus.positives) {
    const input = p.text ?? JSON.stringify(p.value);
    const out = p.text !== undefined ? redactor.text(p.text) : JSON.stringify(redactor.value(p.value));
    if (leaks(out, p.material)) misses.push({ provider: p.provider, context: p.context, text: input, out });
    const kept =
      (p.text === undefined || p.whole === true || (out.startsWith(`${p.before}\n`) && out.endsWith(`\n${p.after}`))) &&
      p.keep.every((k) => out.includes(k));
    if (!kept) overRedacted.push({ provider: p.provider, context: p.context, text: input, out });
  }
  const changedNegatives: { text: string; out: string }[] = [];
  for (const n of corpus.negatives) {
    const out = redactor.text(n);
    if (out !== n) changedNegatives.push({ text: n, out });
  }
  const np = corpus.positives.length;
  const nn = corpus.negatives.length;
  return {
    positives: np,
    negatives: nn,
    recall: 1 - misses.length / np,
    negativePrecision: 1 - changedNegatives.length / nn,
    contextPrecision: 1 - overRedacted.length / np,
    misses,
    overRedacted,
    changedNegatives,
  };
}

/** Texts only (for throughput measurements): every positive and negative as one string each. */
export function corpusTexts(corpus: Corpus): string[] {
  return [...corpus.positives.map((p) => p.text ?? JSON.stringify(p.value)), ...corpus.negatives];
}

/** For bench/redact.mjs, which bundles this file: the adversarial inputs it times. */
export { ADVERSARIAL } from "./adversarial.js";
export { b64 };
