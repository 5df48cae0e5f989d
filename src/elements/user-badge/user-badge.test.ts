import { expect, fixture, html } from '@open-wc/testing';
import '../index.js';
import type { MpUserBadge } from '../index.js';
import { FakeKit, sampleUser } from '../../testing/fake-kit.js';
import { HOSTILE, part, settle, text, until } from '../../../test/support/element-helpers.js';

// A 1×1 PNG, so the avatar loads without a network.
const PIXEL = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const user = { ...sampleUser, avatar_url: PIXEL };

async function badge(kit: FakeKit) {
  const el = await fixture<MpUserBadge>(html`<mp-user-badge .kit=${kit}></mp-user-badge>`);
  await settle(el);
  return el;
}

const states = [
  { name: 'loading', kit: () => new FakeKit(), text: 'Loading…' },
  { name: 'ready', kit: () => new FakeKit().setSession(user), text: 'Ada Lovelace ada@example.com' },
  { name: 'signed out', kit: () => new FakeKit().setSignedOut(), text: 'Not signed in' },
  { name: 'kit in error', kit: () => new FakeKit().setError(), text: 'Unavailable' },
];

describe('<mp-user-badge>', () => {
  for (const s of states) {
    describe(s.name, () => {
      it('shows the right text', async () => {
        expect(text(await badge(s.kit()))).to.equal(s.text);
      });
      for (const theme of ['light', 'dark'] as const) {
        it(`is accessible (${theme})`, async () => {
          await expect(await badge(s.kit().setTheme(theme))).to.be.accessible();
        });
      }
    });
  }

  it('shows the email as the name when the name is empty or blank', async () => {
    for (const name of ['', '   ']) {
      const el = await badge(new FakeKit().setSession({ ...user, name }));
      expect(part(el, 'name')!.textContent).to.equal(sampleUser.email, JSON.stringify(name));
    }
  });

  it('shows the avatar as a decorative image', async () => {
    const el = await badge(new FakeKit().setSession(user));
    const avatar = part(el, 'avatar') as HTMLImageElement;
    expect(avatar.getAttribute('src')).to.equal(PIXEL);
    expect(avatar.getAttribute('alt')).to.equal('');
    expect(avatar.getAttribute('referrerpolicy')).to.equal('no-referrer', 'the avatar host learns nothing of the app page');
  });

  it('falls back to initials when the avatar cannot load', async () => {
    const el = await badge(new FakeKit().setSession({ ...sampleUser, avatar_url: 'http://127.0.0.1:9/missing.png' }));
    await until(() => part(el, 'avatar')?.localName === 'span', 'no initials');
    expect(part(el, 'avatar')!.textContent).to.equal('AL');
    await expect(el).to.be.accessible();
  });

  it('keeps a character as users see it whole in the initials, and upper-cases by the user\'s language', async () => {
    const initials = async (name: string, locale: string) => {
      const kit = new FakeKit().setSession({ ...sampleUser, name, avatar_url: 'http://127.0.0.1:9/missing.png' }).setLocale(locale);
      const el = await badge(kit);
      await until(() => part(el, 'avatar')?.localName === 'span', 'no initials');
      return part(el, 'avatar')!.textContent;
    };
    expect(await initials('𝒜da işık', 'tr-TR')).to.equal('𝒜İ');
    expect(await initials('👩‍💻 e\u0301mile', 'en-US')).to.equal('👩‍💻E\u0301');
    expect(await initials('ada işık', 'not a locale!'), 'an invalid locale falls back').to.equal('AI');
  });

  it('takes no direction mark, quote or dash for an initial', async () => {
    for (const [name, expected] of [
      ['\u200F\u05de\u05e9\u05d4 \u05db\u05d4\u05df', '\u05de\u05db'],
      ['\u200EAda Lovelace', 'AL'],
      ['"Ada" Lovelace', 'AL'],
      ['— Ada Lovelace', 'AL'],
    ]) {
      const el = await badge(new FakeKit().setSession({ ...sampleUser, name: name!, avatar_url: 'http://127.0.0.1:9/missing.png' }));
      await until(() => part(el, 'avatar')?.localName === 'span', 'no initials');
      expect(part(el, 'avatar')!.textContent, name).to.equal(expected);
    }
  });

  it('updates live when the user changes', async () => {
    const kit = new FakeKit().setSession(user);
    const el = await badge(kit);
    kit.setUser({ ...user, name: 'Grace Hopper', email: 'grace@example.com' });
    await settle(el);
    expect(text(el)).to.equal('Grace Hopper grace@example.com');
  });

  it('renders a hostile name and email as text', async () => {
    const el = await badge(new FakeKit().setSession({ ...user, name: HOSTILE, email: `${HOSTILE}@example.com` }));
    expect([part(el, 'name')!.textContent, part(el, 'email')!.textContent]).to.deep.equal([HOSTILE, `${HOSTILE}@example.com`]);
    expect(el.shadowRoot!.querySelectorAll('img').length).to.equal(1);
    expect((window as { __xss?: unknown }).__xss).to.equal(undefined);
  });

  it('takes overrides of its texts', async () => {
    const el = await badge(new FakeKit().setSignedOut());
    el.strings = { signedOut: 'Non connecté' };
    await settle(el);
    expect(text(el)).to.equal('Non connecté');
  });

  it('wraps a long name and email inside a narrow container, its padding following the text direction', async () => {
    const long = { ...user, name: 'Wolfeschlegelsteinhausenbergerdorff_the_very_long_name', email: 'a.very.long.address.for.testing.wrapping@example.com' };
    const box = await fixture<HTMLElement>(html`<div dir="rtl" style="width: 240px"><mp-user-badge .kit=${new FakeKit().setSession(long)}></mp-user-badge></div>`);
    const el = box.querySelector('mp-user-badge')!;
    await settle(el);
    expect(el.getBoundingClientRect().width).to.be.at.most(240);
    const base = getComputedStyle(part(el, 'base')!);
    expect([base.paddingRight, base.paddingLeft]).to.deep.equal(['3.5px', '10.5px'], '0.25em beside the avatar (start), 0.75em after the text');
  });
});

