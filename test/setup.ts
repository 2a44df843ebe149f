// Fail any test that leaves a child process running (crash and concurrency tests spawn them).
import { afterEach } from "vitest";
import { liveChildren } from "./helpers.js";

afterEach(() => {
  const leaked = liveChildren();
  for (const c of leaked) c.kill("SIGKILL");
  if (leaked.length > 0) throw new Error(`test leaked ${leaked.length} child process(es): ${leaked.map((c) => c.pid).join(", ")}`);
});
