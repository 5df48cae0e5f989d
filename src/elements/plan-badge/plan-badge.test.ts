import { expect, fixture, html } from '@open-wc/testing';
import '../index.js';
import { MpPlanBadge } from '../index.js';
import { FakeKit, sampleEntitlement, sampleUser } from '../../testing/fake-kit.js';
import { HOSTILE, part, settle, text } from '../../../test/support/element-helpers.js';
import { daysFrom, calendarDay } from '../../../test/support/dates.js';

// Future days the badge spells out, and a day already past, all from the test's clock.
const DEC_21 = calendarDay(4, 12, 21);
const JAN_5 = calendarDay(4, 1, 5);
const PAST = daysFrom(-365);

const withEntitlement = (overrides: Parameters<typeof sampleEntitlement>[0]) => new FakeKit().setSession(sampleUser, sampleEntitlement(overrides));

async function badge(kit: FakeKit) {
  const el = await fixture<MpPlanBadge>(html`<mp-plan-badge .kit=${kit}></mp-plan-badge>`);
  await settle(el);
  return el;
}

const states = [
  { name: 'loading', kit: () => new FakeKit(), text: 'Loading…' },
  { name: 'active', kit: () => withEntitlement({ expires_at: DEC_21.iso }), status: 'active', text: `pro Active until Dec 21, ${DEC_21.year}` },
  { name: 'lifetime', kit: () => withEntitlement({ expires_at: null }), status: 'active', text: 'pro Active' },
  { name: 'trialing', kit: () => withEntitlement({ status: 'trialing', expires_at: JAN_5.iso }), status: 'trialing', text: `pro Trial until Jan 5, ${JAN_5.year}` },
  { name: 'past due', kit: () => withEntitlement({ status: 'past_due' }), status: 'past_due', text: 'pro Past due' },
  { name: 'cancelled', kit: () => withEntitlement({ status: 'cancelled' }), status: 'cancelled', text: 'pro Cancelled' },
  { name: 'expired status', kit: () => withEntitlement({ status: 'expired' }), status: 'expired', text: 'pro Expired' },
  { name: 'active but past its end', kit: () => withEntitlement({ expires_at: PAST }), status: 'expired', text: 'pro Expired' },
  { name: 'cancelled and past its end', kit: () => withEntitlement({ status: 'cancelled', expires_at: PAST }), status: 'cancelled', text: 'pro Cancelled' },
  { name: 'unknown status', kit: () => withEntitlement({ status: 'paused' }), status: 'paused', text: 'pro paused' },
  { name: 'no entitlement', kit: () => new FakeKit().setSession(sampleUser, null), status: 'none', text: 'No plan' },
  { name: 'signed out', kit: () => new FakeKit().setSignedOut(), text: 'Not signed in' },
  { name: 'kit in error', kit: () => new FakeKit().setError(), text: 'Unavailable' },
];

