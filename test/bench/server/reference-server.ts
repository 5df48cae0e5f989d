// The reference of the server benchmark: the same two routes written by hand on node:http, as a
// developer would without the kit. POST /session: the body read with a 16 KB limit, JSON.parse,
// the dashboard origin checked, jose's jwtVerify with a CryptoKey imported once (HS256, typ,
// issuer, audience, 300 s age, 10 s tolerance), the token's host, its jti in a Map, the cached
// entitlement, jose's SignJWT with a key imported once. GET /api/export: the Bearer session
// verified by jose, the cached entitlement's status and feature, a JSON answer.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { jwtVerify, SignJWT } from 'jose';
import { CLIENT_ID, CLIENT_SECRET, CONTEXT_TOKEN_CHECKS, DASHBOARD, PAID_PATH, SESSION_PATH, SESSION_SECRET, SESSION_TYPE, USERS, entitlement } from './fixtures.js';

const LIMIT = 16 * 1024;

export async function createReferenceServer(): Promise<Server> {
  const raw = (secret: string) => new TextEncoder().encode(secret);
  const hmac = { name: 'HMAC', hash: 'SHA-256' };
  const contextKey = await crypto.subtle.importKey('raw', raw(CLIENT_SECRET), hmac, false, ['verify']);
  const sessionKey = await crypto.subtle.importKey('raw', raw(SESSION_SECRET), hmac, false, ['sign', 'verify']);
  const entitlements = new Map<string, ReturnType<typeof entitlement>>();
  for (let i = 0; i < USERS; i++) entitlements.set(`usr_${i}`, entitlement(i));
  const seen = new Map<string, number>();

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
    res.end(JSON.stringify(body));
  };
  const fail = (res: ServerResponse, status: number, code: string) => send(res, status, { error: { code, message: code } });

  const readBody = (req: IncomingMessage) =>
    new Promise<string | null>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > LIMIT) resolve(null);
        else chunks.push(chunk);
      });
      req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      req.on('error', reject);
    });

  async function postSession(req: IncomingMessage, res: ServerResponse) {
    const text = await readBody(req);
    if (text === null) return fail(res, 413, 'too_large');
    let body: { context?: unknown; host?: unknown };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      return fail(res, 400, 'invalid_json');
    }
    if (typeof body.context !== 'string' || typeof body.host !== 'string' || body.host !== DASHBOARD) return fail(res, 401, 'bad_request');
    let claims;
    try {
      ({ payload: claims } = await jwtVerify(body.context, contextKey, CONTEXT_TOKEN_CHECKS));
    } catch {
      return fail(res, 401, 'bad_token');
    }
    if (claims.host !== body.host) return fail(res, 401, 'bad_host');
    const jti = claims.jti!;
    if (seen.has(jti)) return fail(res, 401, 'replayed');
    seen.set(jti, claims.exp!);
    const user = { id: claims.sub!, email: claims.email as string, name: claims.name as string, avatar_url: claims.avatar_url as string };
    const iat = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ email: user.email, name: user.name, avatar_url: user.avatar_url, app_id: claims.app_id, host: claims.host })
      .setProtectedHeader({ alg: 'HS256', typ: SESSION_TYPE })
      .setSubject(user.id)
      .setAudience(CLIENT_ID)
      .setIssuedAt(iat)
      .setExpirationTime(iat + 900)
      .setJti(randomUUID())
      .sign(sessionKey);
    send(res, 200, {
      session: { token, expires_at: new Date((iat + 900) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') },
      user,
      entitlement: entitlements.get(user.id) ?? null,
      host: claims.host,
    });
  }

  async function getPaid(req: IncomingMessage, res: ServerResponse) {
    const authorization = req.headers.authorization;
    if (!authorization?.startsWith('Bearer ')) return fail(res, 401, 'no_session');
    let claims;
    try {
      ({ payload: claims } = await jwtVerify(authorization.slice(7), sessionKey, {
        algorithms: ['HS256'],
        typ: SESSION_TYPE,
        audience: CLIENT_ID,
        requiredClaims: ['exp', 'iat', 'sub'],
      }));
    } catch {
      return fail(res, 401, 'bad_session');
    }
    const granted = entitlements.get(claims.sub!);
    if (!granted || granted.status !== 'active' || !granted.features.includes('export')) return fail(res, 403, 'denied');
    send(res, 200, { user: claims.sub, plan: granted.plan });
  }

  return createServer((req, res) => {
    const done =
      req.method === 'POST' && req.url === SESSION_PATH ? postSession(req, res) : req.method === 'GET' && req.url === PAID_PATH ? getPaid(req, res) : fail(res, 404, 'not_found');
    Promise.resolve(done).catch(() => fail(res, 500, 'internal'));
  });
}
