/**
 * Simulator helpers for an app's tests: start the local marketplace on a free port, quickly
 * retrying, from the app's own `mpkit.config.json`; then launch a user on a plan as the dashboard
 * does, and open the app session as the kit does. Docs: docs/testing.md#simulator-helpers.
 */
import { MarketplaceKitError, type ErrorCode } from '../shared/errors.js';
import { EMBED_PARAMS, type Entitlement, type Profile } from '../shared/schemas.js';
import { loadSimulatorConfig } from '../simulator/config.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../simulator/index.js';

/** Options of `startTestSimulator`: `startSimulator`'s, and a config file to start from. */
export interface TestSimulatorOptions extends SimulatorOptions {
  /**
   * A config file (`'mpkit.config.json'`): its plans, users, app name and credentials. The other
   * options win over it. Its `port` is not used: the test simulator takes a free port unless
   * `port` is given here.
   */
  config?: string | undefined;
}

/** How `launchUrl` and `launchSession` open the app. */
export interface LaunchOptions {
  /**
   * The plan the user buys first (one of the simulator's plans). It goes through
   * `subscription.created`, delivered to the app's webhook URL, so a backend that cached the
   * user's old entitlement drops it. Left out, the user keeps what they hold.
   */
  plan?: string | undefined;
  /** `mp_theme`. Default `light`. */
  theme?: 'light' | 'dark' | undefined;
  /** `mp_locale`. Default `en-US`. */
  locale?: string | undefined;
  /** A path of the app to open instead of the app URL's own, as the dashboard does after `navigate`. */
  path?: string | undefined;
}

/** Options of `launchSession`. */
export interface LaunchSessionOptions extends LaunchOptions {
  /** Where `createAppBackend` is mounted, on the app's origin. Default `/api/marketplace`. */
  backend?: string | undefined;
}

/** An app session opened as the kit opens one: the backend's answer to `POST {backend}/session`. */
export interface TestSession {
  /** The app session token. */
  token: string;
  /** When the token expires (ISO 8601). */
  expiresAt: string;
  user: Profile;
  entitlement: Entitlement | null;
  /** The dashboard's origin, as the backend checked it. */
  host: string;
  /** `fetch` on the app's origin with `Authorization: Bearer <token>`, as `kit.fetch`. */
  fetch(input: string | URL, init?: RequestInit): Promise<Response>;
}

/** A running simulator with the helpers of `marketplace-app-kit/testing`. */
export interface TestSimulator extends Simulator {
  /** The address the dashboard loads for `userId`: the app's URL with a fresh `mp_context`, `mp_host`, `mp_locale`, `mp_theme`. */
  launchUrl(userId: string, options?: LaunchOptions): Promise<string>;
  /** Launches `userId` and exchanges the context token at the app's backend, as the kit does: the app session. */
  launchSession(userId: string, options?: LaunchSessionOptions): Promise<TestSession>;
}

/**
 * Starts a simulator for a test: a free port, webhook retries 10 ms apart, and the app's own
 * config file when given.
 *
 * @example
 * const sim = await startTestSimulator({ config: 'mpkit.config.json', appUrl: `${app.url}/` });
 * const pro = await sim.launchSession('usr_ada', { plan: 'pro_monthly' });
 * assert.equal((await pro.fetch('/api/export.csv')).status, 200);
 * await sim.close();
 */
export async function startTestSimulator(options: TestSimulatorOptions = {}): Promise<TestSimulator> {
  const { config, ...given } = options;
  const fromFile = config === undefined ? {} : loadSimulatorConfig(config);
  const sim = await startSimulator({ ...fromFile, webhookBackoffMs: 10, ...given, port: given.port ?? 0 });
  const dashboardOrigin = new URL(sim.dashboardUrl).origin;

  async function launchUrl(userId: string, launch: LaunchOptions = {}): Promise<string> {
    const appUrl = sim.state().config.app_url;
    if (appUrl === null) throw new MarketplaceKitError('ERR_CONFIG', 'launchUrl: the simulator has no app URL: give startTestSimulator appUrl (or sim.configure({ app_url }))');
    if (launch.plan !== undefined) await buy(userId, launch.plan);
    const url = launch.path === undefined ? new URL(appUrl) : new URL(launch.path, new URL(appUrl).origin);
    url.searchParams.set(EMBED_PARAMS.context, await sim.contextToken(userId));
    url.searchParams.set(EMBED_PARAMS.host, dashboardOrigin);
    url.searchParams.set(EMBED_PARAMS.locale, launch.locale ?? 'en-US');
    url.searchParams.set(EMBED_PARAMS.theme, launch.theme ?? 'light');
    return url.href;
  }

  /** The user buys `plan` as the dashboard's plan chooser would: the simulator applies it and delivers `subscription.created`. */
  async function buy(userId: string, plan: string): Promise<void> {
    if (!sim.plans.some((known) => known.id === plan)) {
      throw new MarketplaceKitError('ERR_INVALID_INPUT', `launch: the simulator has no plan ${JSON.stringify(plan)}; its plans: ${sim.plans.map((known) => known.id).join(', ')}`);
    }
    const outcome = await sim.sendEvent('subscription.created', { user_id: userId, plan });
    if (outcome.outcome === 'failed') {
      throw new MarketplaceKitError('ERR_HTTP', `launch: the app's webhook receiver refused subscription.created for ${userId} (${outcome.status ?? 'no answer'}, ${outcome.attempts} attempts)`, {
        ...(outcome.status === null ? {} : { status: outcome.status }),
      });
    }
  }

  async function launchSession(userId: string, launch: LaunchSessionOptions = {}): Promise<TestSession> {
    const launched = new URL(await launchUrl(userId, launch));
    const backend = new URL(launch.backend ?? '/api/marketplace', launched.origin).href.replace(/\/$/, '');
    const answer = await fetch(`${backend}/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ context: launched.searchParams.get(EMBED_PARAMS.context), host: launched.searchParams.get(EMBED_PARAMS.host) }),
    });
    const body = (await answer.json().catch(() => null)) as {
      session?: { token: string; expires_at: string };
      user?: Profile;
      entitlement?: Entitlement | null;
      host?: string;
      error?: { code?: string; message?: string };
    } | null;
    if (!answer.ok || !body?.session || !body.user) {
      const code = typeof body?.error?.code === 'string' && body.error.code.startsWith('ERR_') ? (body.error.code as ErrorCode) : 'ERR_HTTP';
      throw new MarketplaceKitError(code, `launchSession: POST ${backend}/session answered ${answer.status}${body?.error?.message ? `: ${body.error.message}` : ''}`, { status: answer.status });
    }
    const { token, expires_at } = body.session;
    return {
      token,
      expiresAt: expires_at,
      user: body.user,
      entitlement: body.entitlement ?? null,
      host: body.host ?? dashboardOrigin,
      fetch: (input, init = {}) => {
        const headers = new Headers(init.headers);
        headers.set('authorization', `Bearer ${token}`);
        return fetch(new URL(input, launched.origin), { ...init, headers });
      },
    };
  }

  return Object.assign(sim, { launchUrl, launchSession });
}
