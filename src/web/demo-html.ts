/**
 * The live-variant demo page served by `baton serve` at `/` and `/demo`. Static: a one-time
 * login code arrives in the URL fragment (`#login=...`, never sent to a server or written to a
 * log; the page takes it out of the address at once and trades it for a browser session, as
 * the dashboard does; the server's token never reaches the page) and the session in the query
 * (`?session=<id>`; without one the page starts a live-variant session). Its script is
 * dist/web/demo.js (src/web/demo.ts), which uses `agent-baton/browser`.
 */
export const DEMO_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Baton · live variants</title>
<style>
  :root { font-family: system-ui, sans-serif; color: #1d232a; background: #f6f7f9; }
  body { max-width: 760px; margin: 2rem auto; padding: 0 1rem; }
  header { display: flex; align-items: center; gap: .75rem; flex-wrap: wrap; }
  h1 { font-size: 1.3rem; margin: 0; flex: 1; }
  .badge { padding: .2rem .6rem; border-radius: 1rem; font-size: .85rem; background: #dde3ea; }
  .badge[data-state="connected"] { background: #cdebd6; color: #14532d; }
  .badge[data-state="reconnecting"], .badge[data-state="connecting"] { background: #fde9c4; color: #7c4a03; }
  .badge[data-state="unauthorized"], .badge[data-state="closed"] { background: #f8d0d0; color: #7f1d1d; }
  #pending[data-count="0"] { display: none; }
  #pending { background: #e4dcfb; color: #3b1d8f; }
  .card { background: #fff; border-radius: .6rem; padding: 1rem; margin: 1rem 0; box-shadow: 0 1px 2px #0001; }
  .row { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; margin: .5rem 0; }
  .meta code { background: #eef1f4; padding: .05rem .35rem; border-radius: .3rem; }
  #preview { flex: 1; min-height: 5rem; border-radius: .5rem; display: grid; place-items: center; color: #fff;
             font-weight: 600; font-size: 1.2rem; background: hsl(var(--hue, 210) 60% 45%); }
  #preview[data-density="1"] { letter-spacing: .02em; } #preview[data-density="3"] { letter-spacing: .3em; }
  button { font: inherit; padding: .4rem .9rem; border-radius: .4rem; border: 1px solid #b8c0c9; background: #fff; cursor: pointer; }
  button:disabled { opacity: .45; cursor: default; }
  #accept { background: #1f7a3d; color: #fff; border-color: #1f7a3d; }
  #discard { background: #fff5f5; border-color: #d99; }
  input[type="text"] { flex: 1; font: inherit; padding: .35rem .5rem; }
  label { display: flex; gap: .5rem; align-items: center; min-width: 15rem; }
  #message { min-height: 1.3rem; color: #334; }
  #message[data-kind="error"] { color: #a11; }
  #log { font: .8rem ui-monospace, monospace; max-height: 14rem; overflow: auto; padding-left: 1.5rem; }
</style>
</head>
<body>
<header>
  <h1>Live variants</h1>
  <span id="conn" class="badge" data-state="connecting">connecting</span>
  <span id="pending" class="badge" data-count="0"></span>
</header>
<div class="card meta">
  Session <code id="session">…</code> · phase <code id="phase">…</code> · next action <code id="next">…</code>
</div>
<div class="card">
  <div class="row">
    <input id="prompt" type="text" value="Make the hero section bolder" aria-label="What to generate">
    <button id="generate">Generate</button>
  </div>
  <div class="row">
    <button id="prev" aria-label="Previous variant">◀</button>
    <div id="preview" data-density="2"><span id="variant">v1</span></div>
    <button id="next-variant" aria-label="Next variant">▶</button>
  </div>
  <div class="row">
    <label>Hue <input id="hue" type="range" min="0" max="360" value="210"> <output id="hue-value">210</output></label>
    <label>Density <input id="density" type="range" min="1" max="3" value="2"> <output id="density-value">2</output></label>
  </div>
  <div class="row">
    <button id="accept">Accept</button>
    <button id="discard">Discard</button>
  </div>
  <p id="message" role="status"></p>
</div>
<div class="card">
  <strong>Journal</strong>
  <ol id="log"></ol>
</div>
<script type="module" src="/demo.js"></script>
</body>
</html>
`;
