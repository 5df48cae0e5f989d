/**
 * The component gallery: each case is a piece of markup and the state of a fake kit. Every case
 * is rendered twice (light, dark), each preview with its own `FakeKit` handed to its elements
 * through their `kit` property, next to the markup itself. The locale picker (or `?locale=ar`)
 * sets every kit's locale live, as the dashboard's `localeChanged` does; elements without a kit
 * get it as their `lang`.
 */
import { BUILT_IN_LOCALES } from 'marketplace-app-kit/elements';
import type { Entitlement } from '../src/shared/schemas.js';
import { MarketplaceKitError } from '../src/shared/errors.js';
import { FakeKit, sampleEntitlement, sampleUser } from '../src/testing/fake-kit.js';

type Theme = 'light' | 'dark';

interface Case {
  /** The state, as the heading of the row. */
  name: string;
  markup: string;
  /** Puts the kit in the state; `null`: the elements get no kit at all ("not connected"). */
  setup: ((kit: FakeKit) => void) | null;
}

interface Section {
  tag: string;
  summary: string;
  cases: Case[];
}

const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
// A data URL, so the avatar shows without a network.
const avatar =
  'data:image/svg+xml,' +
  encodeURIComponent(
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 96 96"><circle cx="48" cy="48" r="48" fill="#7c3aed"/>' +
      '<text x="48" y="60" font-family="system-ui,sans-serif" font-size="36" font-weight="600" fill="#fff" text-anchor="middle">AL</text></svg>',
  );
const user = { ...sampleUser, avatar_url: avatar };
const free = sampleEntitlement({ plan: 'free', features: [], usage: { api_calls: 12, limit: 100 }, expires_at: null });
const pro = sampleEntitlement();
const with_ = (overrides: Partial<Entitlement>) => sampleEntitlement(overrides);
const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const ready = (entitlement: Entitlement | null) => (kit: FakeKit) => void kit.setSession(user, entitlement);
/** The moment the dashboard's plan chooser would be open, so the busy state shows. */
const slowChooser = (kit: FakeKit) => {
  const upgrade = kit.upgrade.bind(kit);
  kit.upgrade = (options) => wait(800).then(() => upgrade(options));
};
/** As `ready`, in the dashboard, whose plan chooser the user closes: nothing changes (FakeKit answers `dismissed`). */
const dismissing = (entitlement: Entitlement | null) => (kit: FakeKit) => {
  kit.embedded = true;
  kit.setSession(user, entitlement);
  slowChooser(kit);
};
const loading = () => {};
const signedOut = (kit: FakeKit) => void kit.setSignedOut();
const failed = (kit: FakeKit) =>
  void kit.setError(new MarketplaceKitError('ERR_SESSION_REFRESH_FAILED', 'The session could not be renewed'));
/**
 * Starts on `from` (the free plan unless given); the first upgrade or renewal succeeds after a
 * moment, as the dashboard's plan chooser would, and leaves the user on an active Pro plan.
 */
const upgradable = (from: Entitlement = free) => (kit: FakeKit) => {
  // The plan chooser is the dashboard's: these previews play an app embedded in it.
  kit.embedded = true;
  kit.setSession(user, from);
  kit.scriptUpgrade({ outcome: 'upgraded', entitlement: pro });
  slowChooser(kit);
};

const common = (markup: string): Case[] => [
  { name: 'Loading', markup, setup: loading },
  { name: 'Error', markup, setup: failed },
  { name: 'Not connected (no kit found)', markup, setup: null },
];

