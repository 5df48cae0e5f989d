import { expect, fixture, html } from '@open-wc/testing';
import { sendKeys } from '@web/test-runner-commands';
import '../../../src/elements/index.js';
import type { MpUpgradeButton } from '../../../src/elements/index.js';
import { MarketplaceKitError } from '../../../src/shared/errors.js';
import { FakeKit, sampleEntitlement, sampleUser } from '../../support/fake-kit.js';
import { HOSTILE, deferred, next, part, settle } from './helpers.js';

const basic = () => sampleEntitlement({ plan: 'basic', features: [] });

async function button(kit: FakeKit, plan = 'pro', feature = 'export') {
  const el = await fixture<MpUpgradeButton>(html`<mp-upgrade-button .kit=${kit} plan=${plan} feature=${feature}></mp-upgrade-button>`);
  await settle(el);
  return el;
}

const states = [
  { name: 'loading', kit: () => new FakeKit(), label: 'Upgrade to pro', disabled: true },
  { name: 'ready, on another plan', kit: () => new FakeKit().setSession(sampleUser, basic()), label: 'Upgrade to pro', disabled: false },
  { name: 'ready, already on the plan', kit: () => new FakeKit().setSession(), label: 'Current plan', disabled: true },
  { name: 'signed out', kit: () => new FakeKit().setSignedOut(), label: 'Upgrade to pro', disabled: false },
  { name: 'kit in error', kit: () => new FakeKit().setError(), label: 'Upgrade to pro', disabled: false },
];

describe('<mp-upgrade-button>', () => {
  for (const s of states) {
    describe(s.name, () => {
      it('has the right label and state', async () => {
        const el = await button(s.kit());
        expect(part(el, 'label')!.textContent).to.equal(s.label);
        expect((part(el, 'base') as HTMLButtonElement).disabled).to.equal(s.disabled);
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
    expect(((await failed).error as MarketplaceKitError).code).to.equal('ERR_NOT_EMBEDDED');
    await settle(el);
    expect(part(el, 'base')!.getAttribute('aria-busy')).to.equal('false');
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
    expect(el.shadowRoot!.activeElement).to.equal(part(el, 'base'));
    expect(getComputedStyle(part(el, 'base')!).outlineStyle).to.equal('solid');
    await sendKeys({ press: 'Space' });
    expect(kit.calls.upgrade.length).to.equal(1);
  });

  it('renders a hostile plan name as text', async () => {
    const el = await button(new FakeKit().setSession(sampleUser, basic()), HOSTILE);
    expect(part(el, 'label')!.textContent).to.equal(`Upgrade to ${HOSTILE}`);
    expect(el.shadowRoot!.querySelector('img')).to.equal(null);
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
