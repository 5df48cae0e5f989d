// The app session token on its own (signSessionToken / verifySessionToken are public exports):
// what createAppBackend's tests cover only through its routes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { MAX_SESSION_TTL_SECONDS, SESSION_TOKEN_TYPE, signSessionToken, verifySessionToken } from '../../src/server/index.js';
import { CLIENT_ID, NOW, SESSION_SECRET, USER } from '../support/server-http.js';

const IAT = Math.floor(NOW / 1000);
const verify = (token: string, now = NOW) => verifySessionToken(token, { secret: SESSION_SECRET, audience: CLIENT_ID, now });

/** A token signed with the session secret, with the header and claims chosen by the test. */
function craft(options: { typ?: string; aud?: string; claims?: Record<string, unknown> } = {}) {
  return new SignJWT({ email: USER.email, name: USER.name, avatar_url: USER.avatar_url, app_id: 'app_1', host: null, ...options.claims })
    .setProtectedHeader({ alg: 'HS256', typ: options.typ ?? SESSION_TOKEN_TYPE })
    .setSubject(USER.id)
    .setAudience(options.aud ?? CLIENT_ID)
    .setIssuedAt(IAT)
    .setExpirationTime(IAT + 60)
    .sign(new TextEncoder().encode(SESSION_SECRET));
}

