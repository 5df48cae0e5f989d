// What the eye needs, for every element: forced colors (Windows high contrast), reduced motion,
// non-text contrast (WCAG 1.4.11), reflow into the 288 px column of a 320 px screen (1.4.10, the
// width of 1280 px at 400% zoom) and text spacing (1.4.12). Axe, in each element's own tests,
// checks the contrast of text; what it does not check is here.
import { expect, fixture, html } from '@open-wc/testing';
import { emulateMedia, executeServerCommand } from '@web/test-runner-commands';
import '../index.js';
import type { MarketplaceElement } from './marketplace-element.js';
import { FakeKit, sampleEntitlement, sampleUser } from '../../testing/fake-kit.js';
import { deferred, overflowing, part, settle } from '../../../test/support/element-helpers.js';
import { contrast } from '../../../test/support/contrast.js';

async function render<T extends HTMLElement = MarketplaceElement>(template: unknown): Promise<T> {
  const el = await fixture<T>(template as never);
  if ('updateComplete' in el) await settle(el as unknown as MarketplaceElement);
  return el;
}

async function forcedColors<T>(run: () => T | Promise<T>): Promise<T> {
  await executeServerCommand('emulate-forced-colors', { active: true });
  try {
    expect(matchMedia('(forced-colors: active)').matches, 'forced colors emulated').to.equal(true);
    return await run();
  } finally {
    await executeServerCommand('emulate-forced-colors', { active: false });
  }
}

/** A sign-in button held busy, its spinner turning. */
async function busySignIn(busy = 'Signing in…'): Promise<MarketplaceElement> {
  const kit = new FakeKit().setSignedOut();
  kit.onSignIn = () => deferred().promise;
  const el = await render(html`<mp-sign-in-button .kit=${kit} .strings=${{ busy }}></mp-sign-in-button>`);
  part(el, 'base')!.click();
  await settle(el);
  expect(part(el, 'base')!.getAttribute('aria-busy')).to.equal('true');
  return el;
}

const LONG_PLAN = 'Enterprise Unlimited Professional Plus Annual';
const LONG_FEATURE = 'advanced-spreadsheet-export-with-pivot-tables';
const LONG_USER = { ...sampleUser, name: 'Maximiliane Wolfeschlegelsteinhausen', email: 'maximiliane.wolfeschlegelsteinhausen@example-company.com' };
/** WCAG 1.4.12's spacing, as a user's style sheet would force it. */
const SPACING = '* { line-height: 1.5 !important; letter-spacing: 0.12em !important; word-spacing: 0.16em !important; } p { margin-bottom: 2em !important; }';

/** Every element, with long names and long German labels, in the 288 px column of a 320 px screen. */
async function narrowColumn(theme: 'light' | 'dark') {
  const kit = new FakeKit().setSession(LONG_USER, sampleEntitlement({ plan: 'basic', features: [], usage: { api_calls: 1234567, limit: 2000000 } })).setTheme(theme);
  kit.setPlanNames({ basic: LONG_PLAN, business: `${LONG_PLAN} Business` });
  const signedOut = new FakeKit().setSignedOut().setTheme(theme);
  const column = await render<HTMLElement>(html`<div style="width: 288px">
    <mp-gate .kit=${kit} feature=${LONG_FEATURE} plan="business"><p>paid</p></mp-gate>
    <mp-gate .kit=${signedOut} feature=${LONG_FEATURE}><p>paid</p></mp-gate>
    <mp-gate .kit=${kit} feature=${LONG_FEATURE} metered strings='{"upgrade":"Auf einen höheren Tarif wechseln, um fortzufahren"}'><p>paid</p></mp-gate>
    <mp-upgrade-button .kit=${kit} plan="business" strings='{"upgrade":"Auf einen höheren Tarif wechseln"}'></mp-upgrade-button>
    <mp-sign-in-button .kit=${signedOut} label="Mit Ihrem Marktplatzkonto anmelden und fortfahren"></mp-sign-in-button>
    <mp-usage-meter .kit=${kit} strings='{"label":"Monatliche Programmierschnittstellenaufrufe","value":"{used} von {limit} Aufrufen"}'></mp-usage-meter>
    <mp-user-badge .kit=${kit}></mp-user-badge>
    <mp-plan-badge .kit=${kit}></mp-plan-badge>
  </div>`);
  const elements = [...column.children] as MarketplaceElement[];
  for (const el of elements) await settle(el);
  return { column, elements };
}


