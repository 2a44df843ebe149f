import { describe, expect, it } from "vitest";
import { redactText, redactValue } from "../src/core/redaction/redact.js";
import { generate, score } from "./redaction/corpus.js";
import { PROVIDERS } from "./redaction/providers.js";

const GOAL = 0.99;

describe("redaction corpus (seeded: providers × contexts, plus ordinary text)", () => {
  const corpus = generate(11);
  const s = score(corpus, { text: redactText, value: (v) => redactValue(v) });
  const show = (xs: { provider?: string; context?: string; text: string; out: string }[]) =>
    xs
      .slice(0, 15)
      .map(
        (m) =>
          `${m.provider ?? ""}/${m.context ?? ""}\n  in:  ${JSON.stringify(m.text).slice(0, 300)}\n  out: ${JSON.stringify(m.out).slice(0, 300)}`,
      )
      .join("\n");

  it("covers the breadth of the public scanners' rule families in many contexts", () => {
    expect(PROVIDERS.length, "provider formats").toBeGreaterThanOrEqual(200);
    expect(new Set(corpus.positives.map((p) => p.context)).size, "contexts").toBeGreaterThanOrEqual(60);
    expect(corpus.positives.length, "placements").toBeGreaterThan(10_000);
  });

  it(`recall ≥ ${GOAL * 100}%: nothing readable is left of a planted secret`, () => {
    expect(
      s.recall,
      `recall ${(s.recall * 100).toFixed(2)}% (${s.misses.length} of ${s.positives} leaked):\n${show(s.misses)}`,
    ).toBeGreaterThanOrEqual(GOAL);
  });

  // The goal is 99%; the corpus is at 100%, and a change that leaks one format in every context
  // (90 placements, 0.4%) would still pass the goal. Every miss is a regression until it is judged.
  it("leaks none of the corpus's placements (recall has been 100%: any miss is a regression)", () => {
    expect(s.misses.length, show(s.misses)).toBe(0);
  });

  it(`precision ≥ ${GOAL * 100}% on ordinary developer text: it comes back unchanged`, () => {
    expect(
      s.negativePrecision,
      `${s.changedNegatives.length} of ${s.negatives} changed:\n${show(s.changedNegatives)}`,
    ).toBeGreaterThanOrEqual(GOAL);
  });

  it(`precision ≥ ${GOAL * 100}% around secrets: names, hosts and neighbouring lines survive`, () => {
    expect(s.contextPrecision, `${s.overRedacted.length} of ${s.positives} over-redacted:\n${show(s.overRedacted)}`).toBeGreaterThanOrEqual(
      GOAL,
    );
  });

  /**
   * Recall counts a secret as leaked when eight of its characters in a row survive; a rule that
   * stops a character short leaves less than that. These once did: an assignment followed by
   * `&& ./run.sh` (the pattern gave its last character back), and a New Relic key ending in `-`
   * (`\b` cannot stand after a dash). The end of a token is its random part (a prefix such as
   * `FlyV1 ` or `xoxe.` is the format's own, not secret), so the check is at the end.
   */
  it("leaves no end of a planted secret beside its placeholder", () => {
    const placeholder = /\[redacted:[a-z0-9-]+\]/g;
    const tails: string[] = [];
    for (const p of corpus.positives) {
      // A structured value as it is stored: its JSON (a planted secret the JSON escapes is skipped).
      const text = p.text ?? JSON.stringify(p.value);
      const at = text.indexOf(p.planted);
      if (p.text !== undefined) expect(at, p.planted).toBeGreaterThanOrEqual(0);
      if (at < 0) continue;
      const after = text.slice(at + p.planted.length, at + p.planted.length + 8);
      const out = p.text !== undefined ? redactText(p.text) : JSON.stringify(redactValue(p.value));
      // After each placeholder: the secret's last one to seven characters, then what followed it.
      for (const m of out.matchAll(placeholder)) {
        const from = m.index + m[0].length;
        for (let k = 1; k < 8 && k < p.planted.length; k++) {
          const tail = p.planted.slice(-k);
          if (out.startsWith(tail + after, from) && (after.length === 8 || from + k + after.length === out.length))
            tails.push(`${p.provider}/${p.context}: ${JSON.stringify(tail)} left in ${JSON.stringify(out).slice(0, 300)}`);
        }
      }
    }
    expect(tails.slice(0, 10)).toEqual([]);
  });

  it("is the same corpus for the same seed, and a different one for another", () => {
    const again = generate(11);
    expect(again.positives.map((p) => p.text)).toEqual(corpus.positives.map((p) => p.text));
    expect(generate(12).positives[0]?.text).not.toBe(corpus.positives[0]?.text);
  });
});
