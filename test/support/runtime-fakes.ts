/**
 * Fakes for the runtime's unit tests in the browser: two "windows" joined by postMessage (with the
 * origin and `event.source` a real browser would report), a scripted backend `fetch`, and a
 * `KitEnvironment` whose URL, clock and document height the test controls.
 */
import { expect } from '@open-wc/testing';
import { openBridge, type Bridge, type HandlerTable, type MessagePeer, type MessageSource } from '../../src/shared/bridge.js';
import { MarketplaceKitError } from '../../src/shared/errors.js';
import type { EarlyLaunch } from '../../src/shared/early-launch.js';
import type { KitEnvironment, TimerId } from '../../src/runtime/environment.js';
import * as hostLink from '../../src/runtime/host-link.js';
import type { Entitlement, Profile, SessionResponse } from '../../src/shared/schemas.js';
import { utcSeconds } from './dates.js';

export const HOST_ORIGIN = 'https://dashboard.example';
export const APP_ORIGIN = 'https://app.example';

/** One side of a fake window pair: where its messages arrive, and the handle others post to. */
export interface FakeWindow {
  origin: string;
  /** Listen here (`self` of a bridge). */
  self: MessageSource & EventTarget;
  /** Post here to reach this window (`peer` of the other side); also its `event.source`. */
  handle: MessagePeer;
  /** Messages posted to this window whose target origin did not match (dropped, as a browser does). */
  refused: number;
}

function fakeWindow(origin: string): FakeWindow {
  const self = new EventTarget() as MessageSource & EventTarget;
  const win: FakeWindow = { origin, self, handle: { postMessage: () => undefined }, refused: 0 };
  return win;
}

/** Messages posted and not dispatched yet, oldest first, for every fake window of the page. */
const posted: Array<() => void> = [];

/**
 * Delivers `data` to `to` as if posted by `from` (asynchronously, as postMessage does), and in the
 * order posted, as postMessage does too. A timer of its own per message would not keep that order:
 * a timer set from a task nested five timers deep waits at least 4 ms (the browser's clamp), so a
 * message posted from a chain of deliveries (a handshake) could arrive after one posted just after
 * it from elsewhere (a test's step). Each timer therefore dispatches the oldest message waiting.
 */
export function deliver(to: FakeWindow, data: unknown, origin: string, source: unknown): void {
  posted.push(() => to.self.dispatchEvent(Object.assign(new Event('message'), { data, origin, source })));
  setTimeout(() => posted.shift()?.());
}

/** Two windows that can post to each other, each seeing the other's origin and handle. */
export function windowPair(originA = HOST_ORIGIN, originB = APP_ORIGIN): [FakeWindow, FakeWindow] {
  const a = fakeWindow(originA);
  const b = fakeWindow(originB);
  const link = (from: FakeWindow, to: FakeWindow) => {
    to.handle = {
      postMessage(data: string, targetOrigin: string) {
        if (targetOrigin !== '*' && targetOrigin !== to.origin) {
          to.refused++;
          return;
        }
        deliver(to, data, from.origin, from.handle);
      },
    };
  };
  link(a, b);
  link(b, a);
  return [a, b];
}

/** The dashboard's end of the bridge, in `host`, talking to the app in `app` (at the app's origin). */
export function openHostEnd(host: FakeWindow, app: FakeWindow, handlers: HandlerTable<'host'>, timeoutMs?: number): Bridge<'host'> {
  return openBridge({ side: 'host', self: host.self, peer: app.handle, origin: app.origin, handlers, timeoutMs });
}

/** The app's end of the bridge, in `app`, talking to the dashboard in `host` (at the dashboard's origin). */
export function openAppEnd(app: FakeWindow, host: FakeWindow, handlers: HandlerTable<'app'> = {}, timeoutMs?: number, onPeerRestart?: () => void): Bridge<'app'> {
  return openBridge({ side: 'app', self: app.self, peer: host.handle, origin: host.origin, handlers, timeoutMs, onPeerRestart });
}

export const USER: Profile = { id: 'usr_1', email: 'ada@example.com', name: 'Ada', avatar_url: 'https://example.com/a.png' };
export const ENTITLEMENT: Entitlement = {
  user_id: 'usr_1',
  app_id: 'app_1',
  plan: 'basic',
  status: 'active',
  features: ['reports'],
  usage: { api_calls: 1, limit: 10 },
  expires_at: null,
};