const sections: Section[] = [
  {
    tag: 'mp-sign-in-button',
    summary: 'Starts the OAuth sign-in on the developer’s site (inside the dashboard: through the dashboard).',
    cases: [
      {
        name: 'Signed out (click: busy state)',
        markup: '<mp-sign-in-button></mp-sign-in-button>',
        setup: (kit) => {
          kit.setSignedOut();
          kit.onSignIn = () => wait(1500);
        },
      },
      { name: 'Custom label', markup: '<mp-sign-in-button label="Continue with Marketplace"></mp-sign-in-button>', setup: signedOut },
      { name: 'Disabled', markup: '<mp-sign-in-button disabled></mp-sign-in-button>', setup: signedOut },
      { name: 'Signed in', markup: '<mp-sign-in-button></mp-sign-in-button>', setup: ready(pro) },
      ...common('<mp-sign-in-button></mp-sign-in-button>'),
    ],
  },
  {
    tag: 'mp-user-badge',
    summary: 'The signed-in user: avatar, name and email.',
    cases: [
      { name: 'Signed in', markup: '<mp-user-badge></mp-user-badge>', setup: ready(pro) },
      {
        name: 'Avatar fails to load: initials',
        markup: '<mp-user-badge></mp-user-badge>',
        setup: (kit) => void kit.setSession({ ...user, avatar_url: `${location.origin}/avatars/missing.png` }, pro),
      },
      { name: 'Signed out', markup: '<mp-user-badge></mp-user-badge>', setup: signedOut },
      ...common('<mp-user-badge></mp-user-badge>'),
    ],
  },
  {
    tag: 'mp-plan-badge',
    summary: 'The plan and the entitlement’s status.',
    cases: [
      { name: 'Active, renews', markup: '<mp-plan-badge></mp-plan-badge>', setup: ready(pro) },
      { name: 'Free', markup: '<mp-plan-badge></mp-plan-badge>', setup: ready(free) },
      { name: 'Trial', markup: '<mp-plan-badge></mp-plan-badge>', setup: ready(with_({ status: 'trialing', expires_at: iso(Date.now() + 14 * DAY) })) },
      { name: 'Lifetime (no expiry)', markup: '<mp-plan-badge></mp-plan-badge>', setup: ready(with_({ plan: 'lifetime', expires_at: null })) },
      { name: 'Past due', markup: '<mp-plan-badge></mp-plan-badge>', setup: ready(with_({ status: 'past_due' })) },
      { name: 'Cancelled', markup: '<mp-plan-badge></mp-plan-badge>', setup: ready(with_({ status: 'cancelled' })) },
      { name: 'Expired (date passed)', markup: '<mp-plan-badge></mp-plan-badge>', setup: ready(with_({ expires_at: iso(Date.now() - 3 * DAY) })) },
      { name: 'No entitlement', markup: '<mp-plan-badge></mp-plan-badge>', setup: ready(null) },
      { name: 'Signed out', markup: '<mp-plan-badge></mp-plan-badge>', setup: signedOut },
      ...common('<mp-plan-badge></mp-plan-badge>'),
    ],
  },
  {
    tag: 'mp-usage-meter',
    summary: 'API calls used against the plan’s limit.',
    cases: [
      { name: 'OK', markup: '<mp-usage-meter></mp-usage-meter>', setup: ready(pro) },
      { name: 'Warning (85 %)', markup: '<mp-usage-meter></mp-usage-meter>', setup: ready(with_({ usage: { api_calls: 850, limit: 1000 } })) },
      { name: 'Exceeded', markup: '<mp-usage-meter></mp-usage-meter>', setup: ready(with_({ usage: { api_calls: 1000, limit: 1000 } })) },
      {
        name: 'Custom thresholds',
        markup: '<mp-usage-meter warning="0.5" exceeded="0.9"></mp-usage-meter>',
        setup: ready(with_({ usage: { api_calls: 600, limit: 1000 } })),
      },
      { name: 'No entitlement', markup: '<mp-usage-meter></mp-usage-meter>', setup: ready(null) },
      { name: 'Signed out', markup: '<mp-usage-meter></mp-usage-meter>', setup: signedOut },
      ...common('<mp-usage-meter></mp-usage-meter>'),
    ],
  },
  {
    tag: 'mp-upgrade-button',
    summary: 'Opens the dashboard’s plan chooser.',
    cases: [
      { name: 'Free plan (click: upgrades)', markup: '<mp-upgrade-button plan="pro"></mp-upgrade-button>', setup: upgradable() },
      { name: 'Without a plan', markup: '<mp-upgrade-button feature="export"></mp-upgrade-button>', setup: upgradable() },
      { name: 'Already on the plan', markup: '<mp-upgrade-button plan="pro"></mp-upgrade-button>', setup: ready(pro) },
      { name: 'Own plan cancelled (click: renews)', markup: '<mp-upgrade-button plan="pro"></mp-upgrade-button>', setup: upgradable(with_({ status: 'cancelled' })) },
      { name: 'Own plan past due (click: pays)', markup: '<mp-upgrade-button plan="pro"></mp-upgrade-button>', setup: upgradable(with_({ status: 'past_due' })) },
      { name: 'Disabled', markup: '<mp-upgrade-button plan="pro" disabled></mp-upgrade-button>', setup: ready(free) },
      { name: 'Signed out', markup: '<mp-upgrade-button plan="pro"></mp-upgrade-button>', setup: signedOut },
      ...common('<mp-upgrade-button plan="pro"></mp-upgrade-button>'),
    ],
  },
  {
    tag: 'mp-gate',
    summary: 'Its content when the entitlement grants access, a paywall otherwise. Check again on the server.',
    cases: [
      { name: 'Granted', markup: gate('feature="export"'), setup: ready(pro) },
      { name: 'Locked: feature not in the plan (click: upgrades)', markup: gate('feature="export"'), setup: upgradable() },
      { name: 'Locked: needs a plan', markup: gate('plan="business enterprise"'), setup: dismissing(pro) },
      { name: 'Locked: no entitlement', markup: gate('feature="export"'), setup: dismissing(null) },
      { name: 'Cancelled (click: renews)', markup: gate('feature="export"'), setup: upgradable(with_({ status: 'cancelled' })) },
      { name: 'Expired (click: renews)', markup: gate('feature="export"'), setup: upgradable(with_({ expires_at: iso(Date.now() - 3 * DAY) })) },
      { name: 'Past due (click: pays)', markup: gate('feature="export"'), setup: upgradable(with_({ status: 'past_due' })) },
      {
        name: 'Over quota (metered)',
        markup: gate('feature="export" metered'),
        setup: dismissing(with_({ usage: { api_calls: 1000, limit: 1000 } })),
      },
      {
        name: 'Custom locked slot',
        markup:
          '<mp-gate feature="export">\n  <p>Export to CSV is unlocked.</p>\n  <p slot="locked">Export comes with Pro. <a href="#pricing">See pricing</a></p>\n</mp-gate>',
        setup: ready(free),
      },
      { name: 'Signed out', markup: gate('feature="export"'), setup: signedOut },
      ...common(gate('feature="export"')),
    ],
  },
];

