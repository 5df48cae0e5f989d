import { expect, fixture, html } from '@open-wc/testing';
import { elements, defineElements, MarketplaceElement, MpGate, type MpPlanBadge, type MpSignInButton, type MpUsageMeter, type MpUpgradeButton, type MpUserBadge } from '../index.js';
import { FakeKit, sampleEntitlement, sampleUser } from '../../testing/fake-kit.js';
import { daysFrom } from '../../../test/support/dates.js';
import { MarketplaceKitError } from '../../shared/errors.js';
import type { MpErrorEvent } from '../events.js';
import { part, settle, text, until } from '../../../test/support/element-helpers.js';
import { isolated } from './bidi.js';

const tags = Object.keys(elements) as (keyof typeof elements)[];

describe('finding the kit', () => {
  const originalWarn = console.warn;
  let warnings: string[] = [];
  const kits: FakeKit[] = [];
  const register = (kit: FakeKit) => (kits.push(kit), kit.register());

  before(() => {
    MarketplaceElement.kitTimeoutMs = 50;
  });
  beforeEach(() => {
    warnings = [];
    console.warn = (...args: unknown[]) => void warnings.push(args.map(String).join(' '));
  });
  afterEach(() => {
    console.warn = originalWarn;
    kits.splice(0).forEach((kit) => kit.destroy());
  });

  // First in this file: the warning is once per page.
  it('without a kit: every element shows "not connected", and one warning with a code is logged', async () => {
    const container = await fixture(html`<div>${tags.map((tag) => document.createElement(tag))}</div>`);
    const els = [...container.children] as MarketplaceElement[];
    await until(() => els.every((el) => el.state === 'not-connected'), 'elements never gave up waiting');
    for (const el of els) {
      await settle(el);
      expect(text(el), el.localName).to.contain('Not connected to Marketplace');
    }
    // One axe run over all six (axe walks their shadow roots): six runs can outlast the test
    // timeout on a loaded 2-core machine.
    await expect(container).to.be.accessible();
    expect(warnings.length).to.equal(1);
    expect(warnings[0]).to.match(/ERR_KIT_NOT_FOUND: <mp-[a-z-]+> found no kit/);
  });

  it('shows loading, not "not connected", while waiting for a kit', async () => {
    const el = await fixture<MpGate>(html`<mp-gate feature="export"></mp-gate>`);
    expect(el.state).to.equal('loading');
    expect(text(el)).to.contain('Checking access…');
  });

  it('finds a kit registered before it', async () => {
    register(new FakeKit().setSession());
    const el = await fixture<MpGate>(html`<mp-gate feature="export"><p>Secret</p></mp-gate>`);
    await settle(el);
    expect(el.access).to.equal('granted');
  });

  it('lets go of a destroyed kit, registered or set on .kit, and takes the next one created', async () => {
    const first = register(new FakeKit().setSession());
    const found = await fixture<MpGate>(html`<mp-gate feature="export"><p>Secret</p></mp-gate>`);
    const given = await fixture<MpGate>(html`<mp-gate feature="export" .kit=${first}><p>Secret</p></mp-gate>`);
    await settle(found);
    expect([found.access, given.access]).to.deep.equal(['granted', 'granted']);
    first.destroy();
    // Updates only, no task in between: the 50 ms wait for a kit must not run out before the check.
    await Promise.all([found.updateComplete, given.updateComplete]);
    expect([found.state, found.access, given.state, given.access]).to.deep.equal(['loading', undefined, 'loading', undefined]);
    await until(() => found.state === 'not-connected' && given.state === 'not-connected', 'both elements give up waiting for a kit');
    const second = register(new FakeKit().setSession());
    await settle(found);
    expect([found.state, found.access, given.state]).to.deep.equal(['ready', 'granted', 'not-connected']);
    second.destroy();
    await found.updateComplete;
    expect(found.state).to.equal('loading', 'waits for a kit again before giving up');
  });

  it('finds a kit created later through mp-kit-created, even after giving up', async () => {
    const el = await fixture<MpUserBadge>(html`<mp-user-badge></mp-user-badge>`);
    await until(() => el.state === 'not-connected', 'the element gives up waiting for a kit');
    register(new FakeKit().setSession());
    await settle(el);
    expect(el.state).to.equal('ready');
    expect(text(el)).to.contain('Ada Lovelace');
  });

  it('follows a newer kit, but a kit set on the element wins', async () => {
    const own = new FakeKit().setSignedOut();
    register(new FakeKit().setSession());
    const followed = await fixture<MpGate>(html`<mp-gate></mp-gate>`);
    const pinned = await fixture<MpGate>(html`<mp-gate .kit=${own}></mp-gate>`);
    await settle(followed);
    await settle(pinned);
    expect([followed.state, pinned.state]).to.deep.equal(['ready', 'signed-out']);
    register(new FakeKit().setError());
    await settle(followed);
    await settle(pinned);
    expect([followed.state, pinned.state]).to.deep.equal(['error', 'signed-out']);
    pinned.kit = null;
    await settle(pinned);
    expect(pinned.state).to.equal('error');
  });

  it('follows the kit theme as a host attribute and in its colors, live', async () => {
    const kit = register(new FakeKit().setSession());
    const el = await fixture<MpGate>(html`<mp-gate feature="sso"></mp-gate>`);
    const open = await fixture<MpGate>(html`<mp-gate><input id="page-input" aria-label="Page input" /></mp-gate>`);
    await settle(el);
    const card = () => getComputedStyle(part(el, 'card')!);
    expect([el.getAttribute('theme'), card().backgroundColor, card().color]).to.deep.equal(['light', 'rgb(255, 255, 255)', 'rgb(31, 41, 55)']);
    kit.setTheme('dark');
    await settle(el);
    expect([el.getAttribute('theme'), card().backgroundColor, card().color]).to.deep.equal(['dark', 'rgb(17, 24, 39)', 'rgb(249, 250, 251)']);
    // Slotted page content keeps the page's color scheme.
    await settle(open);
    expect(open.access).to.equal('granted');
    expect(getComputedStyle(open.querySelector('#page-input')!).colorScheme).to.equal('normal');
  });

  it('lets the page set colors through --mp-* custom properties', async () => {
    register(new FakeKit().setSession(sampleUser, null));
    const el = await fixture<MpGate>(html`<mp-gate style="--mp-color-surface: rgb(1, 2, 3)"></mp-gate>`);
    await settle(el);
    expect(getComputedStyle(part(el, 'card')!).backgroundColor).to.equal('rgb(1, 2, 3)');
  });

  it('stops listening to the kit when removed from the page', async () => {
    const kit = new FakeKit().setSession();
    let listeners = 0;
    const subscribe = kit.subscribe.bind(kit);
    kit.subscribe = (listener) => {
      listeners++;
      const stop = subscribe(listener);
      return () => (listeners--, stop());
    };
    const el = await fixture<MpGate>(html`<mp-gate .kit=${kit}></mp-gate>`);
    await settle(el);
    expect(listeners).to.equal(1);
    el.remove();
    expect(listeners).to.equal(0);
    document.body.append(el);
    expect(listeners).to.equal(1);
    el.remove();
  });

  it('stops watching for new kits when removed from the page, and watches again once back', async () => {
    const watching = new Set<unknown>();
    const add = window.addEventListener;
    const remove = window.removeEventListener;
    window.addEventListener = function (this: Window, type: string, handler: unknown, options?: unknown) {
      if (type === 'mp-kit-created') watching.add(handler);
      return add.call(this, type, handler as EventListener, options as AddEventListenerOptions);
    } as typeof window.addEventListener;
    window.removeEventListener = function (this: Window, type: string, handler: unknown, options?: unknown) {
      if (type === 'mp-kit-created') watching.delete(handler);
      return remove.call(this, type, handler as EventListener, options as EventListenerOptions);
    } as typeof window.removeEventListener;
    try {
      const el = await fixture<MpGate>(html`<mp-gate .kit=${new FakeKit().setSession()}></mp-gate>`);
      expect(watching.size).to.equal(1);
      el.remove();
      expect(watching.size).to.equal(0);
      document.body.append(el);
      expect(watching.size).to.equal(1);
      el.remove();
      expect(watching.size).to.equal(0);
    } finally {
      delete (window as { addEventListener?: unknown }).addEventListener;
      delete (window as { removeEventListener?: unknown }).removeEventListener;
    }
    expect(window.addEventListener).to.equal(add);
  });
});

