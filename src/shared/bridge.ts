/**
 * The host bridge protocol (docs/decisions.md#host-bridge), shared by the app's runtime (`src/runtime`) and the
 * dashboard side (`src/host`): constants, one zod/mini schema per method's params and result, a
 * message receiver that checks origin, `event.source`, size and shape, and calls with a timeout.
 *
 * Transport is `@mixer/postmessage-rpc`. That library accepts any origin by default and never
 * looks at `event.source`, so every endpoint here supplies its own `receiver` (the filter) and
 * always passes the pinned origin.
 */
import { RPC } from '@mixer/postmessage-rpc';
// Named imports (not `* as z`): the script tag's bridge file takes exactly these from the script (vite.config.ts).
import { nullable, number, object, optional, refine, string } from 'zod/mini';
import type * as z from 'zod/mini';
import { DEV } from './dev.js';
import { MarketplaceKitError, isKitError } from './errors.js';
import { assertOrigin } from './origin.js';
import { THEMES, describeFailure, length, matches } from './schemas.js';

/** The `serviceId` both ends use, so other postMessage traffic on the page is never confused with ours. */
export const BRIDGE_SERVICE_ID = 'marketplace-app-bridge';
/** The bridge protocol's version, exchanged in the handshake; both ends must speak the same. */
export const BRIDGE_PROTOCOL_VERSION = '1';
/** Messages larger than this (characters of the JSON text) are dropped unread. */
export const BRIDGE_MAX_MESSAGE_SIZE = 64 * 1024;
/** How long a call over the bridge waits for its answer by default, in milliseconds. */
export const BRIDGE_DEFAULT_TIMEOUT_MS = 5000;

/**
 * One of `values`: what `z.enum(values)` accepts, with its type, as a refinement. The browser's
 * bundle then needs no enum schema: the bridge's chunk shares zod's code with what loads before
 * the kit is ready, and would bring it there.
 */
/* @__NO_SIDE_EFFECTS__ */
export function oneOf<const T extends readonly [string, ...string[]]>(values: T): z.ZodMiniType<T[number], T[number]> {
  const message = DEV ? `expected ${values.map((value) => `"${value}"`).join(' or ')}` : '';
  return string().check(refine((value) => (values as readonly string[]).includes(value), message)) as unknown as z.ZodMiniType<T[number], T[number]>;
}

const Empty = /* @__PURE__ */ object({});
/** A string of `min` to `max` characters. */
/* @__NO_SIDE_EFFECTS__ */
const text = (min: number, max: number) => string().check(length(min, max));

/** An absolute http(s) URL; `javascript:`, `data:` and the like are refused. */
const ExternalUrl = /* @__PURE__ */ text(0, 4096).check(
  refine((value) => {
    try {
      const { protocol } = new URL(value);
      return protocol === 'https:' || protocol === 'http:';
    } catch {
      return false;
    }
  }, DEV ? 'expected an absolute http(s) URL' : ''),
);

/**
 * An app route mirrored into the dashboard URL: starts with one `/` (never `//host`), and has
 * no `.` or `..` segment (a dashboard that appends it to its own path would leave it).
 */
