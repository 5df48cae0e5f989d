/**
 * Real HTTP servers on 127.0.0.1 (port 0) for the server module's tests, a fake marketplace
 * built on them, and a virtual clock for pacing and Retry-After.
 */
import { createHash } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Entitlement, Profile } from '../../src/shared/schemas.js';
import { daysFrom, utcSeconds } from './dates.js';
import { closeServer, listenOnLoopback } from './loopback.js';
import type { AppBackendOptions, Clock, ReplayStore } from '../../src/server/index.js';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface TestServer {
  url: string;
  requests: RecordedRequest[];
  server: Server;
  close(): Promise<void>;
}

export type RawHandler = (req: IncomingMessage, res: ServerResponse, body: string) => unknown;

/** Starts a node:http server on 127.0.0.1:0 that records every request and its body. */
export async function startHttpServer(handle: RawHandler): Promise<TestServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body });
      Promise.resolve(handle(req, res, body)).catch((error: unknown) => {
        res.statusCode = 599;
        res.end(String(error));
      });
    });
  });
  return { url: await listenOnLoopback(server), requests, server, close: () => closeServer(server) };
}

/**
 * One HTTP request with a request target and Host header of the test's choosing (fetch would
 * normalise both), answered with status, headers and body.
 */
export function rawRequest(
  server: string,
  options: { method?: string; path: string; headers?: Record<string, string> },
): Promise<{ status: number; headers: IncomingMessage['headers']; body: string }> {
  const { hostname, port } = new URL(server);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ hostname, port, method: options.method ?? 'GET', path: options.path, headers: options.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    request.on('error', reject);
    request.end();
  });
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/**
 * A clock whose `sleep` advances virtual time without waiting; every sleep is recorded. It first
 * lets pending callbacks run, so work due at the current virtual time happens before time moves.
 */
export function createVirtualClock(start: number): Clock & { sleeps: number[]; advance(ms: number): void } {
  let now = start;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    advance(ms) {
      now += ms;
    },
    async sleep(ms, signal) {
      await new Promise((resolve) => setImmediate(resolve));
      signal?.throwIfAborted();
      sleeps.push(ms);
      now += ms;
    },
  };
}

/** The frozen clock of the server tests; every fixture time is written relative to it with `at`. */
export const NOW = Date.parse('2026-05-01T12:00:00Z');
/** `NOW` moved by `seconds`, as a marketplace timestamp. */
export const at = (seconds: number): string => utcSeconds(NOW + seconds * 1000);
export const CLIENT_ID = 'client_test_app';
export const CLIENT_SECRET = 'client-secret-0123456789-abcdefghij';
export const SESSION_SECRET = 'session-secret-0123456789-abcdefghijklmnop';
export const WEBHOOK_SECRET = 'whsec_0123456789abcdef';
export const API_KEY = 'test_key_0123456789';
export const DASHBOARD = 'https://dashboard.example';

export const USER: Profile = { id: 'usr_1', email: 'ada@example.com', name: 'Ada Lovelace', avatar_url: 'https://cdn.example/ada.png' };
export const ENTITLEMENT: Entitlement = {
  user_id: 'usr_1',
  app_id: 'app_1',
  plan: 'pro',
  status: 'active',
  features: ['export'],
  usage: { api_calls: 10, limit: 1000 },
  // A year past both clocks the tests use (the frozen NOW and the real one), so that it never lapses.
  expires_at: daysFrom(365, Math.max(NOW, Date.now())),
};

/** The required options of `createAppBackend` with the test credentials, for a marketplace at `siteUrl`. */
export function backendOptions(siteUrl: string) {
  return {
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    siteUrl,
    apiKey: API_KEY,
    sessionSecret: SESSION_SECRET,
    webhookSecret: WEBHOOK_SECRET,
    hostOrigins: [DASHBOARD],
  } satisfies AppBackendOptions;
}

export interface FakeMarketplace extends TestServer {
  siteUrl: string;
  users: Map<string, Profile>;
  entitlements: Map<string, Entitlement>;
  /** Access token → user id. */
  accessTokens: Map<string, string>;
  /** Replace to script answers; return true when handled. */
  override: RawHandler | null;
  /** Counts of API calls by path. */
  calls: Map<string, number>;
}

