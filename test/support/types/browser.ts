// Page code as an app writes it from the docs, type-checked against the built package (see
// test/node/types.test.ts). Every line without a marker must compile with no cast; every line
// after `// @ts-expect-error` is a mistake the types must refuse: once one compiles, tsc reports
// the directive as unused and the test fails.
import {
  createKit, getKit, isKitError, checkAccess, KIT_CHANGE_EVENT, MarketplaceKitError,
  type ErrorCode, type Kit, type KitOptions, type KitState, type UpgradeOutcome,
} from 'marketplace-app-kit';
import {
  BUILT_IN_LOCALES, MarketplaceElement, MpGate, MpUpgradeEvent, defineElements, elements, loadLocale, localeDirection, registerLocale,
  type BaseStrings, type BuiltInLocale, type ElementState, type GateAccess, type GateStrings, type LocalePack, type LocaleTexts, type UsageLevel,
} from 'marketplace-app-kit/elements';
import { connectApp } from 'marketplace-app-kit/host';
import { html } from 'lit';

declare function greet(name: string): void;
declare function show(value: unknown): void;

// ── createKit and its options ─────────────────────────────────────────────────────────────────
const kit: Kit = await createKit({ backend: '/api/marketplace', hostOrigins: ['https://dashboard.marketplace.example'] });
await createKit({
  backend: '/api/marketplace',
  hostOrigins: ['https://dashboard.marketplace.example'],
  bearerOrigins: ['https://api.example'],
  fetch: (input, init) => fetch(input, init),
  timeoutMs: 8000,
  bridgeTimeoutMs: 3000,
  upgradeTimeoutMs: 5 * 60_000,
  autoResize: false,
  refreshMarginMs: 30_000,
  planNames: { pro_monthly: 'Pro' },
});
// Every optional option takes undefined (exactOptionalPropertyTypes is on here).
await createKit({ backend: '/api/marketplace', hostOrigins: [], timeoutMs: undefined, planNames: undefined });
const origins = ['https://dashboard.marketplace.example'] as const;
await createKit({ backend: '/api/marketplace', hostOrigins: origins }); // a readonly list

// @ts-expect-error: backend is required
await createKit({ hostOrigins: [] });
// @ts-expect-error: hostOrigins is required
await createKit({ backend: '/api/marketplace' });
// @ts-expect-error: a misspelled option
await createKit({ backend: '/api/marketplace', hostOrigins: [], timeoutMS: 8000 });
// @ts-expect-error: hostOrigins is a list, not one origin
await createKit({ backend: '/api/marketplace', hostOrigins: 'https://dashboard.marketplace.example' });
// @ts-expect-error: times are numbers of milliseconds
await createKit({ backend: '/api/marketplace', hostOrigins: [], timeoutMs: '8000' });
// @ts-expect-error: autoResize is a boolean
await createKit({ backend: '/api/marketplace', hostOrigins: [], autoResize: 'yes' });
// @ts-expect-error: planNames maps plan ids to texts
await createKit({ backend: '/api/marketplace', hostOrigins: [], planNames: { pro_monthly: 1 } });
// @ts-expect-error: createKit takes one options object
await createKit('/api/marketplace');
const options: KitOptions = { backend: '/api/marketplace', hostOrigins: [] };
// @ts-expect-error: the options object holds only what the table lists
const extra: KitOptions = { ...options, hostOrigin: 'https://dashboard.marketplace.example' };

