/**
 * The simulator dashboard's browser code, built by Vite (`vite build --mode dashboard`) into
 * `dist/cdn/marketplace-dashboard.js` and served at `/_simulator/dashboard.js`. It embeds the app
 * with fresh `mp_*` parameters (docs/simulator.md#the-dashboard), answers the app's bridge calls
 * through `window.MarketplaceHost.connectApp` (its handlers are typed by the bridge protocol, see
 * docs/host.md), follows the simulator's event stream, and drives the control panel through the
 * control API.
 */
import type { HostConnection, HostHandlers } from '../host/index.js';
import type { Entitlement } from '../shared/schemas.js';
import type { SimulatorSnapshot } from './index.js';

declare global {
  interface Window {
    /** `dist/cdn/marketplace-host.js` (the simulator's `hostBundle`), loaded before this script. */
    MarketplaceHost?: typeof import('../host/index.js');
  }
}

type Theme = 'light' | 'dark';
type Tone = 'info' | 'success' | 'warning' | 'error';
type Outcome = 'upgraded' | 'dismissed';
type Plan = SimulatorSnapshot['plans'][number];
type User = SimulatorSnapshot['users'][number];
/** What `sim.sendEvent` (and `POST /_simulator/events`) answers. */
interface EventAnswer {
  event: string;
  outcome: string;
  status: number | null;
  attempts: number;
}

const LIVE = ['active', 'trialing'];

/** The element with `id`, as the page's markup (src/simulator/dashboard.ts) has it. */
function $<T extends HTMLElement = HTMLElement>(id: string): T {
  return document.getElementById(id) as T;
}
/** The named controls of a form of the page. */
const fields = (form: HTMLFormElement) => form.elements as unknown as Record<string, HTMLInputElement & HTMLSelectElement & HTMLTextAreaElement>;

const params = new URLSearchParams(location.search);
const view = {
  user: params.get('user') ?? '',
  theme: (params.get('theme') === 'dark' ? 'dark' : 'light') as Theme,
  locale: params.get('locale') || 'en-US',
  path: params.get('path'),
};
let state: SimulatorSnapshot;
let connection: HostConnection | null = null;
let frame: HTMLIFrameElement | null = null;
let pendingUpgrade: ((answer: { outcome: Outcome }) => void) | null = null;
/** Counts app loads: a load whose token came back after a newer load started gives way to it. */
let loads = 0;
/** True while a confirmed plan is being bought: only that purchase's answer settles the chooser. */
let buying = false;

type Props = Record<string, string | number | boolean | null | undefined>;

function h<K extends keyof HTMLElementTagNameMap>(tag: K, props?: Props | null, ...children: Array<Node | string | null | undefined>): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'class') el.className = String(value);
    else if (key === 'text') el.textContent = String(value);
    else if (key === 'value') (el as HTMLInputElement).value = String(value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children) if (child !== null && child !== undefined) el.append(child);
  return el;
}

async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const init: RequestInit & { headers: Record<string, string> } = { method, headers: {} };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await fetch(`/_simulator${path}`, init);
  const text = await response.text();
  const data = text ? (JSON.parse(text) as { error?: { message?: string } }) : null;
  if (!response.ok) throw new Error(data?.error?.message ?? `HTTP ${response.status}`);
  return data as T;
}

const warn = (what: string) => (error: unknown) => console.warn(`[dashboard] ${what}:`, error);
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

function writeUrl(): void {
  const url = new URL(location.href);
  url.search = '';
  if (view.user) url.searchParams.set('user', view.user);
  if (view.theme !== 'light') url.searchParams.set('theme', view.theme);
  if (view.locale !== 'en-US') url.searchParams.set('locale', view.locale);
  if (view.path) url.searchParams.set('path', view.path);
  history.replaceState(null, '', url);
}

function selectedUser(): User {
  return state.users.find((user) => user.id === view.user)!;
}

function toast(message: string, tone?: Tone): void {
  const el = h('div', { class: 'toast', role: 'status', 'data-tone': tone ?? 'info', text: message });
  $('toasts').append(el);
  setTimeout(() => el.remove(), 6000);
}

async function mintContext(): Promise<string> {
  return (await api<{ context: string }>('POST', '/context', { user_id: view.user })).context;
}

