// Every element in every look the kit can give it, in one place:
// - it passes axe, in the light and the dark theme, also once its kit is destroyed;
// - it documents exactly the `--mp-*` custom properties that change how it looks: each property is
//   set on the element in each of its looks, and any change in the computed styles of its shadow
//   tree counts.
import { expect, fixture, waitUntil } from '@open-wc/testing';
import { html, unsafeStatic } from 'lit/static-html.js';
import '../index.js';
import { MarketplaceElement } from './marketplace-element.js';
import { FakeKit, sampleEntitlement, sampleUser } from '../../../test/support/fake-kit.js';
import { ELEMENT_API } from '../../../test/support/element-api.js';
import { settle, text } from '../../../test/support/element-helpers.js';

const PAST = '2020-01-01T00:00:00Z';

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
  new FakeKit().setSession(sampleUser, sampleEntitlement({ usage: { api_calls: 900, limit: 1000 } })),
  new FakeKit().setSession(sampleUser, sampleEntitlement({ usage: { api_calls: 1000, limit: 1000 } })),
];

/** Every public property of the base styles, and the element-specific ones. */
const CANDIDATES: Record<string, string> = {
  '--mp-color-accent': 'rgb(1, 2, 3)',
  '--mp-color-on-accent': 'rgb(1, 2, 3)',
  '--mp-color-text': 'rgb(1, 2, 3)',
  '--mp-color-muted': 'rgb(1, 2, 3)',
  '--mp-color-surface': 'rgb(1, 2, 3)',
  '--mp-color-border': 'rgb(1, 2, 3)',
  '--mp-color-danger': 'rgb(1, 2, 3)',
  '--mp-color-warning': 'rgb(1, 2, 3)',
  '--mp-color-success': 'rgb(1, 2, 3)',
  '--mp-color-focus': 'rgb(1, 2, 3)',
  '--mp-radius': '13px',
  '--mp-font': 'italic 17px serif',
  '--mp-gate-padding': '23px',
  '--mp-meter-height': '23px',
  '--mp-avatar-size': '23px',
};
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
  for (const [name, value] of Object.entries(CANDIDATES)) {
    el.style.setProperty(name, value);
    if (snapshot(el) !== before) found.add(name);
    el.style.removeProperty(name);
  }
}

/** Attributes that bring out looks the kit alone does not: a plan to offer, a metered gate. */
const ATTRIBUTES: Record<string, string> = {
  'mp-gate': 'feature="sso" plan="business" metered',
  'mp-upgrade-button': 'plan="pro"',
};

/** `tag` with the attributes that bring out its looks, on `kit`, rendered. */
async function render(tag: string, kit: FakeKit | undefined, attributes = ATTRIBUTES[tag] ?? '', theme = '') {
  const el = await fixture<MarketplaceElement>(
    html`<${unsafeStatic(tag)} ${unsafeStatic(attributes)} theme=${theme || 'light'} .kit=${kit}></${unsafeStatic(tag)}>`,
  );
  await settle(el);
  return el;
}

describe('every element in every look', () => {
  for (const tag of Object.keys(ELEMENT_API)) {
    for (const theme of ['light', 'dark'] as const) {
      it(`<${tag}> is accessible in each of the kit's looks (${theme})`, async () => {
        const looks = new Set<string>();
        for (const kit of kits()) {
          const el = await render(tag, kit.setTheme(theme));
          looks.add(el.shadowRoot!.innerHTML.replace(/<!--[^>]*-->/g, ''));
          await expect(el, `${kit.state}: ${text(el)}`).to.be.accessible();
        }
        expect(looks.size, 'the kits bring out different looks').to.be.greaterThan(1);
      });

      it(`<${tag}> says "not connected" once its kit is destroyed, and is accessible (${theme})`, async () => {
        const timeout = MarketplaceElement.kitTimeoutMs;
        MarketplaceElement.kitTimeoutMs = 20;
        try {
          const kit = new FakeKit().setSession().setTheme(theme);
          const el = await render(tag, kit, undefined, theme);
          kit.destroy();
          await waitUntil(() => el.state === 'not-connected', 'shows not connected');
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

describe('custom properties', () => {
  for (const [tag, api] of Object.entries(ELEMENT_API)) {
    it(`<${tag}> documents exactly the --mp-* properties that change its look`, async () => {
      const found = new Set<string>();
      const variants = tag === 'mp-gate' ? [ATTRIBUTES[tag]!, 'feature="export" metered'] : [ATTRIBUTES[tag] ?? ''];
      for (const attributes of variants) {
        for (const kit of kits()) collect(await render(tag, kit, attributes), found);
      }
      expect([...found].sort()).to.deep.equal([...api.cssProperties].sort());
    });
  }
});
