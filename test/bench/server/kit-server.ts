// The kit's side of the server benchmark: createAppBackend behind toNodeHandler, and the app's
// paid route behind requireEntitlement, as the docs show them. Entitlements come from the
// marketplace once (a fetch answered in process, before the measurement) and are then cached, as
// the reference's are.
import { createServer, type Server } from 'node:http';
import { createAppBackend, createMarketplaceClient, createMemoryReplayStore, jsonResponse, toErrorResponse, toNodeHandler } from '../../../src/server/index.js';
import { API_KEY, CLIENT_ID, CLIENT_SECRET, DASHBOARD, ISSUER, PAID_PATH, SESSION_SECRET, USERS, WEBHOOK_SECRET, entitlement, userId } from './fixtures.js';

/** The marketplace's GET /entitlements, in process: only the warm-up reaches it. */
const marketplace: typeof fetch = async (input) => {
  const user = new URL(String(input)).searchParams.get('user_id') ?? '';
  const index = Number(user.slice(4));
  return new Response(JSON.stringify(entitlement(index)), { headers: { 'content-type': 'application/json' } });
};

export async function createKitServer(): Promise<Server> {
  const client = createMarketplaceClient({
    siteUrl: ISSUER,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    apiKey: API_KEY,
    fetch: marketplace,
    // Kept for the whole run, as the reference keeps its own.
    entitlementTtlMs: 3_600_000,
    rateLimit: { limit: 1_000_000, windowMs: 60_000 },
  });
  const backend = createAppBackend({
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    siteUrl: ISSUER,
    apiKey: API_KEY,
    sessionSecret: SESSION_SECRET,
    webhookSecret: WEBHOOK_SECRET,
    hostOrigins: [DASHBOARD],
    client,
    // One run makes more launches than the default store's 10,000 live tokens.
    replayStore: createMemoryReplayStore({ maxEntries: 1_000_000 }),
  });
  for (let i = 0; i < USERS; i++) await client.entitlements({ userId: userId(i) });

  const app = async (request: Request): Promise<Response> => {
    if (new URL(request.url).pathname !== PAID_PATH) return backend(request);
    try {
      const { session, entitlement: granted } = await backend.requireEntitlement(request, { feature: 'export' });
      return jsonResponse({ user: session.userId, plan: granted?.plan });
    } catch (error) {
      return toErrorResponse(error);
    }
  };
  return createServer(toNodeHandler(app));
}
