// Draws the README's picture of the dashboard (docs/images/dashboard-sessions.png): a workspace
// seeded with the sessions a supervisor sees on a busy day (a task in progress with two agents
// and a blocker, a live variant whose work is leased, a spiral pause found from real turns, a
// completed task), served by the real `baton serve`, logged into with a one-time code and shot
// in Chromium at 1280×720. Before shooting it checks what the picture once got wrong: the page
// wider than the window, a phase broken mid-word ("generati ng"), an empty "(turns )".
//
//   npm run build && node scripts/dashboard-screenshot.mjs [--out <png>]
//
// Needs Debian's Chromium at /usr/bin/chromium (or CHROMIUM=<path>) and the dev dependencies.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const outAt = args.indexOf("--out");
const out = outAt >= 0 && args[outAt + 1] ? resolve(args[outAt + 1]) : join(REPO, "docs/images/dashboard-sessions.png");
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";

const { openBaton } = await import(join(REPO, "dist/index.js"));

/** Write `text` at `rel` under `root`, making its directories. */
function write(root, rel, text) {
  mkdirSync(dirname(join(root, rel)), { recursive: true });
  writeFileSync(join(root, rel), text);
}

async function seed(root) {
  write(root, "src/api/routes.ts", "export const routes = [];\n");
  write(root, "src/signup.ts", "export function signup() {}\n");
  const lib = await openBaton({ root });
  try {
    await lib.sessions.start({ flow: "task", id: "api-refactor", title: "Refactor the API layer" });
    await lib.events.append("api-refactor", { type: "start", actor: "agent" });
    await lib.facets.addBlocker("api-refactor", { text: "waiting for the schema review" });
    await lib.runs.start("api-refactor", { agent: "Claude Code", runId: "r-claude", lane: "claude:4f1c" });
    await lib.runs.start("api-refactor", { agent: "Codex", runId: "r-codex", lane: "codex:0199" });
    await lib.turns.record("api-refactor", {
      tool: "Write",
      files: [{ path: "src/api/routes.ts", hash: "a".repeat(64) }],
      lane: "claude:4f1c",
    });

    await lib.sessions.start({ flow: "live-variant", id: "hero", title: "Hero section variants" });
    await lib.events.append("hero", { type: "generate", actor: "browser", data: { prompt: "bolder" } });
    await lib.work.lease("agent-7", { sessionId: "hero", leaseMs: 3_600_000 });

    // A spiral found the way the hooks find one: the same failing edit, turn after turn.
    await lib.sessions.start({ flow: "task", id: "looping", title: "Fix the signup validation" });
    await lib.events.append("looping", { type: "start", actor: "agent" });
    const cp = (await lib.checkpoints.create("looping", { files: ["src/signup.ts"], toolName: "Edit" })).checkpoint.id;
    for (let i = 0; i < 10; i++) {
      const r = await lib.turns.record("looping", {
        tool: "Edit",
        argsHash: "a1b2c3d4e5f6a7b8",
        status: "error",
        fingerprint: "TypeError@src/signup.ts:12",
        files: ["src/signup.ts"],
        checkpointId: cp,
      });
      if (r.detected) break;
    }

    await lib.sessions.start({ flow: "task", id: "invoice-emails", title: "Ship the invoice e-mails" });
    await lib.events.append("invoice-emails", { type: "start", actor: "agent" });
    await lib.sessions.complete("invoice-emails");
  } finally {
    await lib.close();
  }
}

/** `baton serve --json` on `root`: resolves with its ready line once printed. */
function serve(root) {
  const child = spawn(process.execPath, [join(REPO, "bin/baton.cjs"), "serve", "--json", "--root", root], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const ready = new Promise((resolveReady, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once("line", (line) => resolveReady(JSON.parse(line)));
    child.once("exit", (code) => reject(new Error(`baton serve exited ${code} before it was ready`)));
  });
  return { child, ready };
}

const root = mkdtempSync(join(tmpdir(), "baton-screenshot-"));
let server;
let browser;
try {
  await seed(root);
  server = serve(root);
  const ready = await server.ready;
  if (ready.error) throw new Error(`baton serve failed: ${JSON.stringify(ready.error)}`);
  const { token } = JSON.parse(readFileSync(ready.serverFile, "utf8"));
  const res = await fetch(`${ready.url}/v1/dashboard/login-codes`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ page: "dashboard" }),
  });
  if (res.status !== 201) throw new Error(`login-codes answered ${res.status}: ${await res.text()}`);
  const { path } = await res.json();

  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu"] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  await page.goto(`${ready.url}${path}`);
  await page.locator('tr[data-session="invoice-emails"]').waitFor();
  await page.locator('tr[data-session="api-refactor"] [data-lane="codex:0199"]').waitFor();
  await page.locator('[data-connection="live"]').waitFor();

  const problems = await page.evaluate(() => {
    const found = [];
    if (document.scrollingElement.scrollWidth > innerWidth) found.push(`the page is ${document.scrollingElement.scrollWidth} px wide`);
    for (const el of document.querySelectorAll("code.phase, .badge"))
      if (el.getClientRects().length > 1) found.push(`"${el.textContent}" is broken across lines`);
    if (document.body.innerText.includes("(turns )")) found.push('a reason reads "(turns )"');
    return found;
  });
  if (problems.length > 0) throw new Error(`the picture would show: ${problems.join("; ")}`);
  mkdirSync(dirname(out), { recursive: true });
  await page.screenshot({ path: out });
  console.log(`wrote ${out}`);
} finally {
  await browser?.close();
  if (server && server.child.exitCode === null) {
    const exited = new Promise((r) => server.child.once("exit", r));
    server.child.kill("SIGTERM");
    await exited;
  }
  rmSync(root, { recursive: true, force: true });
}
