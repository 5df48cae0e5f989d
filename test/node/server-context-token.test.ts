import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SignJWT } from 'jose';
import {
  ContextTokenError,
  createMemoryReplayStore,
  signContextToken,
  verifyContextToken,
  type ReplayStore,
  type VerifyContextTokenOptions,
} from '../../src/server/index.js';
import { CLIENT_ID, CLIENT_SECRET, DASHBOARD, NOW, USER, asyncReplayStore } from '../support/server-http.js';

const ISSUER = 'https://marketplace.example';
const IAT = Math.floor(NOW / 1000);

const verifyOptions = (extra: Partial<VerifyContextTokenOptions> = {}): VerifyContextTokenOptions => ({
  clientId: CLIENT_ID,
  clientSecret: CLIENT_SECRET,
  issuer: ISSUER,
  now: NOW,
  replayStore: createMemoryReplayStore(),
  ...extra,
});

const sign = (extra: Partial<Parameters<typeof signContextToken>[0]> = {}) =>
  signContextToken({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, issuer: ISSUER, host: DASHBOARD, appId: 'app_1', user: USER, now: NOW, ...extra });

/** A token with full control over header and claims, for the attacks the signer never produces. */
function craft(options: { alg?: string; typ?: string; claims?: Record<string, unknown>; secret?: string; omit?: string[] } = {}) {
  const claims: Record<string, unknown> = {
    iss: ISSUER,
    aud: CLIENT_ID,
    sub: USER.id,
    app_id: 'app_1',
    host: DASHBOARD,
    email: USER.email,
    name: USER.name,
    avatar_url: USER.avatar_url,
    iat: IAT,
    exp: IAT + 300,
    jti: 'jti-crafted-0001',
    ...options.claims,
  };
  for (const name of options.omit ?? []) delete claims[name];
  return new SignJWT(claims)
    .setProtectedHeader({ alg: options.alg ?? 'HS256', typ: options.typ ?? 'mp-context+jwt' })
    .sign(new TextEncoder().encode(options.secret ?? CLIENT_SECRET));
}

