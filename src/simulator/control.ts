/**
 * The control API under `{site_url}/_simulator/` (loopback only): read the state, set a user's
 * entitlement, fire webhook events, change the configuration, mint context tokens for the
 * dashboard, and stream changes to it as Server-Sent Events.
 */
import { isKitError } from '../shared/errors.js';
import { Entitlement, KnownWebhookDelivery, WEBHOOK_EVENTS, UserId, parseOrThrow } from '../shared/schemas.js';
import { signContextToken } from '../server/signers.js';
import { assertServable, entitlementForPlan, utcSeconds } from './catalog.js';
import type { SimulatorContext } from './context.js';
import { ApiError, json, readJsonObject } from './http.js';
import type { DeliveryRecord, SimulatorConfig } from './state.js';

/** Lifetime of the context tokens the dashboard hands to the app (docs/decisions.md#embed-launch: at most 300 s). */
const CONTEXT_TOKEN_SECONDS = 300;

function requireUser(ctx: SimulatorContext, userId: unknown): string {
  if (typeof userId !== 'string' || !UserId.safeParse(userId).success) throw new ApiError(400, 'invalid_request', 'user_id must be a user id of the form usr_<id>.');
  if (!ctx.state.users.has(userId)) throw new ApiError(404, 'user_not_found', `No user ${userId}.`);
  return userId;
}

/** `within`: the field whose object `body` is (`usage`), to name unknown fields by their path. */
function rejectUnknownFields(body: Record<string, unknown>, allowed: readonly string[], within?: string): void {
  const unknown = Object.keys(body)
    .filter((key) => !allowed.includes(key))
    .map((key) => (within ? `${within}.${key}` : key));
  if (unknown.length > 0) throw new ApiError(400, 'invalid_request', `Unknown field(s): ${unknown.join(', ')}. Allowed: ${allowed.join(', ')}.`);
}

function schemaError(error: unknown): never {
  if (isKitError(error)) throw new ApiError(400, 'invalid_request', error.message);
  throw error;
}

export function stateSnapshot(ctx: SimulatorContext) {
  const { state } = ctx;
  return {
    site_url: ctx.siteUrl,
    base_url: ctx.baseUrl,
    dashboard_url: ctx.dashboardUrl,
    app_id: ctx.appId,
    app_name: ctx.appName,
    client_id: ctx.credentials.clientId,
    config: configBody(state.config),
    plans: state.catalog.plans,
    events: WEBHOOK_EVENTS,
    current_user_id: state.currentUserId,
    users: [...state.users.values()].map(({ profile }) => ({ ...profile, entitlement: state.entitlements.get(profile.id) ?? null })),
    deliveries: state.deliveries,
    api_calls: state.apiCalls,
  };
}

export function configBody(config: SimulatorConfig) {
  return { app_url: config.appUrl, webhook_url: config.webhookUrl, redirect_uris: config.redirectUris };
}

const ENTITLEMENT_FIELDS = ['plan', 'status', 'features', 'usage', 'expires_at'] as const;

/** `PUT /_simulator/users/{id}/entitlement`: merges the given fields and validates the result. */
export async function putEntitlement(ctx: SimulatorContext, request: Request, userId: string): Promise<Response> {
  requireUser(ctx, userId);
  const body = await readJsonObject(request);
  rejectUnknownFields(body, ENTITLEMENT_FIELDS);
  const current = ctx.state.entitlements.get(userId) ?? null;
  let base: Record<string, unknown>;
  if (current) base = { ...current };
  else {
    const plan = typeof body.plan === 'string' ? ctx.state.catalog.plan(body.plan) : undefined;
    if (!plan) throw new ApiError(400, 'invalid_request', `${userId} holds no entitlement: give a plan (${ctx.state.catalog.plans.map((p) => p.id).join(', ')}) to create one.`);
    base = { ...entitlementForPlan(plan, userId, ctx.appId, ctx.clock()) };
  }
  const usage = body.usage;
  if (usage !== undefined && (typeof usage !== 'object' || usage === null || Array.isArray(usage))) {
    throw new ApiError(400, 'invalid_request', 'usage must be an object with api_calls and/or limit.');
  }
  // A misspelt figure (`apiCalls`) would otherwise change nothing and answer 200.
  if (usage) rejectUnknownFields(usage as Record<string, unknown>, ['api_calls', 'limit'], 'usage');
  const merged = { ...base, ...body, usage: { ...(base.usage as object), ...(usage ?? {}) } };
  let entitlement: Entitlement;
  try {
    entitlement = assertServable(parseOrThrow(Entitlement, merged, 'entitlement'));
  } catch (error) {
    schemaError(error);
  }
  ctx.state.setEntitlement(userId, entitlement);
  return json(200, entitlement);
}

