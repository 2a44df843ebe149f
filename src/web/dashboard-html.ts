/**
 * The dashboard's page, served by `baton serve` at `/dashboard`. Static and secret-free: the
 * login code arrives in the URL fragment (`#login=<code>`, from `baton dashboard`) and the page
 * script (dist/web/dashboard.js, src/web/dashboard/) trades it for the token. The styles are
 * inline so the page is one request plus its script.
 */
export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Baton · dashboard</title>
<style>
  :root { font-family: system-ui, sans-serif; color: #1b2129; background: #f4f6f8; font-size: 15px; }
  body { margin: 0; }
  a { color: #174ea6; }
  header.top { display: flex; align-items: center; gap: .75rem; padding: .6rem 1.2rem; background: #1b2129; color: #fff; }
  header.top h1 { font-size: 1.1rem; margin: 0; }
  header.top nav { display: flex; gap: .25rem; flex: 1; }
  header.top nav a { color: #dfe6ee; text-decoration: none; padding: .3rem .6rem; border-radius: .3rem; }
  header.top nav a[aria-current="page"] { background: #3a4756; color: #fff; }
  main { padding: 1rem 1.2rem; max-width: 1400px; }
  .badge { display: inline-block; padding: .12rem .5rem; border-radius: 1rem; font-size: .8rem; background: #dde3ea; color: #1b2129; white-space: nowrap; }
  .badge.ok { background: #cdebd6; color: #0f4a26; }
  .badge.warn { background: #fde9c4; color: #6b3f02; }
  .badge.bad { background: #f8d0d0; color: #7a1a1a; }
  .badge.info { background: #dbe7fb; color: #173d7a; }
  .toolbar { display: flex; gap: .6rem; align-items: center; flex-wrap: wrap; margin-bottom: .8rem; }
  .toolbar input, .toolbar select { font: inherit; padding: .3rem .5rem; border: 1px solid #98a3af; border-radius: .3rem; background: #fff; }
  .toolbar input[type="search"] { min-width: 18rem; }
  table { border-collapse: collapse; width: 100%; background: #fff; box-shadow: 0 1px 2px #0002; }
  th, td { text-align: left; vertical-align: top; padding: .45rem .6rem; border-bottom: 1px solid #e3e7ec; }
  th { font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; color: #4a5562; background: #f9fafb; }
  td code, .mono { font: .82rem ui-monospace, monospace; }
  code { background: #eef1f4; padding: .05rem .3rem; border-radius: .25rem; overflow-wrap: anywhere; }
  ul.plain { list-style: none; margin: 0; padding: 0; }
  .row-actions { margin: .3rem 0 .5rem; }
  .muted { color: #56606b; font-size: .85rem; }
  .card { background: #fff; border-radius: .5rem; padding: .8rem 1rem; margin: 0 0 1rem; box-shadow: 0 1px 2px #0002; }
  .card h2 { font-size: 1rem; margin: 0 0 .5rem; }
  .grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(22rem, 1fr)); gap: 1rem; }
  .message { padding: .6rem .9rem; border-radius: .4rem; margin: 0 0 1rem; background: #dbe7fb; }
  .message.error { background: #f8d0d0; color: #6b1414; }
  button { font: inherit; padding: .3rem .8rem; border-radius: .3rem; border: 1px solid #8d98a5; background: #fff; cursor: pointer; color: #1b2129; }
  button:disabled { opacity: .5; cursor: default; }
  :focus-visible { outline: 3px solid #2f6fdb; outline-offset: 2px; }
  .timeline { height: 60vh; overflow: auto; position: relative; background: #fff; box-shadow: 0 1px 2px #0002; border-radius: .4rem; }
  .timeline ul { list-style: none; margin: 0; padding: 0; position: relative; }
  .timeline .row { position: absolute; left: 0; right: 0; display: flex; gap: .6rem; align-items: center; padding: 0 .6rem;
                   border-bottom: 1px solid #eef1f4; font-size: .85rem; white-space: nowrap; overflow: hidden; box-sizing: border-box; }
  .timeline .row button.expand { padding: 0 .4rem; font-size: .8rem; }
  .timeline .seq { width: 5rem; color: #56606b; font: .8rem ui-monospace, monospace; }
  .timeline .type { width: 14rem; font-weight: 600; overflow: hidden; text-overflow: ellipsis; }
  .timeline .actor { width: 7rem; color: #3a4756; }
  .timeline .summary { flex: 1; overflow: hidden; text-overflow: ellipsis; color: #3a4756; font: .8rem ui-monospace, monospace; }
  .timeline .row.loading .summary { color: #56606b; } /* muted as .seq, still ≥ 4.5:1 on white (WCAG AA) */
  pre.event { background: #f6f8fa; padding: .6rem; border-radius: .3rem; max-height: 20rem; overflow: auto; font-size: .8rem; margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; }
  pre.state { white-space: pre-wrap; font-size: .82rem; margin: 0; }
  table.diff { font: .8rem ui-monospace, monospace; box-shadow: none; margin: .3rem 0 .8rem; table-layout: fixed; }
  table.diff td { padding: 0 .4rem; border: 0; white-space: pre-wrap; overflow-wrap: anywhere; }
  table.diff col.no { width: 3.5rem; }
  table.diff td.no { color: #56606b; text-align: right; user-select: none; }
  table.diff tr.hunk td { background: #eef1f4; color: #3a4756; }
  table.diff tr.del td.code, table.diff td.code.del { background: #fde2e2; }
  table.diff tr.add td.code, table.diff td.code.add { background: #d9f2df; }
  table.diff td.code.empty { background: #f6f7f9; }
  .preview details { margin: .4rem 0; }
  .preview summary { cursor: pointer; }
  fieldset.toolbar { border: 0; padding: 0; margin: .4rem 0; }
  label.block { display: block; margin: .5rem 0; }
  label.block textarea { display: block; width: 100%; box-sizing: border-box; font: inherit; padding: .4rem; margin-top: .25rem; }
  .card.spiral { border-left: 4px solid #b42318; }
  article.card h3 { font-size: .95rem; margin: 0 0 .4rem; }
  .lesson-text { margin: .3rem 0; }
  .sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
</style>
</head>
<body>
<div id="app"><p style="padding:1rem">Loading the dashboard…</p></div>
<noscript>The dashboard needs JavaScript.</noscript>
<script type="module" src="/dashboard.js"></script>
</body>
</html>
`;