/**
 * A marketplace on 127.0.0.1 that does the OAuth flow (with PKCE S256 checked), the token
 * endpoint, /whoami and /entitlements by Bearer token or by X-API-Key + user_id.
 */
export async function startFakeMarketplace(): Promise<FakeMarketplace> {
  const codes = new Map<string, { userId: string; redirectUri: string; challenge: string }>();
  let counter = 0;
  const state: Pick<FakeMarketplace, 'users' | 'entitlements' | 'accessTokens' | 'override' | 'calls'> = {
    users: new Map([[USER.id, USER]]),
    entitlements: new Map([[USER.id, ENTITLEMENT]]),
    accessTokens: new Map<string, string>(),
    override: null,
    calls: new Map<string, number>(),
  };
  const server = await startHttpServer(async (req, res, body) => {
    if (state.override) return state.override(req, res, body);
    const url = new URL(req.url ?? '/', 'http://fake');
    state.calls.set(url.pathname, (state.calls.get(url.pathname) ?? 0) + 1);
    if (url.pathname === '/oauth/authorize') {
      const redirectUri = url.searchParams.get('redirect_uri')!;
      const code = `code_${++counter}`;
      codes.set(code, { userId: USER.id, redirectUri, challenge: url.searchParams.get('code_challenge') ?? '' });
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      res.writeHead(302, { location: back.href }).end();
      return;
    }
    if (url.pathname === '/api/oauth/token') {
      const grant = JSON.parse(body) as Record<string, string>;
      if (grant.client_id !== CLIENT_ID || grant.client_secret !== CLIENT_SECRET) {
        return sendJson(res, 401, { error: 'invalid_client', error_description: 'bad client credentials' });
      }
      const issued = codes.get(grant.code ?? '');
      const verifierOk = issued && createHash('sha256').update(grant.code_verifier ?? '').digest('base64url') === issued.challenge;
      if (grant.grant_type !== 'authorization_code' || !issued || issued.redirectUri !== grant.redirect_uri || !verifierOk) {
        return sendJson(res, 400, { error: 'invalid_grant', error_description: 'bad code, redirect_uri or code_verifier' });
      }
      codes.delete(grant.code!);
      const accessToken = `at_${++counter}`;
      state.accessTokens.set(accessToken, issued.userId);
      return sendJson(res, 200, { access_token: accessToken, token_type: 'Bearer', expires_in: 3600, refresh_token: `rt_${counter}` });
    }
    const userId = (() => {
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (bearer) return state.accessTokens.get(bearer);
      if (req.headers['x-api-key'] === API_KEY) return url.searchParams.get('user_id') ?? undefined;
      return undefined;
    })();
    if (url.pathname === '/api/v1/whoami' || url.pathname === '/api/v1/entitlements') {
      if (!userId) return sendJson(res, 401, { error: { code: 'unauthorized', message: 'no valid credentials' } });
      const value = url.pathname.endsWith('whoami') ? state.users.get(userId) : state.entitlements.get(userId);
      if (!value) return sendJson(res, 404, { error: { code: 'not_found', message: `nothing for ${userId}` } });
      return sendJson(res, 200, value);
    }
    sendJson(res, 404, { error: { code: 'not_found', message: 'no route' } });
  });
  // The handler reads `state`, so the returned object must be that very object.
  return Object.assign(state, server, { siteUrl: server.url });
}

/** A shared store's stand-in: answers later, as Redis does, and claims atomically (SET NX). */
export function asyncReplayStore(): ReplayStore & { keys: Map<string, number> } {
  const keys = new Map<string, number>();
  const later = () => new Promise((resolve) => setImmediate(resolve));
  return {
    keys,
    async claim(key, expiresAt, now) {
      await later();
      if ((keys.get(key) ?? 0) > now) return false;
      keys.set(key, expiresAt);
      return true;
    },
    async release(key) {
      await later();
      keys.delete(key);
    },
  };
}
