// Backend code as an app writes it from the docs, type-checked against the built package in a
// Node project without the DOM library (see test/node/types.test.ts). Every line without a marker
// must compile with no cast; every line after `// @ts-expect-error` is a mistake the types must
// refuse: once one compiles, tsc reports the directive as unused and the test fails.
import { createServer } from 'node:http';
import { createSecureServer } from 'node:http2';
import {
  createAppBackend, createMarketplaceClient, verifyWebhook, receiveWebhook, isKnownEvent, isKitError,
  toNodeHandler, toErrorResponse, jsonResponse, applyEmbedPageHeaders, earlyLaunchScript,
  createMemoryReplayStore, verifyContextToken, signSessionToken, AccessDeniedError, MarketplaceApiError,
  type AppBackend, type AppBackendOptions, type AppSession, type Entitlement, type ErrorCode,
  type MarketplaceClient, type Profile, type ReplayStore, type TokenSet, type WebhookDelivery,
} from 'marketplace-app-kit/server';
import { startSimulator, type Simulator, type SimulatorEvent, type SimulatorOptions } from 'marketplace-app-kit/simulator';

declare function show(value: unknown): void;
declare const request: Request;
declare const rawBody: Buffer;
declare const signature: string | undefined;

// ── createAppBackend ──────────────────────────────────────────────────────────────────────────
const required = {
  siteUrl: 'https://marketplace.example',
  clientId: 'client',
  clientSecret: 'secret',
  apiKey: 'live_key',
  sessionSecret: 'x'.repeat(40),
  hostOrigins: ['https://dashboard.marketplace.example'],
} as const;
const marketplace: AppBackend = createAppBackend({
  ...required,
  webhookSecret: 'whsec',
  publicOrigin: process.env.PUBLIC_ORIGIN, // may be undefined: every optional option takes it
  corsOrigins: ['https://site.example'],
  sessionTtlSeconds: 600,
  onEvent: async (delivery) => {
    if (isKnownEvent(delivery) && delivery.event === 'subscription.created') show(delivery.data.plan);
  },
  onError: (error, failed) => show([error, failed.url]),
  replayStore: createMemoryReplayStore({ maxEntries: 1000 }),
  maxExchangesPerUser: Infinity,
});
createAppBackend({ ...required, webhookSecrets: ['new', 'previous'] });
createAppBackend({ ...required, webhooks: false });
createAppBackend({ ...required, webhookSecret: 'whsec', client: createMarketplaceClient({ siteUrl: required.siteUrl, apiKey: 'live_key' }) });
// @ts-expect-error: sessionSecret is required
createAppBackend({ siteUrl: 'https://marketplace.example', clientId: 'c', clientSecret: 's', apiKey: 'live_k', hostOrigins: [], webhookSecret: 'w' });
// @ts-expect-error: hostOrigins is required
createAppBackend({ siteUrl: 'https://marketplace.example', clientId: 'c', clientSecret: 's', apiKey: 'live_k', sessionSecret: 'x'.repeat(40), webhookSecret: 'w' });
// @ts-expect-error: a misspelled option
createAppBackend({ ...required, webhookSecret: 'w', corsOrigin: ['https://site.example'] });
// @ts-expect-error: webhooks is only ever false (receive none)
createAppBackend({ ...required, webhooks: true });
// @ts-expect-error: webhookSecrets is a list
createAppBackend({ ...required, webhookSecrets: 'whsec' });
// @ts-expect-error: sessionTtlSeconds is a number of seconds
createAppBackend({ ...required, webhookSecret: 'w', sessionTtlSeconds: '900' });
// @ts-expect-error: onEvent receives the delivery, typed: its event is text
createAppBackend({ ...required, webhookSecret: 'w', onEvent: (delivery: { event: number }) => show(delivery) });
// @ts-expect-error: a replay store needs claim and release
createAppBackend({ ...required, webhookSecret: 'w', replayStore: { claim: () => true } });
const backendOptions: AppBackendOptions = { ...required, webhookSecret: 'w' };
show(backendOptions);

