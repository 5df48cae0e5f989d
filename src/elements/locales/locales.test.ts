// The elements in the user's language: packs loaded on demand and only those, the fallback by
// language, live switching, right-to-left layouts, plural forms, packs and texts an app registers,
// and in every locale: no text out of its box in a 320 px wide column, and axe in ar and ja.
import { aTimeout, expect, fixture, html, waitUntil } from '@open-wc/testing';
import { html as staticHtml, unsafeStatic } from 'lit/static-html.js';
import '../index.js';
import { BUILT_IN_LOCALES, MarketplaceElement, MpGate, loadLocale, localeDirection, registerLocale } from '../index.js';
import { localeChain } from '../base/texts.js';
import { MarketplaceKitError, isKitError } from '../../shared/errors.js';
import { FakeKit, sampleEntitlement, sampleUser } from '../../testing/fake-kit.js';
import { deferred, overflowing, part, settle, text, until } from '../../../test/support/element-helpers.js';
import { calendarDay, daysFrom } from '../../../test/support/dates.js';

/** The built-in packs this page has fetched so far, by tag. */
function packsFetched(): string[] {
  const packs = BUILT_IN_LOCALES.filter((tag) => tag !== 'en');
  return performance
    .getEntriesByType('resource')
    .map((entry) => /\/locales\/([\w-]+)\.(?:ts|js)\b/.exec(entry.name)?.[1] ?? '')
    .filter((tag) => (packs as readonly string[]).includes(tag));
}

async function render<T extends MarketplaceElement>(tag: string, kit: FakeKit | null, attributes = ''): Promise<T> {
  const el = await fixture<T>(staticHtml`<${unsafeStatic(tag)} ${unsafeStatic(attributes)} .kit=${kit}><p>paid</p></${unsafeStatic(tag)}>`);
  await settle(el);
  return el;
}

const locked = () => new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic', features: [] }));
const overQuota = (limit: number) => new FakeKit().setSession(sampleUser, sampleEntitlement({ usage: { api_calls: limit, limit } }));

