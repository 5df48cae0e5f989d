import { expect, fixture, html } from '@open-wc/testing';
import { sendKeys } from '@web/test-runner-commands';
import '../index.js';
import type { MpUpgradeButton } from '../index.js';
import { parseFeature, parsePlanList } from '../base/plans.js';
import { MarketplaceKitError } from '../../shared/errors.js';
import { FakeKit, sampleEntitlement, sampleUser } from '../../testing/fake-kit.js';
import { daysFrom } from '../../../test/support/dates.js';
import { HOSTILE, deferred, focusThroughChange, next, part, settle, unavailable } from '../../../test/support/element-helpers.js';

const PAST = daysFrom(-365);
const basic = () => sampleEntitlement({ plan: 'basic', features: [] });

async function button(kit: FakeKit, plan = 'pro', feature = 'export') {
  const el = await fixture<MpUpgradeButton>(html`<mp-upgrade-button .kit=${kit} plan=${plan} feature=${feature}></mp-upgrade-button>`);
  await settle(el);
  return el;
}

/** A button for pro on a basic plan whose chooser failed to open: it says "Try again". */
async function failedUpgrade() {
  const kit = new FakeKit().setSession(sampleUser, basic()).scriptUpgrade({ error: new MarketplaceKitError('ERR_BRIDGE_TIMEOUT', 'no answer') });
  const el = await button(kit, 'pro', '');
  const failed = next(el, 'mp-error');
  part(el, 'base')!.click();
  await failed;
  await settle(el);
  expect(part(el, 'label')!.textContent).to.equal('Could not open the plans. Try again.');
  return { kit, el };
}

const states = [
  { name: 'loading', kit: () => new FakeKit(), label: 'Upgrade to pro', disabled: true },
  { name: 'ready, on another plan', kit: () => new FakeKit().setSession(sampleUser, basic()), label: 'Upgrade to pro', disabled: false },
  { name: 'ready, already on the plan', kit: () => new FakeKit().setSession(), label: 'Current plan', disabled: true },
  { name: 'ready, the plan expired', kit: () => new FakeKit().setSession(sampleUser, sampleEntitlement({ expires_at: PAST })), label: 'Renew pro', disabled: false },
  { name: 'ready, the plan cancelled', kit: () => new FakeKit().setSession(sampleUser, sampleEntitlement({ status: 'cancelled' })), label: 'Renew pro', disabled: false },
  { name: 'ready, the plan past due', kit: () => new FakeKit().setSession(sampleUser, sampleEntitlement({ status: 'past_due' })), label: 'Update payment', disabled: false },
  { name: 'ready, another plan expired', kit: () => new FakeKit().setSession(sampleUser, { ...basic(), expires_at: PAST }), label: 'Upgrade to pro', disabled: false },
  { name: 'ready, over quota', kit: () => new FakeKit().setSession(sampleUser, sampleEntitlement({ usage: { api_calls: 5, limit: 5 } })), label: 'Current plan', disabled: true },
  { name: 'signed out', kit: () => new FakeKit().setSignedOut(), label: 'Upgrade to pro', disabled: false },
  { name: 'kit in error', kit: () => new FakeKit().setError(), label: 'Upgrade to pro', disabled: false },
];

