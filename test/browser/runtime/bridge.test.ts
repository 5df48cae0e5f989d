import { expect } from '@open-wc/testing';
import {
  BRIDGE_MAX_MESSAGE_SIZE,
  BRIDGE_SERVICE_ID,
  openBridge,
  type Bridge,
  type HandlerTable,
} from '../../../src/shared/bridge.js';
import { MarketplaceKitError } from '../../../src/shared/errors.js';
import { assertOrigin } from '../../../src/shared/origin.js';
import { APP_ORIGIN, HOST_ORIGIN, deliver, fakeEnvironment, gate, openAppEnd, openHostEnd, rejection, settled, until, windowPair, type FakeWindow } from '../../support/runtime-fakes.js';
import { HANG_MS } from '../../support/waiting.js';

const packet = (id: number, method: string, params: unknown) =>
  JSON.stringify({ type: 'method', serviceID: BRIDGE_SERVICE_ID, id, method, params, counter: 0 });

describe('host bridge protocol', () => {
  let host: FakeWindow;
  let app: FakeWindow;
  const open: Array<{ destroy(): void }> = [];

  beforeEach(() => {
    [host, app] = windowPair();
  });
  afterEach(() => {
    for (const bridge of open.splice(0)) bridge.destroy();
  });

  function connect(hostHandlers: HandlerTable<'host'>, appHandlers: HandlerTable<'app'> = {}, timeoutMs = 300) {
    const hostSide = openHostEnd(host, app, hostHandlers, timeoutMs);
    const appSide = openAppEnd(app, host, appHandlers, timeoutMs);
    open.push(hostSide, appSide);
    return { hostSide, appSide };
  }

  it('calls through in both directions after the handshake, with validated results', async () => {
    const themes: string[] = [];
    const { hostSide, appSide } = connect({ getContext: () => ({ context: 'ctx-1' }) }, { themeChanged: ({ theme }) => void themes.push(theme) });
    await Promise.all([hostSide.ready, appSide.ready]);
    expect(await appSide.call('getContext', {})).to.deep.equal({ context: 'ctx-1' });
    expect(await hostSide.call('themeChanged', { theme: 'dark' })).to.equal(undefined);
    expect(themes).to.deep.equal(['dark']);
  });

  it('keeps every call when both ends start at once: the late answer to its own "ready" reuses no call id', async () => {
    const minted = gate();
    const titles: string[] = [];
    const toasts: string[] = [];
    const answeredReady = new Promise<void>((resolve) =>
      app.self.addEventListener('message', ({ data }: MessageEvent) => {
        const packet = typeof data === 'string' ? (JSON.parse(data) as { type?: string; id?: number }) : null;
        if (packet?.type === 'reply' && packet.id === -1) resolve();
      }),
    );
    // Opened in one task, so the two "ready" calls cross.
    const { appSide } = connect({
      getContext: async () => minted.promise.then(() => ({ context: 'ctx-1' })),
      setTitle: ({ title }) => void titles.push(title),
      toast: ({ message }) => void toasts.push(message),
    });
    const context = appSide.call('getContext', {});
    await Promise.all([appSide.ready, answeredReady]);
    // Made while getContext is still being answered, after the answer to the app's own "ready".
    await appSide.call('toast', { message: 'saved' });
    await appSide.call('setTitle', { title: 'Reports' });
    minted.open();
    expect(await context).to.deep.equal({ context: 'ctx-1' });
    expect([toasts, titles]).to.deep.equal([['saved'], ['Reports']]);
  });

  it('posts only to the pinned origin, never to "*"', async () => {
    const [otherHost] = windowPair('https://other.example', APP_ORIGIN);
    const appSide = openBridge({ side: 'app', self: app.self, peer: otherHost.handle, origin: HOST_ORIGIN, handlers: {}, timeoutMs: 100 });
    open.push(appSide);
    const error = await rejection(appSide.call('toast', { message: 'hi' }));
    expect(error.code).to.equal('ERR_BRIDGE_TIMEOUT');
    expect(otherHost.refused).to.be.greaterThan(0);
  });

  it('ignores messages from another origin and from another window of the right origin', async () => {
    const titles: string[] = [];
    connect({ getContext: () => ({ context: 'c' }), setTitle: ({ title }) => void titles.push(title) });
    await settled();
    deliver(host, packet(50, 'setTitle', { title: 'wrong origin' }), 'https://evil.example', app.handle);
    deliver(host, packet(51, 'setTitle', { title: 'wrong window' }), APP_ORIGIN, {});
    deliver(host, packet(52, 'setTitle', { title: 'no window' }), APP_ORIGIN, null);
    deliver(host, packet(53, 'setTitle', { title: 'genuine' }), APP_ORIGIN, app.handle);
    await settled();
    expect(titles).to.deep.equal(['genuine']);
  });

  it('drops oversized, non-string, non-JSON and malformed packets without stalling the channel', async () => {
    const titles: string[] = [];
    connect({ getContext: () => ({ context: 'c' }), setTitle: ({ title }) => void titles.push(title) });
    await settled();
    const big = packet(60, 'setTitle', { title: 'big', padding: 'x'.repeat(BRIDGE_MAX_MESSAGE_SIZE) });
    // A packet inside an array is not a string either (String() of it would be the packet).
    for (const data of [big, [packet(63, 'setTitle', { title: 'in an array' })], { type: 'method' }, 'not json', '{"type":"method","serviceID":"marketplace-app-bridge","id":1.5,"counter":0}', packet(61, 'setTitle', { title: 'other service' }).replace(BRIDGE_SERVICE_ID, 'x')]) {
      deliver(host, data, APP_ORIGIN, app.handle);
    }
    deliver(host, packet(62, 'setTitle', { title: 'after' }), APP_ORIGIN, app.handle);
    await settled();
    expect(titles).to.deep.equal(['after']);
  });

  it('accepts a message of exactly BRIDGE_MAX_MESSAGE_SIZE characters', async () => {
    const titles: string[] = [];
    connect({ getContext: () => ({ context: 'c' }), setTitle: ({ title }) => void titles.push(title) });
    await settled();
    const bare = packet(64, 'setTitle', { title: 'exact', padding: '' });
    const exact = packet(64, 'setTitle', { title: 'exact', padding: 'x'.repeat(BRIDGE_MAX_MESSAGE_SIZE - bare.length) });
    expect(exact.length).to.equal(BRIDGE_MAX_MESSAGE_SIZE);
    deliver(host, exact, APP_ORIGIN, app.handle);
    await until(() => titles.length > 0);
    expect(titles).to.deep.equal(['exact']);
  });

  it('drops a message one character over BRIDGE_MAX_MESSAGE_SIZE, which is 65536 as documented', async () => {
    expect(BRIDGE_MAX_MESSAGE_SIZE).to.equal(65_536);
    const titles: string[] = [];
    connect({ getContext: () => ({ context: 'c' }), setTitle: ({ title }) => void titles.push(title) });
    await settled();
    const bare = packet(65, 'setTitle', { title: 'over', padding: '' });
    const over = packet(65, 'setTitle', { title: 'over', padding: 'x'.repeat(BRIDGE_MAX_MESSAGE_SIZE + 1 - bare.length) });
    expect(over.length).to.equal(BRIDGE_MAX_MESSAGE_SIZE + 1);
    deliver(host, over, APP_ORIGIN, app.handle);
    deliver(host, packet(66, 'setTitle', { title: 'after' }), APP_ORIGIN, app.handle);
    await until(() => titles.length > 0);
    await settled();
    expect(titles).to.deep.equal(['after']);
  });

  it('takes a "ready" of another service for no restart: the calls under way go on', async () => {
    const answer = gate();
    const { appSide } = connect({ getContext: () => ({ context: 'c' }), openUpgrade: async () => answer.promise.then(() => ({ outcome: 'upgraded' as const })) });
    await appSide.ready;
    const chooser = appSide.call('openUpgrade', { plan: 'pro' });
    await settled();
    const foreignReady = JSON.stringify({ type: 'method', serviceID: 'another-service', id: 0, method: 'ready', params: {}, counter: 0 });
    deliver(app, foreignReady, HOST_ORIGIN, host.handle);
    deliver(host, foreignReady, APP_ORIGIN, app.handle);
    await settled();
    answer.open();
    expect(await chooser).to.deep.equal({ outcome: 'upgraded' });
  });

  it('ignores a message without a source window while the peer window is gone', async () => {
    const themes: string[] = [];
    let peer: FakeWindow['handle'] | null = null;
    const appSide = openBridge({ side: 'app', self: app.self, peer: () => peer, channel: host, origin: HOST_ORIGIN, handlers: { themeChanged: ({ theme }) => void themes.push(theme) } });
    open.push(appSide);
    deliver(app, packet(80, 'themeChanged', { theme: 'dark' }), HOST_ORIGIN, null);
    await settled();
    peer = host.handle;
    deliver(app, packet(81, 'themeChanged', { theme: 'light' }), HOST_ORIGIN, host.handle);
    await until(() => themes.length > 0); // messages arrive in order: the first one was handled (or not) before
    expect(themes).to.deep.equal(['light']);
  });

  it('refuses invalid params before the handler runs, as a remote error', async () => {
    let called = false;
    const { hostSide } = connect({ getContext: () => ({ context: 'c' }) }, { themeChanged: () => void (called = true) });
    await hostSide.ready;
    const replies: string[] = [];
    host.self.addEventListener('message', (event) => replies.push((event as MessageEvent<string>).data));
    deliver(app, packet(70, 'themeChanged', { theme: 'purple' }), HOST_ORIGIN, host.handle);
    await until(() => replies.some((r) => r.includes('"id":70')));
    expect(called).to.equal(false);
    const reply = JSON.parse(replies.find((r) => r.includes('"id":70'))!) as { error: { message: string } };
    expect(reply.error.message).to.match(/^Invalid themeChanged params at theme/);
  });

  it('answers a call marked discard too, so a refused one is an error reply, not an unhandled rejection', async () => {
    const { hostSide } = connect({ getContext: () => ({ context: 'c' }) }, { themeChanged: () => undefined });
    await hostSide.ready;
    const replies: string[] = [];
    host.self.addEventListener('message', (event) => replies.push((event as MessageEvent<string>).data));
    const discarded = JSON.stringify({ ...JSON.parse(packet(71, 'themeChanged', { theme: 'purple' })), discard: true });
    deliver(app, discarded, HOST_ORIGIN, host.handle);
    await until(() => replies.some((r) => r.includes('"id":71')));
    expect(replies.some((r) => r.includes('"id":71') && r.includes('Invalid themeChanged params'))).to.equal(true);
  });

  it('checks our own params before sending (ERR_INVALID_INPUT)', async () => {
    const { appSide } = connect({ getContext: () => ({ context: 'c' }) });
    for (const url of ['javascript:alert(1)', 'data:text/html,x', '/relative', 'ftp://x.example/']) {
      expect((await rejection(appSide.call('openExternal', { url }))).code).to.equal('ERR_INVALID_INPUT');
    }
    // A browser reads /\host as //host: protocol-relative too.
    // A dot segment would leave the dashboard's own prefix: /apps/notes/../../settings.
    for (const path of ['//evil.example', '/\\evil.example', '/..', '/../settings', '/a/./b', '/a/..\\b', '/%2e%2E/x', '/.%2e', '/a/..?q', '/a b', '/a\tb', '/a\n']) {
      expect((await rejection(appSide.call('navigate', { path }))).code, path).to.equal('ERR_INVALID_INPUT');
    }
    expect((await rejection(appSide.call('resize', { height: -1 }))).code).to.equal('ERR_INVALID_INPUT');
    expect((await rejection(appSide.call('openExternal', { url: `https://a.example/${'x'.repeat(4096)}` }))).code).to.equal('ERR_INVALID_INPUT');
    expect((await rejection(appSide.call('openUpgrade', { plan: 'p'.repeat(101) }))).code).to.equal('ERR_INVALID_INPUT');
    expect((await rejection(appSide.call('setTitle', { title: 't'.repeat(201) }))).code).to.equal('ERR_INVALID_INPUT');
  });

  it('passes on app routes whose dots are not whole segments, or are in the query or fragment', async () => {
    const paths: string[] = [];
    const { appSide } = connect({ getContext: () => ({ context: 'c' }), navigate: ({ path }) => void paths.push(path) });
    const routes = ['/', '/reports/7', '/v1.2/notes.md', '/.well-known', '/a/...', '/a..b', '/q?next=../x', '/r#/../y'];
    for (const path of routes) await appSide.call('navigate', { path });
    expect(paths).to.deep.equal(routes);
  });

  it('turns handler failures and missing handlers into ERR_BRIDGE_REMOTE without stacks', async () => {
    const { appSide } = connect({
      getContext: () => {
        throw new Error('signing key unavailable');
      },
    });
    const failed = await rejection(appSide.call('getContext', {}));
    expect(failed.code).to.equal('ERR_BRIDGE_REMOTE');
    expect(failed.message).to.equal('getContext failed on the other side: signing key unavailable');
    const missing = await rejection(appSide.call('toast', { message: 'hi' }));
    expect(missing.code).to.equal('ERR_BRIDGE_REMOTE');
    expect(missing.message).to.match(/toast is not supported here/);
  });

  it('a handler that throws something other than an Error (a text, a rejected promise of one) fails the call with that text', async () => {
    const { appSide } = connect({
      getContext: () => ({ context: 'c' }),
      setTitle: () => {
        throw 'titles are locked';
      },
      toast: () => Promise.reject(404),
    });
    const thrown = await rejection(appSide.call('setTitle', { title: 'Reports' }));
    expect([thrown.code, thrown.message]).to.deep.equal(['ERR_BRIDGE_REMOTE', 'setTitle failed on the other side: titles are locked']);
    const rejected = await rejection(appSide.call('toast', { message: 'hi' }));
    expect([rejected.code, rejected.message]).to.deep.equal(['ERR_BRIDGE_REMOTE', 'toast failed on the other side: 404']);
  });

  it('opens before its peer window exists, without a channel to stand for it, and talks once the peer is there', async () => {
    let peer: FakeWindow['handle'] | null = null;
    const appSide = openBridge({ side: 'app', self: app.self, peer: () => peer, origin: HOST_ORIGIN, handlers: {}, timeoutMs: 300 });
    open.push(appSide);
    peer = host.handle;
    const hostSide = openHostEnd(host, app, { getContext: () => ({ context: 'late' }) }, 300);
    open.push(hostSide);
    expect(await appSide.call('getContext', {})).to.deep.equal({ context: 'late' });
  });

  it('sends only what the protocol defines: nothing for void methods, results cut to their schema, invalid ones refused', async () => {
    const sent: unknown[] = [];
    const { appSide } = connect({
      getContext: () => ({ context: 'ctx-1', internal: 'dashboard-secret' }) as unknown as { context: string },
      openUpgrade: () => ({ outcome: 'maybe' }) as unknown as { outcome: 'upgraded' },
      toast: () => 42 as unknown as void, // a toast library's id
      setTitle: () => ({ internal: 'dashboard-secret' }) as unknown as void,
      resize: () => BigInt(1) as unknown as void, // JSON cannot carry it
    });
    app.self.addEventListener('message', (event) => sent.push(JSON.parse(String(event.data))));
    expect(await appSide.call('getContext', {})).to.deep.equal({ context: 'ctx-1' });
    expect(await appSide.call('toast', { message: 'Saved' })).to.equal(undefined);
    expect(await appSide.call('setTitle', { title: 'Reports' })).to.equal(undefined);
    expect(await appSide.call('resize', { height: 10 })).to.equal(undefined);
    const refused = await rejection(appSide.call('openUpgrade', {}));
    expect(refused.code).to.equal('ERR_BRIDGE_REMOTE');
    expect(refused.message).to.match(/^openUpgrade failed on the other side: openUpgrade handler returned an invalid result \(.* at outcome/);
    expect(JSON.stringify(sent)).not.to.match(/dashboard-secret|42/);
  });

  it('refuses a getContext answer with an empty context or a locale that is not text; a long one is the kit\'s to drop', async () => {
    let answer: { context: string; locale?: unknown } = { context: '' };
    const { appSide } = connect({ getContext: () => answer as { context: string } });
    expect((await rejection(appSide.call('getContext', {}))).code).to.equal('ERR_BRIDGE_REMOTE');
    answer = { context: 'ctx', locale: 42 };
    expect((await rejection(appSide.call('getContext', {}))).code).to.equal('ERR_BRIDGE_REMOTE');
    answer = { context: 'ctx', locale: 'de-DE-u-ca-gregory-co-phonebk-nu-latn' };
    expect(await appSide.call('getContext', {})).to.deep.equal(answer);
  });

  /**
   * A dashboard written by hand from docs/host.md, without this kit: it answers the app's handshake,
   * then every call with what `answer` gives (`{result}`, `{error}`, or nothing).
   */
  function handWrittenHost(answer: (method: string) => Record<string, unknown> | null): void {
    host.self.addEventListener('message', (event) => {
      const call = JSON.parse((event as MessageEvent<string>).data) as { type: string; id: number; method: string };
      if (call.type !== 'method') return;
      const reply = call.method === 'ready' ? { result: { protocolVersion: '1' } } : answer(call.method);
      if (reply) deliver(app, JSON.stringify({ type: 'reply', serviceID: BRIDGE_SERVICE_ID, id: call.id, counter: 0, ...reply }), HOST_ORIGIN, host.handle);
    });
  }

  it('takes a getContext answer whose theme the kit does not know ("system") or that says null for theme and locale (the kit leaves them out)', async () => {
    const answers = [
      { context: 'c1', theme: 'system', locale: 'de-DE' },
      { context: 'c2', theme: null, locale: null },
    ];
    handWrittenHost(() => ({ result: answers[0] ? answers.shift() : null }));
    const appSide = openAppEnd(app, host, {}, 300);
    open.push(appSide);
    expect(await appSide.call('getContext', {})).to.deep.equal({ context: 'c1', theme: 'system', locale: 'de-DE' });
    expect(await appSide.call('getContext', {})).to.deep.equal({ context: 'c2', theme: null, locale: null });
  });

  it('fails a call at once on an error reply of another shape than {code, message}, and reads "error": null as none', async () => {
    const replies: Array<Record<string, unknown>> = [
      { error: { message: 'The plan chooser is unavailable' } },
      { error: 'oops' },
      { error: { code: 1, message: 42 } },
      { result: null, error: null },
    ];
    handWrittenHost(() => replies.shift() ?? null);
    const appSide = openAppEnd(app, host, {}, HANG_MS); // a dropped reply would show as a timeout
    open.push(appSide);
    const unshaped = await rejection(appSide.call('openUpgrade', { plan: 'pro' }));
    expect([unshaped.code, unshaped.message]).to.deep.equal(['ERR_BRIDGE_REMOTE', 'openUpgrade failed on the other side: The plan chooser is unavailable']);
    for (const reply of ['a string', 'a number as message']) {
      const failed = await rejection(appSide.call('openUpgrade', { plan: 'pro' }));
      expect([failed.code, failed.message], reply).to.deep.equal(['ERR_BRIDGE_REMOTE', 'openUpgrade failed on the other side: an error reply without a message']);
    }
    expect(await appSide.call('toast', { message: 'Saved' })).to.equal(undefined);
  });

  it('fails the calls a peer left unanswered when it starts over (a new connection on the iframe), and goes on with the new one', async () => {
    const first = openHostEnd(host, app, { getContext: () => ({ context: 'old' }), openUpgrade: () => new Promise(() => undefined) }, 300);
    const appSide = openAppEnd(app, host, {}, 300);
    open.push(first, appSide);
    await appSide.ready;
    const chooser = appSide.call('openUpgrade', { plan: 'pro' }, { timeoutMs: 60_000 });
    await settled();
    // The dashboard re-mounts its embed: a new end for the same iframe closes the old one, which never answers.
    const second = openHostEnd(host, app, { getContext: () => ({ context: 'new' }) }, 300);
    open.push(second);
    const abandoned = await rejection(chooser);
    expect([abandoned.code, abandoned.message]).to.deep.equal(['ERR_BRIDGE_CLOSED', 'The other side of the host bridge started over before answering (a reload, or a new connection)']);
    expect(await appSide.call('getContext', {})).to.deep.equal({ context: 'new' });
  });

  it('tells onPeerRestart when the peer starts over after the handshake, not during it; calls then go to the new end', async () => {
    let restarts = 0;
    const first = openHostEnd(host, app, { getContext: () => ({ context: 'old' }) }, 300);
    const appSide = openAppEnd(app, host, {}, 300, () => restarts++);
    open.push(first, appSide);
    await appSide.ready;
    expect(await appSide.call('getContext', {})).to.deep.equal({ context: 'old' });
    expect(restarts).to.equal(0, 'the first handshake is no restart');
    const second = openHostEnd(host, app, { getContext: () => ({ context: 'new' }) }, 300);
    open.push(second);
    await until(() => restarts === 1);
    expect(await appSide.call('getContext', {})).to.deep.equal({ context: 'new' });
    expect(restarts).to.equal(1);
  });

  it('onPeerRestart runs once the new handshake is taken: a call made inside it reaches the new end', async () => {
    const got: number[] = [];
    const first = openHostEnd(host, app, { getContext: () => ({ context: 'old' }), resize: ({ height }) => void got.push(height) }, 300);
    let made: Promise<unknown> | undefined;
    const appSide: Bridge<'app'> = openAppEnd(app, host, {}, 1_000, () => (made = appSide.call('resize', { height: 7 })));
    open.push(first, appSide);
    await appSide.ready;
    const second = openHostEnd(host, app, { getContext: () => ({ context: 'new' }), resize: ({ height }) => void got.push(height) }, 300);
    open.push(second);
    await until(() => made !== undefined);
    expect(await made).to.equal(undefined);
    expect(got).to.deep.equal([7]);
  });

  it('refuses an invalid result from a peer that is not this kit with ERR_BRIDGE_INVALID_MESSAGE', async () => {
    const { appSide } = connect({ toast: () => undefined, getContext: () => ({ context: 'ctx' }) });
    // A peer whose protocol differs from ours: a result for a method without one, none for getContext.
    const post = app.handle.postMessage.bind(app.handle);
    app.handle.postMessage = (data, origin) => {
      const message = JSON.parse(data) as { type: string; id: number; result?: unknown };
      if (message.type === 'reply' && message.id !== -1) message.result = message.result === null ? { context: 'x' } : null;
      post(JSON.stringify(message), origin);
    };
    expect((await rejection(appSide.call('toast', { message: 'hi' }))).code).to.equal('ERR_BRIDGE_INVALID_MESSAGE');
    expect((await rejection(appSide.call('getContext', {}))).code).to.equal('ERR_BRIDGE_INVALID_MESSAGE');
  });

  it('reads an error reply of any length as the peer\'s error (a stack from a peer that is not this kit)', async () => {
    const { appSide } = connect(
      {
        toast: () => {
          throw new Error('boom');
        },
      },
      {},
      2_000,
    );
    // The dashboard end sends its error with a long stack, as @mixer/postmessage-rpc does by default.
    const post = app.handle.postMessage.bind(app.handle);
    app.handle.postMessage = (data, origin) => {
      const message = JSON.parse(data) as { error?: { message: string } };
      if (message.error) message.error.message = `Error: boom\n${'    at frame (https://dashboard.example/app.js:1:1)\n'.repeat(100)}`;
      post(JSON.stringify(message), origin);
    };
    const failed = await rejection(appSide.call('toast', { message: 'hi' }));
    expect(failed.code).to.equal('ERR_BRIDGE_REMOTE');
    expect(failed.message.length).to.be.below(600);
  });

  it('times out a call the peer never answers, and a peer that never appears', async () => {
    const { appSide } = connect({ getContext: () => new Promise(() => undefined) }, {}, 150);
    const started = performance.now();
    const error = await rejection(appSide.call('getContext', {}));
    expect([error.code, error.message]).to.deep.equal(['ERR_BRIDGE_TIMEOUT', 'getContext got no answer within 150 ms']);
    expect(performance.now() - started).to.be.at.least(140);

    const [, lonely] = windowPair();
    const alone = openAppEnd(lonely, host, {}, 100);
    open.push(alone);
    expect((await rejection(alone.call('resize', { height: 10 }))).code).to.equal('ERR_BRIDGE_TIMEOUT');
  });

  it('never sends a call that timed out before the peer connected', async () => {
    const appSide = openAppEnd(app, host, {}, 100);
    open.push(appSide);
    expect((await rejection(appSide.call('toast', { message: 'too late' }))).code).to.equal('ERR_BRIDGE_TIMEOUT');
    const seen: string[] = [];
    const hostSide = openHostEnd(host, app, {
      getContext: () => ({ context: 'c' }),
      toast: ({ message }) => void seen.push(message),
      setTitle: ({ title }) => void seen.push(title),
    });
    open.push(hostSide);
    // A call made after the handshake arrives after anything the handshake released. Its answer is
    // waited for (the handshake and the call take several tasks), not raced with the 100 ms above.
    await appSide.call('setTitle', { title: 'after the handshake' }, { timeoutMs: HANG_MS });
    expect(seen).to.deep.equal(['after the handshake']);
  });

  it('lets one call wait longer than the bridge timeout (the plan chooser waits on a person)', async () => {
    const choosers: Array<(answer: { outcome: 'upgraded' }) => void> = [];
    const { appSide } = connect({ openUpgrade: () => new Promise((resolve) => choosers.push(resolve)) }, {}, 100);
    const patient = appSide.call('openUpgrade', { plan: 'pro' }, { timeoutMs: HANG_MS });
    // A call on the bridge's own 100 ms times out meanwhile: the patient one has waited longer than that.
    expect((await rejection(appSide.call('openUpgrade', { plan: 'pro' }))).code).to.equal('ERR_BRIDGE_TIMEOUT');
    choosers[0]!({ outcome: 'upgraded' });
    expect(await patient).to.deep.equal({ outcome: 'upgraded' });
  });

  it('a dashboard end opened and closed in one task sends nothing, so the app\'s call to the end that replaced it is answered (React StrictMode)', async () => {
    const appSide = openAppEnd(app, host, {}, 1_000);
    open.push(appSide);
    await settled(); // the app's own handshake went nowhere: no dashboard end was listening
    const context = appSide.call('getContext', {});
    // connect, destroy, connect, as StrictMode runs an effect twice: only the second end's ready may go out.
    openHostEnd(host, app, { getContext: () => ({ context: 'first' }) }).destroy();
    const second = openHostEnd(host, app, { getContext: () => ({ context: 'second' }) });
    open.push(second);
    expect(await context).to.deep.equal({ context: 'second' });
  });

  it('a call the peer left unanswered fails at its new handshake, and neither takes nor drops the newer call that gets its id', async () => {
    // The host end is scripted by hand: every handshake restarts the app end's id counter. The
    // calls' timeouts run on a clock the test moves.
    const clock = fakeEnvironment(`${APP_ORIGIN}/`);
    const appSide = openBridge({ side: 'app', self: app.self, peer: host.handle, origin: host.origin, handlers: {}, timeoutMs: 100, timers: clock });
    open.push(appSide);
    const sent: Array<{ type: string; id: number; method?: string }> = [];
    host.self.addEventListener('message', (event) => sent.push(JSON.parse((event as MessageEvent<string>).data)));
    const handshake = async () => {
      const replies = sent.filter((p) => p.type === 'reply' && p.id === -1).length;
      deliver(app, packet(-1, 'ready', { protocolVersion: '1' }), HOST_ORIGIN, host.handle);
      await until(() => sent.filter((p) => p.type === 'reply' && p.id === -1).length > replies);
    };
    const contextCall = async (timeoutMs: number) => {
      const before = sent.length;
      const call = appSide.call('getContext', {}, { timeoutMs });
      await until(() => sent.slice(before).some((p) => p.method === 'getContext'));
      return { call, id: sent.slice(before).find((p) => p.method === 'getContext')!.id };
    };

    await handshake();
    const first = await contextCall(1000);
    let firstSettled = false;
    const firstError = rejection(first.call).finally(() => (firstSettled = true));
    await handshake(); // the dashboard reconnected: the end that had the first call is gone
    expect([firstSettled, (await firstError).code]).to.deep.equal([true, 'ERR_BRIDGE_CLOSED']);
    const second = await contextCall(5000);
    expect(second.id).to.equal(first.id, 'the library reused the id');
    clock.advance(1100); // past the first call's own timeout, which must not drop the second's entry
    deliver(app, JSON.stringify({ type: 'reply', serviceID: BRIDGE_SERVICE_ID, id: second.id, result: { context: 'second' }, counter: 0 }), HOST_ORIGIN, host.handle);
    expect(await second.call).to.deep.equal({ context: 'second' });
  });

  it('a call received before the peer\'s latest handshake is not answered, not even with its error', async () => {
    const held = gate();
    const appSide = openAppEnd(app, host, {
      themeChanged: async () => {
        await held.promise;
        throw new Error('too late');
      },
    });
    open.push(appSide);
    const sent: Array<{ type: string; id: number }> = [];
    host.self.addEventListener('message', (event) => sent.push(JSON.parse((event as MessageEvent<string>).data)));
    const handshake = async () => {
      const replies = sent.filter((p) => p.type === 'reply' && p.id === -1).length;
      deliver(app, packet(-1, 'ready', { protocolVersion: '1' }), HOST_ORIGIN, host.handle);
      await until(() => sent.filter((p) => p.type === 'reply' && p.id === -1).length > replies);
    };
    await handshake();
    deliver(app, packet(7, 'themeChanged', { theme: 'dark' }), HOST_ORIGIN, host.handle);
    await settled();
    await handshake(); // the dashboard reconnected: id 7 may be a newer call's now
    held.open();
    // A call after the handshake is answered (with its error); by then the old one's would have gone.
    deliver(app, packet(8, 'themeChanged', { theme: 'light' }), HOST_ORIGIN, host.handle);
    await until(() => sent.some((p) => p.type === 'reply' && p.id === 8));
    expect(sent.filter((p) => p.type === 'reply' && p.id === 7)).to.deep.equal([]);
  });

  it('fails pending and later calls with ERR_BRIDGE_CLOSED after destroy', async () => {
    const { appSide } = connect({ getContext: () => new Promise(() => undefined) });
    const pending = appSide.call('getContext', {});
    await settled();
    appSide.destroy();
    expect((await rejection(pending)).code).to.equal('ERR_BRIDGE_CLOSED');
    expect((await rejection(appSide.call('toast', { message: 'x' }))).code).to.equal('ERR_BRIDGE_CLOSED');
  });

  it('a second bridge between the same two windows closes the first, so neither takes the other\'s replies (two kits in one frame)', async () => {
    const choices: string[] = [];
    // The person dismisses the first kit's chooser late, while the fourth call's chooser is open,
    // and upgrades in every other one.
    const held: Record<string, ReturnType<typeof gate>> = { first: gate(), fourth: gate() };
    const hostSide = openHostEnd(host, app, {
      openUpgrade: async ({ plan }) => {
        choices.push(plan!);
        await held[plan!]?.promise;
        return { outcome: plan === 'first' ? 'dismissed' : 'upgraded' };
      },
    });
    const first = openAppEnd(app, host);
    open.push(hostSide, first);
    await first.ready;
    const firstCall = first.call('openUpgrade', { plan: 'first' });
    await until(() => choices.length === 1);
    const second = openAppEnd(app, host);
    open.push(second);
    expect((await rejection(firstCall)).code).to.equal('ERR_BRIDGE_CLOSED');
    expect(await second.call('openUpgrade', { plan: 'second' })).to.deep.equal({ outcome: 'upgraded' });
    expect(choices).to.deep.equal(['first', 'second']);
    expect((await rejection(first.call('toast', { message: 'x' }))).code).to.equal('ERR_BRIDGE_CLOSED');

    // The first one's destroy() leaves the newer one open; another window pair is not touched.
    first.destroy();
    const [otherHost, otherApp] = windowPair();
    const other = connectPair(otherHost, otherApp);
    expect(await second.call('openUpgrade', { plan: 'third' })).to.deep.equal({ outcome: 'upgraded' });
    expect(await other.call('getContext', {})).to.deep.equal({ context: 'other' });

    // The first chooser is still open. A third kit's first call has the same id as the first
    // kit's (ids restart at every handshake): the late "dismissed" must not answer it.
    const third = openAppEnd(app, host);
    open.push(third);
    const fourth = third.call('openUpgrade', { plan: 'fourth' });
    await until(() => choices.includes('fourth'));
    held.first!.open();
    await settled(); // the late answer has arrived
    held.fourth!.open();
    expect(await fourth).to.deep.equal({ outcome: 'upgraded' });
    expect(choices).to.deep.equal(['first', 'second', 'third', 'fourth']);
  });

  it('destroying a bridge that a newer one replaced leaves the newer one registered: a third still closes it', async () => {
    const hostSide = openHostEnd(host, app, { getContext: () => ({ context: 'c' }) });
    const first = openAppEnd(app, host);
    const second = openAppEnd(app, host);
    first.destroy();
    const third = openAppEnd(app, host);
    open.push(hostSide, second, third);
    expect((await rejection(second.call('getContext', {}))).code).to.equal('ERR_BRIDGE_CLOSED');
    expect(await third.call('getContext', {})).to.deep.equal({ context: 'c' });
  });

  function connectPair(hostWindow: FakeWindow, appWindow: FakeWindow) {
    const hostSide = openHostEnd(hostWindow, appWindow, { getContext: () => ({ context: 'other' }) });
    const appSide = openAppEnd(appWindow, hostWindow);
    open.push(hostSide, appSide);
    return appSide;
  }

  it('accepts only exact http(s) origins', () => {
    expect(assertOrigin('https://a.example', 'x')).to.equal('https://a.example');
    expect(assertOrigin('http://127.0.0.1:8080', 'x')).to.equal('http://127.0.0.1:8080');
    // The last ones start like an origin but are no URL at all: refused the same way, not with the parser's TypeError.
    for (const bad of ['*', 'https://a.example/', 'https://a.example/path', 'a.example', 'javascript:alert(1)', 'file:///x', 'HTTPS://A.EXAMPLE', 'https://', 'http://[', 'https://a b.example']) {
      expect(() => assertOrigin(bad, 'x'), bad).to.throw(MarketplaceKitError).with.property('code', 'ERR_CONFIG');
    }
  });
});

describe('the fake windows these tests post between', () => {
  it('deliver in the order posted, also a message posted from a timer nested deep enough to be clamped to 4 ms', async () => {
    // postMessage keeps the order; a timer per message would not (a handshake's chain of
    // deliveries is such a nested timer), and the bridge counts on that order.
    const [host, app] = windowPair();
    const got: string[] = [];
    app.self.addEventListener('message', (event) => void got.push((event as MessageEvent).data as string));
    await new Promise<void>((resolve) => {
      let depth = 0;
      const nest = () => {
        if (++depth < 7) return void setTimeout(nest);
        deliver(app, 'first, from a nested timer', HOST_ORIGIN, host.handle);
        // Then from a task that is no timer, so its own timer is not clamped.
        const channel = new MessageChannel();
        channel.port1.onmessage = () => {
          channel.port1.close();
          deliver(app, 'second, from a message task', HOST_ORIGIN, host.handle);
          resolve();
        };
        channel.port2.postMessage(null);
      };
      setTimeout(nest);
    });
    await until(() => got.length === 2);
    expect(got).to.deep.equal(['first, from a nested timer', 'second, from a message task']);
  });
});
