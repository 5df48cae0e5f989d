/**
 * The runtime's unit tests build kits the same way: on a fake environment whose clock they move
 * (test/support/runtime-fakes.ts), inside a fake dashboard whose end of the bridge is real, and
 * against a scripted backend. Every kit built here is destroyed after its test.
 */
import { MarketplaceKit, type KitOptions } from '../../src/runtime/kit.js';
import type { Kit } from '../../src/runtime/types.js';
import type { HandlerTable } from '../../src/shared/bridge.js';
import type { Entitlement } from '../../src/shared/schemas.js';
import {
  APP_ORIGIN,
  ENTITLEMENT,
  HOST_ORIGIN,
  fakeEnvironment,
  jsonResponse,
  openHostEnd,
  scriptedFetch,
  sessionBody,
  windowPair,
  type FakeEnvironment,
  type FakeWindow,
  type FetchCall,
} from './runtime-fakes.js';

export const BACKEND = `${APP_ORIGIN}/api/marketplace`;
export const LAUNCH = `${APP_ORIGIN}/embed?view=1&mp_context=ctx-0&mp_host=${encodeURIComponent(HOST_ORIGIN)}&mp_locale=de-DE&mp_theme=dark`;
export const PRO: Entitlement = { ...ENTITLEMENT, plan: 'pro', features: ['reports', 'export'] };

const kits: Array<{ destroy(): void }> = [];
afterEach(() => {
  for (const kit of kits.splice(0)) kit.destroy();
});

/** Destroys `thing` after the test (a kit, a bridge end). */
export function cleanUp(thing: { destroy(): void }): void {
  kits.push(thing);
}

export function start(env: FakeEnvironment, fetch: typeof globalThis.fetch, options: Partial<KitOptions> = {}): MarketplaceKit {
  const kit = new MarketplaceKit({ backend: '/api/marketplace', hostOrigins: [HOST_ORIGIN], fetch, ...options }, env);
  kits.push(kit);
  return kit;
}

/** `win` with its message listeners counted: how many were ever added, which are still there. */
export function spyListeners(win: FakeWindow) {
  const spied = {
    added: 0,
    listening: new Set<unknown>(),
    window: {
      ...win,
      self: {
        addEventListener(type: 'message', listener: (event: MessageEvent) => void) {
          spied.added++;
          spied.listening.add(listener);
          win.self.addEventListener(type, listener);
        },
        removeEventListener(type: 'message', listener: (event: MessageEvent) => void) {
          spied.listening.delete(listener);
          win.self.removeEventListener(type, listener);
        },
      },
    } as FakeWindow,
  };
  return spied;
}

/**
 * A kit inside a fake dashboard launched with `LAUNCH`: the dashboard's end is a real bridge with
 * `handlers` (getContext answers `ctx-1`, `ctx-2`, …), its calls time out after 300 ms of the
 * kit's clock unless `options` say otherwise.
 */
export function embedded(route: (call: FetchCall) => Response | Promise<Response>, handlers: Partial<HandlerTable<'host'>> = {}, options: Partial<KitOptions> = {}) {
  const [host, app] = windowPair();
  let contexts = 0;
  const hostSide = openHostEnd(host, app, { getContext: () => ({ context: `ctx-${++contexts}` }), ...handlers }, 300);
  const spied = spyListeners(app);
  const env = fakeEnvironment(LAUNCH, { parent: host, self: spied.window });
  const fetch = scriptedFetch(route);
  const kit = start(env, fetch, { bridgeTimeoutMs: 300, ...options });
  kits.push(hostSide);
  return { kit, env, fetch, hostSide, spied, host, app, contexts: () => contexts };
}

/** The dashboard's end on `host`, for a kit `app` side, destroyed after the test. */
export function dashboardEnd(host: FakeWindow, app: FakeWindow, handlers: HandlerTable<'host'>, timeoutMs = 300) {
  const end = openHostEnd(host, app, handlers, timeoutMs);
  kits.push(end);
  return end;
}

export interface BackendState {
  entitlement: Entitlement | null;
  lifetimeMs: number;
  exchanges: number;
  /** The backend's clock (default: the real one). */
  now?: () => number;
}

/** Backend: POST exchanges (a token per exchange), GET reads the bearer's session, with `state.entitlement`. */
export function backend(state: BackendState) {
  return (call: FetchCall) => {
    if (call.method === 'POST') {
      state.exchanges++;
      return jsonResponse(sessionBody(`tok-${state.exchanges}`, state.lifetimeMs, state.entitlement, state.now?.()));
    }
    const token = call.authorization?.slice(7) ?? 'cookie';
    return jsonResponse(sessionBody(token, state.lifetimeMs, state.entitlement, state.now?.()));
  };
}

/** A backend state for `backend()`: ten-minute sessions, the basic entitlement. */
export const freshState = (now?: () => number): BackendState => ({ entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0, ...(now ? { now } : {}) });

/** A session answer for a cookie: no token (what `GET /session` answers to the cookie alone). */
export function cookieSession(lifetimeMs = 600_000, entitlement: Entitlement | null = ENTITLEMENT, now = Date.now()) {
  const body = sessionBody('unused', lifetimeMs, entitlement, now);
  return jsonResponse({ ...body, session: { expires_at: body.session.expires_at } });
}

/** The 401 a backend answers without a session. */
export const noSessionAnswer = () => jsonResponse({ error: { code: 'ERR_SESSION_MISSING', message: 'none' } }, 401);

/** Whether the browser would send the page's cookie for the backend with `call` (same origin, or `credentials: 'include'`). */
export function carriesCookie(call: FetchCall): boolean {
  return call.credentials === 'include' || (call.credentials !== 'omit' && new URL(call.url).origin === APP_ORIGIN);
}

export type { Kit };
