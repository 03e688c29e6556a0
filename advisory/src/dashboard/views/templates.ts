import { Eta } from 'eta';

const markup: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * Characters that would act on the page rather than be read: the bidi controls (an
 * override such as U+202E reorders the text after it, so `exe.txt` can read as `txt.exe`),
 * and the C0 and C1 controls and DEL (NUL, ESC, …: invisible or dropped, hiding what is
 * really there). Tab and line breaks stay: summaries keep their lines.
 */
const hiding = /(?![\t\n\r])\p{Cc}|\p{Bidi_Control}/gu;

/** A control as a visible mark: `[U+202E]`. */
const mark = (control: string) =>
  `[U+${(control.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}]`;

/**
 * The one escaping function of every `<%= %>`: markup characters as entities, and every
 * control that could reorder or hide text as a visible mark, so a feed author or an
 * inventory cannot make the page say something other than what is there.
 */
export function escapeHtml(value: unknown): string {
  return String(value)
    .replace(hiding, mark)
    .replace(/[&<>"']/g, (c) => markup[c] as string);
}

/**
 * The dashboard's pages as Eta templates, kept in code so the single binary carries them.
 * Every value goes out through `<%= %>`, which escapes it (escapeHtml above): advisory
 * text comes from the feed and asset names from the inventory, and neither is trusted as
 * markup or as layout. Only whole rendered templates are placed raw (`<%~ %>`).
 */
const layout = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title><%= it.title %> · Advisory appliance</title>
<link rel="stylesheet" href="<%= it.cssPath %>">
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
<p class="brand">Advisory appliance</p>
<nav aria-label="Pages"><ul>
<% for (const link of it.nav) { %><li><a href="<%= link.href %>"<% if (link.current) { %> aria-current="page"<% } %>><%= link.label %></a></li>
<% } %></ul></nav>
</header>
<main id="main">
<%~ include('@feedNotice', it.notice) %>
<%~ it.body %>
</main>
<footer>advisory appliance <%= it.version %> · read-only · feed <%= it.feedVersion %></footer>
</body>
</html>
`;

const badge = `<span class="badge badge-<%= it.verdict ?? 'none' %>"><%= it.verdict ?? 'no verdict' %></span>`;

/**
 * An advisory's advice: what to do, its references (a link only when http(s), see
 * evaluation/advice.ts; anything else as plain text) and its CVEs, linked to their
 * public records. `rel` keeps the dashboard's address and window from the sites linked.
 */
const advice = `<div class="advice-body">
<p class="advice-summary"><%= it.summary %></p>
<% if (it.references.length) { %><ul class="references"><% for (const r of it.references) { %><li><% if (r.href) { %><a href="<%= r.href %>" rel="noopener noreferrer"><%= r.text %></a><% } else { %><span class="mono"><%= r.text %></span> <span class="muted">(not a web address)</span><% } %></li><% } %></ul><% } %>
<% if (it.cves.length) { %><p class="cves">CVEs: <% it.cves.forEach((c, i) => { %><%= i ? ', ' : '' %><a class="mono id" href="<%= c.url %>" rel="noopener noreferrer"><%= c.id %></a><%= c.cvss !== null ? ' (CVSS ' + c.cvss + ')' : '' %><% }) %></p><% } %>
</div>`;

const feedNotice = `<% if (!it.feed) { %>
<div class="panel alarm" role="alert"><strong>No verified feed is in use:</strong> <%= it.problem ?? 'no feed has been accepted yet.' %><% if (it.lastEvaluatedAt) { %> The verdicts shown are those of <%~ include('@time', it.lastEvaluatedAt) %>; they are not kept current until a verified feed is accepted.<% } %></div>
<% } else if (it.problem) { %>
<div class="panel warn" role="status"><strong>The feed from <%= it.source %> is not in use:</strong> <%= it.problem %> The <%= it.feed.from === 'cache' ? 'cached' : 'last accepted' %> feed <%= it.feed.version %> keeps serving, in use since <%~ include('@time', it.feed.since) %>.</div>
<% } %>
<% for (const p of it.problems) { %>
<div class="panel warn" role="status" data-problem="<%= p.code %>"><strong>Needs attention:</strong> <%= p.message %></div>
<% } %>
<% if (it.inventoryError) { %>
<div class="panel warn" role="status"><strong>The inventory file could not be read:</strong> <%= it.inventoryError %> The inventory read before keeps being used.</div>
<% } %>`;

const assets = `<h1>Assets</h1>
<form class="filters" method="get" action="/">
<label>Verdict
<select name="verdict">
<option value="">any</option>
<% for (const v of it.verdictOptions) { %><option value="<%= v %>"<% if (it.filter.verdict === v) { %> selected<% } %>><%= v %></option>
<% } %></select></label>
<label>Product
<select name="product">
<option value="">any</option>
<% for (const p of it.productOptions) { %><option value="<%= p %>"<% if (it.filter.product === p) { %> selected<% } %>><%= p %></option>
<% } %></select></label>
<label>Adapter
<select name="source">
<option value="">any</option>
<% for (const s of it.sourceOptions) { %><option value="<%= s %>"<% if (it.filter.source === s) { %> selected<% } %>><%= s %></option>
<% } %></select></label>
<button type="submit">Filter</button>
<% if (it.filtered) { %><a href="/">Show all</a><% } %>
</form>
<p class="muted"><%= it.rows.length %> of <%= it.total %> assets<% if (it.evaluatedAt) { %>, evaluated <%~ include('@time', it.evaluatedAt) %><% } %>.</p>
<div class="table-wrap">
<table class="cards">
<caption class="skip">Assets with their verdicts</caption>
<thead><tr><th scope="col">Asset</th><th scope="col">Verdict</th><th scope="col">Products: installed → recommended</th><th scope="col">Advisories</th></tr></thead>
<tbody>
<% for (const row of it.rows) { %>
<tr>
<td data-label="Asset"><a href="/assets/<%= encodeURIComponent(row.asset) %>"><%= row.asset %></a><br><span class="muted"><%= row.source %></span></td>
<td data-label="Verdict"><% if (row.status === 'unknown') { %><span class="badge badge-unknown">unknown</span><br><span class="muted"><%= row.error %></span><% } else { %><%~ include('@badge', { verdict: row.verdict }) %><% } %></td>
<td data-label="Products"><%~ include('@products', { products: row.products }) %></td>
<td data-label="Advisories"><ul class="plain"><% for (const m of row.matches) { %><li><details class="advice"><summary><%~ include('@badge', { verdict: m.verdict }) %> <%= m.title %> <span class="muted mono"><%= m.advisoryId %></span></summary>
<%~ include('@advice', m.advice) %></details></li><% } %></ul></td>
</tr>
<% } %>
</tbody>
</table>
</div>
`;

/** Products with the version installed and the one recommended (Assets table, asset page). */
const products = `<ul class="plain products"><% for (const p of it.products) { %><li><span class="product"><%= p.product %></span> <span class="mono"><%= p.version %></span><% if (p.unreadable) { %> <span class="muted">(not a version)</span><% } %><% if (p.recommended) { %> → <span class="mono"><%= p.recommended %></span><% } %></li><% } %></ul>`;

const ordering = `<h1>Upgrade order</h1>
<p class="note">Installs that wait for another product: do these steps first, in this order.</p>
<% if (it.steps.length === 0) { %><p>No cross-product requirement is unmet.</p><% } else { %>
<ol class="steps">
<% for (const step of it.steps) { %><li><strong><%= step.step %></strong>: <%= step.reason %><br><span class="muted">on <%= step.assets.join(', ') %></span></li>
<% } %></ol>
<% } %>
`;

const cves = `<h1>CVE highlights</h1>
<% if (it.cves.length === 0) { %><p>No advisory in force names a CVE that touches an asset.</p><% } else { %>
<div class="table-wrap"><table class="cards">
<caption class="skip">CVEs by severity</caption>
<thead><tr><th scope="col">CVE</th><th scope="col">CVSS</th><th scope="col">Summary</th><th scope="col">Assets</th><th scope="col">Advisories</th></tr></thead>
<tbody>
<% for (const cve of it.cves) { %><tr><td data-label="CVE" class="mono id"><a href="<%= cve.url %>" rel="noopener noreferrer"><%= cve.id %></a></td><td data-label="CVSS" class="num"><%= cve.cvss ?? 'n/a' %></td><td data-label="Summary"><%= cve.summary ?? '' %></td><td data-label="Assets"><%= cve.assets.join(', ') %></td><td data-label="Advisories" class="mono"><%= cve.advisories.join(', ') %></td></tr>
<% } %></tbody>
</table></div>
<% } %>
`;

/** How a reminder's task is recorded as done: the fact it is measured from. */
const recordDone = `<% if (it.fact) { %>; record it done: set fact <code><%= it.fact %></code><% } %>`;

const reminders = `<h1>Service reminders</h1>
<p class="note">To record a task as done, set the date it was done in the fact the reminder names, in the asset's <code>facts</code> in the inventory file (<code>ADVISORY_INVENTORY</code>), or for an asset a source reports, in that source's <code>facts</code> or its asset file: for example <code>last_restore_test: "2026-11-29"</code>. The next refresh reads it and counts the next due date from it.</p>
<h2>Overdue</h2>
<% if (it.overdue.length === 0) { %><p>Nothing is overdue.</p><% } else { %>
<ul><% for (const r of it.overdue) { %><li><strong><%= r.asset %></strong>: <%= r.task %> <span class="muted">(<%= r.dueAt ? 'due ' + r.dueAt.slice(0, 10) : 'never recorded' %>; <%= r.advisoryId %><%~ include('@recordDone', r) %>)</span></li>
<% } %></ul>
<% } %>
<h2>Upcoming</h2>
<% if (it.upcoming.length === 0) { %><p>Nothing is coming up.</p><% } else { %>
<ul><% for (const r of it.upcoming) { %><li><strong><%= r.asset %></strong>: <%= r.task %> <span class="muted">(due <%= r.dueAt.slice(0, 10) %>; <%= r.advisoryId %><%~ include('@recordDone', r) %>)</span></li>
<% } %></ul>
<% } %>
`;

const feed = `<h1>Feed</h1>
<div class="panel">
<dl class="facts">
<dt>Source</dt><dd class="mono"><%= it.location %></dd>
<% if (it.feed) { %>
<dt>Version</dt><dd><%= it.feed.version %> (schema <%= it.feed.schema %>)</dd>
<dt>Published</dt><dd><%~ include('@time', it.feed.publishedAt) %></dd>
<dt>Expires</dt><dd><%~ include('@time', it.feed.expiresAt) %></dd>
<dt>Signed by</dt><dd class="mono"><%= it.feed.signedBy.join(', ') %></dd>
<dt>Manifest SHA-256</dt><dd class="mono"><%= it.feed.manifestSha256 %></dd>
<dt>Advisories</dt><dd><%= it.feed.advisories %></dd>
<dt>In use</dt><dd><%= it.feed.inUse %>, since <%~ include('@time', it.feed.since) %><% if (it.liveProblem) { %>; the feed from <%= it.sourceKind %> is not in use (see Last error)<% } %></dd>
<% } else { %>
<dt>Feed in use</dt><dd>none</dd>
<% } %>
<dt>Cache serving</dt><dd><%= it.servingCache ? 'yes' : 'no' %></dd>
<dt>Last pull</dt><dd><% if (it.lastPull) { %><%~ include('@time', it.lastPull.at) %>: <%= it.lastPull.outcome %> (<%= it.lastPull.message %>)<% } else { %>not yet<% } %></dd>
<dt>Last error</dt><dd><% if (it.errors.length === 0) { %>none<% } %><% it.errors.forEach((e, i) => { %><%= i ? '; ' : '' %><%~ include('@time', e.at) %>: <%= e.text %><% }) %></dd>
<dt>Refresh interval</dt><dd><%= it.interval %></dd>
<dt>Trusted keys</dt><dd class="mono"><%= it.trustedKeys.join(', ') %></dd>
</dl>
</div>
<h2>Inventory sources</h2>
<div class="table-wrap"><table class="cards">
<caption class="skip">Inventory sources</caption>
<thead><tr><th scope="col">Source</th><th scope="col">Adapter</th><th scope="col">State</th><th scope="col">Assets</th></tr></thead>
<tbody>
<% for (const s of it.sources) { %><tr><td data-label="Source"><%= s.name %></td><td data-label="Adapter"><%= s.type %></td><td data-label="State"><% if (s.ok) { %>answered<% } else { %><span class="badge badge-unknown">failed</span> <%= s.error %><% } %></td><td data-label="Assets" class="num"><%= s.assets %></td></tr>
<% } %></tbody>
</table></div>
<h2>Alerts</h2>
<p>Channels: <%= it.outbox.channels.length ? it.outbox.channels.join(', ') : 'none configured' %>. Waiting to be delivered: <%= it.outbox.pending %>. Given up: <%= it.outbox.failed %>.<% if (it.outbox.damaged) { %> Damaged and set apart: <%= it.outbox.damaged %>.<% } %></p>
`;

const log = `<h1>Decision log</h1>
<% if (it.verification.intact) { %>
<p><span class="badge badge-intact" role="status">HASH CHAIN INTACT</span> <span class="muted"><%= it.verification.entries %> entries; last checkpoint <% if (it.verification.lastCheckpoint) { %><%~ include('@time', it.lastCheckpointAt) %>, covering <%= it.verification.lastCheckpoint.size %><% } else { %>none yet<% } %>.</span></p>
<% } else { %>
<div class="panel alarm" role="alert"><p><span class="badge badge-broken">HASH CHAIN BROKEN</span></p>
<ul><% for (const b of it.verification.breaks) { %><li><%= b.file === 'log' ? 'Log line ' + b.line : b.line ? 'Checkpoint line ' + b.line : 'Checkpoints' %>: <%= b.message %></li><% } %></ul>
<p>Compare with the checkpoints in your alerts; run <code>advisory log verify</code> for the same report offline.</p></div>
<% } %>
<p><a href="/decisions.json">Export (JSON, with its verification)</a></p>
<div class="table-wrap"><table class="cards">
<caption class="skip">Decisions, newest first</caption>
<thead><tr><th scope="col">#</th><th scope="col">When</th><th scope="col">Decision</th><th scope="col">Details</th></tr></thead>
<tbody>
<% for (const e of it.entries) { %><tr><td data-label="#" class="num"><%= e.seq %></td><td data-label="When"><%~ include('@time', e.at) %></td><td data-label="Decision"><%= e.kind %></td><td data-label="Details"><%= e.text %></td></tr>
<% } %></tbody>
</table></div>
<% if (it.pages > 1) { %><nav aria-label="Log pages"><p>Page <%= it.page %> of <%= it.pages %> (<%= it.total %> entries).<% if (it.page > 1) { %> <a href="/log?page=<%= it.page - 1 %>" rel="prev">Newer</a><% } %><% if (it.page < it.pages) { %> <a href="/log?page=<%= it.page + 1 %>" rel="next">Older</a><% } %></p></nav><% } %>
`;

const asset = `<h1><%= it.name %></h1>
<% if (!it.evaluation) { %><p>This asset is not in the current evaluation.</p><% } else { %>
<p>Verdict: <% if (it.evaluation.status === 'unknown') { %><span class="badge badge-unknown">unknown</span> <%= it.evaluation.error %><% } else { %><%~ include('@badge', { verdict: it.evaluation.verdict }) %><% } %> <span class="muted">from <%= it.evaluation.source %></span></p>
<h2>Products</h2>
<%~ include('@products', { products: it.evaluation.products }) %>
<% if (it.evaluation.matches.length) { %>
<h2>Advisories</h2>
<ul>
<% for (const m of it.evaluation.matches) { %><li><%~ include('@badge', { verdict: m.verdict }) %> <strong><%= m.title %></strong> <span class="muted mono"><%= m.advisoryId %></span>
<p class="finding"><%= m.product %>: installed <span class="mono"><%= m.installed %></span>, <% if (m.recommendedVersion) { %>recommended <span class="mono"><%= m.recommendedVersion %></span><% } else { %><span class="muted">the advisory recommends no version</span><% } %></p>
<% for (const u of m.unmet) { %><p class="finding">First: <%= u.ordering %> (<%= u.reason %>)</p><% } %>
<%~ include('@advice', m.advice) %></li>
<% } %></ul>
<% } %>
<% if (it.evaluation.reminders.length) { %>
<h2>Service reminders</h2>
<ul><% for (const r of it.evaluation.reminders) { %><li><%= r.task %>: <%= r.due ? 'due' : 'not due' %> <span class="muted">(<%= r.dueAt ? r.dueAt.slice(0, 10) : 'never recorded' %><%~ include('@recordDone', r) %>)</span></li><% } %></ul>
<p class="note">To record a task as done, set the date it was done in the fact named, in the inventory: see <a href="/reminders">Reminders</a>.</p>
<% } %>
<% } %>
<h2>Verdict history</h2>
<% if (!it.timeline) { %><p>The decision log has no verdict for this asset yet.</p><% } else { %>
<figure>
<svg class="timeline" viewBox="0 0 <%= it.timeline.width %> <%= it.timeline.height %>" role="img" aria-labelledby="timeline-title timeline-desc">
<title id="timeline-title">Verdicts of <%= it.name %> over time</title>
<desc id="timeline-desc"><%= it.history.map((p) => (p.verdict ?? 'no verdict') + ' from ' + p.when.local).join('; ') %></desc>
<% for (const s of it.timeline.segments) { %><rect x="<%= s.x %>" y="8" width="<%= s.width %>" height="28" fill="<%= it.colours[s.verdict] ?? '#6e7781' %>"><title><%= s.label %>: <%= s.from %> to <%= s.to %></title></rect>
<% if (s.width >= 70) { %><text x="<%= s.x + 6 %>" y="27" font-size="13" fill="<%= s.verdict === 'hold' || s.verdict === 'none' ? '#1b1f24' : '#ffffff' %>"><%= s.label %></text><% } %>
<% } %>
<% for (const t of it.timeline.ticks) { %><text x="<%= t.x %>" y="56" font-size="12" text-anchor="<%= t.x === 0 ? 'start' : 'end' %>" fill="#57606a"><%= t.label %></text>
<% } %>
</svg>
<figcaption class="muted">From the first evaluation to now; each colour is a verdict held.</figcaption>
</figure>
<ol>
<% for (const p of it.history) { %><li><%~ include('@time', p.when) %>: <%~ include('@badge', { verdict: p.verdict }) %><% if (p.advisories.length) { %> <span class="mono muted"><%= p.advisories.join(', ') %></span><% } %><% if (p.feedVersion) { %> <span class="muted">(feed <%= p.feedVersion %>)</span><% } %></li>
<% } %></ol>
<% } %>
`;

/** An instant: local time with its zone, the recorded ISO text on hover (views/time.ts). */
const time = `<time datetime="<%= it.iso %>" title="<%= it.iso %>"><%= it.local %></time>`;

const message = `<h1><%= it.heading %></h1><p><%= it.text %></p>`;

export function createRenderer(): Eta {
  const eta = new Eta({ autoEscape: true, autoTrim: false, cache: true, escapeFunction: escapeHtml });
  const templates = {
    layout,
    badge,
    advice,
    feedNotice,
    assets,
    products,
    ordering,
    cves,
    recordDone,
    reminders,
    feed,
    log,
    asset,
    message,
    time,
  };
  for (const [name, text] of Object.entries(templates)) eta.loadTemplate(`@${name}`, text);
  return eta;
}