/* The embedded app and the host side of the bridge. */

const handlers = {
  getContext: async () => ({ context: await mintContext(), theme: view.theme, locale: view.locale }),
  resize: ({ height }) => {
    if (frame) frame.style.height = `${Math.min(Math.max(Math.ceil(height), 120), 20000)}px`;
  },
  navigate: ({ path }) => {
    view.path = path;
    $('app-path').textContent = path;
    writeUrl();
  },
  openExternal: ({ url }) => {
    window.location.assign(url);
  },
  openUpgrade: (request) => choosePlan(request),
  toast: ({ message, tone }) => toast(message, tone),
  setTitle: ({ title }) => setTitle(title),
} satisfies HostHandlers;

function setTitle(title: string): void {
  $('app-title').textContent = title || state.app_name;
  // A title that is the app's name (what an app shows on its start page) is not said twice.
  document.title = `${title && title !== state.app_name ? `${title} · ` : ''}${state.app_name} · Marketplace`;
}

async function loadApp(): Promise<void> {
  const load = ++loads;
  connection?.destroy();
  connection = null;
  delete document.body.dataset['appReady'];
  // A new page in the frame starts without the old one's title.
  setTitle('');
  const appUrl = state.config.app_url;
  const host = window.MarketplaceHost;
  if (!host || !appUrl || $('notice')) return;
  const appOrigin = new URL(appUrl).origin;
  let src = new URL(appUrl);
  if (view.path) {
    const target = new URL(view.path, appUrl);
    if (target.origin === appOrigin) src = target;
  }
  const context = await mintContext();
  // Another user picked, or the app reloaded, while this token was minted: that load wins,
  // whichever token comes back last.
  if (load !== loads) return;
  src.searchParams.set('mp_context', context);
  src.searchParams.set('mp_host', location.origin);
  src.searchParams.set('mp_locale', view.locale);
  src.searchParams.set('mp_theme', view.theme);
  frame = h('iframe', {
    id: 'app-frame',
    title: state.app_name,
    // No popups and no top navigation: the app asks the dashboard (openExternal) instead.
    sandbox: 'allow-scripts allow-same-origin allow-forms allow-downloads',
    referrerpolicy: 'strict-origin',
  });
  $('frame').replaceChildren(frame);
  connection = host.connectApp(frame, { appOrigin, handlers, timeoutMs: 5000 });
  frame.src = src.href;
  $('app-path').textContent = view.path ?? '';
  connection.ready.then(() => {
    document.body.dataset['appReady'] = 'true';
  }, warn('bridge'));
}

/* The plan chooser behind openUpgrade. */

function finishUpgrade(outcome: Outcome): void {
  const resolve = pendingUpgrade;
  pendingUpgrade = null;
  const dialog = $<HTMLDialogElement>('upgrade');
  if (dialog.open) dialog.close();
  // The chooser was opened from inside the app: the focus goes back there (to the button that
  // opened it, or to what an upgrade unlocked), as a dialog gives it back to its opener.
  frame?.focus();
  resolve?.({ outcome });
}

function choosePlan(request: { plan?: string | undefined; feature?: string | undefined }): Promise<{ outcome: Outcome }> {
  // A plan is being bought for the open chooser: this request waits for no choice, and gets none.
  if (buying) return Promise.resolve({ outcome: 'dismissed' });
  if (pendingUpgrade) finishUpgrade('dismissed');
  const user = selectedUser();
  const current = user.entitlement && LIVE.includes(user.entitlement.status) ? user.entitlement.plan : null;
  const feature = request.feature;
  let preselect = request.plan && request.plan !== current && state.plans.some((p) => p.id === request.plan) ? request.plan : null;
  if (!preselect && feature) preselect = state.plans.find((p) => p.id !== current && p.features.includes(feature))?.id ?? null;
  const list = $('plan-list');
  list.replaceChildren(h('legend', { class: 'sr-only', text: 'Plans' }));
  for (const plan of state.plans) list.append(planCard(plan, plan.id === current, plan.id === preselect));
  $('upgrade-reason').textContent = feature ? `A plan with "${feature}" is needed. Choose one for ${user.name}.` : `Choose a plan for ${user.name}.`;
  $('upgrade-error').textContent = '';
  $<HTMLButtonElement>('upgrade-confirm').disabled = false;
  $<HTMLDialogElement>('upgrade').showModal();
  // The chosen plan, not the first radio (a disabled or unchosen "Free"), takes the focus.
  document.querySelector<HTMLInputElement>('#plan-list input:checked')?.focus();
  return new Promise((resolve) => {
    pendingUpgrade = resolve;
  });
}