describe('visual accessibility: forced colors and reduced motion', () => {
  it('the busy spinner keeps its gap in forced colors, so that its turning shows', async () => {
    const spinner = part(await busySignIn(), 'spinner')!;
    await forcedColors(() => {
      // Forced colors would paint the transparent gap in the ring's system color: a plain ring turning looks still.
      const style = getComputedStyle(spinner);
      expect(style.borderRightColor, `gap ${style.borderRightColor}, ring ${style.borderTopColor}`).to.not.equal(style.borderTopColor);
    });
  });

  it('a focused button keeps a solid 2px outline, and the paywall card and the plan badge their borders', async () => {
    const button = await render(html`<mp-sign-in-button .kit=${new FakeKit().setSignedOut()}></mp-sign-in-button>`);
    const gate = await render(html`<mp-gate .kit=${new FakeKit().setSession(sampleUser, null)} feature="export"><p>paid</p></mp-gate>`);
    const badge = await render(html`<mp-plan-badge .kit=${new FakeKit().setSession()}></mp-plan-badge>`);
    part(button, 'base')!.focus();
    await forcedColors(() => {
      const ring = getComputedStyle(part(button, 'base')!);
      expect([ring.outlineStyle, ring.outlineWidth]).to.deep.equal(['solid', '2px']);
      for (const [el, name] of [[gate, 'card'], [badge, 'base']] as const) {
        const box = getComputedStyle(part(el, name)!);
        expect([box.borderTopStyle, box.borderTopColor === box.backgroundColor], `${el.localName} ${name}`).to.deep.equal(['solid', false]);
      }
    });
  });

  it('the busy spinner turns more slowly when the user asks for reduced motion', async () => {
    const spinner = part(await busySignIn(), 'spinner')!;
    const normal = parseFloat(getComputedStyle(spinner).animationDuration);
    await emulateMedia({ reducedMotion: 'reduce' });
    try {
      expect([normal, parseFloat(getComputedStyle(spinner).animationDuration)]).to.deep.equal([0.8, 3]);
    } finally {
      await emulateMedia({ reducedMotion: 'no-preference' });
    }
  });
});

describe('visual accessibility: reflow and text spacing', () => {
  it('initials as wide as "MW" stay on one line inside the avatar circle, and on one line in a smaller one', async () => {
    const kit = new FakeKit().setSession({ ...sampleUser, name: 'Mia Walker', avatar_url: '' });
    const initials = async (style: string) => {
      const avatar = part(await render(html`<mp-user-badge .kit=${kit} style=${style}></mp-user-badge>`), 'avatar')!;
      expect(avatar.textContent!.trim()).to.equal('MW');
      const range = document.createRange();
      range.selectNodeContents(document.createTreeWalker(avatar, NodeFilter.SHOW_TEXT).nextNode()!);
      return { avatar, lines: new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size };
    };
    const normal = await initials('');
    expect(normal.lines, 'lines of initials').to.equal(1);
    expect(normal.avatar.scrollWidth, 'the initials fit in the circle').to.be.at.most(normal.avatar.clientWidth);
    // Too small for them: they may overflow it a little, but never break in two, half of them outside.
    expect((await initials('--mp-avatar-size: 1.4em')).lines, 'lines of initials in a small circle').to.equal(1);
  });

  it('the busy spinner stays round when a long label wraps in a narrow column', async () => {
    const column = await render<HTMLElement>(html`<div style="width: 160px"></div>`);
    const el = await busySignIn('Anmeldung beim Marktplatz läuft, bitte warten…');
    column.append(el);
    await settle(el);
    const spinner = part(el, 'spinner')!.getBoundingClientRect();
    expect(part(el, 'label')!.getBoundingClientRect().height, 'the label wraps').to.be.greaterThan(spinner.height * 1.5);
    expect(Math.round(spinner.width)).to.equal(Math.round(spinner.height));
  });

  for (const theme of ['light', 'dark'] as const) {
    it(`long plan, feature and user names and long labels wrap inside a 320 px screen's column (${theme})`, async () => {
      const { column, elements } = await narrowColumn(theme);
      expect(overflowing(column, elements)).to.deep.equal([]);
      expect(column.scrollWidth).to.equal(column.clientWidth);
    });

    it(`WCAG 1.4.12 text spacing clips nothing (${theme})`, async () => {
      const { column, elements } = await narrowColumn(theme);
      for (const el of elements) {
        const sheet = new CSSStyleSheet();
        sheet.replaceSync(SPACING);
        el.shadowRoot!.adoptedStyleSheets = [...el.shadowRoot!.adoptedStyleSheets, sheet];
      }
      expect(overflowing(column, elements)).to.deep.equal([]);
    });
  }
});

describe('visual accessibility: non-text contrast (WCAG 1.4.11)', () => {
  for (const theme of ['light', 'dark'] as const) {
    it(`the focus ring on the surface, the meter's track on the surface and its fill on the track, 3:1 at least (${theme})`, async () => {
      const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ usage: { api_calls: 120, limit: 1000 } })).setTheme(theme);
      const meter = await render(html`<mp-usage-meter .kit=${kit}></mp-usage-meter>`);
      const button = await render(html`<mp-upgrade-button .kit=${kit} plan="business"></mp-upgrade-button>`);
      part(button, 'base')!.focus();
      const surface = getComputedStyle(part(meter, 'base')!).backgroundColor;
      const ring = getComputedStyle(part(button, 'base')!).outlineColor;
      expect(contrast(ring, surface), `ring ${ring} on ${surface}`).to.be.at.least(3);
      // The track's edge shows the meter's whole length; its fill may be lighter.
      const track = getComputedStyle(part(meter, 'track')!);
      expect([track.borderTopStyle, track.borderTopWidth], "the track's edge").to.deep.equal(['solid', '1px']);
      expect(contrast(track.borderTopColor, surface), `track edge ${track.borderTopColor} on ${surface}`).to.be.at.least(3);
      for (const used of [120, 900, 1000]) {
        kit.setEntitlement(sampleEntitlement({ usage: { api_calls: used, limit: 1000 } }));
        await settle(meter);
        const fill = getComputedStyle(part(meter, 'indicator')!).backgroundColor;
        expect(contrast(fill, track.backgroundColor), `fill ${fill} at ${used} on ${track.backgroundColor}`).to.be.at.least(3);
      }
    });
  }
});