describe('events', () => {
  it('bubble out of shadow roots to the document, as the document listener of docs/elements.md needs', async () => {
    const kit = new FakeKit().setSession(sampleUser, null).scriptUpgrade({ outcome: 'dismissed' });
    const host = await fixture<HTMLDivElement>(html`<div></div>`);
    const gate = document.createElement('mp-gate');
    gate.feature = 'export';
    gate.kit = kit;
    const heard: string[] = [];
    const listening = new AbortController();
    for (const type of ['mp-access-change', 'mp-upgrade-request', 'mp-upgrade'] as const) {
      document.addEventListener(type, (event) => heard.push(`${event.type} from ${(event.target as Element).localName}`), { signal: listening.signal });
    }
    try {
      host.attachShadow({ mode: 'open' }).append(gate);
      await settle(gate);
      const done = new Promise((resolve) => document.addEventListener('mp-upgrade', resolve, { once: true, signal: listening.signal }));
      part(gate, 'action')!.click();
      await done;
    } finally {
      listening.abort();
    }
    // Seen from the document, the target is the shadow root's host.
    expect(heard).to.deep.equal(['mp-access-change from div', 'mp-upgrade-request from div', 'mp-upgrade from div']);
  });
});

describe('what the element sets itself', () => {
  it('is readonly to TypeScript, and a value set anyway is replaced at the next update', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ usage: { api_calls: 10, limit: 100 } }));
    const container = await fixture(html`<div>
      <mp-gate .kit=${kit} feature="nope"></mp-gate><mp-usage-meter .kit=${kit}></mp-usage-meter><mp-plan-badge .kit=${kit}></mp-plan-badge>
    </div>`);
    const [gate, meter, badge] = [...container.children] as [MpGate, MpUsageMeter, MpPlanBadge];
    await Promise.all([settle(gate), settle(meter), settle(badge)]);
    const seen = () => [gate.state, gate.access, gate.decision?.granted, meter.level, badge.status, gate.getAttribute('access'), meter.getAttribute('level')];
    const before = seen();
    expect(before).to.deep.equal(['ready', 'locked', false, 'ok', 'active', 'locked', 'ok']);
    // @ts-expect-error: set by the element
    gate.state = 'error';
    // @ts-expect-error: set by the element
    gate.access = 'granted';
    // @ts-expect-error: set by the element
    gate.decision = null;
    // @ts-expect-error: set by the element
    meter.level = 'exceeded';
    // @ts-expect-error: set by the element
    badge.status = 'cancelled';
    gate.requestUpdate();
    await Promise.all([settle(gate), settle(meter), settle(badge)]);
    expect(seen()).to.deep.equal(before);
  });
});

