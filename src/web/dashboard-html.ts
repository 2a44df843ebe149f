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
  /* A word wider than its box (an id, a path) breaks rather than widen the page; words that fit
     stay whole, and a table column still sizes to its longest word. */
  body { margin: 0; overflow-wrap: break-word; }
  a { color: #174ea6; }
  header.top { display: flex; flex-wrap: wrap; align-items: center; gap: .4rem .75rem; padding: .6rem 1.2rem; background: #1b2129; color: #fff; }
  header.top h1 { font-size: 1.1rem; margin: 0; }
  header.top nav { display: flex; flex-wrap: wrap; gap: .25rem; flex: 1; min-width: 0; }
  header.top nav a { color: #dfe6ee; text-decoration: none; padding: .3rem .6rem; border-radius: .3rem;
                     max-width: 100%; box-sizing: border-box; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
  header.top nav a[aria-current="page"] { background: #3a4756; color: #fff; }
  main { padding: 1rem 1.2rem; max-width: 1400px; }
  .badge { display: inline-block; padding: .12rem .5rem; border-radius: 1rem; font-size: .8rem; background: #dde3ea; color: #1b2129; white-space: nowrap; }
  .badge.ok { background: #cdebd6; color: #0f4a26; }
  .badge.warn { background: #fde9c4; color: #6b3f02; }
  .badge.bad { background: #f8d0d0; color: #7a1a1a; }
  .badge.info { background: #dbe7fb; color: #173d7a; }
  .toolbar { display: flex; gap: .6rem; align-items: center; flex-wrap: wrap; margin-bottom: .8rem; }
  .toolbar input, .toolbar select { font: inherit; padding: .3rem .5rem; border: 1px solid #98a3af; border-radius: .3rem; background: #fff; }
  /* As wide as the placeholder (--chars, set by the page), never wider than the row. */
  .toolbar input.fit { width: calc(var(--chars) * 1ch + 1.6rem); max-width: 100%; box-sizing: border-box; }
  select { max-width: 100%; }
  table { border-collapse: collapse; width: 100%; background: #fff; box-shadow: 0 1px 2px #0002; }
  th, td { text-align: left; vertical-align: top; padding: .45rem .6rem; border-bottom: 1px solid #e3e7ec; }
  th { font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; color: #4a5562; background: #f9fafb; }
  td code, .mono { font: .82rem ui-monospace, monospace; }
  code { background: #eef1f4; padding: .05rem .3rem; border-radius: .25rem; }
  /* Status words (a phase, a state) are never broken: "in_pro gress" reads as two words. */
  .nowrap, code.phase { white-space: nowrap; }
  ul.plain { list-style: none; margin: 0; padding: 0; }
  .row-actions { margin: .3rem 0 .5rem; }
  .muted { color: #56606b; font-size: .85rem; }
  .card { background: #fff; border-radius: .5rem; padding: .8rem 1rem; margin: 0 0 1rem; box-shadow: 0 1px 2px #0002; }
  .card h2 { font-size: 1rem; margin: 0 0 .5rem; }
  .grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(22rem, 100%), 1fr)); gap: 1rem; }
  .grid > * { min-width: 0; }
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
  .timeline .row.loading .summary { color: #636e7a; font-style: italic; }
  pre.event { background: #f6f8fa; padding: .6rem; border-radius: .3rem; max-height: 20rem; overflow: auto; font-size: .8rem; margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; }
  pre.state { white-space: pre-wrap; overflow-wrap: anywhere; font-size: .82rem; margin: 0; }
  /* Data, not words: a JSON argument list may break anywhere. So may prose in a wide column, where a
     path in it ("db/migrations/0042_add_index.sql") would otherwise set the column's least width. */
  td.data, .next-action .muted, td[data-col="blockers"] li { overflow-wrap: anywhere; }
  td[data-col="fix"] { min-width: 16rem; }
  .fix-command { display: flex; gap: .4rem; align-items: flex-start; }
  .fix-command button { flex: none; padding: .1rem .5rem; font-size: .8rem; }
  .diff-box { overflow-x: auto; }
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

  /* A phone (measured at 390 px): the nav on a row of its own under the title and the badge, wrapping
     and never wider than the screen; each table row a card (its header only for screen readers,
     each cell's header as a label, cells marked inline on one line, empty ones left out); the
     timeline's actor column folded away; a side by side diff scrolling inside its own box. */
  @media (max-width: 600px) {
    header.top { padding: .5rem .75rem; }
    header.top nav { order: 3; flex-basis: 100%; }
    header.top .badge { margin-left: auto; }
    main { padding: .75rem; }
    .card { padding: .7rem .75rem; }
    .toolbar input.fit { width: 100%; }
    table.cards { background: none; box-shadow: none; }
    table.cards thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
    table.cards, table.cards > tbody, table.cards > tbody > tr, table.cards > tbody > tr > td { display: block; }
    table.cards > tbody > tr { background: #fff; border-radius: .4rem; box-shadow: 0 1px 2px #0002; padding: .5rem .7rem; margin: 0 0 .6rem; }
    table.cards > tbody > tr > td { border: 0; padding: .15rem 0; }
    table.cards > tbody > tr > td.inline { display: inline-block; margin-right: .6rem; }
    table.cards > tbody > tr > td.empty { display: none; }
    table.cards td[data-label]::before { content: attr(data-label); display: block; font-size: .72rem; text-transform: uppercase;
                                         letter-spacing: .04em; color: #4a5562; }
    table.cards td.inline[data-label]::before { display: inline; margin-right: .3rem; }
    table.cards td[data-col="flow"] > div { display: inline; margin-left: .3rem; }
    table.cards td[data-col="activity"] > div { display: inline; margin-left: .3rem; }
    td[data-col="fix"] { min-width: 0; }
    .timeline .seq { width: 3.2rem; flex: none; }
    .timeline .type { width: auto; flex: 0 1 9rem; min-width: 0; }
    .timeline .actor { display: none; }
    .timeline .summary { min-width: 0; }
    .timeline .row button.expand { flex: none; }
    table.diff.split { min-width: 36rem; }
  }
</style>
</head>
<body>
<div id="app"><p style="padding:1rem">Loading the dashboard…</p></div>
<noscript>The dashboard needs JavaScript.</noscript>
<script type="module" src="/dashboard.js"></script>
</body>
</html>
`;