export function sessionBody(token: string, lifetimeMs: number, entitlement: Entitlement | null = ENTITLEMENT, now = Date.now()): SessionResponse {
  const expires = utcSeconds(now + lifetimeMs);
  return { session: { token, expires_at: expires }, user: USER, entitlement, host: HOST_ORIGIN };
}

export const jsonResponse = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

export interface FetchCall {
  method: string;
  url: string;
  authorization: string | null;
  credentials: RequestCredentials | undefined;
  referrerPolicy: ReferrerPolicy;
  body: string | null;
}

/** A `fetch` answered by `route`; every call is recorded. */
export function scriptedFetch(route: (call: FetchCall) => Response | Promise<Response>): typeof fetch & { calls: FetchCall[] } {
  const calls: FetchCall[] = [];
  const fake = async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const call: FetchCall = {
      method: request.method,
      url: request.url,
      authorization: request.headers.get('authorization'),
      credentials: request.credentials,
      referrerPolicy: request.referrerPolicy,
      body: null,
    };
    // Recorded at once, so a test sees a request as soon as it leaves.
    calls.push(call);
    if (request.body) call.body = await request.text();
    return route(call);
  };
  return Object.assign(fake as typeof fetch, { calls });
}

export interface FakeEnvironment extends KitEnvironment {
  url: string;
  replaced: string[];
  navigated: string[];
  height: number;
  /**
   * Moves the kit's clock by `ms` and fires, in order, the kit's timers that fall due (timeouts,
   * renewals, the entitlement's end, the bridge opening): tests drive time instead of waiting.
   * A timer of no delay means "the next task" and runs in the next real task.
   */
  advance(ms: number): void;
  /** Every delay the kit asked of its timers, in order (a delay of 0 left out). */
  delays: number[];
  /** The delays of the kit's timers that have not fired yet. */
  pending(): number[];
  /** Reports a new document height to the kit's observer. */
  resizeTo(height: number): void;
  /** How many times the kit asked for the bridge's code. */
  hostLinkLoads: number;
  /** How many preference observers the kit has running. */
  preferenceObservers: number;
  /** The user changed the browser's color scheme or language: tells the kit's observer. */
  changePreferences(preferences: Partial<Pick<KitEnvironment, 'defaultTheme' | 'defaultLocale'>>): void;
  /** How many wake observers the kit has running. */
  wakeObservers: number;
  /** The page is shown again (the device woke up): tells the kit's wake observer. */
  wake(): void;
}

