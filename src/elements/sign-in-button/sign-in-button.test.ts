import { expect, fixture, html } from '@open-wc/testing';
import { sendKeys } from '@web/test-runner-commands';
import '../index.js';
import { MpSignInButton } from '../index.js';
import { SIGN_IN_NAVIGATION_MS } from '../base/marketplace-element.js';
import { MarketplaceKitError } from '../../shared/errors.js';
import { FakeKit } from '../../testing/fake-kit.js';
import { HOSTILE, deferred, focusThroughChange, next, part, settle, unavailable, until } from '../../../test/support/element-helpers.js';
import { contrast } from '../../../test/support/contrast.js';

async function button(kit: FakeKit, template = html`<mp-sign-in-button .kit=${kit}></mp-sign-in-button>`) {
  const el = await fixture<MpSignInButton>(template);
  await settle(el);
  return el;
}

const states = [
  { name: 'loading', kit: () => new FakeKit(), unavailable: true, busy: 'true' },
  { name: 'signed out', kit: () => new FakeKit().setSignedOut(), unavailable: false, busy: 'false' },
  { name: 'ready', kit: () => new FakeKit().setSession(), unavailable: false, busy: 'false' },
  { name: 'kit in error', kit: () => new FakeKit().setError(), unavailable: false, busy: 'false' },
];

