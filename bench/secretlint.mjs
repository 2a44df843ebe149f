/**
 * secretlint (its recommended preset) as the peer of bench/redact.mjs: `lintSource` on one text,
 * the number of findings as the answer. Shared by the benchmark's own process and each
 * secretlint side of bench/redact-side.mjs, so both measure the same call.
 *
 * secretlint's profiler (@secretlint/profiler) marks every lint and rule in the global
 * performance timeline, and a PerformanceObserver of its own collects the marks. Both are
 * handled here so the benchmark does not handicap secretlint with costs a real caller would
 * not pay:
 * - the marks are cleared after each call: thousands of texts would fill the global buffer and
 *   slow every later call (the marks themselves are made, as in any use of secretlint);
 * - the observer is not installed: Node hands it its entries from a macrotask, which a loop of
 *   calls that only await promises never yields to, so it held every mark of every pass (the
 *   heap grew by ~30 MB a pass and each collection had more to mark). With the observer absent
 *   the profiler takes its own fallback, a no-op observer (what it uses where none exists).
 */
import perfHooks from "node:perf_hooks";

export async function loadSecretlint() {
  const Observer = perfHooks.PerformanceObserver;
  perfHooks.PerformanceObserver = undefined; // read once, when @secretlint/profiler loads
  let core;
  try {
    core = await import("@secretlint/core");
  } finally {
    perfHooks.PerformanceObserver = Observer;
  }
  const { creator } = await import("@secretlint/secretlint-rule-preset-recommend");
  const config = { rules: [{ id: "@secretlint/secretlint-rule-preset-recommend", rule: creator }] };
  return async (content) => {
    const r = await core.lintSource({ source: { filePath: "/corpus.txt", content, contentType: "text" }, options: { config } });
    performance.clearMarks();
    performance.clearMeasures();
    return r.messages.length;
  };
}
