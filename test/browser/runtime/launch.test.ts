import { expect } from '@open-wc/testing';
import { hasLaunchParams, normalizeLocale, readLaunch, scrubbedUrl, type LaunchInput } from '../../../src/runtime/launch.js';

const HOST = 'https://dashboard.example';
const base: LaunchInput = { href: '', hostOrigins: [HOST], framed: true, parentOrigin: HOST };
const page = (query: string) => `https://app.example/embed?${query}#section`;
const launch = (query: string, extra: Partial<LaunchInput> = {}) => readLaunch({ ...base, href: page(query), ...extra });

describe('launch parameters', () => {
  it('reads an allowed launch', () => {
    expect(launch(`mp_context=tok&mp_host=${encodeURIComponent(HOST)}&mp_locale=de-de&mp_theme=dark`)).to.deep.equal({
      kind: 'embedded',
      context: 'tok',
      host: HOST,
      theme: 'dark',
      locale: 'de-DE',
    });
  });

  it('reads mp_theme=light as well as dark', () => {
    expect(launch(`mp_context=tok&mp_host=${HOST}&mp_theme=light`)).to.include({ theme: 'light' });
  });

  it('leaves a missing or invalid theme and locale to the kit\'s defaults', () => {
    expect(launch(`mp_context=tok&mp_host=${HOST}&mp_locale=not_a_locale!&mp_theme=neon`)).to.include({ theme: null, locale: null });
    expect(launch(`mp_context=tok&mp_host=${HOST}`)).to.include({ theme: null, locale: null });
  });

  it('refuses a host outside the allowlist, a missing host, and look-alike origins', () => {
    for (const host of ['https://evil.example', '', `${HOST}/`, 'https://dashboard.example.evil.example', 'HTTPS://DASHBOARD.EXAMPLE']) {
      const result = launch(`mp_context=tok&mp_host=${encodeURIComponent(host)}`, { parentOrigin: host || undefined });
      expect(result.kind, host).to.equal('rejected');
      if (result.kind === 'rejected') expect(result.error.code).to.equal('ERR_HOST_NOT_ALLOWED');
    }
    expect(launch('mp_context=tok').kind).to.equal('rejected');
  });

  it('refuses a launch outside a frame, or framed by another origin', () => {
    const top = launch(`mp_context=tok&mp_host=${HOST}`, { framed: false, parentOrigin: undefined });
    expect(top.kind === 'rejected' && top.error.code).to.equal('ERR_HOST_NOT_ALLOWED');
    const other = launch(`mp_context=tok&mp_host=${HOST}`, { parentOrigin: 'https://evil.example' });
    expect(other.kind === 'rejected' && other.error.code).to.equal('ERR_HOST_NOT_ALLOWED');
  });

  it('refuses a launch without a context token', () => {
    const result = launch(`mp_host=${HOST}&mp_theme=dark`);
    expect(result.kind === 'rejected' && result.error.code).to.equal('ERR_INVALID_INPUT');
    const empty = launch(`mp_context=&mp_host=${HOST}`);
    expect(empty.kind === 'rejected' && empty.error.code).to.equal('ERR_INVALID_INPUT', 'an empty mp_context is none');
  });

  it('refuses a launch that has dashboard parameters but no mp_host, even inside an allowed frame', () => {
    for (const query of ['mp_theme=dark', 'mp_locale=de-DE']) {
      const result = launch(query);
      expect(result.kind === 'rejected' && result.error.code, query).to.equal('ERR_HOST_NOT_ALLOWED');
    }
  });

  it('is standalone without mp_* parameters, unless an allowed dashboard frames the page (an in-frame reload)', () => {
    const standalone = { kind: 'standalone', signInError: null };
    expect(launch('q=1', { framed: false, parentOrigin: undefined })).to.deep.equal(standalone);
    expect(launch('q=1', { parentOrigin: 'https://evil.example' })).to.deep.equal(standalone);
    expect(launch('q=1', { parentOrigin: undefined })).to.deep.equal(standalone);
    expect(launch('q=1')).to.deep.equal({ kind: 'embedded', context: null, host: HOST, theme: null, locale: null });
  });

  it('reads a failed sign-in (mp_oauth_error) as standalone, not as a refused dashboard launch', () => {
    expect(launch('mp_oauth_error=access_denied', { framed: false, parentOrigin: undefined })).to.deep.equal({
      kind: 'standalone',
      signInError: 'access_denied',
    });
    expect(hasLaunchParams(new URL(page('mp_oauth_error=access_denied')))).to.equal(true, 'it is scrubbed too');
  });

  it('takes from mp_oauth_error only a code as the backend sends it, not the text of a crafted link', () => {
    for (const [value, code] of [
      ['ERR_OAUTH', 'ERR_OAUTH'],
      ['server_error', 'server_error'],
      ['Your account is locked. Call +1 555 0100', 'invalid_request'],
      ['<img src=x onerror=alert(1)>', 'invalid_request'],
      ['x'.repeat(65), 'invalid_request'],
      ['', 'invalid_request'],
    ]) {
      expect(launch(`mp_oauth_error=${encodeURIComponent(value!)}`, { framed: false, parentOrigin: undefined }), value).to.deep.equal({ kind: 'standalone', signInError: code });
    }
  });

  it('scrubs every mp_* parameter, known or not, and keeps the rest', () => {
    const url = new URL(page('a=1&mp_context=tok&b=2&mp_host=x&mp_future=y&mp_theme=dark&mpx=keep'));
    expect(hasLaunchParams(url)).to.equal(true);
    // Absolute: a path alone would be resolved against a <base href> on another origin.
    expect(scrubbedUrl(url)).to.equal('https://app.example/embed?a=1&b=2&mpx=keep#section');
    expect(hasLaunchParams(new URL(page('a=1')))).to.equal(false);
    expect(scrubbedUrl(new URL('https://app.example/?mp_context=t'))).to.equal('https://app.example/');
    // Only names that start with mp_: a parameter of the app's that has mp_ inside stays.
    const own = new URL(page('amp_x=1&xmp_y=2'));
    expect([hasLaunchParams(own), scrubbedUrl(own)]).to.deep.equal([false, 'https://app.example/embed?amp_x=1&xmp_y=2#section']);
  });

  it('keeps the app\'s own parameters as written, and finds mp_* however the name is encoded', () => {
    const url = new URL(page('q=a%20b&flag&path=/r/7&x=%7E&mp_context=t&mp%5Fhost=h&&tag=a+b'));
    expect(scrubbedUrl(url)).to.equal('https://app.example/embed?q=a%20b&flag&path=/r/7&x=%7E&tag=a+b#section');
  });

  it('normalises locales', () => {
    expect(normalizeLocale('en-gb', 'x')).to.equal('en-GB');
    expect(normalizeLocale('', 'x')).to.equal('x');
    expect(normalizeLocale(null, 'x')).to.equal('x');
    expect(normalizeLocale('x'.repeat(40), 'fallback')).to.equal('fallback');
    // A well-formed tag longer than the protocol's 35 characters is refused too.
    expect(normalizeLocale('de-DE-u-ca-gregory-co-phonebk-nu-latn', 'fallback')).to.equal('fallback');
    expect(normalizeLocale('de-DE-u-ca-gregory-nu-latn', 'fallback')).to.equal('de-DE-u-ca-gregory-nu-latn');
    expect(normalizeLocale('<script>', 'fallback')).to.equal('fallback');
  });
});
