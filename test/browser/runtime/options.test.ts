// createKit's options (src/runtime/options.ts): each mistake is ERR_CONFIG at once, after the
// launch parameters left the address bar, and before anything is sent.
import { expect } from '@open-wc/testing';
import { createKit } from '../../../src/runtime/index.js';
import { MarketplaceKit, type KitOptions } from '../../../src/runtime/kit.js';
import { MarketplaceKitError } from '../../../src/shared/errors.js';
import { APP_ORIGIN, HOST_ORIGIN, fakeEnvironment, jsonResponse, rejection, scriptedFetch, sessionBody } from '../../support/runtime-fakes.js';
import { BACKEND, LAUNCH, start } from '../../support/runtime-kit.js';

describe('createKit options', () => {
  it('refuses a configuration mistake with ERR_CONFIG, after scrubbing the URL', () => {
    const env = fakeEnvironment(LAUNCH);
    const fetch = scriptedFetch(() => jsonResponse({}));
    expect(() => new MarketplaceKit({ backend: '', hostOrigins: [HOST_ORIGIN], fetch }, env)).to.throw(MarketplaceKitError).with.property('code', 'ERR_CONFIG');
    expect(env.replaced).to.deep.equal(['https://app.example/embed?view=1']);
    for (const hostOrigins of [['*'], [`${HOST_ORIGIN}/`], 'https://x.example' as unknown as string[]]) {
      expect(() => new MarketplaceKit({ backend: '/api', hostOrigins, fetch }, fakeEnvironment(LAUNCH))).to.throw(MarketplaceKitError).with.property('code', 'ERR_CONFIG');
    }
    for (const bearerOrigins of [['*'], [`${APP_ORIGIN}/api`], 'https://x.example' as unknown as string[]]) {
      expect(() => new MarketplaceKit({ backend: '/api', hostOrigins: [], bearerOrigins, fetch }, fakeEnvironment(LAUNCH))).to.throw(MarketplaceKitError).with.property('code', 'ERR_CONFIG');
    }
    for (const planNames of [['Pro'], 'Pro', { pro: 1 }, 7, null] as unknown as Record<string, string>[]) {
      expect(() => new MarketplaceKit({ backend: '/api', hostOrigins: [], planNames, fetch }, fakeEnvironment(LAUNCH)), JSON.stringify(planNames))
        .to.throw(MarketplaceKitError)
        .with.property('code', 'ERR_CONFIG');
    }
    // Not a TypeError at the first request, reported as the backend being unreachable.
    for (const notFetch of ['fetch', {}, null]) {
      expect(() => new MarketplaceKit({ backend: '/api', hostOrigins: [], fetch: notFetch as unknown as typeof fetch }, fakeEnvironment(LAUNCH)), String(notFetch))
        .to.throw(MarketplaceKitError, "createKit's fetch must be a function")
        .with.property('code', 'ERR_CONFIG');
    }
    for (const autoResize of ['no', 'false', 0, null]) {
      expect(() => new MarketplaceKit({ backend: '/api', hostOrigins: [], autoResize: autoResize as unknown as boolean, fetch }, fakeEnvironment(LAUNCH)), String(autoResize))
        .to.throw(MarketplaceKitError, "createKit's autoResize must be true or false")
        .with.property('code', 'ERR_CONFIG');
    }
    const unparsable = fakeEnvironment(LAUNCH);
    expect(() => new MarketplaceKit({ backend: 'http://[', hostOrigins: [HOST_ORIGIN], fetch }, unparsable)).to.throw(MarketplaceKitError).with.property('code', 'ERR_CONFIG');
    expect(unparsable.replaced).to.deep.equal(['https://app.example/embed?view=1']);
    expect(fetch.calls).to.have.length(0);
  });

  it('createKit rejects an unparsable backend URL with ERR_CONFIG', async () => {
    const error = await rejection(createKit({ backend: 'http://[', hostOrigins: [], fetch: scriptedFetch(() => jsonResponse({})) }));
    expect(error.code).to.equal('ERR_CONFIG');
  });

  it('refuses timing options that are not usable timers with ERR_CONFIG', () => {
    const fetch = scriptedFetch(() => jsonResponse({}));
    for (const bad of [{ timeoutMs: null as unknown as number }, { timeoutMs: Infinity }, { timeoutMs: -1 }, { timeoutMs: 0 }, { upgradeTimeoutMs: 30 * 86_400_000 }, { bridgeTimeoutMs: NaN }, { refreshMarginMs: NaN }, { timeoutMs: '5000' as unknown as number }]) {
      expect(() => new MarketplaceKit({ backend: '/api', hostOrigins: [], fetch, ...bad }, fakeEnvironment(`${APP_ORIGIN}/`)), JSON.stringify(bad))
        .to.throw(MarketplaceKitError, /createKit's \w+ must be a finite number from/)
        .with.property('code', 'ERR_CONFIG');
    }
    expect(fetch.calls).to.have.length(0);
    // refreshMarginMs may be 0 (renew at expiry only); the others start at 1.
    new MarketplaceKit({ backend: '/api', hostOrigins: [], fetch, refreshMarginMs: 0 }, fakeEnvironment(`${APP_ORIGIN}/`)).destroy();
  });

  it('gives every configuration mistake the same status (500), whatever found it', () => {
    const fetch = scriptedFetch(() => jsonResponse({}));
    const statusOf = (options: Partial<KitOptions>) => {
      try {
        new MarketplaceKit({ backend: '/api', hostOrigins: [], fetch, ...options }, fakeEnvironment(`${APP_ORIGIN}/`));
      } catch (error) {
        return [(error as MarketplaceKitError).code, (error as MarketplaceKitError).status];
      }
      return 'accepted';
    };
    expect([statusOf({ backend: '' }), statusOf({ hostOrigins: ['*'] }), statusOf({ timeoutMs: NaN })]).to.deep.equal([
      ['ERR_CONFIG', 500],
      ['ERR_CONFIG', 500],
      ['ERR_CONFIG', 500],
    ]);
  });

  it('keeps a frozen copy of planNames that answers only its own keys', () => {
    const planNames = { pro_monthly: 'Pro', ['__proto__']: 'Proto' };
    const kit = start(fakeEnvironment(LAUNCH), scriptedFetch(() => jsonResponse({})), { backend: '/api', planNames });
    planNames.pro_monthly = 'changed later';
    expect(kit.planNames.pro_monthly).to.equal('Pro');
    expect(kit.planNames.constructor).to.equal(undefined);
    expect(Object.getPrototypeOf(kit.planNames)).to.equal(null);
    expect(Object.isFrozen(kit.planNames)).to.equal(true);
    expect(Object.keys(kit.planNames)).to.have.members(['pro_monthly', '__proto__']);
    const plain = start(fakeEnvironment(LAUNCH), scriptedFetch(() => jsonResponse({})), { backend: '/api' });
    expect(Object.keys(plain.planNames)).to.deep.equal([]);
  });

  it('gives each backend request timeoutMs to answer, 10 s unless set', async () => {
    for (const [options, ms] of [[{}, 10_000], [{ timeoutMs: 2_500 }, 2_500]] as const) {
      const env = fakeEnvironment(`${APP_ORIGIN}/`);
      const kit = start(env, scriptedFetch(() => new Promise<Response>(() => undefined)), options);
      env.advance(ms - 1);
      await Promise.race([kit.started, Promise.resolve()]);
      expect(kit.state, `${ms - 1} ms`).to.equal('loading');
      env.advance(1);
      await kit.started;
      expect([kit.state, kit.error?.message]).to.deep.equal(['error', `The app backend did not answer within ${ms} ms`]);
    }
  });

  it('a backend given with a trailing slash: the routes get one slash', async () => {
    const fetch = scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000)));
    const env = fakeEnvironment(`${APP_ORIGIN}/`);
    const kit = start(env, fetch, { backend: '/api/marketplace/' });
    await kit.started;
    await kit.signIn();
    expect(fetch.calls.map((c) => c.url)).to.deep.equal([`${BACKEND}/session`]);
    expect(env.navigated[0]).to.match(new RegExp(`^${BACKEND}/oauth/start\\?`));
    expect(kit.state).to.equal('ready');
  });
});
