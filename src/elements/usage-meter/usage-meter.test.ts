import { expect, fixture, html } from '@open-wc/testing';
import { executeServerCommand } from '@web/test-runner-commands';
import '../index.js';
import type { MpUsageMeter } from '../index.js';
import { FakeKit, sampleEntitlement, sampleUser } from '../../testing/fake-kit.js';
import { HOSTILE, next, part, settle, text } from '../../../test/support/element-helpers.js';

const usage = (api_calls: number, limit: number) => new FakeKit().setSession(sampleUser, sampleEntitlement({ usage: { api_calls, limit } }));

async function meter(kit: FakeKit, template = html`<mp-usage-meter .kit=${kit}></mp-usage-meter>`) {
  const el = await fixture<MpUsageMeter>(template);
  await settle(el);
  return el;
}

const states = [
  { name: 'loading', kit: () => new FakeKit(), text: 'Loading…' },
  { name: 'ok', kit: () => usage(120, 1000), level: 'ok', text: 'API calls 120 of 1,000' },
  { name: 'warning', kit: () => usage(800, 1000), level: 'warning', text: 'API calls 800 of 1,000 Approaching your limit (80%)' },
  { name: 'exceeded', kit: () => usage(1200, 1000), level: 'exceeded', text: 'API calls 1,200 of 1,000 Limit reached' },
  { name: 'no entitlement', kit: () => new FakeKit().setSession(sampleUser, null), text: 'No usage data' },
  { name: 'signed out', kit: () => new FakeKit().setSignedOut(), text: 'Sign in to see your usage' },
  { name: 'kit in error', kit: () => new FakeKit().setError(), text: 'Unavailable' },
];

