import { createHash } from 'node:crypto';

/**
 * The pages of the development sign-in (src/dev-sign-in/provider.ts): self-contained HTML,
 * light and dark, readable on a 360 px phone, no script and nothing loaded from
 * elsewhere. The one style sheet is inline and allowed by its hash, so the policy can
 * forbid everything else.
 */
const style = `:root{color-scheme:light dark;--bg:#f6f7f9;--fg:#1b1f24;--muted:#57606a;--card:#fff;--line:#d0d7de;--accent:#0b5cad;--accent-fg:#fff;--problem:#a40e26}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9da7b3;--card:#161b22;--line:#30363d;--accent:#4493f8;--accent-fg:#0d1117;--problem:#ff7b72}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:1rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:28rem;margin:0 auto;padding:1.5rem 1rem}
h1{font-size:1.4rem;line-height:1.25;margin:0 0 .75rem}
p{margin:0 0 1rem;color:var(--muted)}
.problem{color:var(--problem);font-weight:600}
ul{list-style:none;margin:0;padding:0;display:grid;gap:.75rem}
button{display:block;width:100%;min-height:3rem;padding:.75rem 1rem;border:1px solid var(--line);border-radius:.5rem;background:var(--card);color:var(--fg);font:inherit;text-align:left;cursor:pointer}
button:hover{border-color:var(--accent)}
button:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.choices{display:grid;gap:.75rem}
.choices button:first-child{background:var(--accent);color:var(--accent-fg);border-color:var(--accent);text-align:center}
.choices .secondary{text-align:center}
dl{margin:0}dt{font-weight:600}dd{margin:0 0 .75rem;overflow-wrap:anywhere}`;

const styleHash = createHash('sha256').update(style).digest('base64');

/** Headers of every response under /dev-issuer. */
export const pageHeaders: Record<string, string> = {
  'content-security-policy': `default-src 'none'; style-src 'sha256-${styleHash}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char] ?? char,
  );
}

/** A whole page; `body` is trusted HTML (callers escape what they put in). */
export function devPage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${escapeHtml(title)} · Scheduler (development)</title>
<style>${style}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}