const AppPath = /* @__PURE__ */ text(0, 2048).check(
  matches(/^\/(?![/\\])[^\s]*$/, DEV ? 'expected a path starting with one /' : ''),
  refine((value) => !/[/\\](\.|%2e){1,2}([/\\]|$)/i.test(value.replace(/[?#].*/s, '')), DEV ? 'expected no . or .. segment' : ''),
);

/** Who calls a method: the app calls the dashboard (`app-to-host`), or the dashboard calls the app. */
export type BridgeDirection = 'app-to-host' | 'host-to-app';

/** One method of the protocol: who calls it, the schema of its params and of its result (null: none). */
export interface BridgeMethod {
  readonly direction: BridgeDirection;
  readonly params: z.ZodMiniType;
  readonly result: z.ZodMiniType | null;
}

/**
 * The bridge protocol, one entry per method (docs/host.md#the-bridge-protocol). The app's end
 * (`src/runtime/host-link.ts`), the dashboard's (`src/host`) and the simulator's dashboard take
 * their types from it, and `openBridge` its checks: adding a method means an entry here, its
 * handler on the side that answers it, and its test.
 */
export const BRIDGE_PROTOCOL = {
  // `theme` and `locale` go beyond the bare context: a page loaded again inside the frame has no
  // `mp_theme` / `mp_locale`, so the dashboard says them here. Any text or null is read: the kit
  // leaves out one it cannot use (`"system"`, a locale that is no language tag), not the context
  // with it, so that a dashboard's third theme does not break every reload in the frame. The
  // message size cap bounds the text.
  getContext: {
    direction: 'app-to-host',
    params: Empty,
    result: /* @__PURE__ */ object({ context: text(1, 16384), theme: optional(nullable(string())), locale: optional(nullable(string())) }),
  },
  resize: {
    direction: 'app-to-host',
    params: /* @__PURE__ */ object({ height: number().check(refine((value) => value >= 0 && value <= 1_000_000, DEV ? 'expected 0 to 1000000' : '')) }),
    result: null,
  },
  navigate: { direction: 'app-to-host', params: /* @__PURE__ */ object({ path: AppPath }), result: null },
  openExternal: { direction: 'app-to-host', params: /* @__PURE__ */ object({ url: ExternalUrl }), result: null },
  openUpgrade: {
    direction: 'app-to-host',
    params: /* @__PURE__ */ object({ plan: optional(text(0, 100)), feature: optional(text(0, 100)) }),
    result: /* @__PURE__ */ object({ outcome: oneOf(['upgraded', 'dismissed']) }),
  },
  toast: {
    direction: 'app-to-host',
    params: /* @__PURE__ */ object({ message: text(1, 1000), tone: optional(oneOf(['info', 'success', 'warning', 'error'])) }),
    result: null,
  },
  setTitle: { direction: 'app-to-host', params: /* @__PURE__ */ object({ title: text(0, 200) }), result: null },
  themeChanged: { direction: 'host-to-app', params: /* @__PURE__ */ object({ theme: oneOf(THEMES) }), result: null },
  localeChanged: { direction: 'host-to-app', params: /* @__PURE__ */ object({ locale: text(2, 35) }), result: null },
  entitlementsChanged: { direction: 'host-to-app', params: Empty, result: null },
} as const satisfies Record<string, BridgeMethod>;

/**
 * The RPC packet shape of `@mixer/postmessage-rpc`, checked before the library sees it. `params`
 * and `result` are checked per method, where they are used.
 */
export const BRIDGE_PACKET = /* @__PURE__ */ object({
  type: oneOf(['method', 'reply']),
  serviceID: string(),
  id: number().check(refine(Number.isSafeInteger)),
  method: optional(text(0, 64)),
  // `error` is not checked: one that is not `{code, message}` still fails its call at once (the
  // library reads any error but null, 0, "" or false; the message is read where the error is
  // built), where dropping the packet would leave the call to its timeout. Nor is its length:
  // the library sends a stack when the peer is not this kit.
});

/** The id `@mixer/postmessage-rpc` gives the `ready` call of its handshake. */
const READY_CALL_ID = -1;

type Protocol = typeof BRIDGE_PROTOCOL;
/** The method names of the protocol. */
export type BridgeMethodName = keyof Protocol;
/** Each end of the bridge: the app's page, or the dashboard. */
export type BridgeSide = 'app' | 'host';
type Other<S extends BridgeSide> = S extends 'app' ? 'host' : 'app';
/** The methods `S` answers: the dashboard answers `app-to-host` calls, the app `host-to-app` ones. */
export type MethodsOf<S extends BridgeSide> = {
  [M in BridgeMethodName]: Protocol[M]['direction'] extends (S extends 'host' ? 'app-to-host' : 'host-to-app') ? M : never;
}[BridgeMethodName];
/** The methods the dashboard answers (the app calls them). */
export type HostMethod = MethodsOf<'host'>;
/** The methods the app answers (the dashboard calls them). */
export type AppMethod = MethodsOf<'app'>;
/** What a caller of `M` sends. */
export type ParamsOf<M extends BridgeMethodName> = z.input<Protocol[M]['params']>;
/** What a handler of `M` receives, checked. */
export type ReceivedParams<M extends BridgeMethodName> = z.output<Protocol[M]['params']>;
/** What a call of `M` resolves to, checked; `void` for a method without a result. */
export type ResultOf<M extends BridgeMethodName> = Protocol[M]['result'] extends z.ZodMiniType ? z.output<Protocol[M]['result']> : void;
/** What a handler of `M` may answer: the result before its check, or nothing for a method without one. */
export type HandlerResult<M extends BridgeMethodName> = Protocol[M]['result'] extends z.ZodMiniType ? z.input<Protocol[M]['result']> : unknown;
/** The handlers of side `S`: what it does when the other side calls (each method's doc is its table entry's). */
export type HandlerTable<S extends BridgeSide> = {
  [M in keyof Protocol as M extends MethodsOf<S> ? M : never]?: ((params: ReceivedParams<M>) => HandlerResult<M> | Promise<HandlerResult<M>>) | undefined;
};

/** Where messages arrive (a window) and where ours go (the peer window). */
export interface MessageSource {
  addEventListener(type: 'message', listener: (event: MessageEvent) => void): void;
  removeEventListener(type: 'message', listener: (event: MessageEvent) => void): void;
}
export interface MessagePeer {
  postMessage(message: string, targetOrigin: string): void;
}

/** The timers of a bridge's call timeouts. */
export interface BridgeTimers {
  setTimeout(callback: () => void, ms: number): ReturnType<typeof setTimeout>;
  clearTimeout(timer: ReturnType<typeof setTimeout> | undefined): void;
}

export interface BridgeOptions<S extends BridgeSide> {
  /** Which end this is: it answers the methods of its side and calls the other side's. */
  side: S;
  /** The window messages arrive on (ours). */
  self: MessageSource;
  /** The peer window; `event.source` must be this exact object. A function when it can change. */
  peer: MessagePeer | (() => MessagePeer | null | undefined);
  /**
   * What stands for the peer in the one-bridge-per-pair rule (see `openBridge`), when the peer
   * window may not exist yet: the dashboard's iframe element, whose window is not the app's until
   * the app's page arrives. Default: the peer window as it is when the bridge opens.
   */
  channel?: object | undefined;
  /** The peer's origin, exactly (`https://dashboard.example`); never `*`. */
  origin: string;
  handlers: HandlerTable<S>;
  timeoutMs?: number | undefined;
  /** The timers of the calls' timeouts (default: the global ones); tests give a clock they drive. */
  timers?: BridgeTimers | undefined;
  /**
   * Called when the peer starts over after the handshake (a reload in its frame, a new connection
   * on the iframe), once its new `ready` is answered: what it was told before, it no longer knows.
   */
  onPeerRestart?: (() => void) | undefined;
}

export interface Bridge<S extends BridgeSide> {
  /** Resolves once both ends have exchanged the `ready` handshake. */
  readonly ready: Promise<void>;
  /**
   * Calls a method of the peer. Waits for the handshake, all within the timeout. Rejects with
   * `ERR_BRIDGE_TIMEOUT`, `ERR_BRIDGE_REMOTE` (the peer refused the params, its handler failed
   * or does not exist), `ERR_BRIDGE_INVALID_MESSAGE` (the peer answered something invalid),
   * `ERR_BRIDGE_CLOSED` or `ERR_INVALID_INPUT` (our own params are invalid). `timeoutMs`
   * overrides the bridge's timeout for calls that wait on a person (the plan chooser).
   */
  call<M extends MethodsOf<Other<S>>>(method: M, params: ParamsOf<M>, options?: { timeoutMs?: number | undefined }): Promise<ResultOf<M>>;
  destroy(): void;
}

/**
 * An error for the peer. The library replies with `stack || message` of anything that is not its
 * own error class (which it does not export from its entry point), so the stack is emptied: only
 * the message crosses the boundary, cut to a length the other end's packet check accepts.
 */
const remoteError = (message: string) => Object.assign(new Error(message.slice(0, 500)), { stack: '' });

/**
 * The open bridges of each window, by the peer they talk to, for the whole page (`Symbol.for`, so
 * every copy of the package agrees). The library matches a reply to its call by a numeric id
 * alone, and every id counter restarts at a handshake: two bridges between the same two windows
 * (two kits in one frame) would take each other's replies. So the newer one closes the older one.
 */
const OPEN_BRIDGES = Symbol.for('marketplace-app-kit.open-bridges');
// Weak on both levels: a removed iframe's window is not kept alive by a bridge nobody destroyed.
type OpenBridges = WeakMap<object, WeakMap<object, () => void>>;

function claimChannel(self: MessageSource, peer: object | null | undefined, close: () => void): () => void {
  if (!peer) return () => undefined;
  const registry = ((globalThis as { [OPEN_BRIDGES]?: OpenBridges })[OPEN_BRIDGES] ??= new WeakMap());
  let byPeer = registry.get(self);
  if (!byPeer) registry.set(self, (byPeer = new WeakMap()));
  byPeer.get(peer)?.();
  byPeer.set(peer, close);
  return () => {
    if (byPeer.get(peer) === close) byPeer.delete(peer);
  };
}

/**
 * Opens one end of the bridge. A bridge opened earlier between the same two windows is closed
 * (its calls fail with `ERR_BRIDGE_CLOSED`).
 *
 * @example
 * const bridge = openBridge({ side: 'app', self: window, peer: window.parent, origin: hostOrigin,
 *   handlers: { themeChanged: ({ theme }) => apply(theme) } });
 * const { context } = await bridge.call('getContext', {});
 */
export function openBridge<S extends BridgeSide>(options: BridgeOptions<S>): Bridge<S> {
  const origin = assertOrigin(options.origin, DEV ? 'The bridge peer origin' : '');
  const defaultTimeoutMs = options.timeoutMs ?? BRIDGE_DEFAULT_TIMEOUT_MS;
  const timers: BridgeTimers = options.timers ?? { setTimeout: (callback, ms) => setTimeout(callback, ms), clearTimeout: (timer) => clearTimeout(timer) };
  const peer = typeof options.peer === 'function' ? options.peer : () => options.peer as MessagePeer;
  let closed = false;
  /** How many `ready` handshakes the peer has sent. */
  let handshakes = 0;
  let rejectClosed!: (error: unknown) => void;
  const closedSignal = new Promise<never>((_, reject) => (rejectClosed = reject));
  closedSignal.catch(() => undefined);
  // Calls under way, told when the bridge closes. Each call races its own promise, not
  // `closedSignal`: a race against that long-lived promise would keep every result until destroy().
  const onClose = new Set<(error: unknown) => void>();
  /** Calls sent and not answered yet: failed when the peer starts over, as it never answers them. */
  const unanswered = new Set<(error: unknown) => void>();
  const close = (message: string) => {
    if (closed) return;
    closed = true;
    const error = new MarketplaceKitError('ERR_BRIDGE_CLOSED', message);
    rejectClosed(error);
    for (const stop of onClose) stop(error);
    rpc.destroy();
  };
  const rpc = new RPC({
    serviceId: BRIDGE_SERVICE_ID,
    protocolVersion: BRIDGE_PROTOCOL_VERSION,
    origin,
    target: {
      postMessage(message: string, targetOrigin: string) {
        // A microtask later, and only if the bridge is still open then: a bridge opened and closed
        // in one task (React StrictMode's connect, destroy, connect) sends nothing, not even the
        // `ready` that the library sends at once, which the peer would take for a restart that
        // fails its calls under way. The iframe may also be gone or navigated elsewhere;
        // postMessage with a pinned origin then drops the message, which the caller sees as a timeout.
        queueMicrotask(() => {
          if (!closed) peer()?.postMessage(message, targetOrigin);
        });
      },
    },
    receiver: {
      readMessages(deliver) {
        const listener = (event: MessageEvent) => {
          if (event.origin !== origin || event.source == null || event.source !== peer()) return;
          const { data } = event;
          if (typeof data !== 'string' || data.length > BRIDGE_MAX_MESSAGE_SIZE) return;
          let packet: unknown;
          try {
            packet = JSON.parse(data);
          } catch {
            return;
          }
          const parsed = BRIDGE_PACKET.safeParse(packet);
          if (!parsed.success || parsed.data.serviceID !== BRIDGE_SERVICE_ID) return;
          const started = parsed.data.type === 'method' && parsed.data.method === 'ready';
          // When both ends start at once, each takes the other's `ready` for the handshake and
          // sends its calls; the answer to its own `ready` comes after them. The library would
          // restart its call ids at it, and the next call would take the id of one under way,
          // whose answer then went to the wrong call or nowhere.
          if (handshaken && parsed.data.type === 'reply' && parsed.data.id === READY_CALL_ID) return;
          if (started) {
            // The peer started over (a reload in the frame, a new connection on the iframe): the
            // end our calls went to is gone, and the library is about to reuse their ids.
            handshakes++;
            const error = new MarketplaceKitError('ERR_BRIDGE_CLOSED', DEV ? 'The other side of the host bridge started over before answering (a reload, or a new connection)' : '');
            for (const fail of unanswered) fail(error);
          }
          // The library queues out-of-sequence packets until the gap is filled. postMessage
          // between two windows is already in order, and a packet we drop above would leave a
          // gap that stalls the channel for good, so every packet goes out as "next in sequence".
          // `discard` (no reply wanted) is never used by the kit; it is cleared so that every
          // call gets an answer and a refused one cannot end as an unhandled rejection here.
          deliver({ origin, data: JSON.stringify({ ...(packet as object), counter: 0, discard: false }) });
          // After the calls to the old end were failed and the library took the new `ready`: what
          // the callback sends goes to the new end, with the new ids.
          if (started && handshaken) options.onPeerRestart?.();
        };
        options.self.addEventListener('message', listener);
        return () => options.self.removeEventListener('message', listener);
      },
    },
  });

  // Registered once the library's end exists, which closing it needs.
  const releaseChannel = claimChannel(options.self, options.channel ?? peer(), () =>
    close(DEV ? 'The host bridge is closed: a newer one was opened between the same two windows (a second kit in this frame, or a second connectApp on this iframe?)' : ''),
  );

  const answers = options.side === 'host' ? 'app-to-host' : 'host-to-app';
  for (const [method, { direction, params: paramsSchema, result: resultSchema }] of Object.entries(BRIDGE_PROTOCOL) as [BridgeMethodName, BridgeMethod][]) {
    if (direction !== answers) continue;
    rpc.expose(method, (params: unknown) => {
      // Call ids restart at every handshake: the answer to a call from before the peer's latest
      // handshake (a kit since replaced in that frame) could be taken by a newer call with the
      // same id, so it is never sent.
      const handshake = handshakes;
      const unsent = new Promise<never>(() => undefined);
      return answerCall(method, params, paramsSchema, resultSchema).then(
        (answer) => (handshake === handshakes ? answer : unsent),
        (error: unknown) => (handshake === handshakes ? Promise.reject(error) : unsent),
      );
    });
  }

  async function answerCall(method: string, params: unknown, paramsSchema: z.ZodMiniType, resultSchema: z.ZodMiniType | null): Promise<unknown> {
    const parsed = paramsSchema.safeParse(params);
    if (!parsed.success) throw remoteError(DEV ? describeFailure(`${method} params`, parsed.error) : `${method}: invalid params`);
    const handler = (options.handlers as Record<string, ((params: unknown) => unknown) | undefined>)[method];
    if (!handler) throw remoteError(DEV ? `${method} is not supported here` : `${method}: not supported`);
    let checked;
    try {
      // Called on its table, so that handlers may be methods of a class instance.
      const result: unknown = await handler.call(options.handlers, parsed.data as never);
      // Only what the protocol defines leaves this window: a method that answers nothing answers
      // null whatever its handler returned (a toast id, a dashboard object), and a result is cut
      // to its schema (unknown keys dropped) or refused. Reading it may throw too (a getter).
      if (!resultSchema) return null;
      checked = resultSchema.safeParse(result);
    } catch (error) {
      throw remoteError(error instanceof Error ? error.message : String(error));
    }
    if (!checked.success) throw remoteError(DEV ? `${method} handler returned an invalid result (${describeFailure('result', checked.error)})` : `${method}: invalid result`);
    return checked.data;
  }

  const ready = Promise.race([rpc.isReady, closedSignal]);
  // Nobody has to wait for the handshake; closing must not leave an unhandled rejection behind.
  ready.catch(() => undefined);
  // Calls waiting for the handshake, sent by one reaction once it is done: a reaction per call
  // would keep every call that timed out meanwhile for as long as the peer stays silent.
  let handshaken = false;
  const waiting = new Set<() => void>();
  ready.then(() => {
    handshaken = true;
    for (const start of waiting) start();
  }, () => undefined);

  return {
    ready,
    async call(method, params, { timeoutMs = defaultTimeoutMs } = {}) {
      if (closed) throw new MarketplaceKitError('ERR_BRIDGE_CLOSED', DEV ? 'The host bridge is closed' : '');
      const { params: paramsSchema, result: resultSchema } = BRIDGE_PROTOCOL[method] as BridgeMethod;
      const checked = paramsSchema.safeParse(params);
      if (!checked.success) {
        throw new MarketplaceKitError('ERR_INVALID_INPUT', DEV ? describeFailure(`${method} params`, checked.error) : '');
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      let timedOut = false;
      let forget: () => void = () => undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = timers.setTimeout(() => {
          timedOut = true;
          reject(new MarketplaceKitError('ERR_BRIDGE_TIMEOUT', DEV ? `${method} got no answer within ${timeoutMs} ms` : ''));
          forget();
        }, timeoutMs);
      });
      // A call that timed out while waiting for the handshake is never sent: its caller has already
      // been told it failed, so the dashboard must not act on it later.
      const send = () => {
        if (timedOut) return;
        let id = NaN;
        rpc.once('sendMethod', (packet: { id: number }) => (id = packet.id));
        const reply = rpc.call(method, checked.data as object);
        // The library keeps a pending call until its reply, which may never come, and has no way to
        // drop one, so a timeout removes it from the (private) table. Only if the entry is still
        // ours: ids repeat (the counter also counts replies and restarts at every handshake), so a
        // newer call may hold the same id by then.
        const calls = (rpc as unknown as { calls?: Record<number, unknown> }).calls ?? {};
        const entry = calls[id];
        forget = () => {
          if (entry && calls[id] === entry) delete calls[id];
        };
        unanswered.add(abandon);
        return reply;
      };
      let result: unknown;
      let stop!: (error: unknown) => void;
      const closing = new Promise<never>((_, reject) => onClose.add((stop = reject)));
      const abandon = (error: unknown) => {
        forget();
        stop(error);
      };
      let start!: () => void;
      const sent = new Promise<unknown>((resolve, reject) => {
        start = () => {
          waiting.delete(start);
          try {
            resolve(send());
          } catch (error) {
            reject(error);
          }
        };
      });
      if (handshaken) start();
      else waiting.add(start);
      try {
        result = await Promise.race([sent, timeout, closing]);
      } catch (error) {
        // Our own timeout and closing are kit errors; anything else is the peer's error reply.
        if (isKitError(error)) throw error;
        const said = (error as { message?: unknown } | null)?.message;
        const message = typeof said === 'string' && said ? said.slice(0, 500) : DEV ? 'an error reply without a message' : '';
        throw new MarketplaceKitError('ERR_BRIDGE_REMOTE', DEV ? `${method} failed on the other side: ${message}` : `${method}: ${message}`, { cause: error });
      } finally {
        timers.clearTimeout(timer);
        onClose.delete(stop);
        unanswered.delete(abandon);
        waiting.delete(start);
      }
      const invalid = (message: string) => new MarketplaceKitError('ERR_BRIDGE_INVALID_MESSAGE', message);
      if (!resultSchema) {
        if (result != null) throw invalid(DEV ? `Invalid ${method} result: expected nothing` : '');
        return undefined as ResultOf<typeof method>;
      }
      const answer = resultSchema.safeParse(result);
      if (!answer.success) throw invalid(DEV ? describeFailure(`${method} result`, answer.error) : '');
      return answer.data as ResultOf<typeof method>;
    },
    destroy() {
      releaseChannel();
      close(DEV ? 'The host bridge is closed' : '');
    },
  };
}