function planCard(plan: Plan, isCurrent: boolean, checked: boolean): HTMLElement {
  return h(
    'label',
    { class: 'plan', 'data-plan': plan.id },
    h('input', { type: 'radio', name: 'plan', value: plan.id, checked, disabled: isCurrent, required: true }),
    h('strong', { text: plan.name }),
    h('span', { class: 'price', text: plan.price }),
    // The config's description, or how the plan is billed: nothing the developer did not say.
    h('span', { class: 'muted', text: plan.description }),
    plan.features.length ? h('ul', null, ...plan.features.map((f) => h('li', { text: f }))) : null,
    isCurrent ? h('span', { class: 'badge', text: 'Current plan' }) : null,
  );
}

$('upgrade-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const chosen = new FormData(event.target as HTMLFormElement).get('plan');
  if (!chosen) {
    $('upgrade-error').textContent = 'Choose a plan.';
    return;
  }
  // The purchase is made once confirmed: until its answer, nothing else settles the chooser
  // (a Cancel or Escape would tell the app "dismissed" of a plan it now holds).
  buying = true;
  $<HTMLButtonElement>('upgrade-confirm').disabled = true;
  $<HTMLButtonElement>('upgrade-cancel').disabled = true;
  try {
    const result = await api<EventAnswer>('POST', '/events', { event: 'subscription.created', data: { user_id: view.user, plan: chosen } });
    if (result.outcome === 'failed') toast('The app backend did not accept the subscription.created webhook (see Webhook deliveries).', 'warning');
    buying = false;
    finishUpgrade('upgraded');
  } catch (error) {
    buying = false;
    $('upgrade-error').textContent = messageOf(error);
    $<HTMLButtonElement>('upgrade-confirm').disabled = false;
  } finally {
    $<HTMLButtonElement>('upgrade-cancel').disabled = false;
  }
});
$('upgrade-cancel').addEventListener('click', () => finishUpgrade('dismissed'));
$('upgrade').addEventListener('cancel', (event) => {
  event.preventDefault();
  if (!buying) finishUpgrade('dismissed');
});

/* The control panel. */

function renderUsers(): void {
  const select = $<HTMLSelectElement>('user');
  select.replaceChildren(...state.users.map((user) => h('option', { value: user.id, text: `${user.name} (${user.id})` })));
  select.value = view.user;
  $<HTMLImageElement>('who-avatar').src = selectedUser().avatar_url;
}

function renderEntitlement(): void {
  const f = fields($<HTMLFormElement>('entitlement-form'));
  const e: Entitlement | null = selectedUser().entitlement;
  // A user without an entitlement: the catalogue's first plan (the config file's, or `free`).
  f['plan']!.value = e ? e.plan : (state.plans[0]?.id ?? '');
  f['status']!.value = e ? e.status : 'active';
  f['features']!.value = e ? e.features.join(', ') : '';
  f['api_calls']!.value = String(e ? e.usage.api_calls : 0);
  f['limit']!.value = String(e ? e.usage.limit : 100);
  f['expires_at']!.value = e?.expires_at ?? '';
  $('entitlement-note').textContent = e ? '' : `${selectedUser().name} holds no entitlement (GET /entitlements answers 404).`;
  $<HTMLButtonElement>('remove-entitlement').disabled = !e;
}

function renderStatic(): void {
  $('plan-ids').replaceChildren(...state.plans.map((plan) => h('option', { value: plan.id })));
  $('event-kind').replaceChildren(...state.events.map((name) => h('option', { value: name, text: name })));
  $('event-plan').replaceChildren(...state.plans.map((plan) => h('option', { value: plan.id, text: plan.name })));
  syncEventPlan();
  renderConfig();
}

function renderConfig(): void {
  const f = fields($<HTMLFormElement>('config-form'));
  f['app_url']!.value = state.config.app_url ?? '';
  f['webhook_url']!.value = state.config.webhook_url ?? '';
  f['redirect_uris']!.value = state.config.redirect_uris.join('\n');
}

