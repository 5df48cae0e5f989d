/**
 * Helpers for the simulator's tests: a simulator with fixed credentials and fast retries, a
 * virtual clock, an HTTP driver for the authorization page (GET the page, post its form), and a
 * webhook receiver on its own loopback port.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js';
import { closeServer, listenOnLoopback } from './loopback.js';

export const CALLBACK = 'http://127.0.0.1:9/callback';

export const FIXED = {
  clientId: 'client_test',
  clientSecret: 'secret_test_0123456789abcdef0123456789',
  testApiKey: 'test_key_0123456789',
  liveApiKey: 'live_key_0123456789',
  webhookSecret: 'whsec_test_0123456789',
} as const;

/**
 * A clock the test moves by hand (`advance`). Its `sleep` takes no real time: it moves the clock
 * by the wait at once, and records the wait in `waits`.
 */
export function virtualClock(start = Date.parse('2026-11-21T10:00:00Z')) {
  let now = start;
  const waits: number[] = [];
  return {
    now: () => now,
    advance(ms: number) {
      now += ms;
    },
    waits,
    sleep(ms: number, signal?: AbortSignal): Promise<void> {
      if (signal?.aborted) return Promise.reject(signal.reason);
      waits.push(ms);
      now += ms;
      return new Promise((resolve) => setImmediate(resolve));
    },
  };
}

export function startTestSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  return startSimulator({ redirectUris: [CALLBACK], webhookBackoffMs: 5, ...FIXED, ...options });
}

export interface AuthorizeParams {
  redirectUri?: string;
  state?: string;
  codeChallenge?: string;
  scope?: string;
  clientId?: string;
}

export function authorizeUrl(sim: Simulator, params: AuthorizeParams = {}): string {
  const url = new URL(`${sim.siteUrl}/oauth/authorize`);
  url.searchParams.set('client_id', params.clientId ?? sim.clientId);
  url.searchParams.set('redirect_uri', params.redirectUri ?? CALLBACK);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', params.scope ?? 'identity:read');
  if (params.state !== undefined) url.searchParams.set('state', params.state);
  if (params.codeChallenge !== undefined) {
    url.searchParams.set('code_challenge', params.codeChallenge);
    url.searchParams.set('code_challenge_method', 'S256');
  }
  return url.href;
}

/** The one-time form token of an authorization page. */
export function formTokenOf(html: string): string {
  const match = html.match(/name="form_token" value="([^"]+)"/);
  if (!match) throw new Error('no form token on the page');
  return match[1]!;
}

export async function postConsent(sim: Simulator, form: Record<string, string>): Promise<Response> {
  return fetch(`${sim.siteUrl}/oauth/authorize`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
    redirect: 'manual',
  });
}

/** Goes through the authorization page as a user would and returns where it redirects to. */
export async function authorize(
  sim: Simulator,
  params: AuthorizeParams = {},
  decision: 'approve' | 'deny' = 'approve',
  userId = 'usr_ada',
): Promise<URL> {
  const page = await fetch(authorizeUrl(sim, params), { redirect: 'manual' });
  if (page.status !== 200) throw new Error(`authorization page answered ${page.status}`);
  const formToken = formTokenOf(await page.text());
  const answer = await postConsent(sim, { form_token: formToken, decision, user_id: userId });
  const location = answer.headers.get('location');
  if (answer.status !== 303 || !location) throw new Error(`consent answered ${answer.status}`);
  return new URL(location);
}

/** An authorization code for `userId`. */
export async function codeFor(sim: Simulator, params: AuthorizeParams = {}, userId = 'usr_ada'): Promise<string> {
  const code = (await authorize(sim, params, 'approve', userId)).searchParams.get('code');
  if (!code) throw new Error('no code in the redirect');
  return code;
}

export function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

export interface ReceivedRequest {
  headers: IncomingMessage['headers'];
  body: string;
}

export interface Receiver {
  url: string;
  received: ReceivedRequest[];
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1:0 that reads each request's raw body and lets `handle` answer. */
export async function startReceiver(handle: (request: ReceivedRequest, res: ServerResponse) => void | Promise<void>): Promise<Receiver> {
  const received: ReceivedRequest[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const request = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
    received.push(request);
    try {
      await handle(request, res);
    } catch (error) {
      res.writeHead(500).end(String(error));
    }
  });
  return { url: `${await listenOnLoopback(server)}/webhooks`, received, close: () => closeServer(server) };
}
