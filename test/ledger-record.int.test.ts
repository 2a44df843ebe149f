/** `record()` returns nothing and never throws; the node is stored once queued writes are flushed. */
import { afterAll, expect, it } from "vitest";
import { cleanupDirs, tempBaton } from "./helpers.js";

afterAll(() => cleanupDirs());

it("record() returns nothing, and the redacted node is stored once flushed", async () => {
  const { baton } = await tempBaton();
  try {
    await baton.startSession({ flow: "task", id: "t" });
    const out = baton.record("t", {
      toolName: "Bash",
      args: { command: "curl -H 'Authorization: Bearer abc123secretvalue' x" },
      status: "error",
      error: "exit 7",
    });
    expect(out).toBeUndefined();
    expect(() => baton.record("no-such-session", { toolName: "Read", status: "success" })).not.toThrow();
    await baton.flush();
    const nodes = await baton.ledger("t");
    expect(nodes).toHaveLength(1);
    expect(nodes[0]).toMatchObject({ toolName: "Bash", status: "error" });
    expect(JSON.stringify(nodes[0])).not.toContain("abc123secretvalue");
    expect(baton.ledgerHealth().writeFailures).toBe(1); // the unknown session, counted, not thrown
  } finally {
    await baton.close();
  }
});