async function rejects(pending: Promise<unknown>, code: string, message: RegExp) {
  await assert.rejects(pending, (error: unknown) => {
    assert.ok(error instanceof ContextTokenError, `expected ContextTokenError, got ${String(error)}`);
    assert.equal(error.code, code);
    assert.equal(error.status, 401);
    assert.match(error.message, message);
    return true;
  });
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('verifyContextToken (docs/decisions.md#embed-launch, docs/decisions.md#session-exchange)', () => {
  it('returns the validated claims of a genuine token', async () => {
    const claims = await verifyContextToken(await sign({ jti: 'jti-genuine-001' }), verifyOptions({ host: DASHBOARD }));
    assert.equal(claims.sub, 'usr_1');
    assert.equal(claims.aud, CLIENT_ID);
    assert.equal(claims.app_id, 'app_1');
    assert.equal(claims.host, DASHBOARD);
    assert.equal(claims.email, USER.email);
    assert.equal(claims.jti, 'jti-genuine-001');
  });

  it('accepts a token that lives exactly 300 s', async () => {
    const claims = await verifyContextToken(await craft({ claims: { exp: IAT + 300 } }), verifyOptions());
    assert.equal(claims.exp - claims.iat, 300);
  });

  it('ignores a trailing slash on the issuer option', async () => {
    await verifyContextToken(await sign(), verifyOptions({ issuer: `${ISSUER}/` }));
  });

  it('accepts 10 s of clock skew on both ends and no more', async () => {
    await verifyContextToken(await sign({ now: NOW + 10_000 }), verifyOptions());
    await verifyContextToken(await sign({ now: NOW - 300_000 - 9_000 }), verifyOptions());
    await rejects(verifyContextToken(await sign({ now: NOW + 11_000 }), verifyOptions()), 'ERR_CONTEXT_TOKEN_CLAIM', /iat/);
    await rejects(verifyContextToken(await sign({ now: NOW - 311_000 }), verifyOptions()), 'ERR_CONTEXT_TOKEN_EXPIRED', /expired/);
  });

  describe('bad tokens end in a typed error and are not recorded', () => {
    const cases: Array<{ name: string; token: () => Promise<string>; code: string; message: RegExp; options?: Partial<VerifyContextTokenOptions> }> = [
      { name: 'expired', token: () => sign({ now: NOW - 400_000 }), code: 'ERR_CONTEXT_TOKEN_EXPIRED', message: /"exp"/ },
      {
        name: 'too old (iat beyond 300 s, exp still ahead)',
        token: () => craft({ claims: { iat: IAT - 320, exp: IAT + 60 } }),
        code: 'ERR_CONTEXT_TOKEN_EXPIRED',
        message: /too far in the past/,
      },
      {
        name: 'lives one second longer than 300 s',
        token: () => craft({ claims: { exp: IAT + 301 } }),
        code: 'ERR_CONTEXT_TOKEN_CLAIM',
        message: /longer than 300 s/,
      },
      {
        name: 'lives longer than 300 s',
        token: () => craft({ claims: { exp: IAT + 3600 } }),
        code: 'ERR_CONTEXT_TOKEN_CLAIM',
        message: /longer than 300 s/,
      },
      { name: 'another issuer', token: () => sign({ issuer: 'https://evil.example' }), code: 'ERR_CONTEXT_TOKEN_CLAIM', message: /"iss"/ },
      { name: 'another audience', token: () => sign({ clientId: 'client_other' }), code: 'ERR_CONTEXT_TOKEN_CLAIM', message: /"aud"/ },
      { name: 'another secret', token: () => sign({ clientSecret: 'someone-elses-secret-0123456789' }), code: 'ERR_CONTEXT_TOKEN_SIGNATURE', message: /signature/ },
      {
        name: 'alg none',
        token: async () => `${b64({ alg: 'none', typ: 'mp-context+jwt' })}.${(await sign()).split('.')[1]}.`,
        code: 'ERR_CONTEXT_TOKEN_ALGORITHM',
        message: /HS256/,
      },
      { name: 'HS512 with the same secret', token: () => craft({ alg: 'HS512', secret: CLIENT_SECRET }), code: 'ERR_CONTEXT_TOKEN_ALGORITHM', message: /HS256/ },
      { name: 'HS384 with the same secret', token: () => craft({ alg: 'HS384', secret: CLIENT_SECRET }), code: 'ERR_CONTEXT_TOKEN_ALGORITHM', message: /HS256/ },
      {
        name: 'tampered payload',
        token: async () => {
          const [header, payload, signature] = (await sign()).split('.') as [string, string, string];
          const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
          return `${header}.${b64({ ...claims, sub: 'usr_admin' })}.${signature}`;
        },
        code: 'ERR_CONTEXT_TOKEN_SIGNATURE',
        message: /signature/,
      },
      { name: 'wrong typ', token: () => craft({ typ: 'JWT' }), code: 'ERR_CONTEXT_TOKEN_TYPE', message: /mp-context\+jwt/ },
      { name: 'session typ', token: () => craft({ typ: 'mp-session+jwt' }), code: 'ERR_CONTEXT_TOKEN_TYPE', message: /typ/ },
      { name: 'no jti', token: () => craft({ omit: ['jti'] }), code: 'ERR_CONTEXT_TOKEN_CLAIM', message: /"jti"/ },
      { name: 'bad sub', token: () => craft({ claims: { sub: 'admin' } }), code: 'ERR_CONTEXT_TOKEN_CLAIM', message: /sub/ },
      { name: 'no host claim', token: () => craft({ omit: ['host'] }), code: 'ERR_CONTEXT_TOKEN_CLAIM', message: /host/ },
      { name: 'host differs from mp_host', token: () => sign(), code: 'ERR_CONTEXT_TOKEN_HOST', message: /mp_host/, options: { host: 'https://other.example' } },
      { name: 'not a JWT', token: async () => 'not-a-token', code: 'ERR_CONTEXT_TOKEN_MALFORMED', message: /malformed/ },
      { name: 'empty', token: async () => '', code: 'ERR_CONTEXT_TOKEN_MALFORMED', message: /missing/ },
    ];
    for (const c of cases) {
      it(c.name, async () => {
        const claims: string[] = [];
        const inner = createMemoryReplayStore();
        const replayStore: ReplayStore = { claim: (key, expiresAt, now) => (claims.push(key), inner.claim(key, expiresAt, now)), release: inner.release };
        const token = await c.token();
        await rejects(verifyContextToken(token, verifyOptions({ replayStore, ...c.options })), c.code, c.message);
        assert.deepEqual(claims, [], 'the store was not asked');
        // Nothing recorded: the same jti in a genuine token is still accepted.
        const jti = (() => {
          try {
            return (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { jti?: string }).jti;
          } catch {
            return undefined;
          }
        })();
        if (jti) await verifyContextToken(await sign({ jti }), verifyOptions({ replayStore }));
      });
    }
  });

  it('refuses a replayed token (same jti) until the token has expired', async () => {
    const replayStore = createMemoryReplayStore();
    const token = await sign({ jti: 'jti-replay-0001' });
    await verifyContextToken(token, verifyOptions({ replayStore }));
    await rejects(verifyContextToken(token, verifyOptions({ replayStore, now: NOW + 5_000 })), 'ERR_CONTEXT_TOKEN_REPLAYED', /already used/);
    await rejects(verifyContextToken(await sign({ jti: 'jti-replay-0001', now: NOW + 1000 }), verifyOptions({ replayStore, now: NOW + 2000 })), 'ERR_CONTEXT_TOKEN_REPLAYED', /fresh one/);
    // Expired with the token (exp + 10 s of tolerance): a jti may then come again.
    await verifyContextToken(await sign({ jti: 'jti-replay-0001', now: NOW + 311_000 }), verifyOptions({ replayStore, now: NOW + 311_000 }));
  });

  it('works with an asynchronous store, claiming the jti under the jti: namespace, once among concurrent copies', async () => {
    const replayStore = asyncReplayStore();
    const token = await sign({ jti: 'jti-async-0001' });
    const results = await Promise.allSettled([1, 2, 3].map(() => verifyContextToken(token, verifyOptions({ replayStore }))));
    assert.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected', 'rejected']);
    for (const result of results) if (result.status === 'rejected') assert.equal((result.reason as ContextTokenError).code, 'ERR_CONTEXT_TOKEN_REPLAYED');
    assert.deepEqual([...replayStore.keys], [[`jti:${ISSUER} ${CLIENT_ID} jti-async-0001`, (IAT + 300 + 10) * 1000]]);
  });

  it('fails with ERR_CONFIG when a store answers something else than a boolean', async () => {
    const replayStore = { claim: async () => 'OK', release: () => {} } as unknown as ReplayStore;
    await assert.rejects(verifyContextToken(await sign(), verifyOptions({ replayStore })), { code: 'ERR_CONFIG', status: 500 });
  });

  it('refuses to run without its configuration', async () => {
    await assert.rejects(verifyContextToken(await sign(), verifyOptions({ clientSecret: '' })), { code: 'ERR_CONFIG' });
    await assert.rejects(verifyContextToken(await sign(), verifyOptions({ clientId: '' })), { code: 'ERR_CONFIG' });
    await assert.rejects(verifyContextToken(await sign(), verifyOptions({ issuer: '' })), { code: 'ERR_CONFIG' });
  });

  it('fails closed when host is given but empty or null (it is not treated as "not given")', async () => {
    for (const host of ['', null]) {
      const replayStore = createMemoryReplayStore();
      const options = verifyOptions({ replayStore, host: host as unknown as string });
      await rejects(verifyContextToken(await sign({ jti: 'jti-host-empty-1' }), options), 'ERR_CONTEXT_TOKEN_HOST', /mp_host/);
    }
  });
});
