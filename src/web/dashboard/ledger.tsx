/**
 * A session's trajectory ledger: a chart over time (uPlot: one lane per tool, each call a point
 * coloured by its status, a line from each recovered call back to the failure it recovered
 * from) and the table below it (failure fingerprints, errors and arguments as the store holds
 * them: redacted before they were stored).
 */
import { useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import uplotCss from "uplot/dist/uPlot.min.css";
import type { LedgerNode, LedgerStatus } from "../../core/ledger/nodes.js";
import { get } from "./api.js";
import { useNewest } from "./parts.js";

const COLOURS: Record<LedgerStatus, string> = {
  success: "#1f7a3d",
  recovered: "#2f6fdb",
  error: "#b42318",
  no_progress: "#b25e09",
  aborted: "#6b7280",
};
const ORDER: LedgerStatus[] = ["success", "recovered", "error", "no_progress", "aborted"];

let styled = false;
function injectCss() {
  if (styled) return;
  styled = true;
  const el = document.createElement("style");
  el.textContent = uplotCss;
  document.head.append(el);
}

/** Tick steps of the time axis, in seconds: whole seconds at the least (calls are timed to the second in the table). */
const TIME_INCRS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1_800, 3_600, 7_200, 10_800, 21_600, 43_200, 86_400, 172_800, 604_800];

/**
 * The time axis's labels, in UTC as the table's times are: "12:32:07", or with the day
 * ("11-29 12:32") once the chart spans more than a day. uPlot's own labels show the fraction
 * of a second (":49.000") for calls a few seconds apart.
 */
export function timeTicks(splits: readonly number[]): string[] {
  const span = splits.length > 1 ? (splits.at(-1) as number) - (splits[0] as number) : 0;
  return splits.map((v) => {
    const iso = new Date(v * 1000).toISOString();
    return span > 86_400 ? `${iso.slice(5, 10)} ${iso.slice(11, 16)}` : iso.slice(11, 19);
  });
}

/** The chart's data: x = time (s), one series per status with the call's tool lane (or null). */
export function chartData(nodes: readonly LedgerNode[]): { tools: string[]; data: uPlot.AlignedData } {
  const tools = [...new Set(nodes.map((n) => n.toolName))].sort();
  const lane = new Map(tools.map((t, i) => [t, i]));
  const xs = nodes.map((n) => Date.parse(n.at) / 1000);
  const series = ORDER.map((st) => nodes.map((n) => (n.status === st ? (lane.get(n.toolName) ?? 0) : null)));
  return { tools, data: [xs, ...series] as uPlot.AlignedData };
}

function Chart({ nodes }: { nodes: LedgerNode[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el || nodes.length === 0) return;
    injectCss();
    const { tools, data } = chartData(nodes);
    const byId = new Map(nodes.map((n, i) => [n.nodeId, i]));
    const lane = (i: number) => tools.indexOf((nodes[i] as LedgerNode).toolName);
    const plot = new uPlot(
      {
        width: Math.max(el.clientWidth, 200),
        height: Math.max(120, 40 * tools.length + 80),
        scales: {
          // Padded so calls at either end are not cut in half by the plot's edge.
          x: { time: true, range: (_u, min, max) => [min - Math.max((max - min) * 0.04, 1), max + Math.max((max - min) * 0.04, 1)] },
          y: { range: [-0.5, tools.length - 0.5] },
        },
        // The legend names the statuses; live (the values under the cursor) it would read "--"
        // until hovered, and a call's value is only its tool's lane.
        legend: { live: false },
        axes: [
          {
            space: 80,
            incrs: TIME_INCRS,
            values: (_u, splits) => {
              const ticks = timeTicks(splits);
              // The labels as drawn (the canvas holds no text): for reading and for tests.
              el.dataset.timeTicks = JSON.stringify(ticks);
              return ticks;
            },
          },
          { values: (_u, splits) => splits.map((v) => (Number.isInteger(v) ? (tools[v] ?? "") : "")), size: 110, incrs: [1] },
        ],
        series: [
          {},
          ...ORDER.map((st) => ({
            label: st,
            stroke: COLOURS[st],
            fill: COLOURS[st],
            paths: () => null,
            points: { show: true, size: 9, fill: COLOURS[st] },
          })),
        ],
        hooks: {
          // A recovered call is linked to the failure it recovered from.
          draw: [
            (u: uPlot) => {
              const ctx = u.ctx;
              ctx.save();
              ctx.strokeStyle = COLOURS.recovered;
              ctx.setLineDash([4, 3]);
              ctx.lineWidth = 1.5 * devicePixelRatio;
              nodes.forEach((n, i) => {
                const from = n.recovers === undefined ? undefined : byId.get(n.recovers);
                if (from === undefined) return;
                ctx.beginPath();
                ctx.moveTo(u.valToPos(data[0][from] as number, "x", true), u.valToPos(lane(from), "y", true));
                ctx.lineTo(u.valToPos(data[0][i] as number, "x", true), u.valToPos(lane(i), "y", true));
                ctx.stroke();
              });
              ctx.restore();
            },
          ],
        },
      },
      data,
      el,
    );
    // As wide as its card, also after the window is resized or the phone turned.
    const resized = new ResizeObserver(() => {
      const width = Math.max(el.clientWidth, 200);
      if (width !== plot.width) plot.setSize({ width, height: plot.height });
    });
    resized.observe(el);
    return () => {
      resized.disconnect();
      plot.destroy();
    };
  }, [nodes]);
  return <div ref={box} class="ledger-chart" role="img" aria-label={`Chart of ${nodes.length} tool calls over time, by tool and status`} />;
}

