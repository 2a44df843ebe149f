/**
 * The demo page's script (bundled to dist/web/demo.js): a live-variant session driven from the
 * browser through `agent-baton/browser`. Generate, cycle variants, tune parameters (each change is a
 * checkpoint), Accept or Discard; the badges show the connection and what is still pending
 * confirmation, so a server that is down is visible rather than silent.
 */
import { BatonClientError, type BatonConnection, type ClientState, connect } from "../browser/index.js";
import type { JournalEvent, JsonObject } from "../core/types.js";
import { keepSession, loginFromFragment, onSignedOut, post, token } from "./dashboard/api.js";

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const FENCED = new Set(["accept_pending", "discard_pending", "accepted_source_pending", "complete"]);

const view = {
  variantIndex: 0,
  count: 3,
  hue: 210,
  density: 2,
  phase: "",
};

function message(text: string, kind: "info" | "error" = "info"): void {
  const m = $("message");
  m.textContent = text;
  m.dataset.kind = kind;
}

function variantId(): string {
  return `v${view.variantIndex + 1}`;
}

function params(): JsonObject {
  return { hue: view.hue, density: view.density };
}

function render(): void {
  $("variant").textContent = variantId();
  const preview = $("preview");
  preview.style.setProperty("--hue", String(view.hue));
  preview.dataset.density = String(view.density);
  ($("hue") as HTMLInputElement).value = String(view.hue);
  ($("density") as HTMLInputElement).value = String(view.density);
  $("hue-value").textContent = String(view.hue);
  $("density-value").textContent = String(view.density);
  $("phase").textContent = view.phase || "…";
  const fenced = FENCED.has(view.phase);
  for (const id of ["accept", "discard", "generate", "prev", "next-variant", "hue", "density"]) {
    ($(id) as HTMLButtonElement).disabled = fenced;
  }
}

function renderState(s: Readonly<ClientState>): void {
  const conn = $("conn");
  conn.dataset.state = s.connection;
  conn.textContent = s.connection === "reconnecting" ? "reconnecting…" : s.connection;
  const pending = $("pending");
  pending.dataset.count = String(s.pending);
  pending.textContent = `${s.pending} pending confirmation`;
  if (s.phase && s.phase !== view.phase) {
    view.phase = s.phase;
    render();
  }
}

/** Adopt what the journal says (on load, and for every streamed event). */
function adopt(context: JsonObject): void {
  if (typeof context.variantId === "string") {
    const n = Number(context.variantId.replace(/^v/, ""));
    if (Number.isInteger(n) && n >= 1) view.variantIndex = n - 1;
  }
  const count = typeof context.count === "number" ? context.count : context.expected;
  if (typeof count === "number" && count >= 1) view.count = count;
  const pv = context.paramValues;
  if (pv && typeof pv === "object" && !Array.isArray(pv)) {
    if (typeof pv.hue === "number") view.hue = pv.hue;
    if (typeof pv.density === "number") view.density = pv.density;
  }
  render();
}

function log(e: JournalEvent): void {
  const li = document.createElement("li");
  li.value = e.seq;
  li.textContent = `${e.type} · ${e.actor} ${Object.keys(e.data).length ? JSON.stringify(e.data) : ""}`;
  $("log").prepend(li);
}

/** The session in the address, or a new live-variant session (a refused login is forgotten). */
async function sessionFromUrl(): Promise<string> {
  const q = new URLSearchParams(location.search).get("session");
  if (q) return q;
  const { sessionId } = await post<{ sessionId: string }>("/v1/sessions", {
    flow: "live-variant",
    title: "Live variants demo",
    actor: "browser",
  });
  history.replaceState(null, "", `?session=${encodeURIComponent(sessionId)}`);
  return sessionId;
}

async function send(conn: BatonConnection, what: string, p: Promise<unknown>): Promise<void> {
  message(`${what}: waiting for the server to confirm…`);
  try {
    await p;
    message(`${what}: recorded.`);
  } catch (err) {
    message(`${what} refused: ${err instanceof BatonClientError ? err.message : String(err)}`, "error");
    await refresh(conn).catch(() => undefined);
  }
}