describe('<mp-sign-in-button>', () => {
  for (const s of states) {
    describe(s.name, () => {
      it('has the right state', async () => {
        const el = await button(s.kit());
        const base = part(el, 'base') as HTMLButtonElement;
        expect(unavailable(base)).to.equal(s.unavailable);
        expect(base.getAttribute('aria-busy')).to.equal(s.busy);
        expect(!!part(el, 'spinner')).to.equal(s.busy === 'true');
        expect(part(el, 'label')!.textContent).to.equal('Sign in with Marketplace');
      });
      for (const theme of ['light', 'dark'] as const) {
        it(`is accessible (${theme})`, async () => {
          await expect(await button(s.kit().setTheme(theme))).to.be.accessible();
        });
      }
    });
  }

  it('asks the kit to sign in, returning to the current page by default', async () => {
    const kit = new FakeKit().setSignedOut();
    const el = await button(kit);
    const request = next(el, 'mp-sign-in-request');
    part(el, 'base')!.click();
    const event = await request;
    expect(event.returnTo).to.equal(location.href);
    expect(event.cancelable).to.equal(true);
    expect(kit.calls.signIn).to.deep.equal([location.href]);
  });

  it('passes return-to on', async () => {
    const kit = new FakeKit().setSignedOut();
    const el = await button(kit, html`<mp-sign-in-button .kit=${kit} return-to="/reports?tab=2"></mp-sign-in-button>`);
    part(el, 'base')!.click();
    expect(kit.calls.signIn).to.deep.equal(['/reports?tab=2']);
  });

  it('lets the page veto sign-in', async () => {
    const kit = new FakeKit().setSignedOut();
    const el = await button(kit);
    el.addEventListener('mp-sign-in-request', (event) => event.preventDefault());
    part(el, 'base')!.click();
    await settle(el);
    expect(kit.calls.signIn).to.deep.equal([]);
  });

  it('is busy while sign-in is under way and ignores more clicks', async () => {
    const hold = deferred();
    const kit = new FakeKit().setSignedOut();
    kit.onSignIn = () => hold.promise;
    const el = await button(kit);
    part(el, 'base')!.click();
    await settle(el);
    expect(part(el, 'base')!.getAttribute('aria-busy')).to.equal('true');
    expect(part(el, 'label')!.textContent).to.equal('Signing in…');
    await expect(el).to.be.accessible();
    part(el, 'base')!.click();
    expect(kit.calls.signIn.length).to.equal(1);
    hold.resolve();
    await hold.promise;
    await settle(el);
    expect(part(el, 'base')!.getAttribute('aria-busy')).to.equal('false');
  });

  describe('on the developer\'s own site, where sign-in navigates the page away', () => {
    async function clicked() {
      const kit = Object.assign(new FakeKit().setSignedOut(), { embedded: false });
      const el = await button(kit);
      part(el, 'base')!.click();
      await settle(el);
      return { kit, el };
    }
    const busy = (el: MpSignInButton) => part(el, 'base')!.getAttribute('aria-busy');

    it('stays busy after kit.signIn() returns, until the page is back from the back-forward cache', async () => {
      const { kit, el } = await clicked();
      await settle(el); // kit.signIn() has returned: the element went on in a microtask
      expect([busy(el), part(el, 'label')!.textContent]).to.deep.equal(['true', 'Signing in…']);
      part(el, 'base')!.click();
      expect(kit.calls.signIn.length).to.equal(1);
      window.dispatchEvent(new PageTransitionEvent('pageshow', { persisted: true }));
      await settle(el);
      expect(busy(el)).to.equal('false');
    });

    it('stops waiting when its kit is destroyed, or when it leaves the page', async () => {
      const destroyed = await clicked();
      destroyed.kit.destroy();
      const next = Object.assign(new FakeKit().setSignedOut(), { embedded: false });
      destroyed.el.kit = next;
      await settle(destroyed.el);
      expect(busy(destroyed.el)).to.equal('false');
      part(destroyed.el, 'base')!.click();
      expect(next.calls.signIn.length).to.equal(1, 'the new kit is not kept waiting for the old navigation');
      const moved = await clicked();
      const parent = moved.el.parentNode!;
      moved.el.remove();
      parent.appendChild(moved.el);
      await settle(moved.el);
      expect(busy(moved.el)).to.equal('false');
    });

    it(`stops being busy after ${SIGN_IN_NAVIGATION_MS} ms when the navigation never happened`, async () => {
      const realSetTimeout = window.setTimeout;
      const waits: { handler: () => void; ms: number | undefined }[] = [];
      // The element's wait is held here instead of started: the test ends it.
      window.setTimeout = ((handler: () => void, ms?: number, ...rest: unknown[]) => {
        if (ms !== SIGN_IN_NAVIGATION_MS) return realSetTimeout(handler, ms, ...rest);
        waits.push({ handler, ms });
        return 0;
      }) as typeof window.setTimeout;
      let el: MpSignInButton;
      try {
        ({ el } = await clicked());
      } finally {
        window.setTimeout = realSetTimeout;
      }
      expect([waits.length, busy(el)]).to.deep.equal([1, 'true']);
      waits[0]!.handler();
      await settle(el);
      expect(busy(el)).to.equal('false');
    });
  });

  it('keeps the focus when its kit goes away, and then does nothing', async () => {
    const kit = new FakeKit().setSignedOut();
    const el = await button(kit);
    const after = await focusThroughChange(el, () => kit.destroy(), () => kit.calls.signIn.length);
    expect(after).to.deep.equal({ focused: true, calls: 0, clicks: 0 });
    expect(part(el, 'base')!.getAttribute('aria-disabled')).to.equal('true');
    await expect(el).to.be.accessible();
  });

  it('does nothing while the kit starts', async () => {
    const kit = new FakeKit().setSignedOut();
    const el = await button(kit);
    const after = await focusThroughChange(el, () => kit.setState('loading'), () => kit.calls.signIn.length);
    expect(after).to.deep.equal({ focused: true, calls: 0, clicks: 0 });
  });

  it('does nothing when disabled', async () => {
    const kit = new FakeKit().setSignedOut();
    const el = await button(kit, html`<mp-sign-in-button .kit=${kit} disabled></mp-sign-in-button>`);
    expect((part(el, 'base') as HTMLButtonElement).disabled).to.equal(true);
    part(el, 'base')!.click();
    expect(kit.calls.signIn).to.deep.equal([]);
    await expect(el).to.be.accessible();
  });

  it('reports a failure as mp-error', async () => {
    const kit = new FakeKit().setSignedOut();
    kit.onSignIn = () => Promise.reject(new MarketplaceKitError('ERR_BRIDGE_TIMEOUT', 'timed out'));
    const el = await button(kit);
    const failed = next(el, 'mp-error');
    part(el, 'base')!.click();
    expect((await failed).error.code).to.equal('ERR_BRIDGE_TIMEOUT');
    await settle(el);
    // Seen and announced, not only told to the page: until the next try.
    expect([part(el, 'label')!.textContent, part(el, 'status')!.textContent]).to.deep.equal(['Could not start sign-in. Try again.', 'Could not start sign-in. Try again.']);
    expect(part(el, 'status')!.getAttribute('role')).to.equal('status');
    kit.onSignIn = undefined;
    part(el, 'base')!.click();
    await settle(el);
    expect([part(el, 'label')!.textContent, part(el, 'status')!.textContent]).to.deep.equal(['Sign in with Marketplace', '']);
  });

  it('lets go of a failure once the user signed in some other way, or the kit changed', async () => {
    const failedText = 'Could not start sign-in. Try again.';
    const kit = new FakeKit().setSignedOut();
    kit.onSignIn = () => Promise.reject(new MarketplaceKitError('ERR_BRIDGE_TIMEOUT', 'timed out'));
    const el = await button(kit);
    const failAgain = async () => {
      part(el, 'base')!.click();
      await settle(el);
      expect(part(el, 'label')!.textContent).to.equal(failedText);
    };
    await failAgain();
    kit.setSession(); // signed in through a gate's card
    await settle(el);
    expect([part(el, 'label')!.textContent, part(el, 'status')!.textContent]).to.deep.equal(['Sign in with Marketplace', '']);
    kit.setSignedOut();
    await settle(el);
    await failAgain();
    el.kit = new FakeKit().setSignedOut();
    await settle(el);
    expect([part(el, 'label')!.textContent, part(el, 'status')!.textContent]).to.deep.equal(['Sign in with Marketplace', '']);
  });

  it('lets go of a failure when the page registers another kit, in the same state', async () => {
    const failing = new FakeKit().setSignedOut().register();
    const replacement = new FakeKit().setSignedOut();
    const el = await fixture<MpSignInButton>(html`<mp-sign-in-button></mp-sign-in-button>`);
    try {
      failing.onSignIn = () => Promise.reject(new MarketplaceKitError('ERR_BRIDGE_TIMEOUT', 'timed out'));
      await settle(el);
      part(el, 'base')!.click();
      await settle(el);
      expect(part(el, 'label')!.textContent).to.equal('Could not start sign-in. Try again.');
      replacement.register();
      await settle(el);
      expect([part(el, 'label')!.textContent, part(el, 'status')!.textContent]).to.deep.equal(['Sign in with Marketplace', '']);
    } finally {
      el.remove(); // before the kits go: left without one, it would warn ERR_KIT_NOT_FOUND
      failing.destroy();
      replacement.destroy();
    }
  });

  it('works by keyboard, with a visible focus ring', async () => {
    const kit = new FakeKit().setSignedOut();
    const el = await button(kit);
    await sendKeys({ press: 'Tab' });
    expect(el.shadowRoot!.activeElement === part(el, 'base'), 'the button has the focus').to.equal(true);
    expect(getComputedStyle(part(el, 'base')!).outlineStyle).to.equal('solid');
    await sendKeys({ press: 'Enter' });
    expect(kit.calls.signIn.length).to.equal(1);
  });

  it('gives el.focus() to its button, where Space signs in', async () => {
    const kit = new FakeKit().setSignedOut();
    const el = await button(kit);
    el.focus();
    expect([document.activeElement === el, el.shadowRoot!.activeElement === part(el, 'base')]).to.deep.equal([true, true]);
    await sendKeys({ press: 'Space' });
    expect(kit.calls.signIn.length).to.equal(1);
  });

  it('takes its label from the label attribute or strings, always as text', async () => {
    const kit = new FakeKit().setSignedOut();
    const el = await button(kit, html`<mp-sign-in-button .kit=${kit} label=${HOSTILE}></mp-sign-in-button>`);
    expect(part(el, 'label')!.textContent).to.equal(HOSTILE);
    expect(el.shadowRoot!.querySelector('img')).to.equal(null);
    el.label = undefined;
    el.strings = { label: 'Se connecter' };
    await settle(el);
    expect(part(el, 'label')!.textContent).to.equal('Se connecter');
    el.label = '';
    el.strings = undefined;
    await settle(el);
    expect(part(el, 'label')!.textContent).to.equal('Sign in with Marketplace', 'an empty label would leave the button nameless');
    el.label = ' \n ';
    await settle(el);
    expect(part(el, 'label')!.textContent).to.equal('Sign in with Marketplace', 'nor may a label of spaces');
    el.label = undefined;
    for (const label of ['', '   ']) {
      el.setAttribute('strings', JSON.stringify({ label }));
      await settle(el);
      expect(part(el, 'label')!.textContent).to.equal('Sign in with Marketplace', `strings ${JSON.stringify(label)}: nor a blank text in strings`);
      await expect(el).to.be.accessible();
    }
    // Texts from a translation object that inherits them, or a Proxy, count as any others.
    el.strings = Object.create({ label: 'Anmelden' }) as { label?: string };
    await settle(el);
    expect(part(el, 'label')!.textContent).to.equal('Anmelden');
    el.strings = new Proxy({}, { get: (_target, key) => (key === 'label' ? 'Connexion' : undefined) });
    await settle(el);
    expect(part(el, 'label')!.textContent).to.equal('Connexion');
  });
});