function syncEventPlan(): void {
  // A cancellation cancels the user's current plan.
  $<HTMLSelectElement>('event-plan').disabled = $<HTMLSelectElement>('event-kind').value !== 'subscription.created';
}

const time = (iso: string | null | undefined) => (iso ? iso.slice(11, 19) : '');

function renderLogs(): void {
  $('calls').replaceChildren(
    ...state.api_calls.map((call) =>
      h(
        'li',
        null,
        h(
          'details',
          null,
          h('summary', { class: call.status < 300 ? 'ok' : 'bad', text: `${time(call.at)} ${call.status} ${call.method} ${call.path} · ${call.auth}${call.user_id ? ` · ${call.user_id}` : ''}` }),
          h('pre', { text: JSON.stringify(call.response, null, 2) }),
        ),
      ),
    ),
  );
  if (!state.api_calls.length) $('calls').append(h('li', { class: 'muted', text: 'No calls yet. Calls to the token endpoint, /whoami and /entitlements show up here.' }));
  $('deliveries').replaceChildren(
    ...state.deliveries.map((d) =>
      h(
        'li',
        null,
        h(
          'details',
          null,
          h('summary', {
            class: d.outcome === 'delivered' ? 'ok' : d.outcome === 'failed' ? 'bad' : 'muted',
            text: `${time(d.created_at)} ${d.event} · ${d.outcome} · ${d.attempts.map((a) => (a.status === null ? 'error' : a.status)).join(', ')}`,
          }),
          h('pre', { text: JSON.stringify({ data: d.data, url: d.url, attempts: d.attempts }, null, 2) }),
        ),
      ),
    ),
  );
  if (!state.deliveries.length) $('deliveries').append(h('li', { class: 'muted', text: 'No deliveries yet.' }));
}

let refreshTimer: ReturnType<typeof setTimeout> | undefined;
function scheduleRefresh(): void {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(async () => {
    try {
      const next = await api<SimulatorSnapshot>('GET', '/state');
      state.api_calls = next.api_calls;
      state.deliveries = next.deliveries;
      renderLogs();
    } catch (error) {
      warn('refresh')(error);
    }
  }, 150);
}

/**
 * The stream's first event on each (re)connection: the state as of then. What changed since the
 * page's own GET /state, or while the stream was down, shows as the events would have shown it.
 */
function catchUp(next: SimulatorSnapshot): void {
  if (next.config.app_url !== state.config.app_url) return location.reload();
  const before = JSON.stringify(selectedUser().entitlement);
  state.users = next.users;
  state.config = next.config;
  state.api_calls = next.api_calls;
  state.deliveries = next.deliveries;
  renderConfig();
  renderLogs();
  if (JSON.stringify(selectedUser().entitlement) === before) return;
  renderEntitlement();
  connection?.entitlementsChanged().catch(warn('entitlementsChanged'));
}

function outcomeText(result: EventAnswer): string {
  if (result.outcome === 'skipped') return `${result.event}: not delivered, no webhook URL is configured.`;
  const answer = result.status === null ? 'no answer' : `HTTP ${result.status}`;
  return `${result.event}: ${result.outcome} (${answer}) after ${result.attempts} attempt${result.attempts === 1 ? '' : 's'}.`;
}

$('entitlement-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const f = fields(event.target as HTMLFormElement);
  const body = {
    plan: f['plan']!.value.trim(),
    status: f['status']!.value,
    features: f['features']!.value.split(',').map((s) => s.trim()).filter(Boolean),
    usage: { api_calls: Number(f['api_calls']!.value), limit: Number(f['limit']!.value) },
    expires_at: f['expires_at']!.value.trim() || null,
  };
  try {
    await api('PUT', `/users/${encodeURIComponent(view.user)}/entitlement`, body);
    $('entitlement-result').textContent = 'Saved. The app was told to reload its entitlement.';
  } catch (error) {
    $('entitlement-result').textContent = messageOf(error);
  }
});

$('remove-entitlement').addEventListener('click', async () => {
  try {
    await api('DELETE', `/users/${encodeURIComponent(view.user)}/entitlement`);
  } catch (error) {
    $('entitlement-result').textContent = messageOf(error);
  }
});