describe('locales: loading', () => {
  // First in this file: nothing else has asked for a pack yet.
  it('loads no pack before an element needs one, then only the one it needs', async () => {
    expect(packsFetched()).to.deep.equal([]);
    const el = await render<MpGate>('mp-gate', locked().setLocale('de-AT'), 'feature="export"');
    expect(part(el, 'heading')!.textContent).to.equal('Zugriff auf export freischalten');
    expect(packsFetched()).to.deep.equal(['de']);
  });

  it('shows its first look in the user\'s language, not English for a moment', async () => {
    const seen: string[] = [];
    const kit = locked().setLocale('it-IT');
    const el = document.createElement('mp-gate');
    el.kit = kit;
    el.feature = 'export';
    // Every render of the gate, from the first.
    const render = el.render.bind(el);
    el.render = () => {
      const result = render();
      queueMicrotask(() => seen.push(text(el)));
      return result;
    };
    document.body.append(el);
    await settle(el);
    el.remove();
    expect(seen.length).to.be.greaterThan(0);
    expect(seen.filter((said) => /Unlock|Upgrade/.test(said))).to.deep.equal([]);
    expect(seen.at(-1)).to.contain('Sblocca export');
  });

  it('a locale switched while the last one loads: the new one loads too, and the first look is in it', async () => {
    const first = deferred();
    const second = deferred();
    let firstLoads = 0;
    let secondLoads = 0;
    registerLocale('cy', () => {
      firstLoads++;
      return first.promise.then(() => ({ 'mp-gate': { lockedHeading: 'Datgloi {feature}' } }));
    });
    registerLocale('ga', () => {
      secondLoads++;
      return second.promise.then(() => ({ 'mp-gate': { lockedHeading: 'Díghlasáil {feature}' } }));
    });
    const kit = locked().setLocale('cy');
    const el = Object.assign(document.createElement('mp-gate'), { kit, feature: 'export' });
    document.body.append(el);
    try {
      await until(() => firstLoads === 1, 'the first pack never started loading');
      // The dashboard switches again while the first pack is on its way (fr, then ja).
      kit.setLocale('ga');
      first.resolve();
      await until(() => secondLoads === 1, 'the pack of the new locale never started loading');
      expect(el.hasUpdated, 'the first look waits for the new locale').to.equal(false);
      second.resolve();
      await settle(el);
      expect([part(el, 'heading')!.textContent, part(el, 'card')!.lang]).to.deep.equal(['Díghlasáil export', 'ga']);
    } finally {
      el.remove();
    }
  });

  it('a pack past its limit holds no later update, nor the first look of another element', async () => {
    const timeout = MarketplaceElement.localeTimeoutMs;
    MarketplaceElement.localeTimeoutMs = 30;
    registerLocale('kw', () => new Promise(() => {}));
    const kit = locked().setLocale('kw');
    const el = await render<MpGate>('mp-gate', kit, 'feature="export"');
    const other = Object.assign(document.createElement('mp-gate'), { kit, feature: 'export' });
    try {
      expect(part(el, 'heading')!.textContent).to.equal('Unlock export');
      // Were anything still to wait for the pack, this would hold the updates for a minute.
      MarketplaceElement.localeTimeoutMs = 60_000;
      kit.setEntitlement(sampleEntitlement({ plan: 'pro' }));
      document.body.append(other);
      // An update that is not held runs in a microtask: before the next task.
      await aTimeout(0);
      expect([el.access, other.access]).to.deep.equal(['granted', 'granted']);
    } finally {
      MarketplaceElement.localeTimeoutMs = timeout;
      other.remove();
    }
  });

  it('holds only its first look in a locale: texts registered later for it show when they come', async () => {
    registerLocale('gd', { 'mp-gate': { lockedHeading: 'Fosgail {feature}' } });
    const el = await render<MpGate>('mp-gate', locked().setLocale('gd'), 'feature="export"');
    const timeout = MarketplaceElement.localeTimeoutMs;
    MarketplaceElement.localeTimeoutMs = 60_000;
    const later = deferred();
    try {
      registerLocale('gd', () => later.promise.then(() => ({ 'mp-gate': { upgrade: 'Àrdaich' } })));
      el.feature = 'reports';
      await aTimeout(0);
      expect(part(el, 'heading')!.textContent, 'rendered at once').to.equal('Fosgail reports');
      later.resolve();
      await loadLocale('gd');
      await settle(el);
      expect(part(el, 'action')!.textContent!.trim()).to.equal('Àrdaich');
    } finally {
      MarketplaceElement.localeTimeoutMs = timeout;
    }
  });

  it('falls back by language (de-AT → de), to another region of the same script, then to English', () => {
    expect(localeChain('de-AT')).to.deep.equal(['de', 'en']);
    expect(localeChain('pt-PT')).to.deep.equal(['pt-BR', 'en']);
    expect(localeChain('pt')).to.deep.equal(['pt-BR', 'en']);
    expect(localeChain('zh')).to.deep.equal(['zh-CN', 'en']);
    expect(localeChain('zh-SG')).to.deep.equal(['zh-CN', 'en']);
    expect(localeChain('zh-HK'), 'traditional, never simplified').to.deep.equal(['zh-TW', 'en']);
    expect(localeChain('en-GB')).to.deep.equal(['en']);
    expect(localeChain('fi-FI')).to.deep.equal(['en']);
    expect(localeChain('not a locale!')).to.deep.equal(['en']);
  });

  it('reads English where no pack has the language, and formats figures the user\'s way all the same', async () => {
    const el = await render<MpGate>('mp-gate', overQuota(12000).setLocale('fi-FI'), 'feature="export" metered');
    expect(part(el, 'text')!.textContent).to.equal(`You have used ${new Intl.NumberFormat('fi-FI').format(12000)} of ${new Intl.NumberFormat('fi-FI').format(12000)} API calls. Upgrade for a higher limit.`);
    expect(part(el, 'card')!.lang).to.equal('en');
  });

  it('knows the direction of each language', () => {
    expect(['ar-EG', 'he', 'fa', 'ur-PK', 'en', 'ja', 'zh-TW', 'not a locale!'].map(localeDirection)).to.deep.equal(['rtl', 'rtl', 'rtl', 'rtl', 'ltr', 'ltr', 'ltr', 'ltr']);
  });

  it('gives the direction of the likely script for every tag, though it asks Intl for likely subtags only where the tag leaves it open', () => {
    const tags = [...BUILT_IN_LOCALES, 'ar-Latn', 'en-Arab', 'he-IL', 'iw', 'az-IR', 'az', 'pa-PK', 'pa', 'uz-AF', 'ku', 'ckb', 'sd', 'yi', 'dv', 'und', 'und-Arab', 'zh-Hant-HK', 'sr-Latn', 'ms-Arab', 'de-CH', 'pt-AO'];
    const likely = (tag: string) => (/^(Arab|Hebr|Thaa|Syrc|Nkoo|Adlm|Rohg|Mand|Samr)$/.test(new Intl.Locale(tag).maximize().script ?? '') ? 'rtl' : 'ltr');
    for (const tag of tags) expect(localeDirection(tag), tag).to.equal(likely(tag));
  });
});