createSecureServer({ allowHTTP1: true }, toNodeHandler(marketplace)); // HTTP/2, and HTTP/1.1 on the same port
createServer(toNodeHandler(async (incoming) => {
  const { pathname } = new URL(incoming.url);
  if (pathname === marketplace.basePath || pathname.startsWith(`${marketplace.basePath}/`)) return marketplace(incoming);
  try {
    const session: AppSession = await marketplace.requireSession(incoming);
    const { entitlement } = await marketplace.requireEntitlement(incoming, { feature: 'export', plan: ['pro_monthly', 'pro_annual'], metered: true });
    return jsonResponse({ user: session.user.name, plan: entitlement?.plan }, { status: 200 });
  } catch (error) {
    if (error instanceof AccessDeniedError) show(error.reason);
    return toErrorResponse(error);
  }
})).listen(3000);
// @ts-expect-error: the requirement's keys are feature, plan and metered
await marketplace.requireEntitlement(request, { features: ['export'] });
// @ts-expect-error: the handler takes a Request
await marketplace('/api/marketplace/session');
// @ts-expect-error: basePath is read only
marketplace.basePath = '/mp';
marketplace.client.invalidate('usr_1');

// ── headers and the early exchange ────────────────────────────────────────────────────────────
declare const res: import('node:http').ServerResponse;
applyEmbedPageHeaders(res, ['https://dashboard.marketplace.example']).setHeader('Cache-Control', 'no-store');
applyEmbedPageHeaders(new Headers(), 'https://dashboard.marketplace.example');
declare const http2Res: import('node:http2').Http2ServerResponse;
applyEmbedPageHeaders(http2Res, ['https://dashboard.marketplace.example']).end('<!doctype html>');
const early: string = earlyLaunchScript({ backend: '/api/marketplace', hostOrigins: ['https://dashboard.marketplace.example'] });
// @ts-expect-error: the early script needs hostOrigins, as createKit does
earlyLaunchScript({ backend: '/api/marketplace' });
// @ts-expect-error: headers go on a response
applyEmbedPageHeaders('https://dashboard.marketplace.example', []);

// ── verifyWebhook ─────────────────────────────────────────────────────────────────────────────
try {
  const delivery: WebhookDelivery = await verifyWebhook(rawBody, signature, { secret: 'whsec', toleranceSeconds: 300 });
  // @ts-expect-error: narrow with isKnownEvent before reading an event's own data
  const unchecked: string = delivery.data.plan;
  if (isKnownEvent(delivery)) {
    switch (delivery.event) {
      case 'subscription.created':
      case 'subscription.cancelled': {
        const planId: string = delivery.data.plan;
        show(planId);
        break;
      }
      case 'user.authorized':
      case 'user.revoked': {
        const userId: string = delivery.data.user_id;
        // @ts-expect-error: these events carry no plan
        const none: string = delivery.data.plan;
        show(userId);
        break;
      }
      // @ts-expect-error: no such event
      case 'subscription.renewed':
        break;
    }
  } else {
    const kind: string = delivery.event;
    const data: Record<string, unknown> = delivery.data;
    show([kind, data, delivery.timestamp]);
  }
} catch (error) {
  if (isKitError(error, 'ERR_WEBHOOK_DUPLICATE')) show(error.status);
  const code: ErrorCode | undefined = isKitError(error) ? error.code : undefined;
  // @ts-expect-error: no such error code
  if (isKitError(error, 'ERR_WEBHOOK_NOPE')) show(error);
  show(code);
}
await verifyWebhook('{"event":"x"}', null, { secrets: ['new', 'previous'], now: new Date() });
await verifyWebhook(new Uint8Array(), undefined, { secret: 'whsec', replayStore: createMemoryReplayStore(), now: Date.now() });
const { delivery: received, release } = await receiveWebhook(rawBody, signature, { secret: 'whsec' });
await release();
show(received.event);
// @ts-expect-error: a parsed body is not the raw body
await verifyWebhook({ event: 'user.revoked' }, signature, { secret: 'whsec' });
// @ts-expect-error: the option is secret (or secrets)
await verifyWebhook(rawBody, signature, { webhookSecret: 'whsec' });
// @ts-expect-error: toleranceSeconds is a number
await verifyWebhook(rawBody, signature, { secret: 'whsec', toleranceSeconds: '300' });
const store: ReplayStore = { claim: async () => true, release: () => {} };
show(store);