function gate(attributes: string): string {
  return `<mp-gate ${attributes}>\n  <p>Export to CSV is unlocked.</p>\n</mp-gate>`;
}

/** Every preview's kit, and the elements that have none: what the locale picker changes. */
const kits: FakeKit[] = [];
const withoutKit: HTMLElement[] = [];
let locale = new URLSearchParams(location.search).get('locale') || 'en';

function preview(item: Case, theme: Theme): HTMLElement {
  const cell = document.createElement('div');
  cell.className = 'preview';
  cell.dataset.theme = theme;
  cell.innerHTML = item.markup;
  const kit = item.setup ? new FakeKit().setTheme(theme).setLocale(locale) : null;
  if (kit) {
    kit.embedded = false;
    item.setup!(kit);
    kits.push(kit);
  }
  for (const element of cell.querySelectorAll<HTMLElement & { kit: unknown; theme: Theme }>('*')) {
    if (!element.localName.startsWith('mp-')) continue;
    // Without a kit an element cannot know the theme, nor the user's locale; the dark column and the picker say them.
    if (kit) element.kit = kit;
    else {
      element.theme = theme;
      element.lang = locale;
      withoutKit.push(element);
    }
  }
  return cell;
}

/** The picker: each locale whose texts ship, named in its own language. */
function localePicker() {
  const select = document.querySelector<HTMLSelectElement>('#locale')!;
  for (const tag of BUILT_IN_LOCALES) {
    const option = new Option(`${new Intl.DisplayNames([tag], { type: 'language' }).of(tag)} · ${tag}`, tag);
    option.lang = tag;
    select.append(option);
  }
  select.value = BUILT_IN_LOCALES.includes(locale as never) ? locale : 'en';
  select.addEventListener('change', () => {
    locale = select.value;
    for (const kit of kits) kit.setLocale(locale);
    for (const element of withoutKit) element.lang = locale;
    const url = new URL(location.href);
    url.searchParams.set('locale', locale);
    history.replaceState(null, '', url);
  });
}

function render() {
  const main = document.querySelector<HTMLElement>('#gallery')!;
  const toc = document.querySelector<HTMLElement>('#toc')!;
  for (const section of sections) {
    const link = document.createElement('a');
    link.href = `#${section.tag}`;
    link.textContent = `<${section.tag}>`;
    toc.append(link);

    const block = document.createElement('section');
    block.id = section.tag;
    block.className = 'gallery-section';
    const heading = document.createElement('h2');
    heading.innerHTML = `<code></code>`;
    heading.firstElementChild!.textContent = `<${section.tag}>`;
    const summary = document.createElement('p');
    summary.className = 'hint';
    summary.textContent = section.summary;
    block.append(heading, summary);

    const table = document.createElement('div');
    table.className = 'cases';
    table.innerHTML = '<div class="col-head">State</div><div class="col-head">Markup</div><div class="col-head">Light</div><div class="col-head">Dark</div>';
    for (const item of section.cases) {
      const row = document.createElement('div');
      row.className = 'case';
      row.dataset.case = item.name;
      const name = document.createElement('h3');
      name.textContent = item.name;
      const code = document.createElement('pre');
      code.className = 'markup';
      code.textContent = item.markup;
      row.append(name, code, preview(item, 'light'), preview(item, 'dark'));
      table.append(row);
    }
    block.append(table);
    main.append(block);
  }
}

localePicker();
render();