describe('locales: live switching', () => {
  it('a locale change from the dashboard switches every element\'s language, with no reload and nothing announced', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic', features: [], usage: { api_calls: 850, limit: 1000 } }));
    const page = await fixture<HTMLElement>(html`<div>
      <mp-gate .kit=${kit} feature="export"><p>paid</p></mp-gate>
      <mp-upgrade-button .kit=${kit} plan="pro"></mp-upgrade-button>
      <mp-usage-meter .kit=${kit}></mp-usage-meter>
      <mp-plan-badge .kit=${kit}></mp-plan-badge>
    </div>`);
    const [gate, button, meter, badge] = [...page.children] as MarketplaceElement[];
    const all = [gate!, button!, meter!, badge!];
    const look = async () => {
      for (const el of all) await settle(el);
      return [part(gate!, 'heading')!.textContent, part(button!, 'label')!.textContent, part(meter!, 'label')!.textContent, part(badge!, 'status')!.textContent, part(gate!, 'card')!.dir];
    };
    expect(await look()).to.deep.equal(['Unlock export', 'Upgrade to pro', 'API calls', 'Active', 'ltr']);
    kit.setLocale('fr-FR');
    expect(await look()).to.deep.equal(['Débloquer export', 'Passer au forfait pro', 'Appels d’API', 'Actif', 'ltr']);
    kit.setLocale('ar-EG');
    // Latin data in an Arabic sentence, isolated (U+2068 … U+2069) so that it cannot reorder it.
    expect(await look()).to.deep.equal(['إلغاء قفل \u2068export\u2069', 'الترقية إلى \u2068pro\u2069', 'استدعاءات API', 'نشطة', 'rtl']);
    kit.setLocale('en-US');
    expect(await look()).to.deep.equal(['Unlock export', 'Upgrade to pro', 'API calls', 'Active', 'ltr']);
    expect(all.map((el) => el.isConnected)).to.deep.equal([true, true, true, true], 'the same elements');
    expect([part(gate!, 'status')!.textContent, part(meter!, 'status')!.textContent], 'another language is no news').to.deep.equal(['', '']);
  });

  it('says an upgrade\'s outcome once, not again in the next language', async () => {
    const kit = locked().scriptUpgrade({ outcome: 'dismissed' });
    const el = await render<MarketplaceElement>('mp-upgrade-button', kit, 'plan="pro"');
    part(el, 'base')!.click();
    await settle(el);
    expect(part(el, 'status')!.textContent).to.equal('No change to your plan');
    kit.setLocale('de-DE');
    await settle(el);
    expect([part(el, 'label')!.textContent, part(el, 'status')!.textContent]).to.deep.equal(['Auf pro upgraden', '']);
  });

  it('says a failure once, not again in the next language', async () => {
    const kit = locked().scriptUpgrade({ error: new MarketplaceKitError('ERR_ACTION_FAILED', 'no chooser') });
    kit.onSignIn = () => Promise.reject(new MarketplaceKitError('ERR_ACTION_FAILED', 'no sign-in'));
    const page = await fixture<HTMLElement>(html`<div @mp-error=${() => {}}>
      <mp-upgrade-button .kit=${kit} plan="pro"></mp-upgrade-button>
      <mp-sign-in-button .kit=${kit}></mp-sign-in-button>
    </div>`);
    const [upgrade, signIn] = [...page.children] as MarketplaceElement[];
    for (const el of [upgrade!, signIn!]) {
      await settle(el);
      part(el, 'base')!.click();
      await settle(el);
    }
    expect([upgrade, signIn].map((el) => part(el!, 'status')!.textContent)).to.deep.equal(['Could not open the plans. Try again.', 'Could not start sign-in. Try again.']);
    kit.setLocale('de-DE');
    for (const el of [upgrade!, signIn!]) await settle(el);
    // The buttons still say it, in German; their live regions do not say it again.
    expect([upgrade, signIn].map((el) => part(el!, 'label')!.textContent)).to.deep.equal([
      'Die Tarife konnten nicht geöffnet werden. Versuchen Sie es erneut.',
      'Die Anmeldung konnte nicht gestartet werden. Versuchen Sie es erneut.',
    ]);
    expect([upgrade, signIn].map((el) => part(el!, 'status')!.textContent)).to.deep.equal(['', '']);
  });

  it('an element\'s own lang picks its language, live, as where no kit is found', async () => {
    const timeout = MarketplaceElement.kitTimeoutMs;
    MarketplaceElement.kitTimeoutMs = 20;
    const warn = console.warn;
    console.warn = () => {};
    try {
      const el = await fixture<MpGate>(html`<mp-gate lang="es" feature="export"></mp-gate>`);
      await waitUntil(() => el.state === 'not-connected', 'the gate never gave up waiting for a kit');
      await settle(el);
      expect(part(el, 'loading')!.textContent).to.equal('No conectado a Marketplace');
      el.lang = 'sv';
      await settle(el);
      expect(part(el, 'loading')!.textContent).to.equal('Inte ansluten till Marketplace');
    } finally {
      MarketplaceElement.kitTimeoutMs = timeout;
      console.warn = warn;
    }
  });
});

