/**
 * The sample app's backend: "Field Notes", a small notes tool sold in the marketplace.
 *
 * Written the way an app developer writes it: everything marketplace-related comes from
 * `marketplace-app-kit/server` (the package's own name, resolved to dist/ through its exports
 * map), the rest is the app's own code. It runs behind the demo's Vite server, which proxies
 * `/api` here, so the browser sees the app page and this backend as one origin.
 *
 * Routes:
 * - `/api/marketplace/*`: the kit's routes (session exchange, OAuth sign-in, webhooks);
 * - `GET /api/notes`, `POST /api/notes`: free for every signed-in user;
 * - `GET /api/notes/export.csv`: the paid feature, refused with 403 without the `export` feature;
 * - `GET /api/activity`: what the marketplace's webhooks told the app, newest first.
 */
import { randomUUID } from 'node:crypto';
import { createAppBackend, jsonResponse, toErrorResponse, type AppBackend, type MarketplaceStores, type WebhookDelivery } from 'marketplace-app-kit/server';

/** The paid feature: the simulator's paid plans list it, its free plan does not. */
export const EXPORT_FEATURE = 'export';
export const API_BASE = '/api';
export const MARKETPLACE_BASE = '/api/marketplace';

export interface SampleBackendOptions {
  /** The marketplace's `{site_url}` (the simulator's `siteUrl`). */
  siteUrl: string;
  clientId: string;
  clientSecret: string;
  /** A `test_`/`live_` key: loads entitlements by user id after webhooks. */
  apiKey: string;
  webhookSecret: string;
  /** Dashboard origins allowed to embed the app (mp_host allowlist, CSP frame-ancestors). */
  hostOrigins: string[];
  /** The origin the browser sees (the Vite server that proxies `/api` here). */
  publicOrigin: string;
  /** ≥ 32 characters. The demo makes a fresh one per start. */
  sessionSecret: string;
  /** Lifetime of the app sessions this backend mints; short values let the tests see expiry. */
  sessionTtlSeconds?: number;
  /** The kit's shared state (several instances: `createRedisStores`); in memory by default. */
  stores?: MarketplaceStores;
  /**
   * The app's own data (notes, webhook activity). Instances of one app share it, as they would
   * share the app's database: the demo's instances run in one process and pass the same object.
   */
  data?: SampleData;
  log?: (line: string) => void;
}

/** What the sample app itself keeps: notes per user, and the webhook activity. */
export interface SampleData {
  notes: Map<string, Note[]>;
  activity: ActivityEntry[];
}

export function createSampleData(): SampleData {
  return { notes: new Map(), activity: [] };
}

export interface Note {
  id: string;
  title: string;
  body: string;
  created_at: string;
}

export interface ActivityEntry {
  at: string;
  event: string;
  user_id: string | null;
  summary: string;
}

export interface SampleBackend {
  /** Web-standard handler: `toNodeHandler(backend.handle)` serves it from node:http. */
  handle(request: Request): Promise<Response>;
  /** The kit's backend, for `requireSession` / `requireEntitlement` in tests. */
  marketplace: AppBackend;
  /** Webhook activity, newest first (kept to the last 50 entries). */
  activity: readonly ActivityEntry[];
}

const ACTIVITY_LIMIT = 50;
const NOTE_TITLE_MAX = 120;
const NOTE_BODY_MAX = 4000;
const NOTE_REQUEST_MAX_BYTES = 32 * 1024;
/** The demo keeps notes in memory: the oldest go first. */
const NOTES_PER_USER = 200;