describe('<mp-sign-in-button>: what mutation testing found unchecked', () => {
  it('once no kit was found ("not connected"), is aria-disabled and lets no click through', async () => {
    const warn = console.warn;
    console.warn = () => {};
    MpSignInButton.kitTimeoutMs = 20;
    try {
      const el = await fixture<MpSignInButton>(html`<mp-sign-in-button></mp-sign-in-button>`);
      await until(() => el.state === 'not-connected', 'the button never gave up waiting for a kit');
      await settle(el);
      let clicks = 0;
      el.addEventListener('click', () => clicks++);
      part(el, 'base')!.click();
      expect([part(el, 'label')!.textContent, part(el, 'base')!.getAttribute('aria-disabled'), clicks]).to.deep.equal(['Not connected to Marketplace', 'true', 0]);
    } finally {
      delete (MpSignInButton as { kitTimeoutMs?: number }).kitTimeoutMs;
      console.warn = warn;
    }
  });

  it('a blank busy text counts as none: the busy button keeps a name', async () => {
    const hold = deferred();
    const kit = new FakeKit().setSignedOut();
    kit.onSignIn = () => hold.promise;
    const el = await button(kit);
    el.strings = { busy: ' ' };
    await settle(el);
    part(el, 'base')!.click();
    await settle(el);
    expect([part(el, 'base')!.getAttribute('aria-busy'), part(el, 'label')!.textContent]).to.deep.equal(['true', 'Signing in…']);
    hold.resolve();
  });
});

