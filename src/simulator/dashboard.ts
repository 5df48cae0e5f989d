/**
 * `GET {site_url}/dashboard`: a marketplace dashboard that embeds the app and plays the host side
 * of the bridge with `window.MarketplaceHost.connectApp` from `dist/cdn/marketplace-host.js`, next
 * to a panel of simulator controls (docs/simulator.md#the-dashboard). This file writes the
 * page; its script is `dashboard-app.ts`, built into `dist/cdn/marketplace-dashboard.js`.
 */
import { access } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { SimulatorContext } from './context.js';
import { escapeHtml as e, html } from './http.js';
import { BASE_CSS, LOGO } from './pages.js';

/**
 * The locale menu: a locale of each language the elements have texts in (docs/guides/locales.md),
 * each named in its own language, and `de-AT`, which reads the `de` texts.
 */
const DASHBOARD_LOCALES: readonly (readonly [tag: string, name: string])[] = [
  ['en-US', 'English (US)'],
  ['en-GB', 'English (UK)'],
  ['de-DE', 'Deutsch'],
  ['de-AT', 'Deutsch (Österreich)'],
  ['fr-FR', 'Français'],
  ['es-ES', 'Español'],
  ['it-IT', 'Italiano'],
  ['pt-BR', 'Português (Brasil)'],
  ['nl-NL', 'Nederlands'],
  ['sv-SE', 'Svenska'],
  ['pl-PL', 'Polski'],
  ['ja-JP', '日本語'],
  ['ko-KR', '한국어'],
  ['zh-CN', '简体中文'],
  ['zh-TW', '繁體中文'],
  ['ar-EG', 'العربية'],
  ['he-IL', 'עברית'],
];

