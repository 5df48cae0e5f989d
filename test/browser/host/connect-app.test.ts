import { expect } from '@open-wc/testing';
import { connectApp, type HostConnection } from '../../../src/host/index.js';
import { BRIDGE_SERVICE_ID } from '../../../src/shared/bridge.js';
import { MarketplaceKitError } from '../../../src/shared/errors.js';
import { timerDelays, until } from '../../support/runtime-fakes.js';

const packet = (id: number, method: string, params: unknown) =>
  JSON.stringify({ type: 'method', serviceID: BRIDGE_SERVICE_ID, id, method, params, counter: 0 });

/** A same-origin iframe whose own script (its realm, so `event.source` is the frame) posts `messages`. */
function frameThatPosts(messages: string[]): HTMLIFrameElement {
  const iframe = document.createElement('iframe');
  const posts = messages.map((m) => `parent.postMessage(${JSON.stringify(m)}, ${JSON.stringify(location.origin)});`).join('\n');
  iframe.srcdoc = `<script>
    addEventListener('message', (event) => { if (event.source === parent) (window.received ||= []).push(event.data); });
    ${posts}
  </script>`;
  return iframe;
}

type Reply = { id: number; error?: { message: string } };
/** The replies the iframe's script received from the host, parsed. */
const repliesIn = (iframe: HTMLIFrameElement): Reply[] =>
  ((iframe.contentWindow as (Window & { received?: string[] }) | null)?.received ?? []).map((r) => JSON.parse(r) as Reply);

