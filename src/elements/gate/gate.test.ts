import { expect, fixture, html } from '@open-wc/testing';
import { sendKeys } from '@web/test-runner-commands';
import '../index.js';
import { MpGate } from '../index.js';
import { MarketplaceKitError } from '../../shared/errors.js';
import { FakeKit, sampleEntitlement, sampleUser } from '../../testing/fake-kit.js';
import { calendarDay, daysFrom } from '../../../test/support/dates.js';
import { HOSTILE, deferred, next, part, settle, text, until } from '../../../test/support/element-helpers.js';

const PAST = daysFrom(-365);

async function gate(kit: FakeKit, attrs: { feature?: string; plan?: string; metered?: boolean } = { feature: 'export' }) {
  const el = await fixture<MpGate>(
    html`<mp-gate .kit=${kit} feature=${attrs.feature ?? ''} plan=${attrs.plan ?? ''} ?metered=${!!attrs.metered}><p id="secret">Secret report</p></mp-gate>`,
  );
  await settle(el);
  return el;
}

/** The content is in the gate's slot, and that slot is displayed (the gate keeps it, not displayed, while access is denied). */
const isShown = (el: MpGate) => {
  const slot = el.querySelector('#secret')!.assignedSlot;
  return !!slot && getComputedStyle(slot).display !== 'none';
};

/**
 * Runs `step` while the page has lost the focus to its parent (the dashboard's chooser opened
 * there): `document.hasFocus()` is false and nothing in the page has the focus.
 */
async function withFocusInParent(step: () => unknown = () => undefined): Promise<void> {
  Object.defineProperty(document, 'hasFocus', { configurable: true, value: () => false });
  try {
    (document.activeElement as HTMLElement | null)?.blur();
    await new Promise((resolve) => setTimeout(resolve));
    await step();
  } finally {
    delete (document as { hasFocus?: unknown }).hasFocus;
  }
}

/** A locked gate whose upgrade just failed, as its card says. */
async function gateAfterFailedUpgrade() {
  const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic', features: [] }));
  kit.scriptUpgrade({ error: new MarketplaceKitError('ERR_BRIDGE_TIMEOUT', 'no answer') });
  const el = await gate(kit);
  part(el, 'action')!.click();
  await settle(el);
  expect(part(el, 'detail')!.textContent).to.equal('That did not work. Please try again.');
  return { kit, el };
}

/** Every look of the gate: how to get there and what it shows. */
const states: { name: string; kit: () => FakeKit; attrs?: Parameters<typeof gate>[1]; state: string; access?: string; heading?: string }[] = [
  { name: 'loading', kit: () => new FakeKit(), state: 'loading' },
  { name: 'granted', kit: () => new FakeKit().setSession(), state: 'ready', access: 'granted' },
  { name: 'locked (feature)', kit: () => new FakeKit().setSession(), attrs: { feature: 'sso' }, state: 'ready', access: 'locked', heading: 'Unlock sso' },
  { name: 'locked (no entitlement)', kit: () => new FakeKit().setSession(sampleUser, null), state: 'ready', access: 'locked', heading: 'Unlock export' },
  {
    name: 'expired',
    kit: () => new FakeKit().setSession(sampleUser, sampleEntitlement({ status: 'expired', expires_at: PAST })),
    state: 'ready',
    access: 'expired',
    heading: 'Your pro plan has expired',
  },
  {
    name: 'cancelled',
    kit: () => new FakeKit().setSession(sampleUser, sampleEntitlement({ status: 'cancelled' })),
    state: 'ready',
    access: 'expired',
    heading: 'Your pro plan was cancelled',
  },
  {
    name: 'past due',
    kit: () => new FakeKit().setSession(sampleUser, sampleEntitlement({ status: 'past_due' })),
    state: 'ready',
    access: 'past-due',
    heading: 'Payment past due',
  },
  {
    name: 'over quota',
    kit: () => new FakeKit().setSession(sampleUser, sampleEntitlement({ usage: { api_calls: 1000, limit: 1000 } })),
    attrs: { feature: 'export', metered: true },
    state: 'ready',
    access: 'over-quota',
    heading: 'Usage limit reached',
  },
  { name: 'signed out', kit: () => new FakeKit().setSignedOut(), state: 'signed-out', access: 'locked', heading: 'Sign in to use export' },
  { name: 'kit in error', kit: () => new FakeKit().setError(), state: 'error', heading: 'Could not check your access' },
  {
    name: 'launch refused',
    kit: () => new FakeKit().setError(new MarketplaceKitError('ERR_HOST_NOT_ALLOWED', 'not in hostOrigins')),
    state: 'error',
    heading: 'Could not check your access',
  },
];