describe('<mp-upgrade-button>', () => {
  for (const s of states) {
    describe(s.name, () => {
      it('has the right label and state', async () => {
        const el = await button(s.kit());
        expect(part(el, 'label')!.textContent).to.equal(s.label);
        expect(unavailable(part(el, 'base') as HTMLButtonElement)).to.equal(s.disabled);
      });
      for (const theme of ['light', 'dark'] as const) {
        it(`is accessible (${theme})`, async () => {
          await expect(await button(s.kit().setTheme(theme))).to.be.accessible();
        });
      }
    });
  }

  it('says just "Upgrade" without a plan', async () => {
    const el = await button(new FakeKit().setSession(sampleUser, basic()), '', '');
    expect(part(el, 'label')!.textContent).to.equal('Upgrade');
  });

  it('runs kit.upgrade, shows progress, announces and emits the outcome', async () => {
    const hold = deferred();
    const kit = new FakeKit().setSession(sampleUser, basic()).scriptUpgrade({ outcome: 'upgraded', entitlement: sampleEntitlement(), wait: hold.promise });
    const el = await button(kit);
    const request = next(el, 'mp-upgrade-request');
    part(el, 'base')!.click();
    expect([(await request).plan, (await request).feature]).to.deep.equal(['pro', 'export']);
    await settle(el);
    expect(part(el, 'base')!.getAttribute('aria-busy')).to.equal('true');
    expect(part(el, 'label')!.textContent).to.equal('Opening plans…');
    await expect(el).to.be.accessible();
    const done = next(el, 'mp-upgrade');
    hold.resolve();
    const event = await done;
    expect([event.outcome, event.plan, event.feature]).to.deep.equal(['upgraded', 'pro', 'export']);
    await settle(el);
    expect(part(el, 'status')!.textContent).to.equal('Upgrade complete');
    expect(part(el, 'label')!.textContent).to.equal('Current plan');
    expect(kit.calls.upgrade).to.deep.equal([{ plan: 'pro', feature: 'export' }]);
  });

  it('offers the user\'s own plan when it lapsed: renew an expired plan, update the payment of a past-due one', async () => {
    const expired = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'business', expires_at: PAST }));
    const renew = await button(expired, 'pro business');
    expect(part(renew, 'label')!.textContent).to.equal('Renew business');
    const request = next(renew, 'mp-upgrade-request');
    part(renew, 'base')!.click();
    expect((await request).plan).to.equal('business');
    await settle(renew);
    expect(expired.calls.upgrade).to.deep.equal([{ plan: 'business', feature: 'export' }]);
    const pastDue = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'business', status: 'past_due' }));
    const update = await button(pastDue, 'pro business');
    expect(part(update, 'label')!.textContent).to.equal('Update payment');
    part(update, 'base')!.click();
    await settle(update);
    expect(pastDue.calls.upgrade).to.deep.equal([{ plan: 'business', feature: 'export' }]);
  });

  it('reads its label attribute as strings.planLabel or strings.label: placeholders filled, a blank one ignored', async () => {
    const el = await button(new FakeKit().setSession(sampleUser, basic()).setPlanNames({ pro: 'Pro' }));
    el.label = 'Passer à {plan}';
    await settle(el);
    expect(part(el, 'label')!.textContent).to.equal('Passer à Pro');
    el.plan = '';
    el.label = 'Mettre à niveau';
    await settle(el);
    expect(part(el, 'label')!.textContent).to.equal('Mettre à niveau');
    el.label = '  ';
    await settle(el);
    expect(part(el, 'label')!.textContent).to.equal('Upgrade');
  });

  it('names plans by kit.planNames: "Upgrade to Pro", "Renew Basic"', async () => {
    const names = { pro: 'Pro', basic: 'Basic' };
    expect(part(await button(new FakeKit().setSession(sampleUser, basic()).setPlanNames(names)), 'label')!.textContent).to.equal('Upgrade to Pro');
    const lapsed = new FakeKit().setSession(sampleUser, { ...basic(), expires_at: PAST }).setPlanNames(names);
    expect(part(await button(lapsed, 'basic', ''), 'label')!.textContent).to.equal('Renew Basic');
  });

  it('offers an upgrade, not a renewal, after a trial that ended', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ status: 'trialing', expires_at: PAST }));
    expect(part(await button(kit), 'label')!.textContent).to.equal('Upgrade to pro');
  });

  it('without a plan or a feature: "Upgrade" for a live plan, and a renewal for a lapsed one', async () => {
    expect(part(await button(new FakeKit().setSession(), '', ''), 'label')!.textContent).to.equal('Upgrade');
    const expired = new FakeKit().setSession(sampleUser, sampleEntitlement({ expires_at: PAST }));
    expect(part(await button(expired, '', ''), 'label')!.textContent).to.equal('Renew pro');
  });

  it('keeps the keyboard focus when the upgrade goes through, and then does nothing when chosen again', async () => {
    const kit = new FakeKit().setSession(sampleUser, basic()).scriptUpgrade({ outcome: 'upgraded', entitlement: sampleEntitlement() });
    const el = await button(kit);
    part(el, 'base')!.focus();
    const done = next(el, 'mp-upgrade');
    await sendKeys({ press: 'Enter' });
    await done;
    await settle(el);
    expect(part(el, 'label')!.textContent).to.equal('Current plan');
    expect(el.shadowRoot!.activeElement === part(el, 'base'), 'focus stays on the button').to.equal(true);
    let requests = 0;
    let clicks = 0;
    el.addEventListener('mp-upgrade-request', () => requests++);
    el.addEventListener('click', () => clicks++);
    await sendKeys({ press: 'Enter' });
    await settle(el);
    expect([requests, clicks, kit.calls.upgrade.length]).to.deep.equal([0, 0, 1], 'like a disabled button: no request, no click reaches the page');
    await expect(el).to.be.accessible();
  });

  it('announces a dismissed chooser', async () => {
    const kit = new FakeKit().setSession(sampleUser, basic()).scriptUpgrade({ outcome: 'dismissed' });
    const el = await button(kit);
    const done = next(el, 'mp-upgrade');
    part(el, 'base')!.click();
    expect((await done).outcome).to.equal('dismissed');
    await settle(el);
    expect(part(el, 'status')!.textContent).to.equal('No change to your plan');
  });

  it('lets the page veto the upgrade', async () => {
    const kit = new FakeKit().setSession(sampleUser, basic());
    const el = await button(kit);
    el.addEventListener('mp-upgrade-request', (event) => event.preventDefault());
    part(el, 'base')!.click();
    await settle(el);
    expect(kit.calls.upgrade).to.deep.equal([]);
  });

  it('reports a failure as mp-error', async () => {
    const kit = new FakeKit().setSession(sampleUser, basic()).scriptUpgrade({ error: new MarketplaceKitError('ERR_NOT_EMBEDDED', 'outside the dashboard') });
    const el = await button(kit);
    const failed = next(el, 'mp-error');
    part(el, 'base')!.click();
    expect((await failed).error.code).to.equal('ERR_NOT_EMBEDDED');
    await settle(el);
    expect(part(el, 'base')!.getAttribute('aria-busy')).to.equal('false');
    expect([part(el, 'label')!.textContent, part(el, 'status')!.textContent]).to.deep.equal(['Could not open the plans. Try again.', 'Could not open the plans. Try again.']);
    kit.scriptUpgrade({ outcome: 'dismissed' });
    part(el, 'base')!.click();
    await settle(el);
    expect([part(el, 'label')!.textContent, part(el, 'status')!.textContent]).to.deep.equal(['Upgrade to pro', 'No change to your plan']);
  });

  it('a failure ends when the offer changes: once the user holds the plan, "Current plan", not "Try again"', async () => {
    // The plan chooser timed out, yet the purchase went through: a later refresh shows the plan.
    const { kit, el } = await failedUpgrade();
    kit.setEntitlement(sampleEntitlement({ plan: 'pro' }));
    await settle(el);
    expect([part(el, 'label')!.textContent, part(el, 'status')!.textContent]).to.deep.equal(['Current plan', '']);
    expect(part(el, 'base')!.getAttribute('aria-disabled')).to.equal('true');
  });

  it('a failure that comes after the user already holds the plan does not say "Try again" on "Current plan"', async () => {
    const answer = deferred();
    const kit = new FakeKit()
      .setSession(sampleUser, basic())
      .scriptUpgrade({ wait: answer.promise, error: new MarketplaceKitError('ERR_BRIDGE_TIMEOUT', 'no answer') });
    const el = await button(kit, 'pro', '');
    const failed = next(el, 'mp-error');
    part(el, 'base')!.click();
    await settle(el);
    // The dashboard announced the purchase (the kit reloaded it), then its answer never came.
    kit.setEntitlement(sampleEntitlement({ plan: 'pro' }));
    await settle(el);
    answer.resolve();
    await failed;
    await settle(el);
    expect([part(el, 'label')!.textContent, part(el, 'status')!.textContent]).to.deep.equal(['Current plan', '']);
  });

  it('an empty label, or one of spaces, gives the built-in one: a button needs a name', async () => {
    const kit = new FakeKit().setSession(sampleUser, basic());
    for (const label of ['', ' \n ']) {
      const el = await fixture<MpUpgradeButton>(html`<mp-upgrade-button .kit=${kit} plan="pro" label=${label}></mp-upgrade-button>`);
      await settle(el);
      expect(part(el, 'label')!.textContent).to.equal('Upgrade to pro', JSON.stringify(label));
      // The same for the texts in `strings`.
      el.strings = { planLabel: label, label };
      await settle(el);
      expect(part(el, 'label')!.textContent).to.equal('Upgrade to pro', `strings ${JSON.stringify(label)}`);
      await expect(el).to.be.accessible();
    }
  });

  it('reads a feature without the spaces around it', async () => {
    const kit = new FakeKit().setSession();
    const el = await fixture<MpUpgradeButton>(html`<mp-upgrade-button .kit=${kit} feature=" export "></mp-upgrade-button>`);
    await settle(el);
    expect(part(el, 'label')!.textContent).to.equal('Current plan', 'the user has export');
    const calls = kit.calls.upgrade;
    el.feature = ' sso ';
    await settle(el);
    part(el, 'base')!.click();
    await settle(el);
    expect(calls).to.deep.equal([{ feature: 'sso' }]);
  });

  it('reports a failure that is not a kit error as mp-error ERR_ACTION_FAILED, keeping the cause', async () => {
    const cause = new TypeError('boom');
    const kit = new FakeKit().setSession(sampleUser, basic()).scriptUpgrade({ error: cause });
    const el = await button(kit);
    const failed = next(el, 'mp-error');
    part(el, 'base')!.click();
    const { error } = await failed;
    expect(error).to.be.instanceOf(MarketplaceKitError);
    expect(error.code).to.equal('ERR_ACTION_FAILED');
    expect(error.cause).to.equal(cause);
    expect(error.message).to.equal("The element's action failed: boom", 'the message, not "TypeError: boom"');
  });

  it('reports a failure that is not even an Error (a rejected text) as mp-error ERR_ACTION_FAILED with that text', async () => {
    const kit = new FakeKit().setSession(sampleUser, basic()).scriptUpgrade({ error: 'chooser unavailable' });
    const el = await button(kit);
    const failed = next(el, 'mp-error');
    part(el, 'base')!.click();
    const { error } = await failed;
    expect([error.code, error.message, error.cause]).to.deep.equal(['ERR_ACTION_FAILED', "The element's action failed: chooser unavailable", 'chooser unavailable']);
  });

  describe('several plans (plan="pro business"), as on <mp-gate>', () => {
    for (const [plan, label] of [
      ['pro business', 'Current plan'],
      ['business, pro', 'Current plan'],
      ['business enterprise', 'Upgrade to business or enterprise'],
    ] as const) {
      it(`plan="${plan}" on the pro plan: ${label}`, async () => {
        const el = await button(new FakeKit().setSession(), plan, '');
        expect(part(el, 'label')!.textContent).to.equal(label);
        expect(unavailable(part(el, 'base') as HTMLButtonElement)).to.equal(label === 'Current plan');
      });
    }

    it('offers the first listed plan to the plan chooser', async () => {
      const kit = new FakeKit().setSession(sampleUser, basic());
      const el = await button(kit, ' business,  enterprise ', 'sso');
      expect(part(el, 'label')!.textContent).to.equal('Upgrade to business or enterprise');
      const request = next(el, 'mp-upgrade-request');
      part(el, 'base')!.click();
      expect((await request).plan).to.equal('business');
      expect(kit.calls.upgrade).to.deep.equal([{ plan: 'business', feature: 'sso' }]);
    });
  });

  it('parsePlanList: the one reading of a plan attribute, shared with <mp-gate>', () => {
    expect(parsePlanList('pro')).to.deep.equal(['pro']);
    expect(parsePlanList('pro business')).to.deep.equal(['pro', 'business']);
    expect(parsePlanList(' pro,business ,, enterprise\t')).to.deep.equal(['pro', 'business', 'enterprise']);
    for (const none of ['', ' , ', null, undefined]) expect(parsePlanList(none)).to.equal(undefined);
    // Properties as frameworks set them: a list, a number (Vue's `:plan="2"`).
    expect(parsePlanList(['pro', 'business'])).to.deep.equal(['pro', 'business']);
    expect(parsePlanList(2 as unknown as string)).to.deep.equal(['2']);
    expect(parseFeature(7 as unknown as string)).to.equal('7');
  });

  it('keeps the focus when its kit goes away, and then does nothing', async () => {
    const kit = new FakeKit().setSession(sampleUser, basic());
    const el = await button(kit);
    const after = await focusThroughChange(el, () => kit.destroy(), () => kit.calls.upgrade.length);
    expect(after).to.deep.equal({ focused: true, calls: 0, clicks: 0 });
    expect(part(el, 'base')!.getAttribute('aria-disabled')).to.equal('true');
    await expect(el).to.be.accessible();
  });

  it('does nothing when disabled', async () => {
    const kit = new FakeKit().setSession(sampleUser, basic());
    const el = await fixture<MpUpgradeButton>(html`<mp-upgrade-button .kit=${kit} plan="pro" disabled></mp-upgrade-button>`);
    part(el, 'base')!.click();
    expect(kit.calls.upgrade).to.deep.equal([]);
  });

  it('works by keyboard', async () => {
    const kit = new FakeKit().setSession(sampleUser, basic());
    const el = await button(kit);
    await sendKeys({ press: 'Tab' });
    expect(el.shadowRoot!.activeElement === part(el, 'base'), 'the button has the focus').to.equal(true);
    expect(getComputedStyle(part(el, 'base')!).outlineStyle).to.equal('solid');
    await sendKeys({ press: 'Space' });
    expect(kit.calls.upgrade.length).to.equal(1);
  });

  it('gives el.focus() to its button, where Enter upgrades', async () => {
    const kit = new FakeKit().setSession(sampleUser, basic());
    const el = await button(kit);
    el.focus();
    expect([document.activeElement === el, el.shadowRoot!.activeElement === part(el, 'base')]).to.deep.equal([true, true]);
    await sendKeys({ press: 'Enter' });
    expect(kit.calls.upgrade.length).to.equal(1);
  });

  it('renders hostile plan names as text', async () => {
    // Spaces separate plans, so the markup arrives as several "plans", and without spaces as one.
    const el = await button(new FakeKit().setSession(sampleUser, basic()), HOSTILE);
    expect(part(el, 'label')!.textContent).to.equal('Upgrade to <img, src=x, onerror="window.__xss, =, or 1">');
    const packed = '<img/src=x/onerror=window.__xss=1>';
    el.plan = packed;
    await settle(el);
    expect(part(el, 'label')!.textContent).to.equal(`Upgrade to ${packed}`);
    expect(el.shadowRoot!.querySelector('img')).to.equal(null);
    expect((window as { __xss?: number }).__xss).to.equal(undefined);
  });

  it('takes its texts from label and strings', async () => {
    const el = await button(new FakeKit().setSession(sampleUser, basic()));
    el.strings = { planLabel: 'Passer à {plan}' };
    await settle(el);
    expect(part(el, 'label')!.textContent).to.equal('Passer à pro');
    el.label = 'Go pro';
    await settle(el);
    expect(part(el, 'label')!.textContent).to.equal('Go pro');
  });
});