describe('locales: right to left', () => {
  for (const locale of ['ar-EG', 'he-IL']) {
    it(`lays out right to left in ${locale}: the card's accent, the meter's fill, the badges`, async () => {
      const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic', features: [], usage: { api_calls: 300, limit: 1000 } })).setLocale(locale);
      const column = await fixture<HTMLElement>(html`<div style="width: 320px">
        <mp-gate .kit=${kit} feature="export"><p>paid</p></mp-gate>
        <mp-usage-meter .kit=${kit}></mp-usage-meter>
        <mp-plan-badge .kit=${kit}></mp-plan-badge>
        <mp-user-badge .kit=${kit}></mp-user-badge>
      </div>`);
      const [gate, meter, badge, user] = [...column.children] as MarketplaceElement[];
      for (const el of [gate!, meter!, badge!, user!]) await settle(el);
      const card = part(gate!, 'card')!;
      expect([card.lang, card.dir, getComputedStyle(card).direction]).to.deep.equal([locale.slice(0, 2), 'rtl', 'rtl']);
      // border-inline-start: on the right.
      expect([getComputedStyle(card).borderRightWidth, getComputedStyle(card).borderLeftWidth]).to.deep.equal(['4px', '1px']);
      // The heading starts at the right edge of the card's content.
      expect(card.getBoundingClientRect().right - part(gate!, 'heading')!.getBoundingClientRect().right).to.be.below(30);
      // The fill grows from the right.
      const track = part(meter!, 'track')!.getBoundingClientRect();
      const fill = part(meter!, 'indicator')!.getBoundingClientRect();
      expect(Math.abs(track.right - fill.right)).to.be.below(2);
      expect(fill.left - track.left).to.be.above(track.width / 2);
      // The label first, at the right; the figures at the left.
      expect(part(meter!, 'label')!.getBoundingClientRect().left).to.be.above(part(meter!, 'value')!.getBoundingClientRect().left);
      // The plan, then the status: from right to left.
      expect(part(badge!, 'plan')!.getBoundingClientRect().left).to.be.above(part(badge!, 'status')!.getBoundingClientRect().left);
      // The user badge's avatar first, at the right.
      expect(part(user!, 'avatar')!.getBoundingClientRect().left).to.be.above(part(user!, 'text')!.getBoundingClientRect().left);
      expect(overflowing(column, [gate!, meter!, badge!, user!])).to.deep.equal([]);
    });
  }

  it('follows a dir the page set, over the direction of the language', async () => {
    const box = await fixture<HTMLElement>(html`<div dir="ltr"><mp-gate .kit=${locked().setLocale('ar')} feature="export"></mp-gate></div>`);
    const el = box.firstElementChild as MpGate;
    await settle(el);
    expect([part(el, 'card')!.lang, getComputedStyle(part(el, 'card')!).direction]).to.deep.equal(['ar', 'ltr']);
    box.dir = 'rtl';
    const english = Object.assign(document.createElement('mp-gate'), { kit: locked(), feature: 'export' });
    box.append(english);
    el.requestUpdate(); // dir is read when the element renders
    await settle(english);
    await settle(el);
    expect(getComputedStyle(part(english, 'card')!).direction).to.equal('rtl');
    expect(getComputedStyle(part(el, 'card')!).direction).to.equal('rtl');
  });
});

