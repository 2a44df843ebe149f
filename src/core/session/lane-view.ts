/** The live lanes of a session (core/lanes.ts) as `baton status`, `baton lanes` and the dashboard show them. Pure. */

import { familyOf, liveLanes } from "../lanes.js";
import { type SpiralView, spiralView } from "../spiral/detector.js";
import type { LaneStatus, Snapshot } from "../types.js";

/** A live lane as status shows it. */
export interface LaneView {
  lane: string;
  agent: string;
  host?: string;
  /** `working` while its run lives (its claims hold), `idle` between turns; a subagent's is its parent's. */
  status: LaneStatus;
  run?: string;
  /** When its running run started: its writes since are its claims. */
  since?: string;
  started: string;
  lastAt: string;
  /** The files it claims (wrote in its current run): how many, and the newest 20 (services/agents/lanes.ts). */
  claims: { count: number; files: string[] };
  spiral?: SpiralView;
}

/** The live lanes of a session, as status shows them (claims are filled in by services/agents/lanes.ts). */
export function laneViews(snap: Snapshot, nowMs: number): LaneView[] {
  return liveLanes(snap, nowMs).map((l) => {
    const top = snap.facets.lanes?.[familyOf(l.id)] ?? l;
    const v: LaneView = {
      lane: l.id,
      agent: l.agent,
      status: top.status,
      started: l.started,
      lastAt: l.lastAt,
      claims: { count: 0, files: [] },
    };
    if (l.host !== undefined) v.host = l.host;
    if (top.run !== undefined) v.run = top.run;
    if (top.status === "working" && top.since !== undefined) v.since = top.since;
    if (l.spiral?.paused) v.spiral = spiralView(l.spiral);
    return v;
  });
}
