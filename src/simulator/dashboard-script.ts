/**
 * The dashboard's browser script, inlined into the page with the page's CSP nonce. It embeds the
 * app with fresh `mp_*` parameters (docs/decisions.md#embed-launch), answers the app's bridge calls through
 * `window.MarketplaceHost.connectApp` (docs/decisions.md#host-bridge), follows the simulator's event stream, and drives
 * the control panel through the control API. Plain ES2020 in a string so that it is served the
 * same from `src/` (tsx) and from `dist/` (tsc): it contains no backticks and no `${`.
 */
export const DASHBOARD_SCRIPT = String.raw`
(() => {
  'use strict';
  const $ = (id) => document.getElementById(id);
  const params = new URLSearchParams(location.search);
  const view = {
    user: params.get('user'),
    theme: params.get('theme') === 'dark' ? 'dark' : 'light',
    locale: params.get('locale') || 'en-US',
    path: params.get('path'),
  };
  const KIND_LABELS = { free: 'Free tier', monthly: 'Monthly subscription', annual: 'Annual subscription, discounted', one_time: 'One-time purchase, lifetime access' };
  const LIVE = ['active', 'trialing'];
  let state = null;
  let connection = null;
  let frame = null;
  let pendingUpgrade = null;
  /** Counts app loads: a load whose token came back after a newer load started gives way to it. */
  let loads = 0;
  /** True while a confirmed plan is being bought: only that purchase's answer settles the chooser. */
  let buying = false;

  function h(tag, props, ...children) {
    const el = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === 'class') el.className = value;
      else if (key === 'text') el.textContent = value;
      else if (key === 'value') el.value = value;
      else el.setAttribute(key, value === true ? '' : String(value));
    }
    for (const child of children) if (child !== null && child !== undefined) el.append(child);
    return el;
  }

  async function api(method, path, body) {
    const init = { method, headers: {} };
    if (body !== undefined) {
      init.headers['content-type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const response = await fetch('/_simulator' + path, init);
    const text = await response.text();
    const data = text ? JSON.parse(text) : null;
    if (!response.ok) throw new Error(data && data.error ? data.error.message : 'HTTP ' + response.status);
    return data;
  }

  function warn(what) {
    return (error) => console.warn('[dashboard] ' + what + ':', error);
  }

  function writeUrl() {
    const url = new URL(location.href);
    url.search = '';
    if (view.user) url.searchParams.set('user', view.user);
    if (view.theme !== 'light') url.searchParams.set('theme', view.theme);
    if (view.locale !== 'en-US') url.searchParams.set('locale', view.locale);
    if (view.path) url.searchParams.set('path', view.path);
    history.replaceState(null, '', url);
  }

  function selectedUser() {
    return state.users.find((user) => user.id === view.user);
  }

  function toast(message, tone) {
    const el = h('div', { class: 'toast', role: 'status', 'data-tone': tone || 'info', text: message });
    $('toasts').append(el);
    setTimeout(() => el.remove(), 6000);
  }

  async function mintContext() {
    const answer = await api('POST', '/context', { user_id: view.user });
    return answer.context;
  }

  /* The embedded app and the host side of the bridge. */

  const handlers = {
    getContext: async () => ({ context: await mintContext(), theme: view.theme, locale: view.locale }),
    resize: ({ height }) => {
      if (frame) frame.style.height = Math.min(Math.max(Math.ceil(height), 120), 20000) + 'px';
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
    setTitle: ({ title }) => {
      $('app-title').textContent = title || state.app_name;
      // A title that is the app's name (what an app shows on its start page) is not said twice.
      document.title = (title && title !== state.app_name ? title + ' · ' : '') + state.app_name + ' · Marketplace';
    },
  };

  async function loadApp() {
    const load = ++loads;
    if (connection) connection.destroy();
    connection = null;
    delete document.body.dataset.appReady;
    // A new page in the frame starts without the old one's title.
    handlers.setTitle({ title: '' });
    const appUrl = state.config.app_url;
    if (!window.MarketplaceHost || !appUrl || $('notice')) return;
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
    connection = window.MarketplaceHost.connectApp(frame, { appOrigin, handlers, timeoutMs: 5000 });
    frame.src = src.href;
    $('app-path').textContent = view.path || '';
    connection.ready.then(() => { document.body.dataset.appReady = 'true'; }, warn('bridge'));
  }

  /* The plan chooser behind openUpgrade. */

  function finishUpgrade(outcome) {
    const resolve = pendingUpgrade;
    pendingUpgrade = null;
    if ($('upgrade').open) $('upgrade').close();
    // The chooser was opened from inside the app: the focus goes back there (to the button that
    // opened it, or to what an upgrade unlocked), as a dialog gives it back to its opener.
    if (frame) frame.focus();
    if (resolve) resolve({ outcome });
  }

  function choosePlan(request) {
    // A plan is being bought for the open chooser: this request waits for no choice, and gets none.
    if (buying) return Promise.resolve({ outcome: 'dismissed' });
    if (pendingUpgrade) finishUpgrade('dismissed');
    const user = selectedUser();
    const current = user.entitlement && LIVE.includes(user.entitlement.status) ? user.entitlement.plan : null;
    const feature = request && request.feature;
    let preselect = request && request.plan && request.plan !== current && state.plans.some((p) => p.id === request.plan) ? request.plan : null;
    if (!preselect && feature) {
      const match = state.plans.find((p) => p.id !== current && p.features.includes(feature));
      preselect = match ? match.id : null;
    }
    const list = $('plan-list');
    list.replaceChildren(h('legend', { class: 'sr-only', text: 'Plans' }));
    for (const plan of state.plans) {
      const isCurrent = plan.id === current;
      list.append(
        h('label', { class: 'plan', 'data-plan': plan.id },
          h('input', { type: 'radio', name: 'plan', value: plan.id, checked: plan.id === preselect, disabled: isCurrent, required: true }),
          h('strong', { text: plan.name }),
          h('span', { class: 'price', text: plan.price }),
          h('span', { class: 'muted', text: KIND_LABELS[plan.kind] || plan.kind }),
          h('ul', null, ...(plan.features.length ? plan.features.map((f) => h('li', { text: f })) : [h('li', { text: 'Core features' })])),
          isCurrent ? h('span', { class: 'badge', text: 'Current plan' }) : null,
        ),
      );
    }
    $('upgrade-reason').textContent = feature
      ? 'A plan with "' + feature + '" is needed. Choose one for ' + user.name + '.'
      : 'Choose a plan for ' + user.name + '.';
    $('upgrade-error').textContent = '';
    $('upgrade-confirm').disabled = false;
    $('upgrade').showModal();
    // The chosen plan, not the first radio (a disabled or unchosen "Free"), takes the focus.
    document.querySelector('#plan-list input:checked')?.focus();
    return new Promise((resolve) => { pendingUpgrade = resolve; });
  }

  $('upgrade-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const chosen = new FormData(event.target).get('plan');
    if (!chosen) {
      $('upgrade-error').textContent = 'Choose a plan.';
      return;
    }
    // The purchase is made once confirmed: until its answer, nothing else settles the chooser
    // (a Cancel or Escape would tell the app "dismissed" of a plan it now holds).
    buying = true;
    $('upgrade-confirm').disabled = true;
    $('upgrade-cancel').disabled = true;
    try {
      const result = await api('POST', '/events', { event: 'subscription.created', data: { user_id: view.user, plan: chosen } });
      if (result.outcome === 'failed') toast('The app backend did not accept the subscription.created webhook (see Webhook deliveries).', 'warning');
      buying = false;
      finishUpgrade('upgraded');
    } catch (error) {
      buying = false;
      $('upgrade-error').textContent = error.message;
      $('upgrade-confirm').disabled = false;
    } finally {
      $('upgrade-cancel').disabled = false;
    }
  });
  $('upgrade-cancel').addEventListener('click', () => finishUpgrade('dismissed'));
  $('upgrade').addEventListener('cancel', (event) => {
    event.preventDefault();
    if (!buying) finishUpgrade('dismissed');
  });

  /* The control panel. */

  function renderUsers() {
    const select = $('user');
    select.replaceChildren(...state.users.map((user) => h('option', { value: user.id, text: user.name + ' (' + user.id + ')' })));
    select.value = view.user;
    $('who-avatar').src = selectedUser().avatar_url;
  }

  function renderEntitlement() {
    const form = $('entitlement-form');
    const e = selectedUser().entitlement;
    form.elements.plan.value = e ? e.plan : 'free';
    form.elements.status.value = e ? e.status : 'active';
    form.elements.features.value = e ? e.features.join(', ') : '';
    form.elements.api_calls.value = e ? e.usage.api_calls : 0;
    form.elements.limit.value = e ? e.usage.limit : 100;
    form.elements.expires_at.value = e && e.expires_at ? e.expires_at : '';
    $('entitlement-note').textContent = e ? '' : selectedUser().name + ' holds no entitlement (GET /entitlements answers 404).';
    $('remove-entitlement').disabled = !e;
  }

  function renderStatic() {
    $('plan-ids').replaceChildren(...state.plans.map((plan) => h('option', { value: plan.id })));
    $('event-kind').replaceChildren(...state.events.map((name) => h('option', { value: name, text: name })));
    $('event-plan').replaceChildren(...state.plans.map((plan) => h('option', { value: plan.id, text: plan.name })));
    syncEventPlan();
    renderConfig();
  }

  function renderConfig() {
    const form = $('config-form');
    form.elements.app_url.value = state.config.app_url || '';
    form.elements.webhook_url.value = state.config.webhook_url || '';
    form.elements.redirect_uris.value = state.config.redirect_uris.join('\n');
  }

  function syncEventPlan() {
    // A cancellation cancels the user's current plan.
    $('event-plan').disabled = $('event-kind').value !== 'subscription.created';
  }

  function time(iso) {
    return iso ? iso.slice(11, 19) : '';
  }

  function renderLogs() {
    $('calls').replaceChildren(...state.api_calls.map((call) => h('li', null,
      h('details', null,
        h('summary', { class: call.status < 300 ? 'ok' : 'bad', text: time(call.at) + ' ' + call.status + ' ' + call.method + ' ' + call.path + ' · ' + call.auth + (call.user_id ? ' · ' + call.user_id : '') }),
        h('pre', { text: JSON.stringify(call.response, null, 2) })))));
    if (!state.api_calls.length) $('calls').append(h('li', { class: 'muted', text: 'No calls yet. Calls to the token endpoint, /whoami and /entitlements show up here.' }));
    $('deliveries').replaceChildren(...state.deliveries.map((d) => h('li', null,
      h('details', null,
        h('summary', { class: d.outcome === 'delivered' ? 'ok' : d.outcome === 'failed' ? 'bad' : 'muted', text: time(d.created_at) + ' ' + d.event + ' · ' + d.outcome + ' · ' + d.attempts.map((a) => a.status === null ? 'error' : a.status).join(', ') }),
        h('pre', { text: JSON.stringify({ data: d.data, url: d.url, attempts: d.attempts }, null, 2) })))));
    if (!state.deliveries.length) $('deliveries').append(h('li', { class: 'muted', text: 'No deliveries yet.' }));
  }

  let refreshTimer = null;
  function scheduleRefresh() {
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(async () => {
      try {
        const next = await api('GET', '/state');
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
  function catchUp(next) {
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
    if (connection) connection.entitlementsChanged().catch(warn('entitlementsChanged'));
  }

  function outcomeText(result) {
    if (result.outcome === 'skipped') return result.event + ': not delivered, no webhook URL is configured.';
    const answer = result.status === null ? 'no answer' : 'HTTP ' + result.status;
    return result.event + ': ' + result.outcome + ' (' + answer + ') after ' + result.attempts + ' attempt' + (result.attempts === 1 ? '' : 's') + '.';
  }

  $('entitlement-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const f = event.target.elements;
    const body = {
      plan: f.plan.value.trim(),
      status: f.status.value,
      features: f.features.value.split(',').map((s) => s.trim()).filter(Boolean),
      usage: { api_calls: Number(f.api_calls.value), limit: Number(f.limit.value) },
      expires_at: f.expires_at.value.trim() || null,
    };
    try {
      await api('PUT', '/users/' + encodeURIComponent(view.user) + '/entitlement', body);
      $('entitlement-result').textContent = 'Saved. The app was told to reload its entitlement.';
    } catch (error) {
      $('entitlement-result').textContent = error.message;
    }
  });

  $('remove-entitlement').addEventListener('click', async () => {
    try {
      await api('DELETE', '/users/' + encodeURIComponent(view.user) + '/entitlement');
    } catch (error) {
      $('entitlement-result').textContent = error.message;
    }
  });

  $('event-kind').addEventListener('change', syncEventPlan);
  $('event-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const name = $('event-kind').value;
    const data = { user_id: view.user };
    if (name === 'subscription.created') data.plan = $('event-plan').value;
    $('event-result').textContent = 'Sending ' + name + '…';
    try {
      $('event-result').textContent = outcomeText(await api('POST', '/events', { event: name, data }));
    } catch (error) {
      $('event-result').textContent = error.message;
    }
  });

  $('config-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const f = event.target.elements;
    try {
      await api('PUT', '/config', {
        app_url: f.app_url.value.trim() || null,
        webhook_url: f.webhook_url.value.trim() || null,
        redirect_uris: f.redirect_uris.value.split('\n').map((s) => s.trim()).filter(Boolean),
      });
      $('config-result').textContent = 'Saved.';
    } catch (error) {
      $('config-result').textContent = error.message;
    }
  });

  $('user').addEventListener('change', (event) => {
    view.user = event.target.value;
    $('entitlement-result').textContent = '';
    $('event-result').textContent = '';
    $('who-avatar').src = selectedUser().avatar_url;
    writeUrl();
    renderEntitlement();
    loadApp().catch(warn('load'));
  });

  $('theme').addEventListener('change', (event) => {
    view.theme = event.target.value;
    document.documentElement.dataset.theme = view.theme;
    writeUrl();
    if (connection) connection.themeChanged(view.theme).catch(warn('themeChanged'));
  });

  $('locale').addEventListener('change', (event) => {
    view.locale = event.target.value;
    writeUrl();
    if (connection) connection.localeChanged(view.locale).catch(warn('localeChanged'));
  });

  $('reload').addEventListener('click', () => loadApp().catch(warn('load')));

  function listen() {
    const stream = new EventSource('/_simulator/stream');
    stream.addEventListener('entitlement', (event) => {
      const data = JSON.parse(event.data);
      const user = state.users.find((u) => u.id === data.user_id);
      if (user) user.entitlement = data.entitlement;
      if (data.user_id !== view.user) return;
      renderEntitlement();
      // The simulator sends this after the webhook (if any) was answered: the backend cache is fresh.
      if (connection) connection.entitlementsChanged().catch(warn('entitlementsChanged'));
    });
    stream.addEventListener('api_call', scheduleRefresh);
    stream.addEventListener('delivery', scheduleRefresh);
    stream.addEventListener('config', (event) => {
      const config = JSON.parse(event.data);
      const reload = config.app_url !== state.config.app_url;
      state.config = config;
      renderConfig();
      // A new app origin needs a new page: the frame-src of the page's CSP names the app origin.
      if (reload) location.reload();
    });
    // Also after a reconnection (the simulator cuts a stream whose reader fell behind).
    stream.addEventListener('state', (event) => catchUp(JSON.parse(event.data)));
    stream.addEventListener('open', () => { document.body.dataset.stream = 'open'; });
  }

  async function start() {
    state = await api('GET', '/state');
    if (!view.user || !state.users.some((u) => u.id === view.user)) view.user = state.current_user_id;
    document.documentElement.dataset.theme = view.theme;
    $('theme').value = view.theme;
    if (![...$('locale').options].some((o) => o.value === view.locale)) $('locale').append(h('option', { text: view.locale }));
    $('locale').value = view.locale;
    renderUsers();
    renderStatic();
    renderEntitlement();
    renderLogs();
    writeUrl();
    listen();
    await loadApp();
  }

  start().catch((error) => toast('The dashboard failed to start: ' + error.message, 'error'));
})();
`;
