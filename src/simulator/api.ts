/**
 * `GET {base_url}/whoami` and `GET {base_url}/entitlements` (docs/marketplace.md#whoami-and-entitlements) with the two ways
 * to authenticate (docs/marketplace.md#authentication), the rate limits per key kind (docs/marketplace.md#rate-limits) and the API error shape of
 * docs/decisions.md#marketplace-api. Every call is recorded so the dashboard can show the checks an app makes.
 */
import { safeEqual } from '../server/lib/safe-equal.js';
import { UserId } from '../shared/schemas.js';
import type { SimulatorContext } from './context.js';
import { ApiError, json } from './http.js';
import type { ApiCallRecord } from './state.js';

type Caller =
  | { kind: 'bearer'; userId: string }
  | { kind: 'test_key' | 'live_key' };

function identify(ctx: SimulatorContext, request: Request): Caller {
  const authorization = request.headers.get('authorization');
  const apiKey = request.headers.get('x-api-key');
  if (authorization !== null && apiKey !== null) {
    throw new ApiError(400, 'invalid_request', 'Send either Authorization: Bearer or X-API-Key, not both.');
  }
  if (authorization !== null) {
    const match = authorization.match(/^Bearer\s+(\S+)$/i);
    const record = match ? ctx.state.accessTokens.get(match[1]!) : undefined;
    if (!record || record.expiresAt <= ctx.clock()) {
      throw new ApiError(401, 'invalid_token', 'The access token is invalid, expired or revoked.', {
        'www-authenticate': 'Bearer realm="marketplace", error="invalid_token"',
      });
    }
    return { kind: 'bearer', userId: record.userId };
  }
  if (apiKey !== null) {
    if (safeEqual(apiKey, ctx.credentials.testApiKey)) return { kind: 'test_key' };
    if (safeEqual(apiKey, ctx.credentials.liveApiKey)) return { kind: 'live_key' };
    throw new ApiError(401, 'invalid_api_key', 'The API key is not valid.');
  }
  throw new ApiError(401, 'unauthorized', 'Authenticate with Authorization: Bearer <access token> or X-API-Key: <API key>.', {
    'www-authenticate': 'Bearer realm="marketplace"',
  });
}

function userOf(ctx: SimulatorContext, caller: Caller, url: URL): string {
  if (caller.kind === 'bearer') return caller.userId;
  const ids = url.searchParams.getAll('user_id');
  if (ids.length === 0) throw new ApiError(400, 'missing_user_id', 'With an API key, choose the user with ?user_id=usr_….');
  if (ids.length > 1 || !UserId.safeParse(ids[0]).success) throw new ApiError(400, 'invalid_request', 'user_id must be one user id of the form usr_<id>.');
  const userId = ids[0]!;
  if (!ctx.state.users.has(userId)) throw new ApiError(404, 'user_not_found', `No user ${userId}.`);
  return userId;
}

export function apiRequest(ctx: SimulatorContext, request: Request, url: URL, resource: 'whoami' | 'entitlements'): Response {
  const call: ApiCallRecord = {
    at: new Date(ctx.clock()).toISOString(),
    method: request.method,
    path: `${url.pathname}${url.search}`,
    auth: 'none',
    user_id: null,
    status: 0,
    response: null,
  };
  let rateHeaders: Record<string, string> = {};
  try {
    if (request.method !== 'GET' && request.method !== 'HEAD') throw new ApiError(405, 'method_not_allowed', `Use GET ${url.pathname}.`, { allow: 'GET, HEAD' });
    const caller = identify(ctx, request);
    call.auth = caller.kind;
    const [key, limit] =
      caller.kind === 'bearer'
        ? [`bearer:${caller.userId}`, ctx.rateLimits.bearer]
        : [caller.kind, caller.kind === 'test_key' ? ctx.rateLimits.test : ctx.rateLimits.live];
    const decision = ctx.limiter.take(key, limit);
    rateHeaders = ctx.limiter.headers(decision);
    if (!decision.allowed) throw new ApiError(429, 'rate_limited', `Rate limit of ${limit} requests per ${ctx.rateLimits.windowMs / 1000} s reached.`);
    const userId = userOf(ctx, caller, url);
    call.user_id = userId;
    let body: unknown;
    if (resource === 'whoami') body = ctx.state.users.get(userId)!.profile;
    else {
      body = ctx.state.entitlements.get(userId);
      if (!body) throw new ApiError(404, 'entitlement_not_found', `${userId} holds no entitlement for this app.`);
    }
    call.status = 200;
    call.response = body;
    return json(200, body, rateHeaders);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    call.status = error.status;
    call.response = { error: { code: error.code, message: error.message } };
    return error.toResponse(rateHeaders);
  } finally {
    ctx.state.recordCall(call);
  }
}