describe('locales: a page dir that differs from the language', () => {
  it('lays the boxes out the page\'s way, and writes each text in its own language\'s direction', async () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic', features: [], usage: { api_calls: 850, limit: 1000 } })).setLocale('ar');
    const box = await fixture<HTMLElement>(html`<div dir="ltr">
      <mp-gate .kit=${kit} feature="export"></mp-gate>
      <mp-usage-meter .kit=${kit}></mp-usage-meter>
      <mp-plan-badge .kit=${kit}></mp-plan-badge>
      <mp-upgrade-button .kit=${kit} plan="pro"></mp-upgrade-button>
    </div>`);
    const [gate, meter, badge, button] = [...box.children] as MarketplaceElement[];
    for (const el of [gate!, meter!, badge!, button!]) await settle(el);
    const direction = (el: MarketplaceElement, name: string) => getComputedStyle(part(el, name)!).direction;
    // The boxes: as the page says.
    expect([direction(gate!, 'card'), direction(meter!, 'base'), direction(badge!, 'base'), direction(button!, 'base')]).to.deep.equal(['ltr', 'ltr', 'ltr', 'ltr']);
    // The texts: Arabic, right to left, whatever the page says.
    const texts = [direction(gate!, 'heading'), direction(gate!, 'text'), direction(gate!, 'action'), direction(gate!, 'status')];
    texts.push(direction(meter!, 'label'), direction(meter!, 'value'), direction(meter!, 'message'), direction(badge!, 'status'), direction(button!, 'label'));
    expect(texts).to.deep.equal(Array(9).fill('rtl'));
    // Latin data in an Arabic sentence is isolated, as in an Arabic page.
    expect([part(gate!, 'heading')!.textContent, part(button!, 'label')!.textContent]).to.deep.equal(['إلغاء قفل \u2068export\u2069', 'الترقية إلى \u2068pro\u2069']);
  });

  it('an English text in a right-to-left page reads left to right, its data left as it is', async () => {
    const box = await fixture<HTMLElement>(html`<div dir="rtl"><mp-gate .kit=${locked()} feature="export"></mp-gate></div>`);
    const gate = box.firstElementChild as MpGate;
    await settle(gate);
    expect([getComputedStyle(part(gate, 'card')!).direction, getComputedStyle(part(gate, 'heading')!).direction]).to.deep.equal(['rtl', 'ltr']);
    expect(part(gate, 'heading')!.textContent).to.equal('Unlock export');
  });
});

describe('locales: plural forms', () => {
  const said = async (locale: string, limit: number) => part(await render<MpGate>('mp-gate', overQuota(limit).setLocale(locale), 'feature="export" metered'), 'text')!.textContent!;

  it('say one call and several in English and Polish, as Intl.PluralRules picks the form', async () => {
    expect(await said('en', 1)).to.contain('of 1 API call.');
    expect(await said('en', 1000)).to.contain('of 1,000 API calls.');
    expect(await said('pl', 1)).to.contain('z 1 wywołania API');
    expect(await said('pl', 5)).to.contain('z 5 wywołań API');
    expect(await said('pl', 22)).to.contain('z 22 wywołań API');
  });

  it('take Arabic\'s dual, plural for 3 to 10, accusative for 11 to 99 and singular from 100', async () => {
    expect(await said('ar', 2)).to.match(/استدعاءين /);
    expect(await said('ar', 5)).to.match(/استدعاءات /);
    expect(await said('ar', 11)).to.match(/استدعاءً /);
    expect(await said('ar', 100)).to.match(/استدعاء لواجهة/);
  });

  it('come from strings too; an object without its `other` form is no text', async () => {
    const el = await render<MpGate>('mp-gate', overQuota(1), 'feature="export" metered');
    el.strings = { overQuotaText: { one: 'Just {limit} call.', other: '{limit} calls.' } };
    await settle(el);
    expect(part(el, 'text')!.textContent).to.equal('Just 1 call.');
    el.strings = { overQuotaText: { one: 'No other form' } as never };
    await settle(el);
    expect(part(el, 'text')!.textContent).to.equal('You have used 1 of 1 API call. Upgrade for a higher limit.');
  });
});