describe('registration', () => {
  it('registers every element under its mp-* name', () => {
    for (const [tag, element] of Object.entries(elements)) expect(customElements.get(tag), tag).to.equal(element);
  });

  it('is safe to run twice, even from a second copy of the module', async () => {
    expect(() => defineElements()).not.to.throw();
    await import(/* @vite-ignore */ `../../../src/elements/define.ts?copy=${Date.now()}`);
    expect(customElements.get('mp-gate')).to.equal(MpGate);
  });

  it('leaves names that are taken (by another copy of the classes) alone', () => {
    const taken = new Map<string, CustomElementConstructor>([['mp-gate', class extends HTMLElement {}]]);
    const registry = {
      get: (name: string) => taken.get(name),
      define: (name: string, element: CustomElementConstructor) => {
        if (taken.has(name)) throw new DOMException(`${name} is taken`, 'NotSupportedError');
        taken.set(name, element);
      },
    } as unknown as CustomElementRegistry;
    defineElements(registry);
    expect(taken.get('mp-gate')).not.to.equal(MpGate);
    expect(taken.get('mp-usage-meter')).to.equal(elements['mp-usage-meter']);
    expect(taken.size).to.equal(tags.length);
  });
});

describe('an upgrade outside the dashboard', () => {
  const originalWarn = console.warn;
  afterEach(() => {
    console.warn = originalWarn;
  });

  it('says once per page in the console how to send the user to a pricing page, and still fires mp-error', async () => {
    const warnings: string[] = [];
    console.warn = (...args: unknown[]) => void warnings.push(args.map(String).join(' '));
    const embedded = new FakeKit().setSession(sampleUser, null).scriptUpgrade({ outcome: 'dismissed' });
    const inside = await fixture<MarketplaceElement>(html`<mp-upgrade-button plan="pro" .kit=${embedded}></mp-upgrade-button>`);
    part(inside, 'base')!.click();
    await settle(inside);
    expect(warnings).to.deep.equal([], 'inside the dashboard: nothing to say');

    const own = new FakeKit().setSession(sampleUser, null);
    own.embedded = false;
    own.scriptUpgrade({ error: new MarketplaceKitError('ERR_NOT_EMBEDDED', 'outside the dashboard') });
    const outside = await fixture(html`<div><mp-upgrade-button plan="pro" .kit=${own}></mp-upgrade-button></div>`);
    const codes: string[] = [];
    outside.addEventListener('mp-error', (event) => codes.push((event as MpErrorEvent).error.code));
    const button = outside.querySelector<MarketplaceElement>('mp-upgrade-button')!;
    part(button, 'base')!.click();
    await settle(button);
    own.scriptUpgrade({ error: new MarketplaceKitError('ERR_NOT_EMBEDDED', 'outside the dashboard') });
    part(button, 'base')!.click();
    await settle(button);
    expect(codes).to.deep.equal(['ERR_NOT_EMBEDDED', 'ERR_NOT_EMBEDDED']);
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.match(/ERR_NOT_EMBEDDED: <mp-upgrade-button> cannot upgrade here.*mp-upgrade-request, call event\.preventDefault\(\)/);
  });
});