describe('session tokens', () => {
  it('round trip: the signed user, app and expiry come back', async () => {
    const { token, expiresAt } = await signSessionToken({ secret: SESSION_SECRET, audience: CLIENT_ID, user: USER, appId: 'app_1', host: null, ttlSeconds: 60, now: NOW });
    assert.equal(expiresAt, NOW + 60_000);
    const session = await verify(token);
    assert.deepEqual([session.user, session.appId, session.issuedAt, session.expiresAt], [USER, 'app_1', NOW - (NOW % 1000), expiresAt]);
    assert.ok(await verify(await craft()), 'the crafted token is valid as it stands');
  });

  it('refuses a session token without iat: its issue time is what a revocation check compares', async () => {
    const noIat = await new SignJWT({ email: USER.email, name: USER.name, avatar_url: USER.avatar_url, app_id: 'app_1', host: null })
      .setProtectedHeader({ alg: 'HS256', typ: SESSION_TOKEN_TYPE })
      .setSubject(USER.id)
      .setAudience(CLIENT_ID)
      .setExpirationTime(IAT + 60)
      .sign(new TextEncoder().encode(SESSION_SECRET));
    await assert.rejects(verify(noIat), { code: 'ERR_SESSION_INVALID' });
    assert.equal((await verify(await craft())).issuedAt, IAT * 1000);
  });

  it('never mints a session longer than MAX_SESSION_TTL_SECONDS: that is the default, and a longer one is refused', async () => {
    const { expiresAt } = await signSessionToken({ secret: SESSION_SECRET, audience: CLIENT_ID, user: USER, appId: 'app_1', host: null, now: NOW });
    assert.equal(expiresAt, NOW + MAX_SESSION_TTL_SECONDS * 1000);
    await assert.rejects(signSessionToken({ secret: SESSION_SECRET, audience: CLIENT_ID, user: USER, appId: 'app_1', host: null, ttlSeconds: 3600, now: NOW }), {
      code: 'ERR_CONFIG',
      message: /ttlSeconds must be a whole number of seconds from 1 to 900, got 3600/,
    });
  });

  it('refuses another token type signed with the same secret (a context token, a plain JWT)', async () => {
    for (const typ of ['JWT', 'mp-context+jwt']) {
      await assert.rejects(verify(await craft({ typ })), { code: 'ERR_SESSION_INVALID', status: 401 }, typ);
    }
  });

  it("refuses another app's session (its audience), even with a shared secret", async () => {
    await assert.rejects(verify(await craft({ aud: 'client_other_app' })), { code: 'ERR_SESSION_INVALID', status: 401 });
  });

  it('keeps time by the real clock when no now is given, and takes a Date as now', async () => {
    const before = Date.now();
    const { token, expiresAt } = await signSessionToken({ secret: SESSION_SECRET, audience: CLIENT_ID, user: USER, appId: 'app_1', host: null, ttlSeconds: 60 });
    assert.ok(expiresAt >= Math.floor(before / 1000) * 1000 + 60_000 && expiresAt <= Date.now() + 60_000, `expiresAt ${expiresAt}`);
    assert.equal((await verifySessionToken(token, { secret: SESSION_SECRET, audience: CLIENT_ID })).expiresAt, expiresAt);
    // A token of 1970 is expired by the real clock; by a Date of its own time it is not.
    const then = new Date('1970-01-02T00:00:00Z');
    const old = await signSessionToken({ secret: SESSION_SECRET, audience: CLIENT_ID, user: USER, appId: 'app_1', host: null, now: then });
    assert.equal(old.expiresAt, then.getTime() + MAX_SESSION_TTL_SECONDS * 1000);
    await assert.rejects(verifySessionToken(old.token, { secret: SESSION_SECRET, audience: CLIENT_ID }), { code: 'ERR_SESSION_EXPIRED' });
    assert.equal((await verifySessionToken(old.token, { secret: SESSION_SECRET, audience: CLIENT_ID, now: then })).expiresAt, old.expiresAt);
  });

  it('takes a session secret of 32 characters and refuses one of 31, when signing and when verifying', async () => {
    const sign = (secret: string) => signSessionToken({ secret, audience: CLIENT_ID, user: USER, appId: 'app_1', host: null, ttlSeconds: 60, now: NOW });
    const secret32 = '0123456789abcdef0123456789abcdef';
    const { token } = await sign(secret32);
    assert.equal((await verifySessionToken(token, { secret: secret32, audience: CLIENT_ID, now: NOW })).userId, USER.id);
    const secret31 = secret32.slice(1);
    await assert.rejects(sign(secret31), { code: 'ERR_CONFIG', message: /at least 32 characters/ });
    await assert.rejects(verifySessionToken(token, { secret: secret31, audience: CLIENT_ID, now: NOW }), { code: 'ERR_CONFIG', message: /at least 32 characters/ });
  });

  it('refuses a secret of fewer than 8 different characters, when signing and when verifying, and says how to make one', async () => {
    const weak = '1234567'.repeat(5);
    const refused = { code: 'ERR_CONFIG', message: /^signSessionToken: secret has only 7 different characters: it looks typed by hand, not random; make one with `openssl rand -base64 32`/ };
    await assert.rejects(signSessionToken({ secret: weak, audience: CLIENT_ID, user: USER, appId: 'app_1', host: null, now: NOW }), refused);
    await assert.rejects(verifySessionToken('a.b.c', { secret: 'k'.repeat(32), audience: CLIENT_ID, now: NOW }), { code: 'ERR_CONFIG', message: /secret has only 1 different character:/ });
    assert.ok((await signSessionToken({ secret: '12345678'.repeat(4), audience: CLIENT_ID, user: USER, appId: 'app_1', host: null, now: NOW })).token);
  });

  it('refuses a token signed with the secret whose claims are not a session (ERR_SESSION_INVALID, 401), never a TypeError', async () => {
    for (const claims of [{ app_id: undefined }, { host: undefined }, { email: 42 }, { host: ['https://dash.example'] }]) {
      await assert.rejects(verify(await craft({ claims })), { name: 'SessionError', code: 'ERR_SESSION_INVALID', status: 401, message: 'The session token claims are invalid' }, JSON.stringify(claims));
    }
  });

  it('refuses an empty audience when signing and when verifying: it would accept the sessions of every app', async () => {
    await assert.rejects(signSessionToken({ secret: SESSION_SECRET, audience: '', user: USER, appId: 'app_1', host: null, now: NOW }), {
      code: 'ERR_CONFIG',
      message: /^signSessionToken: audience must be the app's Client ID/,
    });
    await assert.rejects(verifySessionToken(await craft({ aud: 'client_other_app' }), { secret: SESSION_SECRET, audience: '', now: NOW }), {
      code: 'ERR_CONFIG',
      message: /^verifySessionToken: audience must be the app's Client ID/,
    });
  });

  it('gives every session token an id of its own: two minted at the same instant for the same user differ', async () => {
    const mint = () => signSessionToken({ secret: SESSION_SECRET, audience: CLIENT_ID, user: USER, appId: 'app_1', host: null, now: NOW });
    const [a, b] = [await mint(), await mint()];
    assert.notEqual(a.token, b.token);
    const jti = (token: string) => (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { jti?: unknown }).jti;
    assert.equal(typeof jti(a.token), 'string');
    assert.notEqual(jti(a.token), jti(b.token));
  });

  it('expires at exp', async () => {
    const token = await craft();
    await assert.rejects(verify(token, (IAT + 60) * 1000), { code: 'ERR_SESSION_EXPIRED' });
  });
});