// ── the kit ───────────────────────────────────────────────────────────────────────────────────
const state: KitState = kit.state;
if (kit.state === 'ready') greet(kit.user!.name);
// @ts-expect-error: no such state
if (kit.state === 'signed-in') show(state);
const errorCode: ErrorCode | undefined = kit.error?.code;
const plan: string | undefined = kit.entitlement?.plan;
const used: number | undefined = kit.entitlement?.usage.api_calls;
const granted: boolean = kit.has('export') && kit.hasPlan('pro_monthly') && kit.hasPlan(['pro_monthly', 'pro_annual']);
const decision = kit.access({ feature: 'export', plan: ['pro_monthly', 'pro_annual'], metered: true });
if (!decision.granted && decision.reason === 'over_quota') show(decision);
// @ts-expect-error: no such reason
if (decision.reason === 'quota') show(decision);
// @ts-expect-error: the requirement's keys are feature, plan and metered
kit.access({ features: ['export'] });
// @ts-expect-error: has() takes one feature
kit.has(['export']);
const reports: unknown = await kit.fetch('/api/reports').then((response) => response.json());
await kit.fetch(new URL('https://api.example/v1'), { method: 'POST', body: JSON.stringify({}), headers: { 'Content-Type': 'application/json' } });
await kit.fetch(new Request('/api/notes'), { signal: AbortSignal.timeout(1000) });
// @ts-expect-error: kit.fetch takes fetch's arguments
await kit.fetch('/api/reports', 'POST');
await kit.host?.navigate('/reports/7');
await kit.host?.toast('Saved', 'success');
await kit.host?.toast('Saved');
// @ts-expect-error: tone is info, success, warning or error
await kit.host?.toast('Saved', 'ok');
await kit.host?.resize();
const { outcome: chosen } = (await kit.host?.openUpgrade({ plan: 'pro_monthly' })) ?? { outcome: 'dismissed' };
const outcome: UpgradeOutcome = await kit.upgrade({ plan: 'pro_monthly', feature: 'export' });
await kit.upgrade();
// @ts-expect-error: upgrade's option is plan, not plans
await kit.upgrade({ plans: ['pro_monthly'] });
// @ts-expect-error: the outcome is upgraded or dismissed
if (outcome === 'cancelled') show(outcome);
await kit.signIn('/reports');
await kit.signIn();
await kit.signOut();
await kit.refresh();
const unsubscribe: () => void = kit.subscribe((changed) => show(changed.state));
unsubscribe();
kit.addEventListener(KIT_CHANGE_EVENT, (event) => show(event.type));
kit.addEventListener('change', () => show(kit.theme));
// @ts-expect-error: what the kit holds is read only
kit.state = 'ready';
// @ts-expect-error: what the kit holds is read only
kit.user = null;
// @ts-expect-error: planNames is frozen
kit.planNames.pro_monthly = 'Pro';
const theme: 'light' | 'dark' = kit.theme;
const maybeKit: Kit | null = getKit();
window.addEventListener('mp-kit-created', (event) => show(event.detail.state));
window.addEventListener('mp-kit-destroyed', (event) => {
  const gone: Kit = event.detail;
  show(gone.destroyed);
});
show(checkAccess(kit.entitlement, { plan: 'pro_monthly' }).reason);

// ── errors ────────────────────────────────────────────────────────────────────────────────────
try {
  await kit.fetch('/api/reports');
} catch (error) {
  if (isKitError(error)) {
    const code: ErrorCode = error.code;
    const status: number | undefined = error.status;
    show([code, status, error.message, error.upstreamCode, error.retryAfterMs]);
  }
  if (isKitError(error, 'ERR_SESSION_REFRESH_FAILED')) {
    const refreshFailed: 'ERR_SESSION_REFRESH_FAILED' = error.code;
    show([refreshFailed, error.cause]);
    // @ts-expect-error: narrowed to the code asked for
    const other: 'ERR_TIMEOUT' = error.code;
  }
  // @ts-expect-error: no such error code
  if (isKitError(error, 'ERR_NOPE')) show(error);
  // @ts-expect-error: an unknown error has no code until narrowed
  show(error.code);
  if (error instanceof MarketplaceKitError) show(error.code satisfies ErrorCode);
}
// @ts-expect-error: a kit error needs a known code
new MarketplaceKitError('ERR_NOPE', 'no');