describe('<mp-sign-in-button>: the focus ring of a button turned off', () => {
  for (const theme of ['light', 'dark'] as const) {
    it(`keeps 3:1 against the surface while the kit loads (the button keeps the focus, ${theme})`, async () => {
      const el = await button(new FakeKit().setTheme(theme)); // loading: aria-disabled, focusable
      await sendKeys({ press: 'Tab' });
      const base = part(el, 'base')!;
      expect([el.shadowRoot!.activeElement === base, base.matches(':focus-visible'), base.getAttribute('aria-disabled')]).to.deep.equal([true, true, 'true']);
      const style = getComputedStyle(base);
      // Faded by its colors: opacity would fade the ring with them.
      expect(style.opacity).to.equal('1');
      const surface = theme === 'light' ? 'rgb(255, 255, 255)' : 'rgb(17, 24, 39)'; // the default --mp-color-surface
      expect(contrast(style.outlineColor, surface), `${style.outlineColor} on ${surface}`).to.be.at.least(3);
    });
  }
});

describe('<mp-sign-in-button>: what mutation testing found unchecked', () => {
  it('an empty return-to counts as none: the user returns to the current page', async () => {
    const kit = new FakeKit().setSignedOut();
    const el = await button(kit, html`<mp-sign-in-button .kit=${kit} return-to=""></mp-sign-in-button>`);
    part(el, 'base')!.click();
    expect(kit.calls.signIn).to.deep.equal([location.href]);
  });

  it('on the developer\'s own site, does not wait for a navigation once it left the page or changed kit while kit.signIn() ran', async () => {
    const busy = (el: MpSignInButton) => part(el, 'base')!.getAttribute('aria-busy');
    for (const how of ['moved', 'new kit'] as const) {
      const held = deferred();
      const kit = Object.assign(new FakeKit().setSignedOut(), { embedded: false, onSignIn: () => held.promise });
      const el = await button(kit);
      part(el, 'base')!.click();
      await settle(el);
      expect(busy(el)).to.equal('true', how);
      if (how === 'moved') {
        // Out of the page when kit.signIn() returns; put back after.
        const parent = el.parentNode!;
        el.remove();
        held.resolve();
        await new Promise((resolve) => setTimeout(resolve));
        parent.appendChild(el);
      } else {
        el.kit = Object.assign(new FakeKit().setSignedOut(), { embedded: false });
        await settle(el);
        held.resolve();
      }
      await settle(el);
      expect(busy(el)).to.equal('false', how);
    }
  });
});