export function createSampleBackend(options: SampleBackendOptions): SampleBackend {
  const log = options.log ?? (() => {});
  const { notes, activity } = options.data ?? createSampleData();

  const record = (delivery: WebhookDelivery, summary: string) => {
    const userId = typeof delivery.data.user_id === 'string' ? delivery.data.user_id : null;
    activity.unshift({ at: new Date().toISOString(), event: delivery.event, user_id: userId, summary });
    activity.length = Math.min(activity.length, ACTIVITY_LIMIT);
    log(`webhook ${delivery.event}${userId ? ` for ${userId}` : ''}: ${summary}`);
  };

  const marketplace = createAppBackend({
    siteUrl: options.siteUrl,
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    apiKey: options.apiKey,
    webhookSecret: options.webhookSecret,
    sessionSecret: options.sessionSecret,
    hostOrigins: options.hostOrigins,
    basePath: MARKETPLACE_BASE,
    publicOrigin: options.publicOrigin,
    redirectUri: `${options.publicOrigin}${MARKETPLACE_BASE}/oauth/callback`,
    ...(options.sessionTtlSeconds === undefined ? {} : { sessionTtlSeconds: options.sessionTtlSeconds }),
    ...(options.stores === undefined ? {} : { stores: options.stores }),
    onError: (error) => log(`marketplace route failed: ${error instanceof Error ? error.message : String(error)}`),
    // The kit has already verified the signature, the timestamp and replays, and dropped the
    // user's cached entitlement; the app only reacts to what happened.
    onEvent(delivery) {
      const data = delivery.data as { user_id?: unknown; plan?: unknown };
      switch (delivery.event) {
        case 'user.authorized':
          record(delivery, 'connected Field Notes');
          break;
        case 'subscription.created':
          record(delivery, `subscribed to the ${String(data.plan)} plan`);
          break;
        case 'subscription.cancelled':
          record(delivery, `cancelled the ${String(data.plan)} plan`);
          break;
        case 'user.revoked':
          // A user who withdraws access expects the app to forget them. Their sessions end too: the
          // kit refuses every session issued before (ERR_SESSION_REVOKED), on every instance.
          if (typeof data.user_id === 'string') notes.delete(data.user_id);
          record(delivery, 'revoked access: their notes were deleted');
          break;
        default:
          record(delivery, 'unknown event kind, ignored');
      }
    },
  });

  const notesOf = (userId: string): Note[] => {
    let list = notes.get(userId);
    if (!list) {
      list = [welcomeNote()];
      notes.set(userId, list);
    }
    return list;
  };

  async function routeApp(request: Request, path: string): Promise<Response> {
    if (path === '/notes' && request.method === 'GET') {
      const { userId } = await marketplace.requireSession(request);
      return jsonResponse({ notes: notesOf(userId) });
    }
    if (path === '/notes' && request.method === 'POST') {
      const { userId } = await marketplace.requireSession(request);
      const input = await readNote(request);
      if ('error' in input) return jsonError(400, 'ERR_INVALID_INPUT', input.error);
      const note: Note = { id: randomUUID(), created_at: new Date().toISOString(), ...input };
      const list = notesOf(userId);
      list.unshift(note);
      list.length = Math.min(list.length, NOTES_PER_USER);
      return jsonResponse({ note }, { status: 201 });
    }
    if (path === '/notes/export.csv' && request.method === 'GET') {
      // The same rule as <mp-gate feature="export"> in the page: the gate only hides the button,
      // this check is what actually protects the feature.
      const { session } = await marketplace.requireEntitlement(request, { feature: EXPORT_FEATURE });
      return new Response(toCsv(notesOf(session.userId)), {
        headers: {
          'content-type': 'text/csv; charset=utf-8',
          'content-disposition': 'attachment; filename="field-notes.csv"',
        },
      });
    }
    if (path === '/activity' && request.method === 'GET') {
      const { userId } = await marketplace.requireSession(request);
      return jsonResponse({ activity: activity.filter((entry) => entry.user_id === userId || entry.user_id === null) });
    }
    return jsonError(404, 'ERR_NOT_FOUND', `No route ${request.method} ${API_BASE}${path}`);
  }

  async function handle(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (path === MARKETPLACE_BASE || path.startsWith(`${MARKETPLACE_BASE}/`)) return marketplace(request);
    if (!path.startsWith(`${API_BASE}/`)) return jsonError(404, 'ERR_NOT_FOUND', `No route ${request.method} ${path}`);
    try {
      return await routeApp(request, path.slice(API_BASE.length));
    } catch (error) {
      // Kit errors answer with their own status (401 no session, 403 no access), anything else as
      // an opaque 500. Every 5xx is logged: a bug of this app, or the marketplace failing
      // (502/503/504 from requireEntitlement), which the kit's onError does not see on these routes.
      const answer = toErrorResponse(error);
      if (answer.status >= 500) log(`${answer.status} on ${request.method} ${path}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      return answer;
    }
  }

  return { handle, marketplace, activity };
}

function welcomeNote(): Note {
  return {
    id: randomUUID(),
    title: 'Welcome to Field Notes',
    body: 'Notes are free. Exporting them to CSV is part of the Pro plan.',
    created_at: new Date().toISOString(),
  };
}

async function readNote(request: Request): Promise<{ title: string; body: string } | { error: string }> {
  // Refuse before reading: a body without a declared length, or a longer one, is not a note.
  const length = Number(request.headers.get('content-length'));
  if (!(length > 0 && length <= NOTE_REQUEST_MAX_BYTES)) return { error: `Expected a JSON body of at most ${NOTE_REQUEST_MAX_BYTES} bytes` };
  let value: unknown;
  try {
    value = await request.json();
  } catch {
    return { error: 'Expected a JSON body' };
  }
  const { title, body } = (value ?? {}) as { title?: unknown; body?: unknown };
  if (typeof title !== 'string' || title.trim() === '' || title.length > NOTE_TITLE_MAX) {
    return { error: `title must be 1–${NOTE_TITLE_MAX} characters` };
  }
  if (body !== undefined && (typeof body !== 'string' || body.length > NOTE_BODY_MAX)) {
    return { error: `body must be at most ${NOTE_BODY_MAX} characters` };
  }
  return { title: title.trim(), body: body ?? '' };
}

/**
 * RFC 4180 fields, as OWASP's CSV-injection advice has them: a leading `=`, `+`, `-`, `@`, tab or
 * carriage return is quoted away with `'`, and every field is in double quotes, so that a
 * spreadsheet that splits on `;` (Excel in many locales) finds no cell that starts a formula.
 */
function toCsv(list: readonly Note[]): string {
  const field = (value: string) => `"${(/^[=+\-@\t\r]/.test(value) ? `'${value}` : value).replaceAll('"', '""')}"`;
  const rows = [['created_at', 'title', 'body'], ...list.map((note) => [note.created_at, note.title, note.body])];
  return `${rows.map((row) => row.map(field).join(',')).join('\r\n')}\r\n`;
}

function jsonError(status: number, code: string, message: string): Response {
  return jsonResponse({ error: { code, message } }, { status });
}
