// Every element in every look the kit can give it, in one place:
// - it passes axe, in the light and the dark theme, also once its kit is destroyed;
// - it documents exactly the `--mp-*` custom properties that change how it looks: each property is
//   set on the element in each of its looks, and any change in the computed styles of its shadow
//   tree counts.
import { expect, fixture } from '@open-wc/testing';
import type { CSSResult } from 'lit';
import { html, unsafeStatic } from 'lit/static-html.js';
import { elements } from '../index.js';
import { MarketplaceElement } from './marketplace-element.js';
import { FakeKit, sampleEntitlement, sampleUser } from '../../testing/fake-kit.js';
import { daysFrom } from '../../../test/support/dates.js';
import { ELEMENT_API } from '../../../test/support/element-api.js';
import { deferred, next, part, settle, text, until } from '../../../test/support/element-helpers.js';
import { MarketplaceKitError } from '../../shared/errors.js';

const PAST = daysFrom(-365);

/** Kits that between them bring every element into each of its looks. */
const kits = (): FakeKit[] => [
  new FakeKit(),
  new FakeKit().setSignedOut(),
  new FakeKit().setError(),
  new FakeKit().setSession(),
  new FakeKit().setSession(sampleUser, null),
  new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic', features: [] })),
  new FakeKit().setSession(sampleUser, sampleEntitlement({ expires_at: PAST })),
  new FakeKit().setSession(sampleUser, sampleEntitlement({ status: 'trialing' })),
  new FakeKit().setSession(sampleUser, sampleEntitlement({ status: 'past_due' })),
  new FakeKit().setSession(sampleUser, sampleEntitlement({ status: 'cancelled' })),
  new FakeKit().setSession(sampleUser, sampleEntitlement({ status: 'paused' })),
  new FakeKit().setSession(sampleUser, sampleEntitlement({ usage: { api_calls: 900, limit: 1000 } })),
  new FakeKit().setSession(sampleUser, sampleEntitlement({ usage: { api_calls: 1000, limit: 1000 } })),
];

/** Every `--mp-*` property the elements' styles mention, with a value that shows if it applies. */
const CANDIDATES = new Map(
  Object.values(elements)
    .flatMap((element) => [element.styles].flat(Infinity) as CSSResult[])
    .flatMap((style) => style.cssText.match(/--mp-[\w-]+/g) ?? [])
    .map((name) => [name, name.startsWith('--mp-color-') ? 'rgb(1, 2, 3)' : name === '--mp-font' ? 'italic 17px serif' : '23px']),
);
const PROPERTIES = [
  'color',
  'background-color',
  'border-top-color',
  'border-bottom-color',
  'border-left-color',
  'box-shadow',
  'outline-color',
  'border-top-left-radius',
  'font-size',
  'font-style',
  'font-family',
  'height',
  'width',
  'padding-top',
] as const;

/** The computed styles of every node of `el`'s shadow tree, as one string. */
const snapshot = (el: Element) =>
  [...el.shadowRoot!.querySelectorAll('*')]
    .map((node) => {
      const style = getComputedStyle(node);
      return PROPERTIES.map((name) => style.getPropertyValue(name)).join(';');
    })
    .join('|');

/**
 * The candidates that change how `el` looks now, added to `found`. The first button has the
 * focus, as from the keyboard, so that the focus ring counts.
 */
function collect(el: HTMLElement, found: Set<string>): void {
  el.shadowRoot!.querySelector('button')?.focus();
  const before = snapshot(el);
  for (const [name, value] of CANDIDATES) {
    el.style.setProperty(name, value);
    if (snapshot(el) !== before) found.add(name);
    el.style.removeProperty(name);
  }
}

/** Attributes that bring out looks the kit alone does not: plans to offer, metered gates. */
const VARIANTS: Record<string, string[]> = {
  'mp-gate': ['feature="export" metered', 'feature="sso" plan="business" metered'],
  'mp-upgrade-button': ['plan="pro"', 'plan="business" feature="sso"'],
};
const variants = (tag: string) => VARIANTS[tag] ?? [''];

