// Tiny helpers for server-rendered pages: escaping and one shared layout.
export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}
code,pre{font:14px/1.4 ui-monospace,monospace}pre{background:#f5f5f7;padding:.75rem;overflow:auto;border-radius:6px}
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #ddd}h3{font-size:1rem;margin-bottom:.25rem}
.muted{color:#6e6e73}nav a{margin-right:1rem}
</style></head><body>${body}</body></html>`;
}