describe('<mp-gate>', () => {
  for (const s of states) {
    describe(s.name, () => {
      it('shows the right look', async () => {
        const el = await gate(s.kit(), s.attrs);
        expect(el.state).to.equal(s.state);
        expect(el.getAttribute('access')).to.equal(s.access ?? null);
        expect(isShown(el)).to.equal(s.access === 'granted');
        if (s.heading) {
          // A heading for assistive technology too (WCAG 1.3.1): reached by heading navigation.
          const heading = part(el, 'heading')!;
          expect(heading.textContent).to.equal(s.heading);
          expect([heading.getAttribute('role'), heading.getAttribute('aria-level')]).to.deep.equal(['heading', '2']);
        } else expect(part(el, 'card')).to.equal(null);
      });

      for (const theme of ['light', 'dark'] as const) {
        it(`is accessible (${theme})`, async () => {
          const el = await gate(s.kit().setTheme(theme), s.attrs);
          expect(el.getAttribute('theme')).to.equal(theme);
          await expect(el).to.be.accessible();
        });
      }
    });
  }

  describe('not connected (no kit on the page)', () => {
    const originalWarn = console.warn;
    const warnings: string[] = [];
    before(() => {
      MpGate.kitTimeoutMs = 20;
      console.warn = (...args: unknown[]) => void warnings.push(args.map(String).join(' '));
    });
    after(() => {
      delete (MpGate as { kitTimeoutMs?: number }).kitTimeoutMs;
      console.warn = originalWarn;
    });

    async function unconnected(theme: 'light' | 'dark') {
      const el = await fixture<MpGate>(html`<mp-gate feature="export" theme=${theme}><p id="secret">Secret report</p></mp-gate>`);
      await until(() => el.state === 'not-connected', 'the gate never gave up waiting for a kit');
      await settle(el);
      return el;
    }

    it('shows a plain, not busy "Not connected" box, never the content, and warns once with ERR_KIT_NOT_FOUND', async () => {
      const el = await unconnected('light');
      expect(el.hasAttribute('access')).to.equal(false);
      expect(el.decision).to.equal(null);
      expect(isShown(el)).to.equal(false);
      expect(part(el, 'card')).to.equal(null);
      expect(part(el, 'loading')!.getAttribute('aria-busy')).to.equal('false');
      expect(text(el)).to.contain('Not connected to Marketplace');
      expect(warnings.filter((line) => line.includes('ERR_KIT_NOT_FOUND'))).to.have.length(1);
    });

    for (const theme of ['light', 'dark'] as const) {
      it(`is accessible (${theme})`, async () => {
        const el = await unconnected(theme);
        expect(el.getAttribute('theme')).to.equal(theme);
        await expect(el).to.be.accessible();
      });
    }
  });

  it("sets its card heading's level from heading-level, 1 to 6, else 2", async () => {
    const el = await gate(new FakeKit().setSession(sampleUser, null));
    const level = async (value: string | null) => {
      if (value === null) el.removeAttribute('heading-level');
      else el.setAttribute('heading-level', value);
      await el.updateComplete;
      return part(el, 'heading')!.getAttribute('aria-level');
    };
    expect([await level('3'), await level('1'), await level('6')]).to.deep.equal(['3', '1', '6']);
    expect([await level('7'), await level('0'), await level('2.5'), await level('h3'), await level(null)]).to.deep.equal(['2', '2', '2', '2', '2']);
    el.headingLevel = 4;
    await el.updateComplete;
    expect(part(el, 'heading')!.getAttribute('aria-level')).to.equal('4');
    await expect(el).to.be.accessible();
  });

  it('shows loading as a busy box without the content', async () => {
    const el = await gate(new FakeKit());
    expect(part(el, 'loading')!.getAttribute('aria-busy')).to.equal('true');
    expect(text(el)).to.contain('Checking access…');
  });

  it('names the plans that unlock the feature in the language of its texts', async () => {
    const el = await gate(new FakeKit().setSession().setLocale('fr-FR'), { feature: 'sso', plan: 'business, enterprise' });
    expect(part(el, 'text')!.textContent).to.equal('Inclus dans le forfait business ou enterprise.');
    // A locale without a pack of its own reads English, "or" included, with figures in its own way.
    el.kit = new FakeKit().setSession().setLocale('fi-FI');
    await settle(el);
    expect(part(el, 'text')!.textContent).to.equal('Included in the business or enterprise plan.');
    // Overrides are in the language of the texts around them: the user's.
    el.kit = new FakeKit().setSession().setLocale('fr-FR');
    el.strings = { lockedPlanText: 'Réservé aux forfaits {plan}.' };
    await settle(el);
    expect(part(el, 'text')!.textContent).to.equal('Réservé aux forfaits business ou enterprise.');
  });

  it('names plans by kit.planNames, always as text, and an unnamed plan by its id', async () => {
    const kit = new FakeKit().setSession().setPlanNames({ business: 'Business', enterprise: HOSTILE });
    const el = await gate(kit, { feature: 'sso', plan: 'business enterprise constructor' });
    expect(part(el, 'text')!.textContent).to.equal(`Included in the Business, ${HOSTILE}, or constructor plan.`);
    expect(el.shadowRoot!.querySelector('img')).to.equal(null);
    const lapsed = await gate(new FakeKit().setSession(sampleUser, sampleEntitlement({ status: 'cancelled' })).setPlanNames({ pro: 'Pro' }));
    expect(part(lapsed, 'heading')!.textContent).to.equal('Your Pro plan was cancelled');
  });

  it('reads a feature without the spaces around it: a stray space does not lock a user who has it', async () => {
    expect(isShown(await gate(new FakeKit().setSession(), { feature: ' export\n' }))).to.equal(true);
    const locked = await gate(new FakeKit().setSession(sampleUser, null), { feature: ' sso ' });
    expect(part(locked, 'heading')!.textContent).to.equal('Unlock sso');
  });

  it('grants when one of several plans matches', async () => {
    const el = await gate(new FakeKit().setSession(), { plan: 'business pro' });
    expect(el.access).to.equal('granted');
  });

  it('shows the end date of an expired plan in the user locale', async () => {
    const ended = calendarDay(-2, 1, 1);
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ expires_at: ended.iso })).setLocale('de-DE');
    const el = await gate(kit);
    expect(el.access).to.equal('expired');
    expect(part(el, 'detail')!.textContent).to.equal(`Abgelaufen am 01.01.${ended.year}`);
  });

  it('formats usage figures in the user locale', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ usage: { api_calls: 12000, limit: 12000 } })).setLocale('de-DE');
    const el = await gate(kit, { feature: 'export', metered: true });
    expect(part(el, 'text')!.textContent).to.contain('12.000 von 12.000');
  });

  it('ignores the quota unless metered', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ usage: { api_calls: 1000, limit: 1000 } }));
    expect((await gate(kit)).access).to.equal('granted');
  });

  it('shows the locked slot instead of the card, for every denial but not for errors', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ status: 'past_due' }));
    const el = await fixture<MpGate>(html`<mp-gate feature="export" .kit=${kit}><p>Secret</p><a slot="locked" href="/pricing">See plans</a></mp-gate>`);
    await settle(el);
    const locked = el.shadowRoot!.querySelector<HTMLSlotElement>('slot[name="locked"]')!;
    expect(locked.assignedElements().map((node) => node.textContent)).to.deep.equal(['See plans']);
    await expect(el).to.be.accessible();
    kit.setError();
    await settle(el);
    expect(el.shadowRoot!.querySelector('slot[name="locked"]')).to.equal(null);
    expect(part(el, 'heading')!.textContent).to.equal('Could not check your access');
  });

  it('updates live when the entitlement changes and fires mp-access-change', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ features: [] }));
    const el = await gate(kit);
    expect(el.access).to.equal('locked');
    const changed = next(el, 'mp-access-change');
    kit.setEntitlement(sampleEntitlement());
    const event = await changed;
    expect([event.granted, event.reason]).to.deep.equal([true, 'granted']);
    expect(isShown(el)).to.equal(true);
    expect(part(el, 'status')!.textContent).to.equal('Unlocked');
  });

  it('upgrades from the card: request, outcome, then shows the content', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic', features: [] }));
    kit.scriptUpgrade({ outcome: 'upgraded', entitlement: sampleEntitlement() });
    const el = await gate(kit, { feature: 'export', plan: 'pro business' });
    const request = next(el, 'mp-upgrade-request');
    const done = next(el, 'mp-upgrade');
    part(el, 'action')!.click();
    expect([(await request).plan, (await request).feature]).to.deep.equal(['pro', 'export']);
    expect((await done).outcome).to.equal('upgraded');
    expect(kit.calls.upgrade).to.deep.equal([{ plan: 'pro', feature: 'export' }]);
    await settle(el);
    expect(isShown(el)).to.equal(true);
  });

  it('over quota, asks the chooser for the feature only, never for the plan the user holds', async () => {
    const overQuota = sampleEntitlement({ plan: 'pro', usage: { api_calls: 1000, limit: 1000 } });
    for (const plan of ['pro business', 'business pro', 'pro', '']) {
      const kit = new FakeKit().setSession(sampleUser, overQuota);
      const el = await gate(kit, { feature: 'export', plan, metered: true });
      expect(el.access, plan).to.equal('over-quota');
      const request = next(el, 'mp-upgrade-request');
      part(el, 'action')!.click();
      expect((await request).plan, plan).to.equal(undefined);
      expect(kit.calls.upgrade, plan).to.deep.equal([{ feature: 'export' }]);
    }
  });

  it('reads metered set as a text by a framework (metered="true") by its truth, as before', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ usage: { api_calls: 1000, limit: 1000 } }));
    const el = await gate(kit);
    expect(el.access).to.equal('granted');
    (el as { metered: unknown }).metered = 'true';
    await settle(el);
    expect([el.access, el.decision?.reason]).to.deep.equal(['over-quota', 'over_quota']);
  });

  it('when the plan held lacks the feature, offers the other listed plans, or the feature alone', async () => {
    for (const [plan, text, offered] of [
      ['pro business', 'Included in the business plan.', { plan: 'business', feature: 'sso' }],
      ['pro', 'Upgrade your plan to use sso.', { feature: 'sso' }],
    ] as const) {
      const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'pro', features: [] }));
      const el = await gate(kit, { feature: 'sso', plan });
      expect([el.decision?.reason, part(el, 'text')!.textContent], plan).to.deep.equal(['feature', text]);
      part(el, 'action')!.click();
      expect(kit.calls.upgrade, plan).to.deep.equal([offered]);
    }
  });

  it('renews the user’s own plan when it expired', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic', status: 'expired' }));
    const el = await gate(kit);
    part(el, 'action')!.click();
    expect(kit.calls.upgrade).to.deep.equal([{ plan: 'basic', feature: 'export' }]);
  });

  it('offers an upgrade, not a renewal, when the lapsed plan would not unlock the feature anyway', async () => {
    for (const status of ['expired', 'past_due']) {
      const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic', features: [], status }));
      const el = await gate(kit, { feature: 'sso', plan: 'business' });
      expect([el.decision?.reason, el.access, part(el, 'heading')!.textContent]).to.deep.equal([status, 'locked', 'Unlock sso']);
      part(el, 'action')!.click();
      expect(kit.calls.upgrade).to.deep.equal([{ plan: 'business', feature: 'sso' }]);
    }
  });

  it('offers an upgrade, not a renewal, after a trial that ended', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ status: 'trialing', expires_at: PAST }));
    const el = await gate(kit, { feature: 'export', plan: 'pro' });
    expect([el.decision?.reason, el.access, part(el, 'action')!.textContent!.trim()]).to.deep.equal(['expired', 'locked', 'Upgrade']);
  });

  it('lets the page veto the upgrade', async () => {
    const kit = new FakeKit().setSession(sampleUser, null);
    const el = await gate(kit);
    el.addEventListener('mp-upgrade-request', (event) => event.preventDefault());
    part(el, 'action')!.click();
    await settle(el);
    expect(kit.calls.upgrade).to.deep.equal([]);
  });

  it('is busy while the plan chooser is open and ignores more clicks', async () => {
    const hold = deferred();
    const kit = new FakeKit().setSession(sampleUser, null).scriptUpgrade({ wait: hold.promise });
    const el = await gate(kit);
    part(el, 'action')!.click();
    await settle(el);
    expect(part(el, 'action')!.getAttribute('aria-busy')).to.equal('true');
    await expect(el).to.be.accessible();
    part(el, 'action')!.click();
    expect(kit.calls.upgrade.length).to.equal(1);
    hold.resolve();
    await next(el, 'mp-upgrade');
    await settle(el);
    expect(part(el, 'action')!.getAttribute('aria-busy')).to.equal('false');
  });

  it('reports a failed upgrade as mp-error with its code', async () => {
    const kit = new FakeKit().setSession(sampleUser, null).scriptUpgrade({ error: new MarketplaceKitError('ERR_NOT_EMBEDDED', 'not embedded') });
    const el = await gate(kit);
    const failed = next(el, 'mp-error');
    part(el, 'action')!.click();
    expect((await failed).error.code).to.equal('ERR_NOT_EMBEDDED');
  });

  it('signs in from the signed-out card, returning to this page', async () => {
    const kit = new FakeKit().setSignedOut();
    const el = await gate(kit);
    const request = next(el, 'mp-sign-in-request');
    part(el, 'action')!.click();
    expect((await request).returnTo).to.equal(location.href);
    expect(kit.calls.signIn).to.deep.equal([location.href]);
  });

  it('offers no retry after a refused launch, which a refresh cannot change, and says where to open the app', async () => {
    for (const code of ['ERR_HOST_NOT_ALLOWED', 'ERR_INVALID_INPUT'] as const) {
      const kit = new FakeKit().setError(new MarketplaceKitError(code, 'refused'));
      const el = await gate(kit);
      expect(part(el, 'action'), code).to.equal(null);
      expect(part(el, 'text')!.textContent).to.equal('Open this app from the marketplace dashboard.');
      el.strings = { refusedText: 'Open Acme from your dashboard.' };
      await settle(el);
      expect(part(el, 'text')!.textContent).to.equal('Open Acme from your dashboard.');
    }
    // Any other error keeps its retry.
    const el = await gate(new FakeKit().setError(new MarketplaceKitError('ERR_NETWORK', 'offline')));
    expect(part(el, 'action')!.textContent!.trim()).to.equal('Try again');
    expect(part(el, 'text')!.textContent).to.equal('Please try again.');
  });

  it('retries a kit in error with kit.refresh()', async () => {
    const kit = new FakeKit().setError();
    kit.onRefresh = (k) => void k.setSession();
    const el = await gate(kit);
    part(el, 'action')!.click();
    await settle(el);
    expect(kit.calls.refresh).to.equal(1);
    expect(isShown(el)).to.equal(true);
  });

  it('works by keyboard, with a visible focus ring', async () => {
    const kit = new FakeKit().setSession(sampleUser, null);
    const el = await gate(kit);
    await sendKeys({ press: 'Tab' });
    const action = part(el, 'action')!;
    expect(el.shadowRoot!.activeElement === action, 'the action has the focus').to.equal(true);
    expect(getComputedStyle(action).outlineStyle).to.equal('solid');
    await sendKeys({ press: 'Enter' });
    await sendKeys({ press: 'Space' });
    expect(kit.calls.upgrade.length).to.equal(2);
  });

  it('keeps the keyboard focus: on the gate once an upgrade unlocks it, on the new card after a retry', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic', features: [] }));
    kit.scriptUpgrade({ outcome: 'upgraded', entitlement: sampleEntitlement() });
    const el = await gate(kit);
    part(el, 'action')!.focus();
    const done = next(el, 'mp-upgrade');
    await sendKeys({ press: 'Enter' });
    await done;
    await settle(el);
    expect(isShown(el)).to.equal(true);
    expect(document.activeElement === el, 'the gate that now shows the content has the focus').to.equal(true);
    // …with a ring of its own, clear of its content.
    expect([getComputedStyle(el).outlineStyle, getComputedStyle(el).outlineWidth, getComputedStyle(el).outlineOffset]).to.deep.equal(['solid', '2px', '4px']);

    const failing = new FakeKit().setError();
    failing.onRefresh = (k) => void k.setSession(sampleUser, null);
    const retried = await gate(failing);
    part(retried, 'action')!.focus();
    await sendKeys({ press: 'Enter' });
    await settle(retried);
    expect(retried.access).to.equal('locked');
    expect(retried.shadowRoot!.activeElement === part(retried, 'action'), "the paywall card's button has the focus").to.equal(true);
  });

  it('inside the dashboard: an upgrade unlocked while the plan chooser had the focus gives it to the gate when it comes back', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic', features: [] }));
    let answer!: () => void;
    kit.scriptUpgrade({ outcome: 'upgraded', wait: new Promise<void>((resolve) => (answer = resolve)) });
    const el = await gate(kit);
    part(el, 'action')!.focus();
    const done = next(el, 'mp-upgrade');
    await sendKeys({ press: 'Enter' });
    // The chooser opens in the parent page: this page loses the focus (its body shows it)…
    await withFocusInParent(async () => {
      // …and the dashboard's entitlementsChanged arrives before the chooser closes.
      kit.setEntitlement(sampleEntitlement());
      await settle(el);
      expect(isShown(el)).to.equal(true);
      expect(document.activeElement?.localName, 'nothing is taken from the parent page').to.equal('body');
    });
    expect(document.hasFocus).to.equal(Document.prototype.hasFocus);
    answer();
    await done;
    dispatchEvent(new FocusEvent('focus'));
    expect(document.activeElement === el, 'the gate has the focus once the page has it back').to.equal(true);
  });

  it('takes no focus the user moved elsewhere in the page, while its action runs or after', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic', features: [] }));
    const chooser = deferred();
    kit.scriptUpgrade({ outcome: 'upgraded', wait: chooser.promise, entitlement: sampleEntitlement() });
    const el = await gate(kit);
    part(el, 'action')!.focus();
    const done = next(el, 'mp-upgrade');
    await sendKeys({ press: 'Enter' });
    // The user clicks an empty part of the page: the focus goes to the body, in this page.
    (document.activeElement as HTMLElement | null)?.blur();
    await new Promise((resolve) => setTimeout(resolve));
    kit.setTheme('dark');
    await settle(el);
    dispatchEvent(new FocusEvent('focus'));
    expect(document.activeElement?.localName, 'while the action runs').to.equal('body');
    chooser.resolve();
    await done;
    await settle(el);
    dispatchEvent(new FocusEvent('focus'));
    expect([isShown(el), document.activeElement?.localName], 'after it unlocked the gate').to.deep.equal([true, 'body']);
  });

  it('stops waiting for the focus to come back once it is taken out of the page', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic', features: [] }));
    const el = await gate(kit);
    const parent = el.parentElement!;
    part(el, 'action')!.focus();
    // The focus leaves the page from inside the gate (to the dashboard, say)…
    await withFocusInParent();
    // …the app takes the gate out and puts it back elsewhere; then the plan changes.
    el.remove();
    parent.append(el);
    kit.setEntitlement(sampleEntitlement());
    await settle(el);
    dispatchEvent(new FocusEvent('focus'));
    expect([isShown(el), document.activeElement?.localName]).to.deep.equal([true, 'body']);
  });

  it('keeps the focus when a focused button of the unlocked content is hidden by a lapsed plan', async () => {
    const kit = new FakeKit().setSession();
    const el = await fixture<MpGate>(html`<mp-gate feature="export" .kit=${kit}><button id="export">Export CSV</button></mp-gate>`);
    await settle(el);
    el.querySelector<HTMLButtonElement>('#export')!.focus();
    kit.setEntitlement(sampleEntitlement({ status: 'cancelled' }));
    await settle(el);
    expect(el.access).to.equal('expired');
    expect(el.shadowRoot!.activeElement === part(el, 'action'), "the card's Renew button has the focus").to.equal(true);
  });

  it('locks by itself when the entitlement ends while the page is open', async () => {
    // A second to render and look before the end: a slow machine must not get there first.
    const soon = new Date(Date.now() + 1_000).toISOString();
    const el = await gate(new FakeKit().setSession(sampleUser, sampleEntitlement({ expires_at: soon })));
    const changed = next(el, 'mp-access-change');
    expect(el.access).to.equal('granted');
    expect((await changed).reason).to.equal('expired');
    await settle(el);
    expect([el.access, isShown(el)]).to.deep.equal(['expired', false]);
  });

  it('with page content in the locked slot, a retry that ends locked gives the focus to the gate, for once', async () => {
    const kit = new FakeKit().setError();
    kit.onRefresh = (k) => void k.setSession(sampleUser, null);
    const el = await fixture<MpGate>(html`<mp-gate feature="export" .kit=${kit}><p slot="locked">Ask your admin</p></mp-gate>`);
    await settle(el);
    part(el, 'action')!.focus();
    await sendKeys({ press: 'Enter' });
    await settle(el);
    expect(el.access).to.equal('locked');
    expect(document.activeElement === el, 'the gate has the focus').to.equal(true);
    expect(el.getAttribute('tabindex')).to.equal('-1');
    el.blur();
    expect(el.hasAttribute('tabindex')).to.equal(false, 'the tabindex goes with the focus');
  });

  it('a gate moved elsewhere on the page still locks when the entitlement ends', async () => {
    const soon = new Date(Date.now() + 300).toISOString();
    const el = await gate(new FakeKit().setSession(sampleUser, sampleEntitlement({ expires_at: soon })));
    const other = await fixture(html`<section></section>`);
    other.append(el); // one step: connected again before the disconnect callback runs
    await until(() => el.access === 'expired', 'the moved gate never locked');
  });

  it('an entitlement ending beyond setTimeout\'s range (2^31 ms, about 25 days) sets one far timer, not a loop of renders', async () => {
    const later = new Date(Date.now() + 2 ** 31 + 60_000).toISOString();
    const el = await gate(new FakeKit().setSession(sampleUser, sampleEntitlement({ expires_at: later })));
    let updates = 0;
    const update = (el as unknown as { performUpdate(): void }).performUpdate.bind(el);
    (el as unknown as { performUpdate(): void }).performUpdate = () => (updates++, update());
    // A timer the gate set for less than this (an overflowed far timer fires at once) fires first.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(updates).to.equal(0);
  });

  it('keeps one live region through every look, so changes are announced', async () => {
    const kit = new FakeKit();
    const el = await gate(kit);
    const region = part(el, 'status');
    const seen: string[] = [];
    for (const step of [() => kit.setSession(sampleUser, null), () => kit.setSession(), () => kit.setError()]) {
      step();
      await settle(el);
      expect(part(el, 'status') === region, 'the same live region').to.equal(true);
      seen.push(region!.textContent!);
    }
    // The first decision is page content, not news: only the changes after it are announced.
    expect(seen).to.deep.equal(['', 'Unlocked', 'Could not check your access']);
  });

  it('one change seen by many gates announces each text once: "Unlocked" once, each feature\'s own sign-in', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic', features: [] }));
    const page = await fixture<HTMLElement>(html`<div>
      <mp-gate .kit=${kit} feature="export"></mp-gate>
      <mp-gate .kit=${kit} feature="export"></mp-gate>
      <mp-gate .kit=${kit} feature="reports"></mp-gate>
    </div>`);
    const gates = [...page.querySelectorAll('mp-gate')];
    const said = async () => {
      for (const el of gates) await settle(el);
      return gates.map((el) => part(el, 'status')!.textContent);
    };
    expect(await said()).to.deep.equal(['', '', ''], 'the first decision is page content');
    kit.setEntitlement(sampleEntitlement({ plan: 'pro', features: ['export', 'reports'] }));
    expect(await said()).to.deep.equal(['Unlocked', '', '']);
    kit.setSignedOut();
    expect(await said()).to.deep.equal(['Sign in to use export', '', 'Sign in to use reports']);
    kit.setSession(sampleUser, sampleEntitlement({ plan: 'pro', features: ['export', 'reports'] }));
    expect(await said()).to.deep.equal(['Unlocked', '', ''], 'the next change is said again');
    // A gate out of sight (a hidden tab panel) cannot be heard: it does not silence the others.
    gates[0]!.hidden = true;
    kit.setSignedOut();
    expect((await said()).slice(0, 2)).to.deep.equal(['Sign in to use export', 'Sign in to use export']);
  });

  it('a gate under visibility: hidden cannot be heard either: it does not silence the others', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic', features: [] }));
    const page = await fixture<HTMLElement>(html`<div>
      <div style="visibility: hidden"><mp-gate .kit=${kit} feature="export"></mp-gate></div>
      <mp-gate .kit=${kit} feature="export"></mp-gate>
    </div>`);
    const gates = [...page.querySelectorAll<MpGate>('mp-gate')];
    for (const el of gates) await settle(el);
    kit.setEntitlement(sampleEntitlement({ plan: 'pro', features: ['export'] }));
    for (const el of gates) await settle(el);
    expect(gates.map((el) => part(el, 'status')!.textContent)).to.deep.equal(['Unlocked', 'Unlocked']);
  });

  it('one gate that changes back and forth within one task says where it ended', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic', features: [] }));
    const el = await fixture<MpGate>(html`<mp-gate .kit=${kit} feature="export"></mp-gate>`);
    await settle(el);
    // Three kit changes, each rendered, with no task in between.
    kit.setSignedOut();
    await el.updateComplete;
    kit.setSession(sampleUser, sampleEntitlement({ plan: 'pro', features: ['export'] }));
    await el.updateComplete;
    kit.setSignedOut();
    await el.updateComplete;
    expect(part(el, 'status')!.textContent).to.equal('Sign in to use export');
  });

  it('says so, in the card and its live region, when a retry fails', async () => {
    const kit = new FakeKit().setError();
    kit.onRefresh = () => Promise.reject(new MarketplaceKitError('ERR_NETWORK', 'offline'));
    const el = await gate(kit);
    expect(part(el, 'detail')).to.equal(null);
    const failed = next(el, 'mp-error');
    part(el, 'action')!.click();
    expect((await failed).error.code).to.equal('ERR_NETWORK');
    await settle(el);
    expect([part(el, 'detail')!.textContent, part(el, 'status')!.textContent]).to.deep.equal(['That did not work. Please try again.', 'That did not work. Please try again.']);
    await expect(el).to.be.accessible();
  });

  it('trying the card\'s action again does not announce the unchanged card; failing again says so again', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic', features: [] }));
    const answers = [deferred(), deferred()];
    for (const answer of answers) kit.scriptUpgrade({ wait: answer.promise, error: new MarketplaceKitError('ERR_BRIDGE_TIMEOUT', 'no answer') });
    const el = await gate(kit);
    const said: string[] = [];
    for (const answer of answers) {
      const failed = next(el, 'mp-error');
      part(el, 'action')!.click();
      await settle(el);
      said.push(part(el, 'status')!.textContent!);
      answer.resolve();
      await failed;
      await settle(el);
      said.push(part(el, 'status')!.textContent!);
    }
    // While the chooser opens again, the region is emptied rather than reading "Unlock export" as news.
    expect(said).to.deep.equal(['', 'That did not work. Please try again.', '', 'That did not work. Please try again.']);
  });

  it('out of the page, does not render nor act; put back, it uses the kit it was given meanwhile', async () => {
    const first = new FakeKit().setSession();
    const el = await gate(first);
    const parent = el.parentElement!;
    const reasons: string[] = [];
    el.addEventListener('mp-access-change', (event) => reasons.push(event.reason));
    el.remove();
    const second = new FakeKit().setSession(sampleUser, null);
    el.kit = second;
    first.destroy();
    await settle(el);
    expect([reasons, el.access], 'nothing happens out of the page').to.deep.equal([[], 'granted']);
    parent.append(el);
    await settle(el);
    expect([reasons, el.access]).to.deep.equal([['none'], 'locked']);
    el.remove();
    part(el, 'action')!.click();
    await settle(el);
    expect(second.calls.upgrade, 'no upgrade from a gate out of the page').to.deep.equal([]);
    // Without any kit, too, what changed while it was out shows as soon as it is back.
    const lone = await fixture<MpGate>(html`<mp-gate feature="export"></mp-gate>`);
    lone.remove();
    lone.strings = { loading: 'Un instant…' };
    await lone.updateComplete; // out of the page: no render
    expect(text(lone)).to.equal('Checking access…');
    parent.append(lone);
    // Its update only, no task in between: the wait for a kit (1 s) must not run out before the check.
    await lone.updateComplete;
    expect(text(lone)).to.equal('Un instant…');
    // Out of the page again before its wait can run out: the warning (once per page) is left to
    // the "not connected" tests below.
    lone.remove();
  });

  it('says nothing new when it renders again without a change of look (a theme, a language, a usage count)', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ features: [] }));
    const el = await gate(kit);
    const said: string[] = [];
    for (const step of [
      () => kit.setTheme('dark'),
      () => kit.setLocale('de-DE'),
      () => kit.setEntitlement(sampleEntitlement({ features: [], usage: { api_calls: 11, limit: 1000 } })),
      () => kit.setEntitlement(sampleEntitlement()),
    ]) {
      step();
      await settle(el);
      said.push(part(el, 'status')!.textContent!);
    }
    expect(said).to.deep.equal(['', '', '', 'Freigeschaltet']);
  });

  it('taken out of the page and put back, fires no second mp-access-change and says nothing again; it catches up with what changed meanwhile', async () => {
    const kit = new FakeKit().setSession();
    const el = await gate(kit);
    const parent = el.parentElement!;
    const reasons: string[] = [];
    el.addEventListener('mp-access-change', (event) => reasons.push(event.reason));
    el.remove();
    await settle(el);
    parent.append(el);
    await settle(el);
    expect([reasons, el.access, part(el, 'status')!.textContent]).to.deep.equal([[], 'granted', '']);
    el.remove();
    kit.setEntitlement(null);
    await settle(el);
    expect(el.access, 'no updates while out of the page').to.equal('granted');
    parent.append(el);
    await settle(el);
    expect([reasons, el.access, part(el, 'status')!.textContent]).to.deep.equal([['none'], 'locked', 'Unlock export']);
  });

  it('announces nothing for a paywall of page content in the locked slot', async () => {
    const kit = new FakeKit().setSession();
    const el = await fixture<MpGate>(html`<mp-gate feature="export" .kit=${kit}><p slot="locked">Ask your admin</p></mp-gate>`);
    await settle(el);
    kit.setEntitlement(null);
    await settle(el);
    expect([el.access, part(el, 'status')!.textContent]).to.deep.equal(['locked', '']);
  });

  it('wraps long names inside a narrow container, and puts its accent on the start side in RTL', async () => {
    const long = 'Enterprise_unlimited_plan_for_very_large_organisations_worldwide_2026';
    const box = await fixture<HTMLElement>(html`<div dir="rtl" style="width: 300px"><mp-gate feature=${long} .kit=${new FakeKit().setSession(sampleUser, null)}></mp-gate></div>`);
    const el = box.querySelector('mp-gate')!;
    await settle(el);
    const card = part(el, 'card')!;
    expect(part(el, 'heading')!.getBoundingClientRect().width).to.be.at.most(300);
    expect(card.scrollWidth).to.equal(card.clientWidth, 'nothing spills out of the card');
    expect([getComputedStyle(card).borderRightWidth, getComputedStyle(card).borderLeftWidth]).to.deep.equal(['4px', '1px']);
  });

  it('renders hostile feature and plan names as text', async () => {
    const el = await gate(new FakeKit().setSession(sampleUser, null), { feature: HOSTILE, plan: 'pro' });
    expect(el.shadowRoot!.querySelector('img')).to.equal(null);
    expect(part(el, 'heading')!.textContent).to.equal(`Unlock ${HOSTILE}`);
    expect((window as { __xss?: number }).__xss).to.equal(undefined);
  });

  it('keeps its own sentence in order around a right-to-left or override character in data', async () => {
    // Left edges of words as painted, in reading order: increasing when nothing was reordered.
    const leftEdges = (element: Element, words: string[]) =>
      words.map((word) => {
        const node = [...element.childNodes].find((child) => child.textContent!.includes(word))!;
        const range = document.createRange();
        const at = node.textContent!.indexOf(word);
        range.setStart(node, at);
        range.setEnd(node, at + word.length);
        return range.getBoundingClientRect().left;
      });
    for (const plan of ['pro\u202E', 'pro\u2069\u202E', 'מקצועי']) {
      const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan, status: 'cancelled' }));
      const el = await gate(kit);
      const heading = part(el, 'heading')!;
      expect(heading.textContent).to.match(/^Your \u2068.+\u2069 plan was cancelled$/, JSON.stringify(plan));
      const edges = leftEdges(heading, ['Your', 'plan', 'was', 'cancelled']);
      expect(edges).to.deep.equal([...edges].sort((a, b) => a - b), JSON.stringify(plan));
    }
    // Plain left-to-right data is left as it is.
    const el = await gate(new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'pro', status: 'cancelled' })));
    expect(part(el, 'heading')!.textContent).to.equal('Your pro plan was cancelled');
  });

  it('fills only its own placeholders: {constructor} is none of them', async () => {
    const el = await gate(new FakeKit().setSession(sampleUser, null));
    el.strings = { lockedHeading: 'Unlock {feature}{nope}{constructor}{toString}' };
    await settle(el);
    expect(part(el, 'heading')!.textContent).to.equal('Unlock export');
  });

  it('reads plan and feature properties that are not text as their attributes would be (Vue :plan="2", a list)', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: '2' }));
    const el = await gate(kit);
    (el as { plan: unknown }).plan = 2;
    await settle(el);
    expect(el.access).to.equal('granted');
    (el as { plan: unknown }).plan = ['pro', 'business'];
    await settle(el);
    expect([el.access, part(el, 'text')!.textContent]).to.deep.equal(['locked', 'Included in the pro or business plan.']);
    (el as { feature: unknown }).feature = 7;
    await settle(el);
    expect(part(el, 'heading')!.textContent).to.equal('Unlock 7');
  });

  it('takes overrides of every text, as a property or a JSON attribute', async () => {
    const kit = new FakeKit().setSession(sampleUser, null);
    const el = await fixture<MpGate>(
      html`<mp-gate feature="export" .kit=${kit} strings='{"lockedHeading":"Débloquer {feature}","upgrade":"Passer à Pro"}'></mp-gate>`,
    );
    await settle(el);
    expect(part(el, 'heading')!.textContent).to.equal('Débloquer export');
    expect(part(el, 'action')!.textContent!.trim()).to.equal('Passer à Pro');
    el.strings = { lockedHeading: HOSTILE };
    await settle(el);
    expect(part(el, 'heading')!.textContent).to.equal(HOSTILE);
    expect(el.shadowRoot!.querySelector('img')).to.equal(null);
    // React 19 sets strings='{…}' as the property: read as the attribute would be.
    (el as { strings: unknown }).strings = '{"lockedHeading":"Débloquer {feature}"}';
    await settle(el);
    expect(part(el, 'heading')!.textContent).to.equal('Débloquer export');
    expect(el.strings).to.deep.equal({ lockedHeading: 'Débloquer {feature}' });
  });

  it('ignores a strings attribute that is not a JSON object of texts, with a warning', async () => {
    const kit = new FakeKit().setSession(sampleUser, null);
    const warnings: string[] = [];
    const warn = console.warn;
    console.warn = (...args: unknown[]) => void warnings.push(args.map(String).join(' '));
    try {
      const broken = await fixture<MpGate>(html`<mp-gate feature="export" .kit=${kit} strings="{lockedHeading: oops"></mp-gate>`);
      await settle(broken);
      expect(part(broken, 'heading')!.textContent).to.equal('Unlock export');
      const odd = await fixture<MpGate>(html`<mp-gate feature="export" .kit=${kit} strings='{"lockedHeading": 5, "upgrade": "Go"}'></mp-gate>`);
      await settle(odd);
      expect([part(odd, 'heading')!.textContent, part(odd, 'action')!.textContent!.trim()]).to.deep.equal(['Unlock export', 'Go']);
    } finally {
      console.warn = warn;
    }
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.contain('strings attribute is not a JSON object');
  });
});