/** `DELETE /_simulator/users/{id}/entitlement`: the user holds no entitlement any more. */
export function deleteEntitlement(ctx: SimulatorContext, userId: string): Response {
  requireUser(ctx, userId);
  ctx.state.setEntitlement(userId, null);
  return new Response(null, { status: 204 });
}

/** What `sim.sendEvent` (and `POST /_simulator/events`) answers once the event is sent. */
export interface EventOutcome {
  /** The event's kind (`subscription.created`). */
  event: string;
  /** `delivered` (2xx), `failed` (every attempt failed) or `skipped` (no webhook URL). */
  outcome: DeliveryRecord['outcome'];
  /** The receiver's last HTTP status, `null` when it never answered. */
  status: number | null;
  /** How many attempts were made. */
  attempts: number;
  /** The delivery as recorded, with each attempt. */
  delivery: DeliveryRecord;
  /** The user's entitlement after the event, when the event names a user. */
  entitlement?: Entitlement | null;
}

/**
 * Sends one event and applies what it means to the simulated state first: a subscription starts
 * (`subscription.created`), is cancelled (`subscription.cancelled`), or the user revokes the app
 * (`user.revoked`: no entitlement, tokens revoked). Listeners hear of the entitlement change only
 * after the receiver answered, so an app backend's entitlement cache is invalid by then.
 */
export async function sendEvent(ctx: SimulatorContext, event: unknown, input: unknown): Promise<EventOutcome> {
  // Checked here, not only by the HTTP route: `sim.sendEvent` is called from plain JavaScript too.
  if (typeof event !== 'string' || !event || event.length > 200) {
    throw new ApiError(400, 'invalid_request', `event must be a non-empty string, e.g. ${WEBHOOK_EVENTS.join(', ')}.`);
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new ApiError(400, 'invalid_request', 'data must be an object.');
  // What the webhook body and the dashboard's stream will hold: data they cannot hold (a BigInt, a
  // cycle) is refused here, not thrown later by the stream's listener, uncaught.
  try {
    JSON.stringify(input);
  } catch (error) {
    throw new ApiError(400, 'invalid_request', `data must be JSON: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }
  const known = (WEBHOOK_EVENTS as readonly string[]).includes(event);
  const data: Record<string, unknown> = { ...input };
  let change: { userId: string; entitlement: Entitlement | null } | null = null;
  if (known) {
    const userId = requireUser(ctx, data.user_id);
    const current = ctx.state.entitlements.get(userId) ?? null;
    if (event === 'subscription.cancelled' && data.plan === undefined) {
      if (!current) throw new ApiError(400, 'invalid_request', `${userId} holds no entitlement to cancel: give the cancelled plan as data.plan.`);
      data.plan = current.plan;
    }
    // The receiver would be told of one plan while /entitlements cancels another.
    if (event === 'subscription.cancelled' && current && data.plan !== current.plan) {
      throw new ApiError(400, 'invalid_request', `${userId} holds ${JSON.stringify(current.plan)}, not ${JSON.stringify(data.plan)}: cancel the plan the user holds.`);
    }
    let next: Entitlement | null = null;
    try {
      parseOrThrow(KnownWebhookDelivery, { event, timestamp: utcSeconds(ctx.clock()), data }, `${event} event`);
      // A plan outside the catalogue would give an entitlement without its features and limit.
      if (event === 'subscription.created' && !ctx.state.catalog.plan(data.plan as string)) {
        throw new ApiError(400, 'unknown_plan', `${JSON.stringify(data.plan)} is not a plan of the simulator's catalogue; its plans are ${ctx.state.catalog.plans.map((p) => p.id).join(', ')}.`);
      }
      // What /entitlements will serve must pass the schema every client reads it with.
      next = nextEntitlement(ctx, event, data, current);
      if (next) assertServable(parseOrThrow(Entitlement, next, `entitlement after ${event}`));
    } catch (error) {
      schemaError(error);
    }
    change = { userId, entitlement: next };
    if (event === 'user.revoked') ctx.state.revokeUser(userId);
    ctx.state.setEntitlement(userId, next, false);
  }
  const delivery = await ctx.webhooks.send(event, data);
  // Announced once delivered (the app's backend has dropped its cache by then), with the
  // entitlement as it is now: another event may have changed it while this one was retried.
  // Every event about a user is announced, `user.authorized` too: the dashboard then tells the app
  // (`entitlementsChanged`), whose activity list shows the delivery.
  if (change) ctx.state.emit({ type: 'entitlement', data: { user_id: change.userId, entitlement: ctx.state.entitlements.get(change.userId) ?? null } });
  const last = delivery.attempts.at(-1);
  return {
    event,
    outcome: delivery.outcome,
    status: last?.status ?? null,
    attempts: delivery.attempts.length,
    delivery,
    ...(change ? { entitlement: change.entitlement } : {}),
  };
}