export function LedgerPanel({ sessionId, version }: { sessionId: string; version: string | undefined }) {
  const [nodes, setNodes] = useState<LedgerNode[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  // `version` (the newest node, from the session's stream) changes when a node is written, journaled or not.
  const newest = useNewest();
  useEffect(() => {
    newest(() => get<{ nodes: LedgerNode[] }>(`/v1/sessions/${encodeURIComponent(sessionId)}/ledger`)).then(
      (r) => {
        if (!r) return;
        setNodes((old) => (old && old.length === r.nodes.length && old.at(-1)?.nodeId === r.nodes.at(-1)?.nodeId ? old : r.nodes));
        setError(undefined);
      },
      (err) => setError((err as Error).message),
    );
  }, [sessionId, version, newest]);
  const seqOf = new Map((nodes ?? []).map((n) => [n.nodeId, n.seq]));
  return (
    <div class="card">
      <h2>Ledger</h2>
      {error && (
        <div class="message error" role="alert">
          {error}
        </div>
      )}
      {!nodes ? (
        <p class="muted">loading…</p>
      ) : nodes.length === 0 ? (
        <p class="muted">No tool calls recorded.</p>
      ) : (
        <>
          <Chart nodes={nodes} />
          <table class="cards" aria-label="Ledger">
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">Time</th>
                <th scope="col">Tool</th>
                <th scope="col">Status</th>
                <th scope="col">Failure · recovery</th>
                <th scope="col">Arguments · error (redacted)</th>
              </tr>
            </thead>
            <tbody>
              {nodes.map((n) => (
                <tr key={n.nodeId} data-node={n.seq}>
                  <td class="inline">{n.seq}</td>
                  <td class="inline">
                    <time dateTime={n.at}>{n.at.slice(11, 19)}</time>
                    {n.durationMs !== undefined && <div class="muted">{n.durationMs} ms</div>}
                  </td>
                  <td class="inline">{n.toolName}</td>
                  <td class="inline">
                    <span class="badge" style={{ background: COLOURS[n.status], color: "#fff" }}>
                      {n.status}
                    </span>
                    {n.progress && <div class="muted">{n.progress}</div>}
                  </td>
                  <td class={`mono data${n.fingerprint || n.recovers ? "" : " empty"}`} data-label="Failure · recovery">
                    {n.fingerprint}
                    {n.recovers && (
                      <div>
                        recovers #{seqOf.get(n.recovers) ?? "?"}
                        {n.recoveryTool && <span class="muted"> via {n.recoveryTool}</span>}
                      </div>
                    )}
                  </td>
                  <td class={`mono data${n.args !== undefined || n.error ? "" : " empty"}`} data-label="Arguments · error">
                    {n.args !== undefined && <div>{JSON.stringify(n.args)}</div>}
                    {n.error && <div class="muted">{n.error}</div>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </div>
  );
}
