/**
 * Lanes across hosts on one PostgreSQL project (core/lanes.ts): two workspaces of one project,
 * each its own host. Claude Code on A starts the task and ends; Codex on B is handed it and
 * finishes it; while both work, a claim made on one host is told to the other. Played with the
 * real agents' payload shapes (test/lane-agents.ts). Skipped without PostgreSQL binaries unless
 * BATON_TEST_POSTGRES=require (CI sets it).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { PostgresBackend } from "../src/backend/postgres/pg-backend.js";
import { openBaton } from "../src/compose.js";
import type { Baton } from "../src/index.js";
import type { ProcessFacts } from "../src/platform/process-facts.js";
import { tempDir } from "./helpers.js";
import { agentSession } from "./lane-agents.js";
import { type PgCluster, pgAvailable } from "./pg-cluster.js";
import { clusterForSuite } from "./pg-suite.js";

let n = 0;

describe.skipIf(!pgAvailable())("lanes across hosts on PostgreSQL", () => {
  const open: Baton[] = [];
  const clusterOf = clusterForSuite(open);
  let cluster: PgCluster;
  beforeAll(() => {
    cluster = clusterOf();
  });

  async function host(name: string, project: string): Promise<{ b: Baton; root: string }> {
    const facts: ProcessFacts = { host: () => name, machine: () => undefined, alive: () => true, startTime: () => "1" };
    const root = tempDir(`lanes-${name}-`);
    const b = await openBaton({ root, backend: await PostgresBackend.open({ url: cluster.url, project }), processFacts: facts });
    open.push(b);
    return { b, root };
  }

  it("Claude Code on host A starts the task and ends; Codex on host B is handed it and finishes it", async () => {
    const project = `lanes${++n}`;
    const A = await host("laptop", project);
    const B = await host("ci-box", project);
    const claude = agentSession(A.b, A.root, "claude", "4f1c0a1b-aaaa");
    await claude.start();
    const sid = (await A.b.sessions.list())[0]?.id as string;
    await A.b.facets.addDecision(sid, { decision: "Use PKCE", reason: "public client" });
    await claude.write("src/login.ts", "export const login = 1;\n");
    await claude.stop();
    await claude.end();

    const codex = agentSession(B.b, B.root, "codex", "0199b2c3-d4e5-7f00-8000-00000000000b");
    const ctx = (await codex.start()).context ?? "";
    expect(
      (await B.b.sessions.list()).map((s) => s.id),
      "host B joins the task, not a new session",
    ).toEqual([sid]);
    expect(ctx).toContain("Use PKCE");
    const lanes = (await B.b.sessions.snapshot(sid)).facets.lanes ?? {};
    expect(lanes[claude.lane]).toMatchObject({ status: "ended", host: "laptop" });
    expect(lanes[codex.lane]).toMatchObject({ status: "working", host: "ci-box" });
    await codex.write("src/login.ts", "export const login = 2;\n");
    await B.b.events.append(sid, { type: "complete", actor: "agent" });
    expect((await A.b.sessions.status({ sessionId: sid })).sessions[0]?.status).toBe("completed");
    expect(readFileSync(join(B.root, "src/login.ts"), "utf8")).toBe("export const login = 2;\n");
  });

  it("a claim made on one host is told to an agent on the other, naming the host; the retry goes through", async () => {
    const project = `lanes${++n}`;
    const A = await host("laptop", project);
    const B = await host("ci-box", project);
    const claude = agentSession(A.b, A.root, "claude", "4f1c0a1b-bbbb");
    const codex = agentSession(B.b, B.root, "codex", "0199b2c3-d4e5-7f00-8000-00000000000c");
    await claude.start();
    await codex.start();
    await claude.write("src/shared.ts", "a\n");
    const first = await codex.write("src/shared.ts", "b\n");
    expect(first.denied).toContain(`Claude Code (lane ${claude.lane}, host laptop)`);
    expect((await codex.write("src/shared.ts", "b\n")).denied).toBeUndefined();
    const sid = (await B.b.sessions.list())[0]?.id as string;
    const st = (await A.b.sessions.status({ sessionId: sid })).sessions[0];
    expect(st?.lanes?.map((l) => [l.lane, l.host, l.claims.files]).sort()).toEqual(
      [
        [claude.lane, "laptop", ["src/shared.ts"]],
        [codex.lane, "ci-box", ["src/shared.ts"]],
      ].sort(),
    );
    expect(st?.suggestions.map((s) => s.action)).toContain("review_shared_file");
  });
});