/** `tag` with `attributes`, on `kit`, rendered. */
async function render(tag: string, kit: FakeKit, attributes: string) {
  const el = await fixture<MarketplaceElement>(html`<${unsafeStatic(tag)} ${unsafeStatic(attributes)} .kit=${kit}></${unsafeStatic(tag)}>`);
  await settle(el);
  return el;
}

describe('every element in every look', () => {
  for (const tag of Object.keys(ELEMENT_API)) {
    for (const theme of ['light', 'dark'] as const) {
      it(`<${tag}> is accessible in each of the kit's looks (${theme})`, async function () {
        this.timeout(60_000); // about 30 axe runs
        const looks = new Set<string>();
        for (const attributes of variants(tag)) {
          for (const kit of kits()) {
            const el = await render(tag, kit.setTheme(theme), attributes);
            expect(el.getAttribute('theme')).to.equal(theme);
            looks.add(`${el.state} ${el.getAttribute('access') ?? el.getAttribute('status') ?? el.getAttribute('level') ?? ''}`);
            await expect(el, `${kit.state}: ${text(el)}`).to.be.accessible();
          }
        }
        if (tag === 'mp-gate') {
          const gateLooks = ['ready granted', 'ready locked', 'ready expired', 'ready past-due', 'ready over-quota', 'signed-out locked', 'error', 'loading'];
          expect([...looks].map((look) => look.trim()).sort()).to.deep.equal(gateLooks.sort());
        } else expect(looks.size, 'the kits bring out different looks').to.be.greaterThan(2);
      });

      it(`<${tag}> says "not connected" once its kit is destroyed, keeps the theme, and is accessible (${theme})`, async () => {
        const timeout = MarketplaceElement.kitTimeoutMs;
        MarketplaceElement.kitTimeoutMs = 20;
        try {
          const kit = new FakeKit().setSession().setTheme(theme);
          const el = await render(tag, kit, variants(tag)[0]!);
          kit.destroy();
          await until(() => el.state === 'not-connected', 'shows not connected');
          await settle(el);
          expect(text(el)).to.contain('Not connected to Marketplace');
          expect(el.getAttribute('theme')).to.equal(theme);
          await expect(el).to.be.accessible();
        } finally {
          MarketplaceElement.kitTimeoutMs = timeout;
        }
      });
    }
  }
});

/** The elements' actions: how to hold one under way, and how to make it fail. */
const ACTIONS: { name: string; tag: string; attributes: string; kit: () => FakeKit; hold: (kit: FakeKit, wait: Promise<void>) => void; fail: (kit: FakeKit, error: Error) => void }[] = [
  {
    name: 'sign-in button: sign in',
    tag: 'mp-sign-in-button',
    attributes: '',
    kit: () => new FakeKit().setSignedOut(),
    hold: (kit, wait) => (kit.onSignIn = () => wait),
    fail: (kit, error) => (kit.onSignIn = () => Promise.reject(error)),
  },
  {
    name: 'upgrade button: upgrade',
    tag: 'mp-upgrade-button',
    attributes: 'plan="pro"',
    kit: () => new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic', features: [] })),
    hold: (kit, wait) => kit.scriptUpgrade({ wait }),
    fail: (kit, error) => kit.scriptUpgrade({ error }),
  },
  {
    name: 'gate: upgrade from the paywall',
    tag: 'mp-gate',
    attributes: 'feature="export"',
    kit: () => new FakeKit().setSession(sampleUser, null),
    hold: (kit, wait) => kit.scriptUpgrade({ wait }),
    fail: (kit, error) => kit.scriptUpgrade({ error }),
  },
  {
    name: 'gate: sign in from the paywall',
    tag: 'mp-gate',
    attributes: 'feature="export"',
    kit: () => new FakeKit().setSignedOut(),
    hold: (kit, wait) => (kit.onSignIn = () => wait),
    fail: (kit, error) => (kit.onSignIn = () => Promise.reject(error)),
  },
  {
    name: 'gate: retry a kit in error',
    tag: 'mp-gate',
    attributes: 'feature="export"',
    kit: () => new FakeKit().setError(),
    hold: (kit, wait) => (kit.onRefresh = () => wait),
    fail: (kit, error) => (kit.onRefresh = () => Promise.reject(error)),
  },
];

