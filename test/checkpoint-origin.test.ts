/**
 * Which checkpoints are another host's (services/time-travel/checkpoint-origin.ts): on a shared store, one
 * that names no host is (Baton always records it, so something else wrote the row: "undo that"
 * must not restore it without --other-host); on a store inside the workspace, none is.
 */
import { describe, expect, it } from "vitest";
import type { CheckpointInfo } from "../src/core/time-travel/checkpoints.js";
import { otherMachine } from "../src/services/time-travel/checkpoint-origin.js";

const here = (shared: boolean) => ({
  root: "/src/app",
  sharedAcrossHosts: shared,
  host: () => "laptop",
  machine: () => "m-1",
  blobs: { files: new Set<string>() },
});
const cp = (over: Partial<CheckpointInfo>) => ({ id: "cp-1", ...over }) as CheckpointInfo;

describe("another host's checkpoint", () => {
  it("on a shared store: one without a host is another's; this host's name or machine is ours", () => {
    expect(otherMachine(here(true), cp({ host: undefined }))).toBe(true);
    expect(otherMachine(here(true), cp({ host: null as unknown as string }))).toBe(true);
    expect(otherMachine(here(true), cp({ host: "ci-7", machine: "m-2" }))).toBe(true);
    expect(otherMachine(here(true), cp({ host: "laptop" }))).toBe(false);
    expect(otherMachine(here(true), cp({ host: "laptop-renamed", machine: "m-1" }))).toBe(false);
  });

  it("on a store inside the workspace: every checkpoint is this machine's", () => {
    for (const host of [undefined, "ci-7", "laptop"]) expect(otherMachine(here(false), cp({ host }))).toBe(false);
  });
});