/** Read the session from the server: phase and next action always; the context on load. */
async function refresh(conn: BatonConnection, adoptContext = false): Promise<void> {
  const info = await conn.session();
  view.phase = info.snapshot.phase;
  if (adoptContext) adopt(info.snapshot.context);
  else render();
  $("next").textContent = info.status?.nextAction.action ?? "…";
}

/**
 * Log in: `baton serve` (or `baton dashboard --demo`) prints `/#login=<code>`, which this page
 * trades, once, for a browser session as the dashboard does (dashboard/api.ts: kept in this
 * origin's localStorage, renewed while open, never the server's token). A page already logged
 * in (here or on the dashboard of the same server) needs no code.
 */
async function login(): Promise<string | undefined> {
  const result = await loginFromFragment();
  if (typeof result === "object") {
    message(`The login was refused: ${result.error}.`, "error");
    return undefined;
  }
  const session = token();
  if (!session) message("Not logged in: open the link `baton serve` printed, or run `baton dashboard --demo` for a new one.", "error");
  return session;
}

async function main(): Promise<void> {
  const session = await login();
  if (!session) return;
  keepSession();
  onSignedOut(() => message("The login ended: run `baton dashboard --demo` for a new link.", "error"));
  const sessionId = await sessionFromUrl();
  $("session").textContent = sessionId;
  const conn = connect({ token: () => token(), sessionId });
  (globalThis as { batonDemo?: BatonConnection }).batonDemo = conn;
  conn.onState(renderState);
  conn.subscribe((e) => {
    log(e);
    // Another actor's data (the agent's variant count); our own edits are already on screen.
    if (e.actor !== "browser") adopt(e.data);
    void refresh(conn).catch(() => undefined);
  });
  // Restore from the server (the journal is the truth); pending local events are re-sent by the client.
  for (let delay = 250; ; delay = Math.min(delay * 2, 4_000)) {
    try {
      await refresh(conn, true);
      break;
    } catch {
      message("The server is not answering; retrying…", "error");
      await new Promise((r) => setTimeout(r, delay));
    }
  }
  const pending = conn.pendingEvents();
  // What the user did before the reload and the server has not confirmed yet wins on screen.
  for (const p of pending) if (p.type === "checkpoint" || p.type === "accept") adopt(p.data);
  if (pending.length)
    message(`${pending.length} event(s) from before the reload are being re-sent: ${pending.map((p) => p.type).join(", ")}`);
  else message("");
  document.body.dataset.ready = "true";

  // Slider drags are debounced into one checkpoint; one still waiting is written to the outbox
  // when the page goes away, so a reload right after a change keeps it.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flushCheckpoint = () => {
    clearTimeout(timer);
    timer = undefined;
    delete document.body.dataset.dirty;
    void send(conn, "Checkpoint", conn.checkpoint({ variantId: variantId(), paramValues: params() }));
  };
  const checkpoint = () => {
    clearTimeout(timer);
    document.body.dataset.dirty = "true";
    timer = setTimeout(flushCheckpoint, 120);
  };
  addEventListener("pagehide", () => {
    if (timer !== undefined) flushCheckpoint();
  });
  const cycle = (step: number) => {
    view.variantIndex = (view.variantIndex + step + view.count) % view.count;
    render();
    if (view.phase === "variants_written") void send(conn, "Cycling", conn.send("cycling", { variantId: variantId() }));
    checkpoint();
  };
  $("generate").onclick = () =>
    void send(conn, "Generate", conn.send("generate", { prompt: ($("prompt") as HTMLInputElement).value, expected: view.count }));
  $("prev").onclick = () => cycle(-1);
  $("next-variant").onclick = () => cycle(1);
  for (const id of ["hue", "density"] as const) {
    $(id).oninput = () => {
      view[id] = Number(($(id) as HTMLInputElement).value);
      render();
      checkpoint();
    };
  }
  $("accept").onclick = () => {
    if (timer !== undefined) flushCheckpoint();
    void send(conn, "Accept", conn.send("accept", { variantId: variantId(), paramValues: params() }));
  };
  $("discard").onclick = () => {
    if (timer !== undefined) flushCheckpoint();
    void send(conn, "Discard", conn.send("discard", {}));
  };
}

void main().catch((err) => message(`The demo could not start: ${(err as Error).message}`, "error"));
