import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { decide, phaseNextAction } from "../src/core/flows/flow.js";
import { parseFlowFile, validateFlow } from "../src/core/flows/validate.js";
import { emptySnapshot, foldEvent } from "../src/core/session/fold.js";
import type { JournalEvent, Snapshot } from "../src/core/types.js";
import { BUILTIN_FLOWS } from "../src/services/flows.js";

const NOW = new Date("2026-06-01T12:00:00Z");

function run(flowName: string, events: Partial<JournalEvent>[], meta: { deadline?: string } = {}): Snapshot {
  const flow = BUILTIN_FLOWS[flowName]!;
  const snap = emptySnapshot("s", flow, NOW.toISOString(), meta);
  events.forEach((e, i) => {
    foldEvent(flow, snap, {
      sessionId: "s",
      seq: i + 1,
      id: `e${i}`,
      actor: "user",
      data: {},
      at: NOW.toISOString(),
      type: "x",
      ...e,
    } as JournalEvent);
  });
  return snap;
}

describe("built-in flows", () => {
  it.each(Object.keys(BUILTIN_FLOWS))("%s passes its own validation", (name) => {
    expect(validateFlow(BUILTIN_FLOWS[name])).toEqual([]);
  });

  it("task: planned → in_progress → verifying → done", () => {
    const snap = run("task", [{ type: "start" }, { type: "verify" }, { type: "complete" }]);
    expect(snap.phase).toBe("done");
    expect(phaseNextAction(BUILTIN_FLOWS.task!, snap, NOW).action).toBe("none");
  });

  it("external-run: a timeout before the deadline is not terminal and resumes polling; after it, it is", () => {
    const flow = BUILTIN_FLOWS["external-run"]!;
    const before = run("external-run", [{ type: "started" }, { type: "timeout" }], { deadline: "2026-06-01T13:00:00Z" });
    expect(before.phase).toBe("timeout");
    expect(phaseNextAction(flow, before, NOW).action).toBe("resume_polling");
    expect(decide(flow, before, { type: "polling", data: {} }, NOW)).toEqual({ kind: "move", to: "polling" });
    const late = new Date("2026-06-01T14:00:00Z");
    expect(phaseNextAction(flow, before, late).action).toBe("none");
    expect(decide(flow, before, { type: "polling", data: {} }, late).kind).toBe("fenced");
  });

  it("live-variant: partial variants give continue_writing_variants; all written waits for the browser", () => {
    const flow = BUILTIN_FLOWS["live-variant"]!;
    const partial = run("live-variant", [
      { type: "generate" },
      { type: "source_wrapped", data: { file: "a.html" } },
      { type: "variants_written", data: { count: 1, expected: 3 } },
    ]);
    expect(phaseNextAction(flow, partial, NOW)).toMatchObject({ action: "continue_writing_variants" });
    expect(phaseNextAction(flow, partial, NOW).reason).toContain("Only 1 of 3");
    foldEvent(flow, partial, {
      sessionId: "s",
      seq: 4,
      id: "e4",
      type: "variants_written",
      actor: "agent",
      data: { count: 3, expected: 3 },
      at: NOW.toISOString(),
    });
    expect(phaseNextAction(flow, partial, NOW).action).toBe("poll_for_pending_event");
  });

  it("live-variant: accepted with carbonize goes to accepted_source_pending, without it to complete", () => {
    const base: Partial<JournalEvent>[] = [
      { type: "generate" },
      { type: "source_wrapped", data: { file: "a" } },
      { type: "variants_written", data: { count: 2, expected: 2 } },
      { type: "accept", data: { variantId: "v1" } },
    ];
    expect(run("live-variant", [...base, { type: "accepted", data: { carbonize: true } }]).phase).toBe("accepted_source_pending");
    expect(run("live-variant", [...base, { type: "accepted", data: {} }]).phase).toBe("complete");
  });

  it("live-variant: a closed tab asks the user to reopen the browser, but never masks pending real work", () => {
    const flow = BUILTIN_FLOWS["live-variant"]!;
    const cycling = run("live-variant", [
      { type: "generate", actor: "browser" },
      { type: "source_wrapped", data: { file: "a" } },
      { type: "variants_written", data: { count: 2, expected: 2 } },
      { type: "cycling", actor: "browser" },
      { type: "exit", actor: "browser" },
    ]);
    expect(cycling.presence).toBe("absent");
    expect(phaseNextAction(flow, cycling, NOW).action).toBe("ask_user_to_reopen_browser");
    const accepted = run("live-variant", [
      { type: "generate", actor: "browser" },
      { type: "source_wrapped", data: { file: "a" } },
      { type: "variants_written", data: { count: 2, expected: 2 } },
      { type: "accept", actor: "browser", data: { variantId: "v2" } },
      { type: "exit", actor: "browser" },
    ]);
    expect(accepted.phase).toBe("accept_pending");
    expect(phaseNextAction(flow, accepted, NOW).action).toBe("run_accept_cleanup");
  });
});