describe('locales: what an app registers', () => {
  it('a pack of its own for a language the kit does not ship, loaded when first needed; what it lacks reads English', async () => {
    let loads = 0;
    registerLocale('fi', async () => {
      loads++;
      return { default: { 'mp-gate': { lockedHeading: 'Avaa {feature}', upgrade: 'Päivitä' }, common: { failed: 'Se ei onnistunut.' } } };
    });
    expect(loads, 'nothing loaded before an element needs it').to.equal(0);
    const el = await render<MpGate>('mp-gate', locked().setLocale('fi-FI'), 'feature="export"');
    expect([loads, part(el, 'heading')!.textContent, part(el, 'action')!.textContent!.trim(), part(el, 'text')!.textContent]).to.deep.equal([
      1,
      'Avaa export',
      'Päivitä',
      'Upgrade your plan to use export.',
    ]);
    // The text the pack lacks is English, and says so.
    expect([part(el, 'card')!.lang, part(el, 'heading')!.lang, part(el, 'action')!.lang, part(el, 'text')!.lang]).to.deep.equal(['fi', 'fi', 'fi', 'en']);
    expect(getComputedStyle(part(el, 'text')!).direction).to.equal('ltr');
  });

  it('a subclass under a tag of its own reads the texts of the element it extends', async () => {
    customElements.define('acme-gate', class extends MpGate {});
    const el = await render<MpGate>('acme-gate', locked().setLocale('de-DE'), 'feature="export"');
    expect([part(el, 'heading')!.textContent, part(el, 'action')!.textContent!.trim(), part(el, 'card')!.lang]).to.deep.equal(['Zugriff auf export freischalten', 'Upgraden', 'de']);
  });


  it('one text changed for every element at once, under the element\'s own strings and label', async () => {
    registerLocale('en-CA', { 'mp-gate': { upgrade: 'See plans' }, 'mp-upgrade-button': { planLabel: 'See {plan}' } });
    const kit = locked().setLocale('en-CA');
    const page = await fixture<HTMLElement>(html`<div>
      <mp-gate .kit=${kit} feature="export"></mp-gate>
      <mp-gate .kit=${kit} feature="reports"></mp-gate>
      <mp-gate .kit=${kit} feature="sso" .strings=${{ upgrade: 'Go' }}></mp-gate>
      <mp-upgrade-button .kit=${kit} plan="pro"></mp-upgrade-button>
      <mp-upgrade-button .kit=${kit} plan="pro" label="Buy {plan}"></mp-upgrade-button>
    </div>`);
    const [a, b, c, d, e] = [...page.children] as MarketplaceElement[];
    for (const el of [a, b, c, d, e]) await settle(el!);
    expect([a, b, c].map((el) => part(el!, 'action')!.textContent!.trim())).to.deep.equal(['See plans', 'See plans', 'Go']);
    expect([d, e].map((el) => part(el!, 'label')!.textContent)).to.deep.equal(['See pro', 'Buy pro']);
    // Registered while elements show: they take it at once.
    registerLocale('en-CA', { 'mp-gate': { upgrade: 'Compare plans' } });
    await settle(a!);
    expect(part(a!, 'action')!.textContent!.trim()).to.equal('Compare plans');
    // Other English users keep the built-in texts.
    const us = await render<MpGate>('mp-gate', locked(), 'feature="export"');
    expect(part(us, 'action')!.textContent!.trim()).to.equal('Upgrade');
  });

  it('refuses a locale that is no language tag, and texts that are no object, with ERR_CONFIG', () => {
    for (const [locale, texts] of [['not a locale!', {}], ['de', 'Upgraden'], ['de', null]] as const) {
      let thrown: unknown;
      try {
        registerLocale(locale, texts as never);
      } catch (error) {
        thrown = error;
      }
      expect(isKitError(thrown, 'ERR_CONFIG')).to.equal(true, `${locale} ${String(texts)}: ${String(thrown)}`);
    }
  });

  it('a pack that fails to load is reported, and English shows', async () => {
    const warnings: unknown[][] = [];
    const warn = console.warn;
    console.warn = (...args: unknown[]) => void warnings.push(args);
    try {
      registerLocale('eo', () => Promise.reject(new Error('offline')));
      // A loader that throws, or gives no pack, is no worse.
      registerLocale('eo', () => {
        throw new Error('not a function of modules');
      });
      registerLocale('eo', async () => ({ default: null as never }));
      const el = await render<MpGate>('mp-gate', locked().setLocale('eo'), 'feature="export"');
      expect(part(el, 'heading')!.textContent).to.equal('Unlock export');
      expect(warnings.map((args) => String(args[0]))).to.deep.equal(Array(3).fill('[marketplace-app-kit] eo texts not loaded (docs/guides/locales.md):'));
    } finally {
      console.warn = warn;
    }
  });

  it('two loaders for one locale: the later registration wins, whichever loads first', async () => {
    const earlier = deferred();
    const later = deferred();
    registerLocale('mt', () => earlier.promise.then(() => ({ 'mp-gate': { lockedHeading: 'Earlier {feature}', upgrade: 'Earlier' } })));
    registerLocale('mt', () => later.promise.then(() => ({ 'mp-gate': { lockedHeading: 'Later {feature}' } })));
    const loaded = loadLocale('mt');
    later.resolve();
    await aTimeout(0);
    earlier.resolve();
    await loaded;
    const el = await render<MpGate>('mp-gate', locked().setLocale('mt'), 'feature="export"');
    expect([part(el, 'heading')!.textContent, part(el, 'action')!.textContent!.trim()]).to.deep.equal(['Later export', 'Earlier']);
  });

  it('a load that ends does not end the wait for a loader registered while it ran', async () => {
    const first = deferred();
    const second = deferred();
    registerLocale('br', () => first.promise.then(() => ({ 'mp-gate': { lockedHeading: 'Dibrennañ {feature}' } })));
    const firstLoad = loadLocale('br');
    registerLocale('br', () => second.promise.then(() => ({ 'mp-gate': { upgrade: 'Gwellaat' } })));
    // Started while the first load runs.
    void loadLocale('br');
    first.resolve();
    await firstLoad;
    const now = loadLocale('br');
    const which = await Promise.race([now.then(() => 'loaded'), aTimeout(0).then(() => 'waiting')]);
    expect(which, 'the second loader has not answered').to.equal('waiting');
    second.resolve();
    await now;
    const el = await render<MpGate>('mp-gate', locked().setLocale('br'), 'feature="export"');
    expect([part(el, 'heading')!.textContent, part(el, 'action')!.textContent!.trim()]).to.deep.equal(['Dibrennañ export', 'Gwellaat']);
  });

  it('a pack slower than localeTimeoutMs leaves English meanwhile, and shows when it comes', async () => {
    const timeout = MarketplaceElement.localeTimeoutMs;
    MarketplaceElement.localeTimeoutMs = 30;
    const slow = deferred();
    try {
      registerLocale('la', () => slow.promise.then(() => ({ 'mp-gate': { lockedHeading: 'Aperi {feature}' } })));
      const el = await render<MpGate>('mp-gate', locked().setLocale('la'), 'feature="export"');
      expect(part(el, 'heading')!.textContent).to.equal('Unlock export');
      slow.resolve();
      await loadLocale('la');
      await settle(el);
      expect(part(el, 'heading')!.textContent).to.equal('Aperi export');
    } finally {
      MarketplaceElement.localeTimeoutMs = timeout;
    }
  });
});