describe('connectApp', () => {
  const cleanup: Array<() => void> = [];
  afterEach(() => {
    for (const undo of cleanup.splice(0)) undo();
  });

  function connect(iframe: HTMLIFrameElement, handlers: Parameters<typeof connectApp>[1]['handlers']): HostConnection {
    const connection = connectApp(iframe, { appOrigin: location.origin, handlers, timeoutMs: 200 });
    cleanup.push(() => {
      connection.destroy();
      iframe.remove();
    });
    return connection;
  }

  it('refuses a missing getContext handler, any origin that is not exact and an unusable timeoutMs', () => {
    const iframe = document.createElement('iframe');
    document.body.append(iframe);
    cleanup.push(() => iframe.remove());
    const handlers = { getContext: () => ({ context: 'c' }) };
    expect(() => connectApp(iframe, { appOrigin: location.origin, handlers: {} as never })).to.throw(MarketplaceKitError).with.property('code', 'ERR_CONFIG');
    for (const appOrigin of ['*', `${location.origin}/`, `${location.origin}/app`, '']) {
      expect(() => connectApp(iframe, { appOrigin, handlers }), appOrigin).to.throw(MarketplaceKitError, /appOrigin/).with.property('code', 'ERR_CONFIG');
    }
    // A timeout that would fail every call at once (or never) is a configuration mistake.
    for (const timeoutMs of [Number.NaN, Infinity, -1, 0, 2 ** 31]) {
      expect(() => connectApp(iframe, { appOrigin: location.origin, handlers, timeoutMs }), String(timeoutMs))
        .to.throw(MarketplaceKitError, /connectApp's timeoutMs/)
        .with.property('code', 'ERR_CONFIG');
    }
  });

  it('gives each call 5 s to be answered unless timeoutMs says otherwise', async () => {
    const iframe = document.createElement('iframe');
    document.body.append(iframe);
    const connection = connectApp(iframe, { appOrigin: location.origin, handlers: { getContext: () => ({ context: 'c' }) } });
    cleanup.push(() => iframe.remove());
    let call!: Promise<unknown>;
    const delays = await timerDelays(async () => {
      call = connection.themeChanged('dark').catch((error: MarketplaceKitError) => error.code);
    });
    connection.destroy();
    expect(await call).to.equal('ERR_BRIDGE_CLOSED', 'failed by destroy, not after waiting');
    expect(delays).to.deep.equal([5_000]);
  });

  it('refuses an iframe whose document has no window', () => {
    const detached = document.implementation.createHTMLDocument('no window');
    const iframe = detached.createElement('iframe');
    expect(() => connectApp(iframe, { appOrigin: location.origin, handlers: { getContext: () => ({ context: 'c' }) } }))
      .to.throw(MarketplaceKitError, /in a document/)
      .with.property('code', 'ERR_CONFIG');
  });

  it('calls handlers for messages from the iframe only, after validating their params', async () => {
    const titles: string[] = [];
    const paths: string[] = [];
    const iframe = frameThatPosts([
      packet(-1, 'ready', { protocolVersion: '1' }),
      packet(1, 'setTitle', { title: 'Reports' }),
      packet(2, 'navigate', { path: 'https://evil.example/' }),
      packet(3, 'navigate', { path: '/reports/7' }),
    ]);
    const connection = connect(iframe, {
      getContext: () => ({ context: 'c' }),
      setTitle: ({ title }) => void titles.push(title),
      navigate: ({ path }) => void paths.push(path),
    });
    // The same packet from this window (right origin, wrong window) is ignored.
    window.postMessage(packet(4, 'setTitle', { title: 'from the host window itself' }), location.origin);
    document.body.append(iframe);
    await connection.ready;
    // Barrier: the reply to the iframe's last packet means every packet before it was handled, and
    // the host window's own packet was queued before the iframe even existed.
    await until(() => repliesIn(iframe).some((r) => r.id === 3));
    expect(titles).to.deep.equal(['Reports']);
    expect(paths).to.deep.equal(['/reports/7']);
    const replies = repliesIn(iframe);
    expect(replies.find((r) => r.id === 2)?.error?.message).to.match(/^Invalid navigate params at path/);
    expect(replies.find((r) => r.id === 1)?.error).to.equal(undefined);
  });

  it('sends nothing to the frame\'s empty document before the app\'s page arrives', async () => {
    const titles: string[] = [];
    const iframe = document.createElement('iframe');
    document.body.append(iframe);
    const sent: unknown[] = [];
    (iframe.contentWindow as Window).postMessage = (message: unknown) => void sent.push(message);
    const connection = connect(iframe, { getContext: () => ({ context: 'c' }), setTitle: ({ title }) => void titles.push(title) });
    // The app's page then arrives and the handshake happens as usual.
    iframe.srcdoc = frameThatPosts([packet(-1, 'ready', { protocolVersion: '1' }), packet(1, 'setTitle', { title: 'Reports' })]).srcdoc;
    await connection.ready;
    await until(() => repliesIn(iframe).some((r) => r.id === 1));
    expect(titles).to.deep.equal(['Reports']);
    // `sent` is the empty document's: whatever went there went before the app's page arrived.
    expect(sent).to.deep.equal([]);
  });

  it('a second connectApp on the same iframe closes the first, also when both come before the app\'s page', async () => {
    const answered: string[] = [];
    const iframe = document.createElement('iframe');
    document.body.append(iframe); // its empty document: no app window yet
    const first = connect(iframe, { getContext: () => ({ context: 'c' }), setTitle: () => void answered.push('first') });
    const second = connect(iframe, { getContext: () => ({ context: 'c' }), setTitle: () => void answered.push('second') });
    expect(await first.ready.catch((error: MarketplaceKitError) => error.code)).to.equal('ERR_BRIDGE_CLOSED');
    iframe.srcdoc = frameThatPosts([packet(-1, 'ready', { protocolVersion: '1' }), packet(1, 'setTitle', { title: 'Reports' }), packet(2, 'setTitle', { title: 'Reports' })]).srcdoc;
    await second.ready;
    // Call 2 is handled after call 1: once it is answered, a second answer to call 1 would be there.
    await until(() => repliesIn(iframe).some((r) => r.id === 2));
    expect(answered).to.deep.equal(['second', 'second']);
    expect(repliesIn(iframe).filter((r) => r.id === 1)).to.have.length(1, 'one reply to the call');
  });

  it('times out calls to an app that never loads the kit, and fails them once destroyed', async () => {
    const iframe = document.createElement('iframe');
    const connection = connect(iframe, { getContext: () => ({ context: 'c' }) });
    document.body.append(iframe);
    const timedOut = await connection.themeChanged('dark').catch((error: MarketplaceKitError) => error.code);
    expect(timedOut).to.equal('ERR_BRIDGE_TIMEOUT');
    const invalid = await connection.themeChanged('neon' as 'dark').catch((error: MarketplaceKitError) => error.code);
    expect(invalid).to.equal('ERR_INVALID_INPUT');
    connection.destroy();
    const closed = await connection.entitlementsChanged().catch((error: MarketplaceKitError) => error.code);
    expect(closed).to.equal('ERR_BRIDGE_CLOSED');
    const closedInvalid = await connection.themeChanged('neon' as 'dark').catch((error: MarketplaceKitError) => error.code);
    expect(closedInvalid).to.equal('ERR_BRIDGE_CLOSED', 'closed is what destroy() promises, whatever the params');
    const ready = await connection.ready.catch((error: MarketplaceKitError) => error.code);
    expect(ready).to.equal('ERR_BRIDGE_CLOSED');
  });

  it("refuses an iframe of another window's document, whose app would drop every message it posted", () => {
    // The app takes the window whose code posted a message for its sender: this window, not the
    // container frame that is the app's parent.
    const container = document.createElement('iframe');
    document.body.append(container);
    cleanup.push(() => container.remove());
    const iframe = container.contentDocument!.createElement('iframe');
    expect(() => connectApp(iframe, { appOrigin: location.origin, handlers: { getContext: () => ({ context: 'c' }) } }))
      .to.throw(MarketplaceKitError, /iframe of this window's document/)
      .with.property('code', 'ERR_CONFIG');
  });

  it('calls handlers as methods of the object given, so a class instance serves', async () => {
    class DashboardHandlers {
      readonly titles: string[] = [];
      constructor(private readonly token: string) {}
      getContext() {
        return { context: this.token };
      }
      setTitle({ title }: { title: string }) {
        this.titles.push(title);
      }
    }
    const handlers = new DashboardHandlers('ctx-of-the-instance');
    const iframe = frameThatPosts([packet(-1, 'ready', { protocolVersion: '1' }), packet(1, 'getContext', {}), packet(2, 'setTitle', { title: 'Reports' })]);
    const connection = connect(iframe, handlers);
    document.body.append(iframe);
    await connection.ready;
    await until(() => repliesIn(iframe).some((r) => r.id === 2));
    const replies = repliesIn(iframe) as Array<Reply & { result?: unknown }>;
    expect(replies.filter((r) => r.id > 0).map(({ id, result, error }) => ({ id, result, error }))).to.deep.equal([
      { id: 1, result: { context: 'ctx-of-the-instance' }, error: undefined },
      { id: 2, result: null, error: undefined },
    ]);
    expect(handlers.titles).to.deep.equal(['Reports']);
  });

  it('answers a result that throws when read (a getter) with its message only, never the stack', async () => {
    class ChooserResult {
      get outcome(): 'upgraded' | 'dismissed' {
        throw new Error('the chooser state is gone');
      }
    }
    const iframe = frameThatPosts([packet(-1, 'ready', { protocolVersion: '1' }), packet(1, 'openUpgrade', { plan: 'pro' })]);
    const connection = connect(iframe, { getContext: () => ({ context: 'c' }), openUpgrade: async () => new ChooserResult() });
    document.body.append(iframe);
    await connection.ready;
    await until(() => repliesIn(iframe).some((r) => r.id === 1));
    expect(repliesIn(iframe).find((r) => r.id === 1)?.error?.message).to.equal('the chooser state is gone');
  });

  it('talks to an app on another origin, whose window it cannot look into: handshake, its calls, and localeChanged and themeChanged to it', async () => {
    // The same server under the other name of this machine: another origin, as an app's always is.
    const here = new URL(location.href);
    here.hostname = here.hostname === '127.0.0.1' ? 'localhost' : '127.0.0.1';
    const appOrigin = here.origin;
    const page = `${appOrigin}/test/browser/host/cross-origin-app.html`;
    await fetch(page, { mode: 'no-cors' }).catch(() => {
      throw new Error(`This test needs the test server under ${appOrigin} as well`);
    });
    const received: Array<{ type: string; id: number; method?: string; params?: unknown }> = [];
    const listen = (event: MessageEvent) => {
      const data = event.data as { received?: string } | null;
      if (event.origin === appOrigin && typeof data?.received === 'string') received.push(JSON.parse(data.received) as (typeof received)[number]);
    };
    addEventListener('message', listen);
    cleanup.push(() => removeEventListener('message', listen));
    const titles: string[] = [];
    const iframe = document.createElement('iframe');
    const connection = connectApp(iframe, {
      appOrigin,
      handlers: { getContext: () => ({ context: 'c' }), setTitle: ({ title }) => void titles.push(title) },
      timeoutMs: 2000,
    });
    cleanup.push(() => {
      connection.destroy();
      iframe.remove();
    });
    const posts = [packet(-1, 'ready', { protocolVersion: '1' }), packet(1, 'setTitle', { title: 'Reports' })];
    iframe.src = `${page}#${encodeURIComponent(JSON.stringify({ host: location.origin, posts }))}`;
    document.body.append(iframe);
    await connection.ready;
    await until(() => received.some((p) => p.type === 'reply' && p.id === 1));
    expect(titles).to.deep.equal(['Reports']);
    await connection.localeChanged('de-DE');
    await connection.themeChanged('dark');
    const calls = received.filter((p) => p.type === 'method' && p.method !== 'ready').map(({ method, params }) => ({ method, params }));
    expect(calls).to.deep.equal([
      { method: 'localeChanged', params: { locale: 'de-DE' } },
      { method: 'themeChanged', params: { theme: 'dark' } },
    ]);
  });
});