function nextEntitlement(ctx: SimulatorContext, event: string, data: Record<string, unknown>, current: Entitlement | null): Entitlement | null {
  const userId = data.user_id as string;
  switch (event) {
    case 'subscription.created': {
      const apiCalls = current?.usage.api_calls ?? 0;
      // Checked by sendEvent: the plan is in the catalogue.
      return entitlementForPlan(ctx.state.catalog.plan(data.plan as string)!, userId, ctx.appId, ctx.clock(), { apiCalls });
    }
    case 'subscription.cancelled':
      return current ? { ...current, status: 'cancelled' } : null;
    case 'user.revoked':
      return null;
    default:
      return current;
  }
}

/** `POST /_simulator/events` with `{"event": "...", "data": {...}}`. */
export async function postEvent(ctx: SimulatorContext, request: Request): Promise<Response> {
  const body = await readJsonObject(request);
  rejectUnknownFields(body, ['event', 'data']);
  return json(200, await sendEvent(ctx, body.event, body.data ?? {}));
}

function optionalUrl(value: unknown, field: string): string | null {
  if (value === null) return null;
  return absoluteUrl(value, field);
}

function absoluteUrl(value: unknown, field: string): string {
  if (isEndpointUrl(value)) return value;
  throw new ApiError(400, 'invalid_request', `${field} must be an absolute http(s) URL without a fragment.`);
}