/** Each element in the looks that show the most text, on kits put in `locale`. */
function everyLook(locale: string): [tag: string, kit: FakeKit | null, attributes: string][] {
  const long = { plan: 'Enterprise Unlimited', expires_at: calendarDay(1, 12, 21).iso };
  const kits = {
    signedOut: new FakeKit().setSignedOut(),
    error: new FakeKit().setError(),
    loading: new FakeKit(),
    locked: new FakeKit().setSession(sampleUser, sampleEntitlement({ ...long, features: [] })),
    expired: new FakeKit().setSession(sampleUser, sampleEntitlement({ ...long, expires_at: daysFrom(-30) })),
    cancelled: new FakeKit().setSession(sampleUser, sampleEntitlement({ ...long, status: 'cancelled' })),
    pastDue: new FakeKit().setSession(sampleUser, sampleEntitlement({ ...long, status: 'past_due' })),
    trial: new FakeKit().setSession(sampleUser, sampleEntitlement({ ...long, status: 'trialing' })),
    overQuota: new FakeKit().setSession(sampleUser, sampleEntitlement({ ...long, usage: { api_calls: 1234567, limit: 1234567 } })),
    warning: new FakeKit().setSession(sampleUser, sampleEntitlement({ ...long, usage: { api_calls: 900, limit: 1000 } })),
    none: new FakeKit().setSession(sampleUser, null),
  };
  for (const kit of Object.values(kits)) kit.setLocale(locale);
  const gate = 'feature="advanced-export" plan="business enterprise"';
  return [
    ['mp-gate', kits.locked, gate],
    ['mp-gate', kits.locked, 'feature="advanced-export"'],
    ['mp-gate', kits.expired, 'feature="export"'],
    ['mp-gate', kits.cancelled, 'feature="export"'],
    ['mp-gate', kits.pastDue, 'feature="export"'],
    ['mp-gate', kits.overQuota, 'feature="export" metered'],
    ['mp-gate', kits.signedOut, 'feature="export"'],
    ['mp-gate', kits.error, 'feature="export"'],
    ['mp-gate', kits.loading, 'feature="export"'],
    ['mp-upgrade-button', kits.locked, 'plan="business"'],
    ['mp-upgrade-button', kits.locked, ''],
    ['mp-upgrade-button', kits.cancelled, 'plan="Enterprise Unlimited"'],
    ['mp-upgrade-button', kits.pastDue, 'plan="Enterprise Unlimited"'],
    ['mp-upgrade-button', kits.trial, 'plan="Enterprise Unlimited"'],
    ['mp-sign-in-button', kits.signedOut, ''],
    ['mp-usage-meter', kits.warning, ''],
    ['mp-usage-meter', kits.overQuota, ''],
    ['mp-usage-meter', kits.none, ''],
    ['mp-usage-meter', kits.signedOut, ''],
    ['mp-plan-badge', kits.trial, ''],
    ['mp-plan-badge', kits.pastDue, ''],
    ['mp-plan-badge', kits.none, ''],
    ['mp-plan-badge', kits.signedOut, ''],
    ['mp-user-badge', kits.locked, ''],
    ['mp-user-badge', kits.signedOut, ''],
    ['mp-user-badge', kits.error, ''],
  ];
}