describe('moved to another document (an iframe, a Picture-in-Picture window)', () => {
  // The card's accent border comes from the element's style sheets: 0px unstyled.
  const accent = (el: MpGate) => (el.ownerDocument.defaultView ?? window).getComputedStyle(part(el, 'card')!).borderInlineStartWidth;

  it('is styled there by sheets of that document (no <style>, which a strict style-src would block), and again once back', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic' }));
    const el = await fixture<MpGate>(html`<mp-gate .kit=${kit} plan="pro"></mp-gate>`);
    await settle(el);
    expect(accent(el)).to.equal('4px');
    const home = el.shadowRoot!.adoptedStyleSheets.length;
    const frame = document.createElement('iframe');
    document.body.append(frame);
    try {
      frame.contentDocument!.body.append(el);
      await settle(el);
      expect(accent(el), 'in the other document').to.equal('4px');
      const sheets = el.shadowRoot!.adoptedStyleSheets;
      expect([sheets.length, sheets.every((sheet) => sheet instanceof (frame.contentWindow as unknown as typeof globalThis).CSSStyleSheet)]).to.deep.equal([home, true]);
      expect(el.shadowRoot!.querySelectorAll('style')).to.have.length(0);
      frame.contentDocument!.body.prepend(el);
      const again = el.shadowRoot!.adoptedStyleSheets;
      expect(again.length === sheets.length && again.every((sheet, i) => sheet === sheets[i]), 'moved again inside it: the same sheets').to.equal(true);
      document.body.append(el);
      await settle(el);
      expect(accent(el), 'back').to.equal('4px');
      expect([el.shadowRoot!.adoptedStyleSheets.length, el.shadowRoot!.adoptedStyleSheets.every((sheet) => sheet instanceof CSSStyleSheet)]).to.deep.equal([home, true]);
      kit.setEntitlement(sampleEntitlement({ plan: 'pro' }));
      await settle(el);
      expect(el.access, 'still follows its kit').to.equal('granted');
    } finally {
      frame.remove();
      el.remove();
    }
  });

  it('renders and is styled when first connected there, then adopts its styles once in its own document', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic' }));
    const frame = document.createElement('iframe');
    document.body.append(frame);
    const el = document.createElement('mp-gate');
    el.kit = kit;
    el.plan = 'pro';
    try {
      frame.contentDocument!.body.append(el);
      await settle(el);
      expect(part(el, 'card'), 'rendered').to.exist;
      expect(accent(el)).to.equal('4px');
      document.body.append(el);
      await settle(el);
      expect([accent(el), el.shadowRoot!.adoptedStyleSheets.every((sheet) => sheet instanceof CSSStyleSheet), el.shadowRoot!.querySelectorAll('style').length]).to.deep.equal(['4px', true, 0]);
    } finally {
      frame.remove();
      el.remove();
    }
  });

  it('keeps the focus there: a gate that an upgrade unlocks takes it in its own document', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic' }));
    kit.scriptUpgrade({ outcome: 'upgraded', entitlement: sampleEntitlement({ plan: 'pro' }) });
    const el = await fixture<MpGate>(html`<mp-gate .kit=${kit} plan="pro"></mp-gate>`);
    const frame = document.createElement('iframe');
    document.body.append(frame);
    try {
      const doc = frame.contentDocument!;
      doc.body.append(el);
      await settle(el);
      part(el, 'action')!.focus();
      expect(el.shadowRoot!.activeElement === part(el, 'action'), "the card's button has the focus").to.equal(true);
      part(el, 'action')!.click();
      await until(() => el.access === 'granted', 'the upgrade unlocks the gate');
      await settle(el);
      expect(doc.activeElement === el, 'the gate has the focus in the frame').to.equal(true);
    } finally {
      frame.remove();
      el.remove();
    }
  });
});

