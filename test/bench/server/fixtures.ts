// What both servers of the server benchmark share: the app's credentials, its users and their
// entitlements, and a fast HS256 signer for the tokens the load generator sends (signing is the
// marketplace's and the browser's work, not the servers').
import { createHmac, randomUUID } from 'node:crypto';

export const CLIENT_ID = 'client_bench';
export const CLIENT_SECRET = 'cs_bench_0123456789abcdef0123456789';
export const SESSION_SECRET = 'bench-session-secret-0123456789-abcdefgh';
export const WEBHOOK_SECRET = 'whsec_bench_0123456789abcdef';
export const API_KEY = 'test_bench_api_key';
export const ISSUER = 'https://marketplace.example';
export const DASHBOARD = 'https://dashboard.example';
export const CONTEXT_TYPE = 'mp-context+jwt';
export const SESSION_TYPE = 'mp-session+jwt';
export const SESSION_PATH = '/api/marketplace/session';
/** jose's jwtVerify options for a context token, as a hand-written backend passes them. */
export const CONTEXT_TOKEN_CHECKS = {
  algorithms: ['HS256'],
  typ: CONTEXT_TYPE,
  issuer: ISSUER,
  audience: CLIENT_ID,
  maxTokenAge: 300,
  clockTolerance: 10,
  requiredClaims: ['exp', 'iat', 'jti', 'sub'],
};
/** The paid route both servers protect: GET, for users whose entitlement grants `export`. */
export const PAID_PATH = '/api/export';
/** Users of the launches: more than the launches of one run over the kit's per-user exchange cap (34 in five minutes). */
export const USERS = 4_000;
export const userId = (index: number) => `usr_${index}`;

export const profile = (index: number) => ({
  id: userId(index),
  email: `user${index}@example.com`,
  name: `User ${index}`,
  avatar_url: `https://cdn.example/avatars/${index}.png`,
});

export const entitlement = (index: number) => ({
  user_id: userId(index),
  app_id: 'app_bench',
  plan: 'pro',
  status: 'active',
  features: ['export', 'reports'],
  usage: { api_calls: 10, limit: 1000 },
  expires_at: null,
});

const segment = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function hs256(header: object, claims: object, secret: string): string {
  const input = `${segment(header)}.${segment(claims)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

/** A context token as the marketplace signs it, for user `index`, issued now, with a fresh jti. */
export function contextToken(index: number, now = Date.now()): string {
  const iat = Math.floor(now / 1000);
  const user = profile(index);
  return hs256(
    { alg: 'HS256', typ: CONTEXT_TYPE },
    {
      app_id: 'app_bench',
      host: DASHBOARD,
      email: user.email,
      name: user.name,
      avatar_url: user.avatar_url,
      iss: ISSUER,
      aud: CLIENT_ID,
      sub: user.id,
      iat,
      exp: iat + 300,
      jti: randomUUID(),
    },
    CLIENT_SECRET,
  );
}

/** An app session token for user `index`, as either server mints one (15 minutes). */
export function sessionToken(index: number, now = Date.now()): string {
  const iat = Math.floor(now / 1000);
  const user = profile(index);
  return hs256(
    { alg: 'HS256', typ: SESSION_TYPE },
    { email: user.email, name: user.name, avatar_url: user.avatar_url, app_id: 'app_bench', host: DASHBOARD, sub: user.id, aud: CLIENT_ID, iat, exp: iat + 900, jti: randomUUID() },
    SESSION_SECRET,
  );
}