describe('<mp-gate>: what mutation testing found unchecked', () => {
  it('a metered gate whose own plan expired with its quota spent offers to renew that plan', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ status: 'expired', expires_at: PAST, usage: { api_calls: 1000, limit: 1000 } }));
    const el = await gate(kit, { feature: 'export', metered: true });
    expect([el.access, part(el, 'heading')!.textContent, part(el, 'action')!.textContent!.trim()]).to.deep.equal(['expired', 'Your pro plan has expired', 'Renew']);
  });

  it('a failed action is not reported on the next, different card', async () => {
    const { kit, el } = await gateAfterFailedUpgrade();
    kit.setEntitlement(sampleEntitlement({ status: 'past_due' }));
    await settle(el);
    expect(el.access).to.equal('past-due');
    expect(part(el, 'detail')?.textContent ?? null).to.equal(null);
    expect(part(el, 'status')!.textContent).to.equal('Payment past due');
  });

  it('a cancelled plan with an end date still ahead says no "Ended" date', async () => {
    const el = await gate(new FakeKit().setSession(sampleUser, sampleEntitlement({ status: 'cancelled' })));
    expect(part(el, 'heading')!.textContent).to.equal('Your pro plan was cancelled');
    expect(part(el, 'detail')?.textContent ?? null).to.equal(null);
  });

  it('a second click on "Try again" while the retry runs does not refresh again', async () => {
    const kit = new FakeKit().setError();
    const held = deferred();
    kit.onRefresh = () => held.promise;
    const el = await gate(kit);
    part(el, 'action')!.click();
    await settle(el);
    expect(part(el, 'action')!.getAttribute('aria-busy')).to.equal('true');
    part(el, 'action')!.click();
    await settle(el);
    expect(kit.calls.refresh).to.equal(1);
    held.resolve();
  });
});