describe('data in a sentence (bidi isolation)', () => {
  /** Left edge, as painted, of the character at `offset` in `needle`, in the text of `element`. */
  const leftOf = (element: Element, needle: string, offset: number) => {
    const node = [...element.childNodes].find((child) => child.textContent!.includes(needle))!;
    const at = node.textContent!.indexOf(needle) + offset;
    const range = document.createRange();
    range.setStart(node, at);
    range.setEnd(node, at + 1);
    return range.getBoundingClientRect().left;
  };

  it('isolated(): only a value whose direction may differ from the sentence, with its isolates balanced', () => {
    expect(isolated('pro', false)).to.equal('pro');
    expect(isolated('12', false)).to.equal('12');
    expect(isolated('80 %', true), 'a figure in a right-to-left sentence: its neutrals would move').to.equal('\u206880 %\u2069');
    expect(isolated('١٢', true), 'Arabic-Indic digits too').to.equal('\u2068١٢\u2069');
    expect(isolated('מקצועי', false)).to.equal('\u2068מקצועי\u2069');
    expect(isolated('מקצועי', true)).to.equal('מקצועי');
    expect(isolated('Pro+', true)).to.equal('\u2068Pro+\u2069');
    expect(isolated('pro\u202E', false)).to.equal('\u2068pro\u202E\u2069');
    expect(isolated('a\u2069\u202Eb', false), 'a stray PDI cannot close the isolate around the value').to.equal('\u2068a\u202Eb\u2069');
    expect(isolated('\u2067x', false), 'an open isolate is closed').to.equal('\u2068\u2067x\u2069\u2069');
  });

  // As the user's locale writes them, with the neutral characters a right-to-left sentence would
  // move. The texts are Hebrew (the element's own lang), the figures and dates the user's.
  const ENDS = daysFrom(30);
  for (const [what, locale, strings, partName, tag] of [
    ['a figure', 'de-CH', { value: '{used} מתוך {limit}' }, 'value', 'mp-usage-meter'],
    ['a percentage', 'de', { warningText: 'מתקרבים למגבלה ({percent})' }, 'message', 'mp-usage-meter'],
    ['a date', 'ko', { until: 'עד {date}' }, 'expiry', 'mp-plan-badge'],
  ] as const) {
    it(`in a right-to-left sentence, ${what} in the user's locale (${locale}) keeps its order`, async () => {
      const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ usage: { api_calls: 1200, limit: 1500 }, expires_at: ENDS })).setLocale(locale);
      const box = await fixture<HTMLElement>(html`<div></div>`);
      const el = Object.assign(document.createElement(tag), { kit, strings, lang: 'he' });
      box.append(el);
      await settle(el);
      const formatted =
        partName === 'value'
          ? new Intl.NumberFormat(locale).format(1200)
          : partName === 'message'
            ? new Intl.NumberFormat(locale, { style: 'percent' }).format(0.8)
            : new Intl.DateTimeFormat(locale, { dateStyle: 'medium' }).format(Date.parse(ENDS));
      const node = part(el, partName)!;
      expect(node.textContent).to.contain(formatted);
      // "1'200", "80 %", "2026. 12. 21.": first character left of the last, as the formatter wrote them.
      expect(leftOf(node, formatted, 0), `${formatted} painted in order`).to.be.below(leftOf(node, formatted, formatted.trimEnd().length - 1));
    });
  }

  it('one plan of a list cannot reverse the list\'s "or"', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic' }));
    const el = await fixture<MpGate>(html`<mp-gate .kit=${kit} plan=${'\u202Eabc pro'}></mp-gate>`);
    await settle(el);
    const text = part(el, 'text')!;
    expect(leftOf(text, ' or ', 1), '"or" painted in order').to.be.below(leftOf(text, ' or ', 2));
  });

  it('in a right-to-left sentence, a left-to-right plan name keeps its order ("Pro+", not "+Pro")', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'Pro+', status: 'cancelled' }));
    const box = await fixture<HTMLElement>(html`<div><mp-gate .kit=${kit} feature="export" lang="he"></mp-gate></div>`);
    const el = box.querySelector('mp-gate')!;
    el.strings = { cancelledHeading: 'התוכנית {current} שלך בוטלה' };
    await settle(el);
    const heading = part(el, 'heading')!;
    expect(leftOf(heading, 'Pro+', 3), '"+" painted right of "o"').to.be.above(leftOf(heading, 'Pro+', 2));
  });
});