// ── elements: properties through HTMLElementTagNameMap ────────────────────────────────────────
const gate = document.querySelector('mp-gate');
if (gate) {
  gate.feature = 'export';
  gate.plan = ['pro_monthly', 'pro_annual'];
  gate.plan = 'pro_monthly pro_annual';
  gate.metered = true;
  gate.headingLevel = 3;
  gate.kit = kit;
  gate.kit = null;
  gate.theme = 'dark';
  gate.strings = { upgrade: 'Mettre à niveau' };
  const look: GateAccess | undefined = gate.access;
  const shown: ElementState = gate.state;
  show([look, shown, gate.decision?.granted, gate.decision?.reason]);
  // @ts-expect-error: access is set by the element
  gate.access = 'granted';
  // @ts-expect-error: state is set by the element
  gate.state = 'ready';
  // @ts-expect-error: decision is set by the element
  gate.decision = { granted: true, reason: 'granted' };
  // @ts-expect-error: metered is a boolean
  gate.metered = 'true';
  // @ts-expect-error: no such text
  gate.strings = { upgrad: 'Mettre à niveau' };
  // @ts-expect-error: texts are strings
  gate.strings = { upgrade: 1 };
  // @ts-expect-error: theme is light or dark
  gate.theme = 'blue';
  // @ts-expect-error: plan is text or a list of texts
  gate.plan = 1;
  // @ts-expect-error: no such property
  gate.features = ['export'];
}
const gateByTag: MpGate | null = document.querySelector('mp-gate');
const created: MpGate = document.createElement('mp-gate');
const upgradeButton = document.querySelector('mp-upgrade-button')!;
upgradeButton.plan = ['pro_monthly', 'pro_annual'];
upgradeButton.feature = 'export';
upgradeButton.label = 'Passer à {plan}';
upgradeButton.disabled = true;
upgradeButton.strings = { planLabel: 'Passer à {plan}', current: 'Forfait actuel' };
// @ts-expect-error: the upgrade button's texts are its own
upgradeButton.strings = { lockedHeading: 'x' };
const signIn = document.querySelector('mp-sign-in-button')!;
signIn.returnTo = '/reports';
signIn.label = 'Sign in';
signIn.disabled = false;
// @ts-expect-error: the property is returnTo
signIn.return_to = '/reports';
const meter = document.querySelector('mp-usage-meter')!;
meter.warning = 0.75;
meter.warning = '0.75';
meter.exceeded = 1;
const level: UsageLevel | undefined = meter.level;
// @ts-expect-error: level is set by the element
meter.level = 'ok';
// @ts-expect-error: warning is a share, a number or numeric text
meter.warning = true;
const badge = document.querySelector('mp-plan-badge')!;
const status: string | undefined = badge.status;
// @ts-expect-error: status is set by the element
badge.status = 'active';
const userBadge = document.querySelector('mp-user-badge')!;
userBadge.strings = { signedOut: 'Nicht angemeldet' };
// @ts-expect-error: querySelector knows the tag: a gate is no upgrade button
const wrongTag: MpGate | null = document.querySelector('mp-upgrade-button');
MpGate.defaultStrings = { ...MpGate.defaultStrings, upgrade: 'Mettre à niveau' };
const defaults: GateStrings = MpGate.defaultStrings;
// @ts-expect-error: defaultStrings holds every text
MpGate.defaultStrings = { upgrade: 'Mettre à niveau' };
defineElements();
defineElements(customElements);
const GateClass: typeof MpGate = elements['mp-gate'];

// An element of your own on the base class (docs/elements.md: "to build your own"): its texts are typed.
type TrialStrings = BaseStrings & { ends: string };
declare module 'marketplace-app-kit/elements' {
  interface ElementTexts {
    'mp-trial-banner': TrialStrings;
  }
}
class MpTrialBanner extends MarketplaceElement<TrialStrings> {
  static override defaultStrings: TrialStrings = { ...MarketplaceElement.defaultStrings, ends: 'Your trial ends {date}' };
  override render() {
    // @ts-expect-error: no such text
    show(this._t('starts'));
    return html`<p>${this._t('ends', { date: this._date(this._kit?.entitlement?.expires_at) })}</p>`;
  }
}
customElements.define('mp-trial-banner', MpTrialBanner);