describe('<mp-gate>: what a second round of mutation testing found unchecked', () => {
  it('without a feature, the card names it "this feature"', async () => {
    const el = await gate(new FakeKit().setSession(sampleUser, null), {});
    expect([part(el, 'heading')!.textContent, part(el, 'text')!.textContent]).to.deep.equal(['Unlock this feature', 'Upgrade your plan to use this feature.']);
  });

  it('"Update payment" offers the user\'s own past-due plan to the chooser, not the first listed plan', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'business', status: 'past_due' }));
    const el = await gate(kit, { feature: 'export', plan: 'pro business' });
    expect(el.access).to.equal('past-due');
    const request = next(el, 'mp-upgrade-request');
    part(el, 'action')!.click();
    expect((await request).plan).to.equal('business');
    expect(kit.calls.upgrade).to.deep.equal([{ plan: 'business', feature: 'export' }]);
  });

  it('fires mp-access-change again for the decision it comes back to after the kit\'s error', async () => {
    const kit = new FakeKit().setSession();
    const el = await gate(kit);
    const reasons: string[] = [];
    el.addEventListener('mp-access-change', (event) => reasons.push(event.reason));
    kit.setError();
    await settle(el);
    expect([el.decision, reasons]).to.deep.equal([null, []]);
    kit.setSession();
    await settle(el);
    expect([el.access, reasons]).to.deep.equal(['granted', ['granted']]);
  });

  it('a kit found only after "not connected": its first decision is page content, not announced', async () => {
    const warn = console.warn;
    console.warn = () => {};
    MpGate.kitTimeoutMs = 20;
    let kit: FakeKit | undefined;
    try {
      const el = await fixture<MpGate>(html`<mp-gate feature="export"><p id="secret">Secret report</p></mp-gate>`);
      await until(() => el.state === 'not-connected', 'the gate never gave up waiting for a kit');
      await settle(el);
      kit = new FakeKit().setSession().register();
      await settle(el);
      expect([el.access, part(el, 'status')!.textContent]).to.deep.equal(['granted', '']);
    } finally {
      kit?.destroy();
      delete (MpGate as { kitTimeoutMs?: number }).kitTimeoutMs;
      console.warn = warn;
    }
  });

  it('a gate the page made focusable itself keeps its own tabindex when an upgrade gives it the focus', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic', features: [] }));
    kit.scriptUpgrade({ outcome: 'upgraded', entitlement: sampleEntitlement() });
    const el = await fixture<MpGate>(html`<mp-gate feature="export" tabindex="0" .kit=${kit}><p id="secret">Secret report</p></mp-gate>`);
    await settle(el);
    part(el, 'action')!.focus();
    const done = next(el, 'mp-upgrade');
    await sendKeys({ press: 'Enter' });
    await done;
    await settle(el);
    expect([isShown(el), document.activeElement === el, el.getAttribute('tabindex')]).to.deep.equal([true, true, '0']);
    el.blur();
    expect(el.getAttribute('tabindex')).to.equal('0');
  });

  it('ignores, with a warning, a strings attribute that is a JSON array rather than an object', async () => {
    const warnings: string[] = [];
    const warn = console.warn;
    console.warn = (...args: unknown[]) => void warnings.push(args.map(String).join(' '));
    try {
      const el = await fixture<MpGate>(html`<mp-gate feature="export" .kit=${new FakeKit().setSession(sampleUser, null)} strings='["Débloquer {feature}"]'></mp-gate>`);
      await settle(el);
      expect(part(el, 'heading')!.textContent).to.equal('Unlock export');
    } finally {
      console.warn = warn;
    }
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.contain('strings attribute is not a JSON object');
  });

  it('an expired plan that ended at the epoch (1970-01-01T00:00:00Z, time 0) still says its end date', async () => {
    const el = await gate(new FakeKit().setSession(sampleUser, sampleEntitlement({ expires_at: '1970-01-01T00:00:00Z' })));
    expect(el.access).to.equal('expired');
    expect(part(el, 'detail')?.textContent).to.equal('Ended Jan 1, 1970');
  });

  it('a gate hidden as an upgrade unlocks it, which cannot take the focus, keeps no tabindex', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic', features: [] }));
    const el = await gate(kit);
    part(el, 'action')!.focus();
    // The page hides the gate in the same task as the plan changes: the focus has nowhere to go.
    el.style.display = 'none';
    kit.setEntitlement(sampleEntitlement());
    await settle(el);
    expect([isShown(el), document.activeElement === el]).to.deep.equal([true, false]);
    expect(el.hasAttribute('tabindex')).to.equal(false, 'the tabindex that did not take the focus is removed');
  });

  it('inside the dashboard: when the page gets the focus back on something else than its body, the gate leaves it there', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic', features: [] }));
    const el = await gate(kit);
    const other = await fixture<HTMLButtonElement>(html`<button>Elsewhere</button>`);
    part(el, 'action')!.focus();
    await withFocusInParent(async () => {
      kit.setEntitlement(sampleEntitlement());
      await settle(el);
    });
    // The page's own script focuses another control before the window's focus event.
    other.focus();
    dispatchEvent(new FocusEvent('focus'));
    expect([isShown(el), document.activeElement === other]).to.deep.equal([true, true]);
  });

  it('a failed action is not reported on the error card the kit falls to next', async () => {
    const { kit, el } = await gateAfterFailedUpgrade();
    kit.setError();
    await settle(el);
    expect([el.state, part(el, 'detail')?.textContent ?? null]).to.deep.equal(['error', null]);
  });

  it('a locked slot nested inside the unlocked content is not the paywall: the card\'s heading is announced', async () => {
    const kit = new FakeKit().setSession();
    const el = await fixture<MpGate>(html`<mp-gate feature="export" .kit=${kit}><div><p slot="locked">Part of the report</p></div></mp-gate>`);
    await settle(el);
    kit.setEntitlement(null);
    await settle(el);
    expect([el.access, part(el, 'status')!.textContent]).to.deep.equal(['locked', 'Unlock export']);
  });

  it('with a locale tag that is not valid, dates and figures follow the browser\'s locale', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ expires_at: PAST })).setLocale('not a locale!');
    const el = await gate(kit);
    const date = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' }).format(Date.parse(PAST));
    expect(part(el, 'detail')!.textContent).to.equal(`Ended ${date}`);
  });
});
