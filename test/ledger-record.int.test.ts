/**
 * `ledger.record()` never throws and never rejects: the input is redacted and queued before it
 * returns, and its promise resolves with the stored node (or undefined, counted, when it cannot
 * be written). A caller that does not wait still has the node once queued writes are flushed.
 */
import { afterAll, expect, it } from "vitest";
import { cleanupDirs, tempBaton } from "./helpers.js";

afterAll(() => cleanupDirs());

it("ledger.record() never throws or rejects; the redacted node is stored once flushed", async () => {
  const { baton } = await tempBaton();
  try {
    await baton.sessions.start({ flow: "task", id: "t" });
    const pending = baton.ledger.record("t", {
      toolName: "Bash",
      args: { command: "curl -H 'Authorization: Bearer abc123secretvalue' x" },
      status: "error",
      error: "exit 7",
    });
    let lost: Promise<unknown> | undefined;
    expect(() => {
      lost = baton.ledger.record("no-such-session", { toolName: "Read", status: "success" });
    }).not.toThrow();
    await baton.flush();
    const nodes = await baton.ledger.list("t");
    expect(nodes).toHaveLength(1);
    expect(nodes[0]).toMatchObject({ toolName: "Bash", status: "error" });
    expect(JSON.stringify(nodes[0])).not.toContain("abc123secretvalue");
    expect((await pending)?.nodeId).toBe(nodes[0]?.nodeId);
    await expect(lost).resolves.toBeUndefined(); // the unknown session: counted, not thrown
    expect(baton.ledger.health().writeFailures).toBe(1);
  } finally {
    await baton.close();
  }
});