/** An app URL, webhook URL or Redirect URI the simulator takes (`startSimulator` checks its options with it too). */
export function isEndpointUrl(value: unknown): value is string {
  if (typeof value !== 'string' || value.includes('#')) return false;
  // RFC 6749 §3.1.2: a redirection endpoint has no fragment; all our URLs are http(s).
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

export interface ConfigPatch {
  app_url?: string | null;
  webhook_url?: string | null;
  redirect_uris?: string[];
}

/** Validates and applies a configuration change (the control API and `startSimulator` share it). */
export function applyConfig(ctx: SimulatorContext, body: Record<string, unknown>): SimulatorConfig {
  rejectUnknownFields(body, ['app_url', 'webhook_url', 'redirect_uris']);
  const next = { ...ctx.state.config };
  // Undefined is not given (`sim.configure({ app_url: process.env.APP_URL })`); JSON has none.
  if (body.app_url !== undefined) next.appUrl = optionalUrl(body.app_url, 'app_url');
  if (body.webhook_url !== undefined) next.webhookUrl = optionalUrl(body.webhook_url, 'webhook_url');
  if (body.redirect_uris !== undefined) {
    if (!Array.isArray(body.redirect_uris)) throw new ApiError(400, 'invalid_request', 'redirect_uris must be an array of URLs.');
    next.redirectUris = body.redirect_uris.map((uri, i) => absoluteUrl(uri, `redirect_uris[${i}]`));
  }
  Object.assign(ctx.state.config, next);
  ctx.state.emit({ type: 'config', data: configBody(ctx.state.config) });
  return ctx.state.config;
}

export async function putConfig(ctx: SimulatorContext, request: Request): Promise<Response> {
  const config = applyConfig(ctx, await readJsonObject(request));
  return json(200, configBody(config));
}

export function getConfig(ctx: SimulatorContext): Response {
  return json(200, configBody(ctx.state.config));
}

/** A fresh context token for one user (docs/decisions.md#embed-launch), for the dashboard's embed URL and `getContext`. */
export async function mintContext(ctx: SimulatorContext, userId: string): Promise<{ context: string; expires_in: number }> {
  const user = ctx.state.users.get(userId)!.profile;
  const context = await signContextToken({
    clientId: ctx.credentials.clientId,
    clientSecret: ctx.credentials.clientSecret,
    issuer: ctx.siteUrl,
    host: ctx.origin,
    appId: ctx.appId,
    user,
    ttlSeconds: CONTEXT_TOKEN_SECONDS,
    now: ctx.clock(),
  });
  return { context, expires_in: CONTEXT_TOKEN_SECONDS };
}

/** `POST /_simulator/context` with `{"user_id"}`; the user becomes the one the sign-in page proposes. */
export async function postContext(ctx: SimulatorContext, request: Request): Promise<Response> {
  const body = await readJsonObject(request);
  rejectUnknownFields(body, ['user_id']);
  const userId = requireUser(ctx, body.user_id);
  ctx.state.currentUserId = userId;
  return json(200, await mintContext(ctx, userId));
}

/** Bytes of unsent events a stream may hold for a client that does not read them; then it is cut. */
export const STREAM_BACKLOG_BYTES = 1024 * 1024;

/**
 * `GET /_simulator/stream`: Server-Sent Events of every change, for the dashboard. `open` holds
 * what ends each stream under way, which `close()` of the simulator calls.
 */
export function stream(ctx: SimulatorContext, request: Request, open: Set<() => void>): Response {
  const headers = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' };
  // A HEAD has its answer: no stream is held open for a body that is never sent.
  if (request.method === 'HEAD') return new Response(null, { headers });
  let end = () => {};
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        // A client that stops reading (a paused or frozen tab, `curl -N … | less`) would otherwise
        // have every later event queued here without bound: past STREAM_BACKLOG_BYTES the stream
        // is cut, and the dashboard's EventSource reconnects and catches up from the `state` event.
        const send = (chunk: string) => {
          if ((controller.desiredSize ?? 0) < 0) return end(), controller.error(new Error('the event stream\'s reader fell behind'));
          controller.enqueue(encoder.encode(chunk));
        };
        send('retry: 2000\n\n');
        const unsubscribe = ctx.state.subscribe((event) => send(`event: ${event.type}\ndata: ${JSON.stringify(event.data)}\n\n`));
        // The state as of now comes first, and every later change follows it in order: a client
        // that (re)connects catches up from it with no race against a `GET /state` of its own.
        send(`event: state\ndata: ${JSON.stringify(stateSnapshot(ctx))}\n\n`);
        // Keeps proxies and the browser from timing the idle stream out.
        const heartbeat = setInterval(() => send(': keep-alive\n\n'), 15_000);
        heartbeat.unref();
        const finish = () => {
          end();
          controller.close();
        };
        open.add(finish);
        end = () => {
          clearInterval(heartbeat);
          unsubscribe();
          open.delete(finish);
        };
      },
      // The client left (or the adapter stopped reading): nothing more is written.
      cancel: () => end(),
    },
    { highWaterMark: STREAM_BACKLOG_BYTES, size: (chunk) => chunk.byteLength },
  );
  return new Response(body, { headers });
}