const DASHBOARD_CSS = `
:root[data-theme="dark"] { color-scheme: dark; --ink: #e2e8f0; --muted: #94a3b8; --line: #334155; --bg: #0b1120; --card: #111827; --accent: #818cf8; --accent-ink: #0b1120; --ok: #4ade80; --danger: #f87171; }
body { height: 100vh; display: grid; grid-template-rows: auto 1fr; grid-template-columns: minmax(0, 1fr); }
header.top { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; padding: .6rem 1.25rem; background: var(--card); border-bottom: 1px solid var(--line); }
.brand { display: flex; align-items: center; gap: .5rem; font-weight: 700; color: var(--accent); }
.brand svg { width: 1.5rem; height: 1.5rem; }
.badge { font-size: .72rem; font-weight: 600; padding: .1rem .45rem; border-radius: 99px; background: color-mix(in srgb, var(--accent) 15%, transparent); color: var(--accent); text-transform: uppercase; letter-spacing: .04em; }
.top .spacer { flex: 1; }
.top label { display: flex; align-items: center; gap: .4rem; font-size: .85rem; color: var(--muted); }
select, input, textarea { background: var(--card); color: var(--ink); border: 1px solid var(--muted); border-radius: .45rem; padding: .35rem .5rem; }
.who { display: flex; align-items: center; gap: .5rem; min-width: 0; max-width: 100%; }
#user { min-width: 0; max-width: 100%; }
.who img { width: 1.9rem; height: 1.9rem; border-radius: 50%; }
.layout { display: grid; grid-template-columns: 13rem minmax(0, 1fr) 24rem; min-height: 0; }
nav.side { border-right: 1px solid var(--line); padding: 1rem .75rem; background: var(--card); }
nav.side a { display: block; padding: .45rem .7rem; border-radius: .45rem; color: var(--ink); text-decoration: none; margin-bottom: .15rem; }
nav.side a[aria-current="page"] { background: color-mix(in srgb, var(--accent) 14%, transparent); color: var(--accent); font-weight: 600; }
nav.side h2 { font-size: .72rem; text-transform: uppercase; letter-spacing: .06em; color: var(--muted); margin: 1.2rem .7rem .4rem; }
main.app { overflow: auto; padding: 1.25rem; }
.app-head { display: flex; flex-wrap: wrap; align-items: baseline; gap: .75rem; margin-bottom: .75rem; overflow-wrap: anywhere; }
.app-head h1 { font-size: 1.15rem; margin: 0; }
.app-head .path { color: var(--muted); font-family: ui-monospace, monospace; font-size: .85rem; }
.app-head .spacer { flex: 1; }
.frame { background: var(--card); border: 1px solid var(--line); border-radius: .75rem; overflow: hidden; }
.frame iframe { display: block; width: 100%; height: 600px; border: 0; background: transparent; }
.notice { padding: 2.5rem; text-align: center; color: var(--muted); }
.notice strong { color: var(--ink); display: block; margin-bottom: .35rem; }
.notice code { background: var(--bg); padding: .1rem .35rem; border-radius: .3rem; }
aside.controls { border-left: 1px solid var(--line); background: var(--card); overflow: auto; padding: .75rem 1rem 2rem; font-size: .88rem; }
aside.controls h2 { font-size: 1rem; margin: .25rem 0 .5rem; }
details { border-bottom: 1px solid var(--line); padding: .5rem 0; }
summary { cursor: pointer; font-weight: 600; padding: .25rem 0; }
.field { display: grid; gap: .2rem; margin: .45rem 0; }
.field > span { color: var(--muted); font-size: .8rem; }
.row { display: grid; grid-template-columns: 1fr 1fr; gap: .5rem; align-items: end; }
.field > input, .field > select, .field > textarea { width: 100%; min-width: 0; }
.actions { display: flex; gap: .5rem; margin-top: .6rem; flex-wrap: wrap; }
.actions.end { justify-content: flex-end; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.button.small { padding: .3rem .65rem; font-size: .85rem; }
.button.danger { color: var(--danger); }
pre { background: var(--bg); border-radius: .45rem; padding: .5rem; overflow: auto; font-size: .78rem; max-height: 14rem; margin: .35rem 0; }
ul.log { list-style: none; padding: 0; margin: 0; }
ul.log li { border-top: 1px solid var(--line); padding: .35rem 0; }
ul.log li details { border: 0; padding: 0; }
ul.log li summary { font-weight: 400; font-family: ui-monospace, monospace; font-size: .78rem; }
.ok { color: var(--ok); } .bad { color: var(--danger); } .muted { color: var(--muted); }
.result { margin-top: .5rem; font-size: .82rem; }
#toasts { position: fixed; right: 1.25rem; bottom: 1.25rem; display: grid; gap: .5rem; z-index: 10; max-width: calc(100% - 2.5rem); }
.toast { background: var(--ink); color: var(--card); padding: .65rem 1rem; border-radius: .55rem; box-shadow: 0 10px 25px -12px rgb(0 0 0 / .5); max-width: 24rem; border-left: 4px solid var(--accent); overflow-wrap: anywhere; }
.toast[data-tone="success"] { border-left-color: #16a34a; } .toast[data-tone="warning"] { border-left-color: #d97706; } .toast[data-tone="error"] { border-left-color: #dc2626; }
dialog { border: 1px solid var(--line); border-radius: .9rem; padding: 1.5rem; background: var(--card); color: var(--ink); width: min(46rem, 92vw); }
dialog::backdrop { background: rgb(15 23 42 / .55); }
dialog h2 { margin: 0 0 .25rem; }
.plans { display: grid; grid-template-columns: repeat(auto-fit, minmax(9.5rem, 1fr)); gap: .6rem; margin: 1rem 0; border: 0; padding: 0; }
.plan { border: 1px solid var(--line); border-radius: .7rem; padding: .8rem; cursor: pointer; display: grid; gap: .2rem; align-content: start; }
.plan:has(input:checked) { border-color: var(--accent); box-shadow: 0 0 0 2px color-mix(in srgb, var(--accent) 35%, transparent); }
.plan:has(input:disabled) { opacity: .6; cursor: default; }
.plan .price { font-weight: 700; font-size: 1.05rem; }
.plan ul { margin: .2rem 0 0; padding-left: 1rem; color: var(--muted); font-size: .82rem; }
.plan input { justify-self: start; }
@media (max-width: 30rem) { .row { grid-template-columns: minmax(0, 1fr); } }
/* A phone: the user menu gets the avatar's room, so a long name keeps its id in sight. */
@media (max-width: 25rem) { header.top { padding-inline: .75rem; } .who img { display: none; } }
@media (max-width: 1100px) { body { height: auto; min-height: 100vh; } .layout { grid-template-columns: minmax(0, 1fr); } nav.side { display: none; } aside.controls { border-left: 0; border-top: 1px solid var(--line); } }
`;