describe('<mp-upgrade-button>: what mutation testing found unchecked', () => {
  it('is aria-busy, with its spinner, while its kit starts', async () => {
    const el = await button(new FakeKit());
    expect([part(el, 'base')!.getAttribute('aria-busy'), !!part(el, 'spinner')]).to.deep.equal(['true', true]);
  });

  it('a failure ends when the offer changes to a renewal: "Renew pro", not "Try again"', async () => {
    const { kit, el } = await failedUpgrade();
    kit.setEntitlement(sampleEntitlement({ expires_at: PAST }));
    await settle(el);
    expect([part(el, 'label')!.textContent, part(el, 'status')!.textContent]).to.deep.equal(['Renew pro', '']);
  });

  it('clears the last outcome when the chooser opens again, so that the next one is announced anew', async () => {
    const hold = deferred();
    const kit = new FakeKit().setSession(sampleUser, basic()).scriptUpgrade({ outcome: 'dismissed' }).scriptUpgrade({ outcome: 'dismissed', wait: hold.promise });
    const el = await button(kit);
    let done = next(el, 'mp-upgrade');
    part(el, 'base')!.click();
    await done;
    await settle(el);
    expect(part(el, 'status')!.textContent).to.equal('No change to your plan');
    done = next(el, 'mp-upgrade');
    part(el, 'base')!.click();
    await settle(el);
    expect([part(el, 'label')!.textContent, part(el, 'status')!.textContent]).to.deep.equal(['Opening plans…', '']);
    hold.resolve();
    await done;
    await settle(el);
    expect(part(el, 'status')!.textContent).to.equal('No change to your plan');
  });

  it('a kit in error keeps deciding with its last entitlement: "Current plan" stays, never an upgrade to the plan held', async () => {
    const kit = new FakeKit().setSession().setError();
    expect(kit.access({ plan: 'pro' }).granted).to.equal(true);
    const el = await button(kit);
    expect([part(el, 'label')!.textContent, unavailable(part(el, 'base'))]).to.deep.equal(['Current plan', true]);
    part(el, 'base')!.click();
    expect(kit.calls.upgrade).to.deep.equal([]);
    // Without an entitlement to go by, it offers the upgrade.
    const none = await button(new FakeKit().setSession(sampleUser, null).setError());
    expect(part(none, 'label')!.textContent).to.equal('Upgrade to pro');
  });

  it('offers the other listed plans, not the one held, when that plan lacks the feature', async () => {
    for (const [held, offered, label] of [
      ['pro', 'business', 'Upgrade to business'],
      ['business', 'pro', 'Upgrade to pro'],
    ] as const) {
      const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: held, features: [] }));
      const el = await button(kit, 'pro business', 'sso');
      expect(part(el, 'label')!.textContent, held).to.equal(label);
      const request = next(el, 'mp-upgrade-request');
      part(el, 'base')!.click();
      expect([(await request).plan, (await request).feature], held).to.deep.equal([offered, 'sso']);
    }
    // The only plan listed is the one held: the chooser is asked for the feature alone.
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'pro', features: [] }));
    const el = await button(kit, 'pro', 'sso');
    expect(part(el, 'label')!.textContent).to.equal('Upgrade');
    part(el, 'base')!.click();
    expect(kit.calls.upgrade).to.deep.equal([{ feature: 'sso' }]);
  });
});
