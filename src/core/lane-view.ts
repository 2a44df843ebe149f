/** The live lanes of a session (core/lanes.ts) as `baton status`, `baton lanes` and the dashboard show them. Pure. */
import { liveLanes } from "./lanes.js";
import { type SpiralView, spiralView } from "./spiral.js";
import type { LaneStatus, Snapshot } from "./types.js";

/** A live lane as status shows it. */
export interface LaneView {
  lane: string;
  agent: string;
  host?: string;
  /** `working` while its run lives (its claims hold), `idle` between turns. */
  status: LaneStatus;
  run?: string;
  started: string;
  lastAt: string;
  /** The files it claims (wrote in its current run), at most 20, and how many in all. */
  claims: { count: number; files: string[] };
  spiral?: SpiralView;
}

/** The live lanes of a session, as status shows them. */
export function laneViews(snap: Snapshot, nowMs: number): LaneView[] {
  return liveLanes(snap, nowMs).map((l) => {
    const files = Object.keys(l.claims);
    const v: LaneView = {
      lane: l.id,
      agent: l.agent,
      status: l.status,
      started: l.started,
      lastAt: l.lastAt,
      claims: { count: l.status === "working" ? files.length : 0, files: l.status === "working" ? files.slice(-20) : [] },
    };
    if (l.host !== undefined) v.host = l.host;
    if (l.run !== undefined) v.run = l.run;
    if (l.spiral?.paused) v.spiral = spiralView(l.spiral);
    return v;
  });
}