/** A valid user flow. */
const good = {
  name: "review",
  initial: "open",
  phases: {
    open: {
      on: { approve: { to: "merged" } },
      next: { action: "review_code", reason: "Review it.", command: "baton event {session} approve" },
    },
    merged: { terminal: true, next: { action: "none", reason: "Merged.", command: "" } },
  },
};

describe("flow names", () => {
  it("a name an object inherits (constructor, __proto__, toString) is no flow: unknown_flow, and a user flow may take it", async () => {
    const { FlowRegistry } = await import("../src/services/flows.js");
    const dir = mkdtempSync(join(tmpdir(), "baton-flows-"));
    writeFileSync(join(dir, "constructor.json"), JSON.stringify({ ...good, name: "constructor" }));
    const flows = new FlowRegistry(dir);
    for (const name of ["__proto__", "toString", "valueOf", "hasOwnProperty"])
      await expect(flows.get(name), name).rejects.toMatchObject({ code: "unknown_flow" });
    const reports = await flows.reports();
    expect(reports.find((r) => r.name === "constructor")?.problems ?? ["missing"]).toEqual([]);
    expect((await flows.get("constructor")).initial).toBe(good.initial);
  });
});

describe("user flow validation", () => {
  it("accepts a valid flow", () => {
    const r = parseFlowFile(JSON.stringify(good, null, 2));
    expect(r.problems).toEqual([]);
    expect(r.flow?.name).toBe("review");
  });

  it("names the line and field of each problem", () => {
    const bad = structuredClone(good) as Record<string, any>;
    bad.phases.open.on.approve.to = "mergd";
    bad.phases.open.next.action = "Review Code";
    bad.initial = "nowhere";
    const text = JSON.stringify(bad, null, 2);
    const { flow, problems } = parseFlowFile(text);
    expect(flow).toBeUndefined();
    const byPath = Object.fromEntries(problems.map((p) => [p.path, p]));
    expect(Object.keys(byPath).sort()).toEqual(["initial", "phases.open.next.action", "phases.open.on.approve.to"]);
    const lines = text.split("\n");
    expect(lines[byPath["phases.open.on.approve.to"]!.line! - 1]).toContain('"to": "mergd"');
    expect(lines[byPath.initial!.line! - 1]).toContain('"initial"');
    expect(byPath["phases.open.on.approve.to"]!.message).toContain("open, merged");
  });

  it("reports invalid JSON with its position", () => {
    const { problems } = parseFlowFile('{\n  "name": "x",\n  "phases": {,\n}');
    expect(problems[0]!.message).toMatch(/invalid JSON/);
    expect(problems[0]!.line).toBe(3);
  });

  it("requires a terminal phase, known markers in rules, and no facet-style event names", () => {
    const bad = {
      name: "loop",
      initial: "a",
      phases: { a: { on: { "decision:added": {} }, next: { action: "x", reason: "y", command: "" } } },
      markers: [{ name: "m", pattern: "MARK" }],
      markerRules: [{ present: ["nope"], action: "fix", reason: "r", command: "c" }],
    };
    const paths = validateFlow(bad).map((p) => p.path);
    expect(paths).toEqual(expect.arrayContaining(["phases", "phases.a.on.decision:added", "markerRules[0].present"]));
  });
});
