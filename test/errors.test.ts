import { describe, expect, it } from "vitest";
import { BatonError, EXIT_CODES, FORMER_CODES, isBatonError } from "../src/errors.js";

describe("error codes", () => {
  it("a renamed code keeps its former name for one release: in JSON and when matched", () => {
    const pruned = new BatonError("checkpoint_pruned", "checkpoint cp-1 was pruned", { checkpointId: "cp-1" });
    expect(pruned.toJSON()).toEqual({
      code: "checkpoint_pruned",
      formerCode: "snapshot_expired",
      message: "checkpoint cp-1 was pruned",
      checkpointId: "cp-1",
    });
    expect(isBatonError(pruned, "snapshot_expired")).toBe(true);
    expect(isBatonError(pruned, "checkpoint_pruned")).toBe(true);
    expect(isBatonError(pruned, "no_snapshot")).toBe(false);
    expect(isBatonError(new BatonError("checkpoint_not_found", "no checkpoint"), "no_snapshot")).toBe(true);
  });

  it("codes never renamed carry no former name", () => {
    expect(new BatonError("bad_input", "x").toJSON()).toEqual({ code: "bad_input", message: "x" });
  });

  it("every former code maps to a live code with an exit code, and no former name is still a code", () => {
    for (const [former, code] of Object.entries(FORMER_CODES)) {
      expect(EXIT_CODES[code], code).toBeTypeOf("number");
      expect(Object.hasOwn(EXIT_CODES, former), former).toBe(false);
    }
  });

  it("what happened has its own code: a server of another workspace, a server shutting down, a changed configuration", () => {
    for (const code of ["wrong_workspace", "shutting_down", "config_changed"] as const) {
      expect(EXIT_CODES[code], code).toBeGreaterThan(1);
    }
  });
});