// ── texts in other languages (docs/guides/locales.md) ─────────────────────────────────────────
registerLocale('en', { 'mp-gate': { upgrade: 'See plans' }, common: { notConnected: 'Open this app from Acme' } });
registerLocale('fi', async () => ({ default: { 'mp-gate': { lockedHeading: 'Avaa {feature}' } } }));
registerLocale('de', { 'mp-gate': { overQuotaText: { one: '{limit} Aufruf', other: '{limit} Aufrufe' } } });
// @ts-expect-error: no element has that tag
registerLocale('de', { 'mp-gaet': { upgrade: 'Upgraden' } });
// @ts-expect-error: the gate has no such text
registerLocale('de', { 'mp-gate': { upgarde: 'Upgraden' } });
// @ts-expect-error: plural forms need `other`
registerLocale('de', { 'mp-gate': { overQuotaText: { one: '{limit} Aufruf' } } });
// @ts-expect-error: a text is text
registerLocale('de', { common: { loading: 5 } });
// Your own element's texts, once ElementTexts knows its section.
registerLocale('de', { 'mp-trial-banner': { ends: 'Ihre Testphase endet am {date}' } });
const partial: LocaleTexts = { 'mp-usage-meter': { label: 'Aufrufe' } };
// @ts-expect-error: a whole pack has every text
const incomplete: LocalePack = { common: { loading: 'Laden…' } };
const first: BuiltInLocale = BUILT_IN_LOCALES[0];
const dir: 'ltr' | 'rtl' = localeDirection(kit.locale);
await loadLocale('ar-EG');
show([partial, incomplete, first, dir]);

// ── element events: GlobalEventHandlersEventMap ───────────────────────────────────────────────
gate?.addEventListener('mp-access-change', (event) => {
  const isGranted: boolean = event.granted;
  show([isGranted, event.reason]);
  // @ts-expect-error: mp-access-change carries granted and reason, no outcome
  show(event.outcome);
});
gate?.addEventListener('mp-upgrade', (event) => {
  const upgraded: UpgradeOutcome = event.outcome;
  show([upgraded, event.plan, event.feature]);
});
document.addEventListener('mp-upgrade-request', (event) => {
  if (!getKit()?.embedded) {
    event.preventDefault();
    location.href = `/pricing?plan=${encodeURIComponent(event.plan ?? '')}`;
  }
  // @ts-expect-error: plan may be undefined
  const planId: string = event.plan;
});
window.addEventListener('mp-sign-in-request', (event) => show(event.returnTo));
meter.addEventListener('mp-usage-level', (event) => {
  const now: UsageLevel = event.level;
  // @ts-expect-error: the levels are ok, warning and exceeded
  if (event.level === 'over') show(now);
});
signIn.addEventListener('mp-error', (event) => {
  const code: ErrorCode = event.error.code;
  if (isKitError(event.error, 'ERR_NOT_EMBEDDED')) show(code);
});
document.body.addEventListener('mp-upgrade', (event) => {
  if (event instanceof MpUpgradeEvent) show(event.outcome);
});
// @ts-expect-error: an event's fields are read only
document.addEventListener('mp-upgrade', (event) => { event.outcome = 'upgraded'; });

// ── the dashboard side ────────────────────────────────────────────────────────────────────────
declare const iframe: HTMLIFrameElement;
const connection = connectApp(iframe, {
  appOrigin: 'https://app.example',
  timeoutMs: 5000,
  handlers: {
    getContext: async () => ({ context: 'token', theme: 'dark', locale: 'fr-CA' }),
    resize: ({ height }) => { iframe.style.height = `${height}px`; },
    openUpgrade: async ({ plan, feature }) => ({ outcome: plan && feature ? 'upgraded' : 'dismissed' }),
    toast: ({ message, tone }) => show([message, tone]),
  },
});
await connection.ready;
await connection.themeChanged('dark');
await connection.entitlementsChanged();
// @ts-expect-error: theme is light or dark
await connection.themeChanged('blue');
// @ts-expect-error: getContext is required
connectApp(iframe, { appOrigin: 'https://app.example', handlers: {} });
connectApp(iframe, {
  appOrigin: 'https://app.example',
  handlers: {
    getContext: () => ({ context: 'token' }),
    // @ts-expect-error: the plan chooser's outcome is upgraded or dismissed
    openUpgrade: () => ({ outcome: 'bought' }),
  },
});
// @ts-expect-error: connectApp needs the iframe element
connectApp('#app', { appOrigin: 'https://app.example', handlers: { getContext: () => ({ context: 'token' }) } });

show([reports, granted, plan, used, errorCode, chosen, theme, maybeKit, gateByTag, created, level, status, defaults, GateClass, extra]);
export {};