describe('locales: every element in every locale', () => {
  for (const locale of BUILT_IN_LOCALES) {
    it(`fits a 320 px wide column with no text out of its box (${locale})`, async () => {
      await loadLocale(locale);
      const column = await fixture<HTMLElement>(html`<div style="width: 320px"></div>`);
      const elements: MarketplaceElement[] = [];
      for (const [tag, kit, attributes] of everyLook(locale)) {
        const el = await render(tag, kit, attributes);
        column.append(el);
        elements.push(el);
      }
      for (const el of elements) await settle(el);
      // Translated: the card's heading is not the English one (but in English).
      const heading = part(elements[0]!, 'heading')!.textContent!;
      expect(heading === 'Unlock advanced-export').to.equal(locale === 'en', heading);
      expect(overflowing(column, elements)).to.deep.equal([]);
      expect(column.scrollWidth).to.equal(column.clientWidth);
    });
  }

  for (const locale of ['ar', 'ja']) {
    it(`passes axe in every look (${locale})`, async function () {
      this.timeout(60_000);
      for (const [tag, kit, attributes] of everyLook(locale)) {
        const el = await render(tag, kit, attributes);
        await expect(el, `${tag} ${attributes} ${el.state}: ${text(el)}`).to.be.accessible();
      }
    });
  }
});