// ── the marketplace client ────────────────────────────────────────────────────────────────────
const client: MarketplaceClient = createMarketplaceClient({
  siteUrl: 'https://marketplace.example',
  clientId: 'client',
  clientSecret: 'secret',
  apiKey: 'live_key',
  timeoutMs: 5000,
  rateLimit: { limit: 50 },
});
const { url, state, codeVerifier } = client.authorizationUrl({ redirectUri: 'https://notes.example/cb' });
const tokens: TokenSet = await client.exchangeCode({ code: 'code', redirectUri: 'https://notes.example/cb', codeVerifier });
const renewed: TokenSet = await client.refresh(tokens.refreshToken!, { signal: AbortSignal.timeout(1000) });
const me: Profile = await client.whoami({ accessToken: tokens.accessToken });
const ada: Profile = await client.whoami({ userId: 'usr_1', signal: AbortSignal.timeout(1000) });
const entitlement: Entitlement | null = await client.entitlements({ userId: 'usr_1', fresh: true });
const cached: boolean = client.isCached('usr_1');
const kind: 'test' | 'live' | null = client.keyKind;
show([url, state, renewed.expiresAt, me.email, ada.avatar_url, entitlement?.status, cached, kind, client.tokenUrl]);
// @ts-expect-error: siteUrl is required
createMarketplaceClient({ apiKey: 'live_key' });
// @ts-expect-error: a misspelled option
createMarketplaceClient({ siteUrl: 'https://marketplace.example', apikey: 'live_key' });
// @ts-expect-error: a user is selected by accessToken or by userId, not both
await client.whoami({ accessToken: 'token', userId: 'usr_1' });
// @ts-expect-error: a user must be selected
await client.entitlements({ fresh: true });
// @ts-expect-error: exchangeCode needs the code
await client.exchangeCode({ redirectUri: 'https://notes.example/cb' });
// @ts-expect-error: refresh takes the refresh token itself
await client.refresh({ refreshToken: 'token' });
// @ts-expect-error: the resolved endpoints are read only
client.siteUrl = 'https://other.example';
try {
  await client.whoami({ userId: 'usr_1' });
} catch (error) {
  if (error instanceof MarketplaceApiError) show([error.code, error.status, error.endpoint, error.upstreamCode, error.retryAfterMs]);
  if (isKitError(error, 'ERR_RATE_LIMITED')) show(error.retryAfterMs);
}

// ── context and session tokens ────────────────────────────────────────────────────────────────
const claims = await verifyContextToken('token', { clientId: 'c', clientSecret: 's', issuer: 'https://marketplace.example', host: 'https://dashboard.marketplace.example' });
show(claims.sub);
// @ts-expect-error: the issuer is required
await verifyContextToken('token', { clientId: 'c', clientSecret: 's' });
const signed = await signSessionToken({ secret: 'x'.repeat(40), audience: 'app', user: me, appId: null, host: null, ttlSeconds: 60 });
show(signed.expiresAt);

// ── the simulator ─────────────────────────────────────────────────────────────────────────────
const sim: Simulator = await startSimulator({ appUrl: 'http://127.0.0.1:3000/', port: 0 });
await startSimulator();
// A list kept as a constant is a readonly one, as for every other list option of the kit.
const redirectUris = ['http://127.0.0.1:3000/api/marketplace/oauth/callback'] as const;
await startSimulator({ appUrl: 'http://127.0.0.1:3000/', redirectUris });
const simOptions: SimulatorOptions = { port: 0, clock: () => 0, rateLimits: { test: 5 }, hostBundle: new URL('file:///host.js'), webhookUrl: undefined };
show([sim.siteUrl, sim.baseUrl, sim.dashboardUrl, sim.clientId, sim.clientSecret, sim.testApiKey, sim.liveApiKey, sim.webhookSecret, sim.appId, simOptions]);
const users: Profile[] = sim.users;
const outcome = await sim.sendEvent('subscription.created', { user_id: 'usr_ada', plan: 'pro_monthly' });
show([users, outcome.status, outcome.attempts]);
const adaPlan: Entitlement | null = sim.entitlement('usr_ada');
sim.setEntitlement('usr_ada', null);
sim.configure({ webhook_url: 'http://127.0.0.1:3000/hooks', app_url: null });
sim.configure({ redirect_uris: redirectUris });
const token: string = await sim.contextToken('usr_grace');
const stop: () => void = sim.subscribe((event: SimulatorEvent) => show(event.type));
stop();
show([adaPlan, token, sim.state()]);
await sim.close();
// @ts-expect-error: a misspelled option
await startSimulator({ appURL: 'http://127.0.0.1:3000/' });
// @ts-expect-error: port is a number
await startSimulator({ port: '4010' });
// @ts-expect-error: configure takes the control API's field names
sim.configure({ webhookUrl: 'http://127.0.0.1:3000/hooks' });
// @ts-expect-error: the clock answers milliseconds
await startSimulator({ clock: () => new Date() });
// @ts-expect-error: what the simulator was started with; setting it would change nothing
sim.webhookSecret = 'whsec_other';

show([early]);
export {};