$('event-kind').addEventListener('change', syncEventPlan);
$('event-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const name = $<HTMLSelectElement>('event-kind').value;
  const data: Record<string, string> = { user_id: view.user };
  if (name === 'subscription.created') data['plan'] = $<HTMLSelectElement>('event-plan').value;
  $('event-result').textContent = `Sending ${name}…`;
  try {
    $('event-result').textContent = outcomeText(await api<EventAnswer>('POST', '/events', { event: name, data }));
  } catch (error) {
    $('event-result').textContent = messageOf(error);
  }
});

$('config-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const f = fields(event.target as HTMLFormElement);
  try {
    await api('PUT', '/config', {
      app_url: f['app_url']!.value.trim() || null,
      webhook_url: f['webhook_url']!.value.trim() || null,
      redirect_uris: f['redirect_uris']!.value.split('\n').map((s) => s.trim()).filter(Boolean),
    });
    $('config-result').textContent = 'Saved.';
  } catch (error) {
    $('config-result').textContent = messageOf(error);
  }
});

$<HTMLSelectElement>('user').addEventListener('change', (event) => {
  view.user = (event.target as HTMLSelectElement).value;
  $('entitlement-result').textContent = '';
  $('event-result').textContent = '';
  $<HTMLImageElement>('who-avatar').src = selectedUser().avatar_url;
  writeUrl();
  renderEntitlement();
  loadApp().catch(warn('load'));
});

$('theme').addEventListener('change', (event) => {
  view.theme = (event.target as HTMLSelectElement).value === 'dark' ? 'dark' : 'light';
  document.documentElement.dataset['theme'] = view.theme;
  writeUrl();
  connection?.themeChanged(view.theme).catch(warn('themeChanged'));
});

$('locale').addEventListener('change', (event) => {
  view.locale = (event.target as HTMLSelectElement).value;
  writeUrl();
  connection?.localeChanged(view.locale).catch(warn('localeChanged'));
});

$('reload').addEventListener('click', () => loadApp().catch(warn('load')));

function listen(): void {
  const stream = new EventSource('/_simulator/stream');
  const read = <T>(event: Event) => JSON.parse((event as MessageEvent<string>).data) as T;
  stream.addEventListener('entitlement', (event) => {
    const data = read<{ user_id: string; entitlement: Entitlement | null }>(event);
    const user = state.users.find((u) => u.id === data.user_id);
    if (user) user.entitlement = data.entitlement;
    if (data.user_id !== view.user) return;
    renderEntitlement();
    // The simulator sends this after the webhook (if any) was answered: the backend cache is fresh.
    connection?.entitlementsChanged().catch(warn('entitlementsChanged'));
  });
  stream.addEventListener('api_call', scheduleRefresh);
  stream.addEventListener('delivery', scheduleRefresh);
  stream.addEventListener('config', (event) => {
    const config = read<SimulatorSnapshot['config']>(event);
    const reload = config.app_url !== state.config.app_url;
    state.config = config;
    renderConfig();
    // A new app origin needs a new page: the frame-src of the page's CSP names the app origin.
    if (reload) location.reload();
  });
  // Also after a reconnection (the simulator cuts a stream whose reader fell behind).
  stream.addEventListener('state', (event) => catchUp(read<SimulatorSnapshot>(event)));
  stream.addEventListener('open', () => {
    document.body.dataset['stream'] = 'open';
  });
}

async function start(): Promise<void> {
  state = await api<SimulatorSnapshot>('GET', '/state');
  if (!view.user || !state.users.some((u) => u.id === view.user)) view.user = state.current_user_id;
  document.documentElement.dataset['theme'] = view.theme;
  $<HTMLSelectElement>('theme').value = view.theme;
  const locale = $<HTMLSelectElement>('locale');
  if (![...locale.options].some((o) => o.value === view.locale)) locale.append(h('option', { text: view.locale }));
  locale.value = view.locale;
  renderUsers();
  renderStatic();
  renderEntitlement();
  renderLogs();
  writeUrl();
  listen();
  await loadApp();
}

start().catch((error: unknown) => toast(`The dashboard failed to start: ${messageOf(error)}`, 'error'));