/** The dashboard's script (dashboard-app.ts as `vite build --mode dashboard` builds it), from src/ or dist/ alike. */
export const DASHBOARD_BUNDLE = new URL('../../dist/cdn/marketplace-dashboard.js', import.meta.url);

async function exists(url: URL): Promise<boolean> {
  try {
    await access(url);
    return true;
  } catch {
    return false;
  }
}

export async function dashboard(ctx: SimulatorContext): Promise<Response> {
  const nonce = randomBytes(16).toString('base64');
  const [hostReady, scriptReady] = await Promise.all([exists(ctx.hostBundle), exists(DASHBOARD_BUNDLE)]);
  const appUrl = ctx.state.config.appUrl;
  const appOrigin = appUrl ? new URL(appUrl).origin : null;
  // Same origin would let a sandboxed app with allow-scripts + allow-same-origin escape its sandbox.
  const frameSrc = appOrigin && appOrigin !== ctx.origin ? appOrigin : null;
  const page = `<!doctype html>
<html lang="en" data-theme="light">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${e(ctx.appName)} · Marketplace</title>
<style nonce="${nonce}">${BASE_CSS}${DASHBOARD_CSS}</style>
</head>
<body>
<header class="top">
  <div class="brand">${LOGO} Marketplace <span class="badge">Simulator</span></div>
  <span class="spacer"></span>
  <label>Theme <select id="theme"><option value="light">Light</option><option value="dark">Dark</option></select></label>
  <label>Locale <select id="locale">${DASHBOARD_LOCALES.map(([tag, name]) => `<option value="${tag}" lang="${tag}">${name} · ${tag}</option>`).join('')}</select></label>
  <label class="who"><img id="who-avatar" alt=""> <span class="sr-only">User</span><select id="user" aria-label="Signed-in user"></select></label>
</header>
<div class="layout">
  <nav class="side" aria-label="Dashboard">
    <a aria-disabled="true">Home</a>
    <a aria-disabled="true">Discover apps</a>
    <h2>Installed apps</h2>
    <a href="/dashboard" aria-current="page" id="nav-app">${e(ctx.appName)}</a>
    <h2>Account</h2>
    <a aria-disabled="true">Billing</a>
    <a aria-disabled="true">Settings</a>
  </nav>
  <main class="app">
    <div class="app-head">
      <h1 id="app-title">${e(ctx.appName)}</h1>
      <span class="path" id="app-path"></span>
      <span class="spacer"></span>
      <button class="button small" id="reload" type="button">Reload app</button>
    </div>
    <div class="frame" id="frame">${
      !scriptReady
        ? `<div class="notice" role="alert" id="notice"><strong>The dashboard's script is missing.</strong>dist/cdn/marketplace-dashboard.js was not found: run <code>npm run build</code>, then reload this page.</div>`
        : !hostReady
        ? `<div class="notice" role="alert" id="notice"><strong>The host bridge bundle is missing.</strong>${
            ctx.hostBundleGiven
              ? `<code>${e(fileURLToPath(ctx.hostBundle))}</code> (the hostBundle option) was not found: fix the path, then reload this page.`
              : 'dist/cdn/marketplace-host.js was not found: run <code>npm run build</code>, then reload this page.'
          }</div>`
        : !appUrl
          ? `<div class="notice" id="notice"><strong>No app URL configured.</strong>Start the simulator with <code>--app-url http://127.0.0.1:PORT/</code> or set <code>app_url</code> in the Configuration panel.</div>`
          : !frameSrc
            ? `<div class="notice" role="alert" id="notice"><strong>The app must run on another origin than the dashboard.</strong>Serve it on its own port and set its URL in the Configuration panel.</div>`
            : ''
    }</div>
  </main>
  <aside class="controls" aria-label="Simulator controls">
    <h2>Simulator controls</h2>
    <details open id="entitlement-panel"><summary>Entitlement</summary>
      <p class="result muted" id="entitlement-note"></p>
      <form id="entitlement-form">
        <div class="row">
          <label class="field"><span>Plan</span><input name="plan" list="plan-ids" required></label>
          <label class="field"><span>Status</span><select name="status"><option>active</option><option>trialing</option><option>past_due</option><option>cancelled</option><option>expired</option></select></label>
        </div>
        <label class="field"><span>Features (comma-separated)</span><input name="features"></label>
        <div class="row">
          <label class="field"><span>API calls</span><input name="api_calls" type="number" min="0" required></label>
          <label class="field"><span>Limit</span><input name="limit" type="number" min="0" required></label>
        </div>
        <label class="field"><span>Expires at (UTC, empty: never)</span><input name="expires_at" placeholder="2030-01-01T00:00:00Z"></label>
        <div class="actions">
          <button class="button small primary" type="submit">Save entitlement</button>
          <button class="button small danger" type="button" id="remove-entitlement">Remove</button>
        </div>
        <div class="result" id="entitlement-result" role="status"></div>
      </form>
      <datalist id="plan-ids"></datalist>
    </details>
    <details open><summary>Send a webhook event</summary>
      <form id="event-form">
        <div class="row">
          <label class="field"><span>Event</span><select name="event" id="event-kind"></select></label>
          <label class="field"><span>Plan</span><select name="plan" id="event-plan"></select></label>
        </div>
        <div class="actions"><button class="button small primary" type="submit">Send</button></div>
        <div class="result" id="event-result" role="status"></div>
      </form>
    </details>
    <details open><summary>API calls by the app</summary><ul class="log" id="calls"></ul></details>
    <details><summary>Webhook deliveries</summary><ul class="log" id="deliveries"></ul></details>
    <details><summary>Configuration</summary>
      <form id="config-form">
        <label class="field"><span>App URL (embed URL)</span><input name="app_url" type="url"></label>
        <label class="field"><span>Webhook URL</span><input name="webhook_url" type="url"></label>
        <label class="field"><span>Redirect URIs (one per line)</span><textarea name="redirect_uris" rows="3"></textarea></label>
        <div class="actions"><button class="button small primary" type="submit">Save configuration</button></div>
        <div class="result" id="config-result" role="status"></div>
      </form>
    </details>
  </aside>
</div>
<div id="toasts" aria-live="polite"></div>
<dialog id="upgrade" aria-labelledby="upgrade-title" aria-describedby="upgrade-reason">
  <form method="dialog" id="upgrade-form">
    <h2 id="upgrade-title">Choose a plan</h2>
    <p class="muted" id="upgrade-reason"></p>
    <fieldset class="plans" id="plan-list"><legend class="sr-only">Plans</legend></fieldset>
    <div class="result bad" id="upgrade-error" role="alert"></div>
    <div class="actions end">
      <button class="button" type="button" id="upgrade-cancel">Cancel</button>
      <button class="button primary" type="submit" id="upgrade-confirm">Confirm</button>
    </div>
  </form>
</dialog>
${hostReady ? '<script src="/_simulator/host.js"></script>' : ''}
${scriptReady ? '<script src="/_simulator/dashboard.js"></script>' : ''}
</body>
</html>`;
  return html(200, page, { nonce, ...(frameSrc ? { frameSrc } : {}) });
}