describe('<mp-usage-meter>', () => {
  for (const s of states) {
    describe(s.name, () => {
      it('shows the right level and text', async () => {
        const el = await meter(s.kit());
        expect(el.getAttribute('level')).to.equal(s.level ?? null);
        expect(text(el)).to.equal(s.text);
      });
      for (const theme of ['light', 'dark'] as const) {
        it(`is accessible (${theme})`, async () => {
          await expect(await meter(s.kit().setTheme(theme))).to.be.accessible();
        });
      }
    });
  }

  it('exposes the figures as an ARIA meter', async () => {
    const el = await meter(usage(1200, 1000));
    const track = part(el, 'track')!;
    expect(track.getAttribute('role')).to.equal('meter');
    expect(track.getAttribute('aria-valuemax')).to.equal('1000');
    expect(track.getAttribute('aria-valuenow')).to.equal('1000');
    expect(track.getAttribute('aria-valuetext')).to.equal('1,200 of 1,000');
    expect(part(el, 'indicator')!.style.width).to.equal('100%');
  });

  it('announces a new level, not the first one nor every new percentage', async () => {
    const kit = usage(850, 1000);
    const el = await meter(kit);
    const status = part(el, 'status')!;
    expect([status.getAttribute('role'), status.textContent]).to.deep.equal(['status', ''], 'the first level is page content');
    kit.setEntitlement(sampleEntitlement({ usage: { api_calls: 860, limit: 1000 } }));
    await settle(el);
    expect([part(el, 'message')!.textContent, status.textContent]).to.deep.equal(['Approaching your limit (86%)', '']);
    kit.setEntitlement(sampleEntitlement({ usage: { api_calls: 1000, limit: 1000 } }));
    await settle(el);
    expect(status.textContent).to.equal('Limit reached');
    kit.setEntitlement(sampleEntitlement({ usage: { api_calls: 10, limit: 1000 } }));
    await settle(el);
    expect(status.textContent).to.equal('Back within your limit (10 of 1,000)', 'back to ok: the limit is lifted');
    expect(part(el, 'message')!.textContent).to.equal('', 'said, not shown');
    kit.setEntitlement(sampleEntitlement({ usage: { api_calls: 1000, limit: 1000 } }));
    await settle(el);
    kit.setSignedOut();
    await settle(el);
    kit.setSession(sampleUser, sampleEntitlement({ usage: { api_calls: 900, limit: 1000 } }));
    await settle(el);
    expect(part(el, 'status')!.textContent).to.equal('', 'back from signed out: the old "Limit reached" is not said again');
  });

  it('several meters of one kit announce a new level once', async () => {
    const kit = usage(100, 1000);
    const page = await fixture<HTMLElement>(html`<div><mp-usage-meter .kit=${kit}></mp-usage-meter><mp-usage-meter .kit=${kit}></mp-usage-meter></div>`);
    const meters = [...page.querySelectorAll('mp-usage-meter')];
    for (const el of meters) await settle(el);
    kit.setEntitlement(sampleEntitlement({ usage: { api_calls: 1000, limit: 1000 } }));
    for (const el of meters) await settle(el);
    expect(meters.map((el) => part(el, 'status')!.textContent)).to.deep.equal(['Limit reached', '']);
  });

  it('names the meter with the default label when the label is left blank', async () => {
    const el = await meter(usage(100, 1000), html`<mp-usage-meter .kit=${usage(100, 1000)} strings='{"label":" "}'></mp-usage-meter>`);
    const track = part(el, 'track')!;
    expect([part(el, 'label')!.textContent, track.getAttribute('aria-labelledby'), track.getAttribute('aria-label')]).to.deep.equal([' ', null, 'API calls']);
    await expect(el).to.be.accessible();
    const named = await meter(usage(100, 1000), html`<mp-usage-meter .kit=${usage(100, 1000)} strings='{"label":"Requests"}'></mp-usage-meter>`);
    expect([part(named, 'track')!.getAttribute('aria-labelledby'), part(named, 'track')!.getAttribute('aria-label')]).to.deep.equal(['label', null]);
  });

  it('announces a level reached while the kit was in error, from the live region it kept', async () => {
    const kit = usage(100, 1000);
    const el = await meter(kit);
    const status = part(el, 'status')!;
    kit.setError();
    await settle(el);
    expect(text(el)).to.equal('Unavailable');
    expect(part(el, 'status') === status, 'the live region stays while the error shows').to.equal(true);
    kit.setSession(sampleUser, sampleEntitlement({ usage: { api_calls: 1000, limit: 1000 } }));
    await settle(el);
    expect(part(el, 'status') === status, 'the same live region').to.equal(true);
    expect(status.textContent).to.equal('Limit reached');
    kit.setError();
    await settle(el);
    expect(status.textContent).to.equal('', 'nothing old to say while the error shows');
    kit.setSession(sampleUser, sampleEntitlement({ usage: { api_calls: 1100, limit: 1000 } }));
    await settle(el);
    expect(status.textContent).to.equal('', 'the same level as before the error is not news');
    kit.setSession({ ...sampleUser, id: 'usr_other' }, sampleEntitlement({ usage: { api_calls: 900, limit: 1000 } }));
    await settle(el);
    expect([part(el, 'message')!.textContent, status.textContent]).to.deep.equal(['Approaching your limit (90%)', ''], "another user's first level is page content");
  });

  it('keeps its track and fill, and buttons their outline and their off look, in forced colors (high contrast)', async () => {
    const el = await meter(usage(500, 1000));
    const button = await fixture<HTMLElement>(html`<mp-upgrade-button .kit=${usage(500, 1000)} plan="business"></mp-upgrade-button>`);
    // Turned off: aria-disabled while the kit loads, and disabled.
    const off = await fixture<HTMLElement>(html`<mp-upgrade-button .kit=${new FakeKit()} plan="business"></mp-upgrade-button>`);
    const disabled = await fixture<HTMLElement>(html`<mp-upgrade-button .kit=${usage(500, 1000)} plan="business" disabled></mp-upgrade-button>`);
    for (const element of [button, off, disabled]) await settle(element as MpUsageMeter);
    expect(part(off, 'base')!.getAttribute('aria-disabled')).to.equal('true');
    await executeServerCommand('emulate-forced-colors', { active: true });
    try {
      expect(matchMedia('(forced-colors: active)').matches).to.equal(true);
      const track = getComputedStyle(part(el, 'track')!);
      const fill = getComputedStyle(part(el, 'indicator')!);
      expect(track.borderTopStyle).to.equal('solid');
      expect(fill.backgroundColor).to.not.equal(track.backgroundColor, 'the fill stands out from the track');
      expect(getComputedStyle(part(button, 'base')!).borderTopStyle).to.equal('solid');
      expect(getComputedStyle(part(button, 'base')!).borderTopColor).to.not.equal('rgba(0, 0, 0, 0)');
      const color = (element: HTMLElement) => getComputedStyle(part(element, 'base')!).color;
      expect(color(disabled), 'a disabled button is drawn in GrayText').to.not.equal(color(button));
      expect(color(off), 'an aria-disabled one looks as off').to.equal(color(disabled));
      expect(getComputedStyle(part(off, 'base')!).borderTopColor, 'its outline too').to.equal(color(disabled));
    } finally {
      await executeServerCommand('emulate-forced-colors', { active: false });
    }
  });

  it('rounds the share down: 996 of 1,000 is 99%, not yet 100%', async () => {
    expect(part(await meter(usage(996, 1000)), 'message')!.textContent).to.equal('Approaching your limit (99%)');
    const kit = usage(29, 100); // 0.29 * 100 is 28.999… in floating point
    expect(part(await meter(kit, html`<mp-usage-meter .kit=${kit} warning="0.1"></mp-usage-meter>`), 'message')!.textContent).to.equal('Approaching your limit (29%)');
  });

  it('takes its thresholds from attributes', async () => {
    const kit = usage(500, 1000);
    const el = await meter(kit, html`<mp-usage-meter .kit=${kit} warning="0.5" exceeded="0.9"></mp-usage-meter>`);
    expect(el.level).to.equal('warning');
    expect(part(el, 'indicator')!.style.width).to.equal('50%');
    kit.setEntitlement(sampleEntitlement({ usage: { api_calls: 900, limit: 1000 } }));
    await settle(el);
    expect(el.level).to.equal('exceeded');
  });

  it('keeps the default thresholds for attributes that are not finite numbers', async () => {
    for (const [warning, exceeded] of [['high', ''], ['Infinity', 'Infinity']]) {
      const kit = usage(850, 1000);
      const el = await meter(kit, html`<mp-usage-meter .kit=${kit} warning=${warning} exceeded=${exceeded}></mp-usage-meter>`);
      expect(el.level).to.equal('warning', `warning="${warning}"`);
      kit.setEntitlement(sampleEntitlement({ usage: { api_calls: 1000, limit: 1000 } }));
      await settle(el);
      expect(el.level).to.equal('exceeded', `exceeded="${exceeded}"`);
    }
  });

  it('takes thresholds set as string properties, as React 19 and Vue set them', async () => {
    const kit = usage(850, 1000);
    const el = await meter(kit);
    expect(el.level).to.equal('warning');
    el.warning = '0.9';
    el.exceeded = ' 0.85 ';
    await settle(el);
    expect(el.level).to.equal('exceeded');
    el.exceeded = '';
    await settle(el);
    expect(el.level).to.equal('ok');
  });

  it('goes back to the defaults when an attribute is removed or a property set to null', async () => {
    const kit = usage(120, 1000);
    const el = await meter(kit, html`<mp-usage-meter .kit=${kit} warning="0.1" exceeded="0.5"></mp-usage-meter>`);
    expect(el.level).to.equal('warning');
    el.removeAttribute('warning');
    el.removeAttribute('exceeded');
    await settle(el);
    expect(el.level).to.equal('ok');
    Object.assign(el, { warning: null, exceeded: null });
    await settle(el);
    expect(el.level).to.equal('ok');
  });

  it('counts a limit of 0 as spent, as isOverQuota does', async () => {
    expect((await meter(usage(0, 0))).level).to.equal('exceeded');
  });

  it('updates live and fires mp-usage-level when a threshold is crossed', async () => {
    const kit = usage(100, 1000);
    const el = await meter(kit);
    const crossed = next(el, 'mp-usage-level');
    kit.setEntitlement(sampleEntitlement({ usage: { api_calls: 850, limit: 1000 } }));
    expect((await crossed).level).to.equal('warning');
    expect(part(el, 'message')!.textContent).to.equal('Approaching your limit (85%)');
  });

  it('fires mp-usage-level on the first reading, then only when the level changes', async () => {
    const kit = new FakeKit();
    const el = await meter(kit);
    const levels: string[] = [];
    el.addEventListener('mp-usage-level', (event) => levels.push(event.level));
    for (const calls of [100, 200, 850, 900, 100]) {
      kit.setSession(sampleUser, sampleEntitlement({ usage: { api_calls: calls, limit: 1000 } }));
      await settle(el);
    }
    expect(levels).to.deep.equal(['ok', 'warning', 'ok']);
  });

  it('taken out of the page and put back, fires no second mp-usage-level', async () => {
    const kit = usage(850, 1000);
    const el = await meter(kit);
    const parent = el.parentElement!;
    const levels: string[] = [];
    el.addEventListener('mp-usage-level', (event) => levels.push(event.level));
    el.remove();
    await settle(el);
    parent.append(el);
    await settle(el);
    kit.setEntitlement(sampleEntitlement({ usage: { api_calls: 1000, limit: 1000 } }));
    await settle(el);
    expect(levels).to.deep.equal(['exceeded']);
  });

  it('renders hostile texts from strings as text', async () => {
    const el = await meter(usage(900, 1000));
    el.strings = { label: HOSTILE, warningText: `${HOSTILE} {percent}` };
    await settle(el);
    expect(el.shadowRoot!.querySelector('img')).to.equal(null);
    expect(text(el)).to.contain(`${HOSTILE} 90%`);
  });

  it('formats figures in the user locale, in a text of its language', async () => {
    const el = await meter(usage(12500, 20000).setLocale('de-DE'));
    expect(part(el, 'value')!.textContent).to.equal('12.500 von 20.000');
  });

  it('takes overrides of its texts', async () => {
    const kit = usage(900, 1000);
    const el = await meter(kit, html`<mp-usage-meter .kit=${kit} strings='{"label":"Appels API","value":"{used} sur {limit}"}'></mp-usage-meter>`);
    expect(part(el, 'label')!.textContent).to.equal('Appels API');
    expect(part(el, 'value')!.textContent).to.equal('900 sur 1,000');
  });
});

describe('<mp-usage-meter>: what mutation testing found unchecked', () => {
  it('a kit in error (which keeps its last entitlement) shows "Unavailable", not the last figures', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ usage: { api_calls: 900, limit: 1000 } }));
    const el = await meter(kit);
    expect(el.level).to.equal('warning');
    kit.setError();
    await settle(el);
    expect([text(el), el.hasAttribute('level'), el.shadowRoot!.querySelector('[role="meter"]')]).to.deep.equal(['Unavailable', false, null]);
  });
});

describe('<mp-usage-meter>: what mutation testing found unchecked', () => {
  it('warns from 80% by default and shows the limit reached only at 100%', async () => {
    const levels: (string | undefined)[] = [];
    for (const used of [799, 800, 999, 1000]) levels.push((await meter(usage(used, 1000))).level);
    expect(levels).to.deep.equal(['ok', 'warning', 'warning', 'exceeded']);
  });
});
