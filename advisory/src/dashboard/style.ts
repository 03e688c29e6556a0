import { createHash } from 'node:crypto';

/**
 * The dashboard's one stylesheet, served by the appliance itself (no font, script or
 * style from anywhere else). System fonts; verdicts carry colour and text alike; readable
 * on a phone (tables scroll inside their own box, never the page) and on a desktop.
 */
export const css = `
:root { color-scheme: light; --ink: #1b1f24; --muted: #57606a; --line: #d0d7de; --bg: #ffffff; --panel: #f6f8fa; --link: #0550ae; }
* { box-sizing: border-box; }
html { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; font-size: 100%; line-height: 1.5; color: var(--ink); background: var(--bg); }
body { margin: 0; }
a { color: var(--link); }
a:focus-visible, button:focus-visible, select:focus-visible { outline: 3px solid #0969da; outline-offset: 2px; }
.skip { position: absolute; left: -10000px; }
.skip:focus { left: 1rem; top: 1rem; background: #fff; padding: .5rem; z-index: 10; }
header.top { background: #24292f; color: #fff; padding: .75rem 1rem; display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1.5rem; }
header.top .brand { font-weight: 700; margin: 0; font-size: 1.125rem; }
header.top nav ul { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: .25rem 1rem; }
header.top nav a { color: #fff; text-decoration: none; }
header.top nav a[aria-current="page"] { text-decoration: underline; text-underline-offset: .3em; }
main { padding: 1rem; max-width: 80rem; margin: 0 auto; }
h1 { font-size: 1.5rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.125rem; margin: 1.5rem 0 .5rem; }
p.note, .muted { color: var(--muted); }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: .75rem 1rem; margin: 0 0 1rem; }
.panel.alarm { background: #ffebe9; border-color: #cf222e; }
.panel.warn { background: #fff8c5; border-color: #bf8700; }
.table-wrap { overflow-x: auto; border: 1px solid var(--line); border-radius: 6px; }
table { border-collapse: collapse; width: 100%; font-size: .9375rem; }
th, td { text-align: left; vertical-align: top; padding: .5rem .625rem; border-bottom: 1px solid var(--line); }
thead th { background: var(--panel); white-space: nowrap; }
tbody tr:last-child td { border-bottom: 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
ul.plain { list-style: none; margin: 0; padding: 0; }
ul.products li { white-space: nowrap; }
.product { font-weight: 600; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .875em; overflow-wrap: anywhere; }
/* A CVE id is read as one word: never broken over lines (they are short, CVE-2025-49844). */
.id { white-space: nowrap; }
.badge { display: inline-block; padding: .05rem .5rem; border-radius: 1rem; font-size: .8125rem; font-weight: 600; white-space: nowrap; border: 1px solid transparent; }
.badge-blocked { background: #82071e; color: #fff; }
.badge-eol { background: #cf222e; color: #fff; }
.badge-wait-for-patch { background: #9a6700; color: #fff; }
.badge-hold { background: #ddf4ff; color: #0a3069; border-color: #54aeff; }
.badge-install { background: #1a7f37; color: #fff; }
.badge-none { background: #eaeef2; color: #24292f; }
.badge-unknown { background: #6e7781; color: #fff; }
.badge-intact { background: #1a7f37; color: #fff; font-size: .9375rem; }
.badge-broken { background: #cf222e; color: #fff; font-size: .9375rem; }
form.filters { display: flex; flex-wrap: wrap; gap: .75rem; align-items: flex-end; margin: 0 0 1rem; }
form.filters label { display: flex; flex-direction: column; font-size: .875rem; gap: .25rem; }
select, button { font: inherit; padding: .375rem .5rem; border: 1px solid #8c959f; border-radius: 6px; background: #fff; color: var(--ink); }
button { background: #0969da; color: #fff; border-color: #0969da; cursor: pointer; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
ol.steps li { margin-bottom: .5rem; }
p.finding { margin: .125rem 0; }
details.advice > summary { cursor: pointer; }
details.advice[open] > summary { margin-bottom: .25rem; }
.advice-body { margin: .25rem 0 .5rem; max-width: 50rem; }
.advice-summary { white-space: pre-line; margin: 0 0 .25rem; }
.advice-body ul.references { margin: 0 0 .25rem; padding-left: 1.25rem; }
.advice-body ul.references a { overflow-wrap: anywhere; }
.advice-body p.cves { margin: 0; }
svg.timeline { width: 100%; height: auto; max-width: 60rem; display: block; }
footer { color: var(--muted); font-size: .8125rem; padding: 1rem; text-align: center; }
@media (max-width: 40rem) {
  main { padding: .75rem; }
  th, td { padding: .375rem .5rem; }
  dl.facts { grid-template-columns: 1fr; }
  /* On a phone each row is a card: label and value, nothing to scroll sideways. */
  table.cards thead { position: absolute; left: -10000px; }
  table.cards, table.cards tbody, table.cards tr, table.cards td { display: block; width: 100%; }
  table.cards tr { border-bottom: 1px solid var(--line); padding: .375rem 0; }
  table.cards td { border: 0; padding: .125rem .625rem; text-align: left; }
  table.cards td::before { content: attr(data-label); display: block; font-size: .75rem; font-weight: 600; color: var(--muted); text-transform: uppercase; letter-spacing: .03em; }
  ul.products li { white-space: normal; }
}
`;

/** A name that changes with the stylesheet, so it can be cached for good. */
export const cssPath = `/assets/app.${createHash('sha256').update(css).digest('hex').slice(0, 12)}.css`;