describe('blank texts', () => {
  it('silence an announcement, but never leave a button without a name', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic' }));
    const el = await fixture<MpGate>(html`<mp-gate .kit=${kit} plan="pro" .strings=${{ unlocked: '', upgrade: ' ' }}></mp-gate>`);
    await settle(el);
    expect(part(el, 'action')!.textContent!.trim()).to.equal('Upgrade');
    kit.setEntitlement(sampleEntitlement({ plan: 'pro' }));
    await settle(el);
    expect([el.access, part(el, 'status')!.textContent]).to.deep.equal(['granted', '']);
  });

  it('count as none for a button also when they are blank once filled in (a label or text of placeholders only)', async () => {
    const signIn = await fixture<MpSignInButton>(html`<mp-sign-in-button .kit=${new FakeKit().setSignedOut()} label="{plan}"></mp-sign-in-button>`);
    const upgrade = await fixture<MpUpgradeButton>(html`<mp-upgrade-button .kit=${new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic', features: [] }))} label=" {plan} "></mp-upgrade-button>`);
    await settle(signIn);
    await settle(upgrade);
    expect(part(signIn, 'label')!.textContent).to.equal('Sign in with Marketplace');
    expect(part(upgrade, 'label')!.textContent).to.equal('Upgrade');
    // Then strings, read the same way.
    signIn.strings = { label: '{feature}' };
    upgrade.strings = { label: 'Passer à la version supérieure' };
    await settle(signIn);
    await settle(upgrade);
    expect(part(signIn, 'label')!.textContent).to.equal('Sign in with Marketplace');
    expect(part(upgrade, 'label')!.textContent).to.equal('Passer à la version supérieure');
  });
});
