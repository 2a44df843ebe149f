/**
 * The dashboard's entry: log in from the link's fragment, then route between the views by the
 * URL fragment (`#/sessions`, `#/session/<id>`). Views live in their own files; this holds the
 * frame (title, navigation, connection badge, the login notice).
 */
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { type Connection, follow, keepSession, loginFromFragment, onSignedOut, token } from "./api.js";
import { HealthView } from "./health.js";
import { LessonsView } from "./lessons.js";
import { SessionView } from "./session.js";
import { SessionsView } from "./sessions.js";

type Auth = { kind: "full" } | { kind: "signed_out"; why?: string };

type Route = { view: "sessions" } | { view: "health" } | { view: "lessons" } | { view: "session"; id: string };

function route(): Route {
  const m = /^#\/session\/(.+)$/.exec(location.hash);
  if (m?.[1]) return { view: "session", id: decodeURIComponent(m[1]) };
  if (location.hash === "#/health") return { view: "health" };
  if (location.hash === "#/lessons") return { view: "lessons" };
  return { view: "sessions" };
}

const CONNECTION_TEXT: Record<Connection, string> = { connecting: "connecting", live: "live", reconnecting: "reconnecting…" };
const CONNECTION_CLASS: Record<Connection, string> = { connecting: "warn", live: "ok", reconnecting: "warn" };

function App({ initial }: { initial: Auth }) {
  const [auth, setAuth] = useState<Auth>(initial);
  const [where, setWhere] = useState(route());
  const [conn, setConn] = useState<Connection>("connecting");

  useEffect(() => {
    const onHash = () => setWhere(route());
    addEventListener("hashchange", onHash);
    return () => removeEventListener("hashchange", onHash);
  }, []);

  // Logged in: keep the browser session fresh; when the server refuses it, ask for a login.
  useEffect(() => {
    if (auth.kind !== "full") return;
    const off = onSignedOut(() => setAuth({ kind: "signed_out", why: "The login has ended (it lapsed, or the server has a new token)." }));
    const stop = keepSession();
    return () => {
      off();
      stop();
    };
  }, [auth.kind]);

  // Views without a stream of their own (lessons, health) still hold the workspace stream: the
  // badge shows the connection, and the server started by `baton dashboard` (idle exit 30 min)
  // stays up while any dashboard tab is open, and only then.
  const streamless = where.view === "health" || where.view === "lessons";
  useEffect(() => {
    if (!streamless || auth.kind !== "full") return;
    return follow("/v1/dashboard/stream", { onOpen: () => undefined, onMessage: () => undefined, onState: setConn });
  }, [streamless, auth.kind]);

  if (auth.kind === "signed_out") {
    return (
      <main>
        <h1>Baton dashboard</h1>
        <div class="message error" role="alert">
          {auth.why ? `${auth.why} ` : "This browser is not logged in. "}
          Run <code>baton dashboard</code> in the project and open the link it prints.
        </div>
      </main>
    );
  }

  return (
    <>
      <header class="top">
        <h1>Baton</h1>
        <nav aria-label="Views">
          <a href="#/sessions" aria-current={where.view === "sessions" ? "page" : undefined}>
            Sessions
          </a>
          <a href="#/lessons" aria-current={where.view === "lessons" ? "page" : undefined}>
            Lessons
          </a>
          <a href="#/health" aria-current={where.view === "health" ? "page" : undefined}>
            Health
          </a>
          {where.view === "session" && (
            <a href={`#/session/${encodeURIComponent(where.id)}`} aria-current="page" title={`Session ${where.id}`}>
              Session {where.id}
            </a>
          )}
        </nav>
        <span class={`badge ${CONNECTION_CLASS[conn]}`} role="status" aria-live="polite" data-connection={conn}>
          {CONNECTION_TEXT[conn]}
        </span>
      </header>
      <main>
        {where.view === "sessions" ? (
          <SessionsView onConnection={setConn} />
        ) : where.view === "health" ? (
          <HealthView />
        ) : where.view === "lessons" ? (
          <LessonsView />
        ) : (
          <SessionView key={where.id} sessionId={where.id} onConnection={setConn} />
        )}
      </main>
    </>
  );
}

async function start() {
  const root = document.getElementById("app");
  if (!root) return;
  const login = await loginFromFragment();
  let initial: Auth = token() ? { kind: "full" } : { kind: "signed_out" };
  if (typeof login === "object") initial = { kind: "signed_out", why: `The login failed: ${login.error}.` };
  root.textContent = "";
  render(<App initial={initial} />, root);
}

void start();