describe('<mp-plan-badge>', () => {
  for (const s of states) {
    describe(s.name, () => {
      it('shows the plan and status', async () => {
        const el = await badge(s.kit());
        expect(el.getAttribute('status')).to.equal(s.status ?? null);
        expect(text(el)).to.equal(s.text);
      });
      for (const theme of ['light', 'dark'] as const) {
        it(`is accessible (${theme})`, async () => {
          await expect(await badge(s.kit().setTheme(theme))).to.be.accessible();
        });
      }
    });
  }

  it('updates live on entitlement changes', async () => {
    const kit = withEntitlement({ status: 'trialing' });
    const el = await badge(kit);
    kit.setEntitlement(sampleEntitlement({ plan: 'business', status: 'past_due' }));
    await settle(el);
    expect(el.status).to.equal('past_due');
    expect(part(el, 'plan')!.textContent).to.equal('business');
  });

  it('formats the date in the user locale, in a text of its language', async () => {
    const el = await badge(withEntitlement({ expires_at: DEC_21.iso }).setLocale('fr-FR'));
    expect(part(el, 'expiry')!.textContent).to.equal(`jusqu’au 21 déc. ${DEC_21.year}`);
  });

  it('falls back to the browser locale when the kit’s is not a valid tag', async () => {
    const el = await badge(withEntitlement({}).setLocale('not a locale!'));
    expect(part(el, 'expiry')!.textContent).to.match(/^until /);
  });

  it('shows the plan by its name from kit.planNames, live', async () => {
    const kit = withEntitlement({ plan: 'pro_monthly' });
    const el = await badge(kit);
    expect(part(el, 'plan')!.textContent).to.equal('pro_monthly');
    kit.setPlanNames({ pro_monthly: 'Pro (monthly)' });
    await settle(el);
    expect(part(el, 'plan')!.textContent).to.equal('Pro (monthly)');
  });

  it('renders a hostile plan name as text', async () => {
    const el = await badge(withEntitlement({ plan: HOSTILE }));
    expect(part(el, 'plan')!.textContent).to.equal(HOSTILE);
    expect(el.shadowRoot!.querySelector('img')).to.equal(null);
  });

  it('colors the status by what it grants: green only when active, neutral when unknown', async () => {
    const tones = { '--mp-color-success': 'rgb(0, 128, 0)', '--mp-color-warning': 'rgb(255, 165, 0)', '--mp-color-danger': 'rgb(255, 0, 0)', '--mp-color-muted': 'rgb(128, 128, 128)' };
    const colorOf = async (kit: FakeKit) => {
      const el = await badge(kit);
      for (const [name, value] of Object.entries(tones)) el.style.setProperty(name, value);
      return getComputedStyle(part(el, 'status')!).color;
    };
    expect(await colorOf(withEntitlement({}))).to.equal(tones['--mp-color-success']);
    expect(await colorOf(withEntitlement({ status: 'trialing' }))).to.equal(tones['--mp-color-warning']);
    expect(await colorOf(withEntitlement({ status: 'past_due' }))).to.equal(tones['--mp-color-danger']);
    expect(await colorOf(withEntitlement({ status: 'paused' }))).to.equal(tones['--mp-color-muted']);
    expect(await colorOf(new FakeKit().setSession(sampleUser, null))).to.equal(tones['--mp-color-muted']);
  });

  it('takes overrides of its texts', async () => {
    const el = await badge(withEntitlement({ expires_at: null }));
    el.strings = { active: 'Actif' };
    await settle(el);
    expect(part(el, 'status')!.textContent).to.equal('Actif');
    const paused = await badge(withEntitlement({ status: 'paused' }));
    paused.setAttribute('strings', '{"paused": "En pause"}');
    await settle(paused);
    expect(part(paused, 'status')!.textContent).to.equal('En pause', 'a status the kit does not know can be named too');
    paused.strings = { paused: 'Suspendu' }; // typed: any status may be a key
    await settle(paused);
    expect(part(paused, 'status')!.textContent).to.equal('Suspendu');
  });

  it('shows an unknown status as it is when its override is not text, and takes names from the class defaults', async () => {
    const paused = await badge(withEntitlement({ status: 'paused' }));
    paused.setAttribute('strings', '{"paused": 5}');
    await settle(paused);
    expect(part(paused, 'status')!.textContent).to.equal('paused', 'an override that is not text is ignored');
    const defaults = MpPlanBadge.defaultStrings;
    try {
      MpPlanBadge.defaultStrings = { ...defaults, paused: 'En pause' } as typeof defaults;
      const translated = await badge(withEntitlement({ status: 'paused' }));
      expect(part(translated, 'status')!.textContent).to.equal('En pause');
    } finally {
      MpPlanBadge.defaultStrings = defaults;
    }
  });

  it('shows as it is a status named like another of its texts (failed, until) or like a member of every object (toString), or holding markup', async () => {
    for (const status of ['toString', 'constructor', '__proto__', 'hasOwnProperty', HOSTILE, 'failed', 'until', 'error', 'loading', 'none', 'notConnected', 'signedOut']) {
      const el = await badge(withEntitlement({ status }));
      el.setAttribute('strings', '{"active": "Actif"}');
      await settle(el);
      expect([part(el, 'status')!.textContent, el.shadowRoot!.querySelector('img')]).to.deep.equal([status, null]);
    }
  });

  it('wraps a long plan name inside a narrow container', async () => {
    const kit = withEntitlement({ plan: 'enterprise', expires_at: DEC_21.iso }).setPlanNames({ enterprise: 'Enterprise_unlimited_plan_for_very_large_organisations_worldwide_2026' });
    const box = await fixture<HTMLElement>(html`<div style="width: 300px"><mp-plan-badge .kit=${kit}></mp-plan-badge></div>`);
    const el = box.querySelector('mp-plan-badge')!;
    await settle(el);
    expect(el.getBoundingClientRect().width).to.be.at.most(300);
    // The date stays on one line: "until Dec 21, <year>" is not broken word by word.
    const expiry = part(el, 'expiry')!;
    expect(expiry.getBoundingClientRect().height).to.be.below(parseFloat(getComputedStyle(expiry).lineHeight) * 1.5);
  });

  it('is no live region when signed out: a page of badges would announce it once for each', async () => {
    const el = await badge(new FakeKit().setSignedOut());
    expect(el.shadowRoot!.querySelector('[role="status"], [aria-live]')).to.equal(null);
  });
});

describe('<mp-plan-badge>: what mutation testing found unchecked', () => {
  it('shows the plan id when kit.planNames gives the plan an empty name', async () => {
    const el = await badge(withEntitlement({}).setPlanNames({ pro: '' }));
    expect(part(el, 'plan')!.textContent).to.equal('pro');
  });
});
