/**
 * The simulator's server-rendered pages other than the dashboard: the authorization page
 * (docs/marketplace.md#authorization-page) and the error page shown when an authorization request cannot be redirected back
 * (RFC 6749 §4.1.2.1).
 */
import { escapeHtml as e } from './http.js';
import type { Profile } from '../shared/schemas.js';

export const BASE_CSS = `
:root { color-scheme: light; --ink: #0f172a; --muted: #475569; --line: #e2e8f0; --accent: #4f46e5; --accent-ink: #fff; --bg: #f1f5f9; --card: #fff; --danger: #b91c1c; --ok: #15803d; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
button, input, select, textarea { font: inherit; }
.button { display: inline-flex; align-items: center; justify-content: center; gap: .4rem; padding: .55rem 1rem; border-radius: .5rem; border: 1px solid var(--line); background: var(--card); color: var(--ink); cursor: pointer; font-weight: 500; }
.button:hover { border-color: var(--muted); }
.button.primary { background: var(--accent); border-color: var(--accent); color: var(--accent-ink); }
.button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible { outline: 3px solid var(--accent); outline-offset: 1px; }
`;

const PAGE_CSS = `
main { max-width: 30rem; margin: 3rem auto; padding: 0 1rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: .9rem; padding: 1.75rem; box-shadow: 0 10px 30px -18px rgb(15 23 42 / .35); }
.brand { display: flex; align-items: center; gap: .5rem; font-weight: 700; color: var(--accent); margin-bottom: 1.25rem; }
.brand svg { width: 1.6rem; height: 1.6rem; }
h1 { font-size: 1.3rem; margin: 0 0 .35rem; }
p { margin: .35rem 0; color: var(--muted); }
fieldset { border: 0; padding: 0; margin: 1.25rem 0; min-inline-size: 0; }
legend { font-weight: 600; margin-bottom: .5rem; }
.user { display: flex; align-items: center; gap: .75rem; padding: .55rem .7rem; border: 1px solid var(--line); border-radius: .6rem; margin-bottom: .4rem; cursor: pointer; }
.user:has(input:checked) { border-color: var(--accent); background: color-mix(in srgb, var(--accent) 6%, transparent); }
.user img { width: 2.2rem; height: 2.2rem; border-radius: 50%; }
.user span { min-width: 0; overflow-wrap: anywhere; }
.user small { display: block; color: var(--muted); }
ul.scopes { margin: .5rem 0 0; padding-left: 1.2rem; }
.actions { display: flex; gap: .6rem; justify-content: flex-end; margin-top: 1.5rem; }
.note { font-size: .85rem; margin-top: 1rem; }
code { background: var(--bg); padding: .1rem .3rem; border-radius: .25rem; word-break: break-all; }
.error h1 { color: var(--danger); }
`;

export const LOGO =
  '<svg viewBox="0 0 24 24" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="2"><path d="M4 7h16l-1.5 11a2 2 0 0 1-2 1.8h-9a2 2 0 0 1-2-1.8z"/><path d="M9 7a3 3 0 0 1 6 0"/></svg>';

/** Human descriptions of the scopes the simulator knows. */
export const SCOPES: Record<string, string> = {
  'identity:read': 'See your name, e-mail address and avatar, and which plan of this app you hold',
};

function page(title: string, nonce: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${e(title)}</title>
<style nonce="${nonce}">${BASE_CSS}${PAGE_CSS}</style>
</head>
<body>
<main>${body}</main>
</body>
</html>`;
}

export interface AuthorizePageInput {
  nonce: string;
  appName: string;
  formToken: string;
  scopes: string[];
  redirectUri: string;
  users: Profile[];
  currentUserId: string;
}

export function authorizePage(input: AuthorizePageInput): string {
  const users = input.users
    .map(
      (user) => `<label class="user"><input type="radio" name="user_id" value="${e(user.id)}"${user.id === input.currentUserId ? ' checked' : ''}>
<img src="${e(user.avatar_url)}" alt=""><span>${e(user.name)}<small>${e(user.email)}</small></span></label>`,
    )
    .join('\n');
  const scopes = input.scopes.map((scope) => `<li>${e(Object.hasOwn(SCOPES, scope) ? SCOPES[scope]! : scope)} <small>(<code>${e(scope)}</code>)</small></li>`).join('');
  const returnTo = new URL(input.redirectUri).origin;
  return page(
    `Authorize ${input.appName}`,
    input.nonce,
    `<div class="card">
<div class="brand">${LOGO} Marketplace</div>
<h1>Authorize ${e(input.appName)}</h1>
<p><strong>${e(input.appName)}</strong> wants to:</p>
<ul class="scopes">${scopes}</ul>
<form method="post" action="/oauth/authorize">
<input type="hidden" name="form_token" value="${e(input.formToken)}">
<fieldset><legend>Signed in as</legend>
${users}
</fieldset>
<div class="actions">
<button class="button" type="submit" name="decision" value="deny">Deny</button>
<button class="button primary" type="submit" name="decision" value="approve">Approve</button>
</div>
</form>
<p class="note">You will be sent back to <code>${e(returnTo)}</code>. This is the local marketplace simulator: no real account is used.</p>
</div>`,
  );
}

/** `untrusted`: the client or redirect URI was wrong, so the error cannot go back to the app. */
export function errorPage(nonce: string, title: string, message: string, untrusted: boolean): string {
  return page(
    title,
    nonce,
    `<div class="card error" role="alert">
<div class="brand">${LOGO} Marketplace</div>
<h1>${e(title)}</h1>
<p>${e(message)}</p>
${untrusted ? '<p class="note">You were not sent back to the app, because its client or redirect URI could not be trusted (RFC 6749 §4.1.2.1).</p>' : ''}
</div>`,
  );
}