/** The element's action button: the button itself, or the gate card's. */
const actionOf = (el: HTMLElement) => part(el, el.localName === 'mp-gate' ? 'action' : 'base')!;

describe('every element in the looks of its actions', () => {
  for (const action of ACTIONS) {
    for (const theme of ['light', 'dark'] as const) {
      it(`${action.name}: busy, then failed, is accessible (${theme})`, async () => {
        const kit = action.kit().setTheme(theme);
        const held = deferred();
        action.hold(kit, held.promise);
        const el = await render(action.tag, kit, action.attributes);
        actionOf(el).click();
        await settle(el);
        expect(actionOf(el).getAttribute('aria-busy'), 'busy').to.equal('true');
        await expect(el, 'busy').to.be.accessible();
        held.resolve();

        const failing = await render(action.tag, action.kit().setTheme(theme), action.attributes);
        action.fail(failing.kit as FakeKit, new MarketplaceKitError('ERR_NETWORK', 'offline'));
        const failed = next(failing, 'mp-error');
        actionOf(failing).click();
        await failed;
        await settle(failing);
        expect(part(failing, 'status')!.textContent, 'the failed text is announced').to.not.equal('');
        await expect(failing, 'failed').to.be.accessible();
      });
    }
  }

  for (const tag of ['mp-sign-in-button', 'mp-upgrade-button']) {
    for (const theme of ['light', 'dark'] as const) {
      it(`<${tag} disabled> is accessible (${theme})`, async () => {
        const el = await render(tag, new FakeKit().setSignedOut().setTheme(theme), 'disabled plan="pro"');
        expect((part(el, 'base') as HTMLButtonElement).disabled).to.equal(true);
        await expect(el).to.be.accessible();
      });
    }
  }

  for (const theme of ['light', 'dark'] as const) {
    it(`<mp-upgrade-button> after a dismissed chooser is accessible (${theme})`, async () => {
      const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic', features: [] })).setTheme(theme).scriptUpgrade({ outcome: 'dismissed' });
      const el = await render('mp-upgrade-button', kit, 'plan="pro"');
      const done = next(el, 'mp-upgrade');
      part(el, 'base')!.click();
      expect((await done).outcome).to.equal('dismissed');
      await settle(el);
      expect(part(el, 'status')!.textContent).to.equal('No change to your plan');
      await expect(el).to.be.accessible();
    });

    it(`<mp-usage-meter> with a limit of 0 and <mp-user-badge> with no name are accessible (${theme})`, async () => {
      const meter = await render('mp-usage-meter', new FakeKit().setSession(sampleUser, sampleEntitlement({ usage: { api_calls: 0, limit: 0 } })).setTheme(theme), '');
      expect(meter.getAttribute('level')).to.equal('exceeded');
      await expect(meter).to.be.accessible();
      const badge = await render('mp-user-badge', new FakeKit().setSession({ ...sampleUser, name: '', avatar_url: 'https://cdn.example/missing.png' }).setTheme(theme), '');
      expect(text(badge)).to.contain(sampleUser.email);
      await expect(badge).to.be.accessible();
    });
  }
});

describe('custom properties', () => {
  for (const [tag, api] of Object.entries(ELEMENT_API)) {
    it(`<${tag}> documents exactly the --mp-* properties that change its look`, async function () {
      this.timeout(60_000);
      const found = new Set<string>();
      for (const attributes of variants(tag)) {
        for (const kit of kits()) collect(await render(tag, kit, attributes), found);
      }
      expect([...found].sort()).to.deep.equal([...api.cssProperties].sort());
    });
  }
});