/** A page at `url`; `parent` set means framed by the window behind that handle. */
export function fakeEnvironment(
  url: string,
  options: {
    parent?: FakeWindow;
    self?: FakeWindow;
    parentOrigin?: string;
    earlyLaunch?: EarlyLaunch;
    /** Loads the bridge's code (default: the real module, already loaded; counted in `hostLinkLoads`). */
    loadHostLink?: KitEnvironment['loadHostLink'];
  } = {},
): FakeEnvironment {
  let early = options.earlyLaunch;
  const startedAt = Date.now();
  let offset = 0;
  // Fake timers have negative ids, real ones (of no delay) positive.
  let lastTimer = 0;
  const timers = new Map<TimerId, { due: number; ms: number; run: () => void; signal: boolean }>();
  const fakeTimer = (run: () => void, ms: number, signal: boolean) => {
    const id = --lastTimer as unknown as TimerId;
    timers.set(id, { due: env.now() + ms, ms, run, signal });
    return id;
  };
  let observer: ((height: number) => void) | null = null;
  let preferencesChanged: (() => void) | null = null;
  let woken: (() => void) | null = null;
  const root = document.createElement('html');
  const env: FakeEnvironment = {
    url,
    replaced: [],
    navigated: [],
    height: 400,
    href: () => env.url,
    replaceUrl(next) {
      env.replaced.push(next);
      env.url = new URL(next, env.url).href;
    },
    navigate: (next) => void env.navigated.push(next),
    framed: options.parent !== undefined,
    // Given as undefined: a browser without location.ancestorOrigins (Firefox).
    parentOrigin: 'parentOrigin' in options ? options.parentOrigin : options.parent?.origin,
    self: options.self?.self ?? (new EventTarget() as MessageSource & EventTarget),
    parent: options.parent?.handle ?? null,
    root,
    observeHeight(callback) {
      observer = callback;
      callback(env.height);
      return () => (observer = null);
    },
    measureHeight: () => env.height,
    defaultLocale: 'en-US',
    defaultTheme: 'light',
    preferenceObservers: 0,
    observePreferences(callback) {
      env.preferenceObservers++;
      preferencesChanged = callback;
      return () => {
        env.preferenceObservers--;
        preferencesChanged = null;
      };
    },
    changePreferences(preferences) {
      Object.assign(env, preferences);
      preferencesChanged?.();
    },
    wakeObservers: 0,
    observeWake(callback) {
      env.wakeObservers++;
      woken = callback;
      return () => {
        env.wakeObservers--;
        woken = null;
      };
    },
    wake: () => woken?.(),
    // Stands still unless the test moves it: no real time passes on the kit's clock.
    now: () => startedAt + offset,
    advance(ms) {
      offset += ms;
      for (;;) {
        const due = [...timers].filter(([, timer]) => timer.due <= env.now()).sort(([, a], [, b]) => a.due - b.due)[0];
        if (!due) return;
        timers.delete(due[0]);
        due[1].run();
      }
    },
    delays: [],
    pending: () => [...timers.values()].filter((timer) => !timer.signal).map((timer) => timer.ms),
    setTimeout(callback, ms) {
      if (!(ms > 0)) return window.setTimeout(callback, 0) as unknown as TimerId;
      env.delays.push(ms);
      return fakeTimer(callback, ms, false);
    },
    clearTimeout(timer) {
      if (timer === undefined) return;
      if (!timers.delete(timer)) window.clearTimeout(timer);
    },
    // Runs on the same clock; not counted among `pending()` timers, as nobody clears a timeout signal.
    timeoutSignal(ms) {
      const controller = new AbortController();
      fakeTimer(() => controller.abort(new DOMException('signal timed out', 'TimeoutError')), ms, true);
      return controller.signal;
    },
    takeEarlyLaunch() {
      const taken = early;
      early = undefined;
      return taken;
    },
    hostLinkLoads: 0,
    loadHostLink() {
      env.hostLinkLoads++;
      // Already loaded: the default load ends within the task, so a test that moves the kit's clock
      // never finds it still on the wire (its load timeout would fire).
      return options.loadHostLink ? options.loadHostLink() : Promise.resolve(hostLink);
    },
    resizeTo(height) {
      env.height = height;
      observer?.(height);
    },
  };
  return env;
}

/** Waits for pending postMessage deliveries and promise chains. */
export const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Lets every message posted between the fake windows arrive, and what each starts run, without
 * moving any clock: done once no message has waited for three tasks in a row. Where a test used
 * to sleep "to give something time to show", it waits for this instead.
 */
export async function settled(): Promise<void> {
  for (let quiet = 0; quiet < 3; ) {
    await tick();
    quiet = posted.length === 0 ? quiet + 1 : 0;
  }
}

/** Resolves once `check()` is true (polled; the test's own timeout bounds the wait). */
export async function until(check: () => boolean): Promise<void> {
  while (!check()) await tick(5);
}

/** Runs `work` with window.setTimeout recording each delay asked for (a delay of 0 or none is left out). */
export async function timerDelays(work: () => Promise<unknown>): Promise<number[]> {
  const delays: number[] = [];
  const setTimer = window.setTimeout;
  window.setTimeout = ((handler: TimerHandler, ms?: number, ...args: unknown[]) => {
    if (ms) delays.push(ms);
    return setTimer(handler, ms, ...args);
  }) as typeof window.setTimeout;
  try {
    await work();
  } finally {
    window.setTimeout = setTimer;
  }
  return delays;
}

/** Runs `work` with `console[kind]` recording its calls instead of printing them; returns the calls. */
export async function consoleCalls(kind: 'error' | 'warn', work: () => unknown): Promise<unknown[][]> {
  const calls: unknown[][] = [];
  const original = console[kind];
  console[kind] = (...args: unknown[]) => void calls.push(args);
  try {
    await work();
  } finally {
    console[kind] = original;
  }
  return calls;
}

/** The kit error a promise rejects with; fails the test when it resolves or rejects with anything else. */
export async function rejection(promise: Promise<unknown>): Promise<MarketplaceKitError> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(MarketplaceKitError);
    return error as MarketplaceKitError;
  }
  throw new Error('expected a rejection');
}

/** A promise the test settles when it chooses: `await held.promise` in a route, `held.open()` in the test. */
export function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}