describe('<mp-user-badge>: what mutation testing found unchecked', () => {
  const MISSING = 'http://127.0.0.1:9/missing.png';
  const initialsOf = async (kit: FakeKit) => {
    const el = await badge(kit);
    await until(() => part(el, 'avatar')?.localName === 'span', 'no initials');
    return { el, initials: part(el, 'avatar')!.textContent };
  };

  it('takes the initials of the first two words only', async () => {
    expect((await initialsOf(new FakeKit().setSession({ ...sampleUser, name: 'Ada King Lovelace', avatar_url: MISSING }))).initials).to.equal('AK');
  });

  it('shows "?" in place of the avatar when the name gives no initials', async () => {
    expect((await initialsOf(new FakeKit().setSession({ ...sampleUser, name: ' ', avatar_url: MISSING }))).initials).to.equal('?');
  });

  it('tries the avatar again when the user gets a new one after a failed load', async () => {
    const kit = new FakeKit().setSession({ ...sampleUser, avatar_url: MISSING });
    const { el } = await initialsOf(kit);
    kit.setUser(user);
    await settle(el);
    expect([part(el, 'avatar')!.localName, part(el, 'avatar')!.getAttribute('src')]).to.deep.equal(['img', PIXEL]);
  });

  it('a kit in error (which keeps its last user) shows "Unavailable", not the last user', async () => {
    const kit = new FakeKit().setSession(user);
    const el = await badge(kit);
    kit.setError();
    await settle(el);
    expect(text(el)).to.equal('Unavailable');
  });

  it('takes the initials from the words, not from spaces before the name', async () => {
    expect((await initialsOf(new FakeKit().setSession({ ...sampleUser, name: '  Ada Lovelace', avatar_url: MISSING }))).initials).to.equal('AL');
  });
});
