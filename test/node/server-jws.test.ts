// The kit's HS256 JWT checks (src/server/lib/jws.ts) against jose's jwtVerify, on the same tokens:
// whatever the kit accepts, jose accepts too, and where both refuse, they refuse for the same
// reason. Where the kit is knowingly stricter, the test says so case by case.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { errors, jwtVerify } from 'jose';
import { hmacKey } from '../../src/server/lib/hmac-key.js';
import { JwtError, signHs256, encodeHeader, verifyJwt, type ClaimChecks, type JwtFailure } from '../../src/server/lib/jws.js';

const SECRET = 'jws-test-secret-0123456789abcdefghij';
const NOW = Date.parse('2030-01-01T00:00:00Z');
const IAT = NOW / 1000;
const CHECKS: ClaimChecks = { typ: 'mp-context+jwt', issuer: 'https://marketplace.example', audience: 'client_1', requiredClaims: ['exp', 'iat', 'jti', 'sub'], maxTokenAge: 300, clockTolerance: 10, now: NOW };
const SESSION_CHECKS: ClaimChecks = { typ: 'mp-session+jwt', audience: 'client_1', requiredClaims: ['exp', 'iat', 'sub'], now: NOW };
const HEADER = { alg: 'HS256', typ: 'mp-context+jwt' };
const CLAIMS = { iss: 'https://marketplace.example', aud: 'client_1', sub: 'usr_1', iat: IAT, exp: IAT + 300, jti: 'jti-0001' };

const b64 = (value: string | Buffer) => Buffer.from(value).toString('base64url');
const json = (value: unknown) => b64(JSON.stringify(value));
const sign = (input: string, secret = SECRET) => createHmac('sha256', secret).update(input).digest('base64url');
/** A token from raw segments (already base64url), signed unless a signature is given. */
const raw = (header: string, payload: string, signature?: string) => `${header}.${payload}.${signature ?? sign(`${header}.${payload}`)}`;
const token = (header: object = HEADER, claims: object = CLAIMS) => raw(json(header), json(claims));

function joseKind(error: unknown): JwtFailure {
  if (error instanceof errors.JWTExpired) return 'expired';
  if (error instanceof errors.JWTClaimValidationFailed) return error.claim === 'typ' ? 'type' : 'claim';
  if (error instanceof errors.JOSEAlgNotAllowed) return 'algorithm';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'signature';
  return 'malformed';
}

async function both(jwt: string, checks: ClaimChecks = CHECKS): Promise<{ kit: JwtError | 'ok'; jose: { kind: JwtFailure; message: string } | 'ok' }> {
  let kit: JwtError | 'ok' = 'ok';
  try {
    verifyJwt(jwt, hmacKey(SECRET).node, checks);
  } catch (error) {
    assert.ok(error instanceof JwtError, `a JwtError, got ${String(error)}`);
    kit = error;
  }
  let jose: { kind: JwtFailure; message: string } | 'ok' = 'ok';
  try {
    await jwtVerify(jwt, new TextEncoder().encode(SECRET), {
      algorithms: ['HS256'],
      typ: checks.typ,
      ...(checks.issuer === undefined ? {} : { issuer: checks.issuer }),
      audience: checks.audience,
      requiredClaims: [...checks.requiredClaims],
      ...(checks.maxTokenAge === undefined ? {} : { maxTokenAge: checks.maxTokenAge }),
      ...(checks.clockTolerance === undefined ? {} : { clockTolerance: checks.clockTolerance }),
      currentDate: new Date(checks.now),
    });
  } catch (error) {
    jose = { kind: joseKind(error), message: (error as Error).message };
  }
  return { kit, jose };
}

const without = (name: string) => Object.fromEntries(Object.entries(CLAIMS).filter(([key]) => key !== name));

/** Tokens on which the kit and jose must agree: accepted by both, or refused for the same reason and message. */
const agreed: Array<[string, string, ClaimChecks?]> = [
  ['genuine', token()],
  ['typ in capitals', token({ alg: 'HS256', typ: 'MP-CONTEXT+JWT' })],
  ['typ with its media type', token({ alg: 'HS256', typ: 'application/mp-context+jwt' })],
  ['audience in a list', token(HEADER, { ...CLAIMS, aud: ['other', 'client_1'] })],
  ['nbf now', token(HEADER, { ...CLAIMS, nbf: IAT })],
  ['exp at the edge of the tolerance', token(HEADER, { ...CLAIMS, iat: IAT - 300, exp: IAT - 9 })],
  ['iat 10 s ahead', token(HEADER, { ...CLAIMS, iat: IAT + 10, exp: IAT + 310 })],
  ['extra header parameters', token({ ...HEADER, kid: 'k1', cty: 'JWT' })],
  ['a session token', token({ alg: 'HS256', typ: 'mp-session+jwt' }, { sub: 'usr_1', aud: 'client_1', iat: IAT, exp: IAT + 900 }), SESSION_CHECKS],
  ['a session token with a future iat (no age check)', token({ alg: 'HS256', typ: 'mp-session+jwt' }, { sub: 'usr_1', aud: 'client_1', iat: IAT + 5000, exp: IAT + 900 }), SESSION_CHECKS],
  ['not three segments', 'a.b'],
  ['four segments', `${token()}.x`],
  ['empty', ''],
  ['header not JSON', raw(b64('{"alg":'), json(CLAIMS))],
  ['header an array', raw(json(['HS256']), json(CLAIMS))],
  ['header null', raw(json(null), json(CLAIMS))],
  ['header not UTF-8', raw(b64(Buffer.from([0x7b, 0xff, 0x7d])), json(CLAIMS))],
  ['no alg', token({ typ: 'mp-context+jwt' })],
  ['alg not a string', token({ alg: 256, typ: 'mp-context+jwt' })],
  ['alg none', raw(json({ alg: 'none', typ: 'mp-context+jwt' }), json(CLAIMS), '')],
  ['alg HS512', token({ alg: 'HS512', typ: 'mp-context+jwt' })],
  ['alg hs256', token({ alg: 'hs256', typ: 'mp-context+jwt' })],
  ['alg RS256', token({ alg: 'RS256', typ: 'mp-context+jwt' })],
  ['crit an unknown extension', token({ ...HEADER, crit: ['exp'], exp: 1 })],
  ['another secret', raw(json(HEADER), json(CLAIMS), sign(`${json(HEADER)}.${json(CLAIMS)}`, 'another-secret-0123456789abcdefghij'))],
  ['tampered payload', `${json(HEADER)}.${json({ ...CLAIMS, sub: 'usr_admin' })}.${token().split('.')[2]}`],
  ['signature cut short', token().slice(0, -2)],
  ['signature not base64url', `${token().slice(0, -1)}*`],
  ['payload not JSON', raw(json(HEADER), b64('not json'))],
  ['payload an array', raw(json(HEADER), json([CLAIMS]))],
  ['payload a string', raw(json(HEADER), json('claims'))],
  ['payload not UTF-8', raw(json(HEADER), b64(Buffer.from([0x7b, 0xc3, 0x28, 0x7d])))],
  ['no typ', token({ alg: 'HS256' })],
  ['typ JWT', token({ alg: 'HS256', typ: 'JWT' })],
  ['typ a number', token({ alg: 'HS256', typ: 7 })],
  ['session typ', token({ alg: 'HS256', typ: 'mp-session+jwt' })],
  ...['iss', 'aud', 'sub', 'iat', 'exp', 'jti'].map((claim): [string, string] => [`no ${claim}`, token(HEADER, without(claim))]),
  ['another issuer', token(HEADER, { ...CLAIMS, iss: 'https://evil.example' })],
  ['issuer with a trailing slash', token(HEADER, { ...CLAIMS, iss: 'https://marketplace.example/' })],
  ['another audience', token(HEADER, { ...CLAIMS, aud: 'client_2' })],
  ['audience list without ours', token(HEADER, { ...CLAIMS, aud: ['client_2'] })],
  ['audience a number', token(HEADER, { ...CLAIMS, aud: 1 })],
  ['iat a string', token(HEADER, { ...CLAIMS, iat: String(IAT) })],
  ['exp a string', token(HEADER, { ...CLAIMS, exp: String(IAT + 300) })],
  ['nbf a string', token(HEADER, { ...CLAIMS, nbf: 'now' })],
  ['nbf beyond the tolerance', token(HEADER, { ...CLAIMS, nbf: IAT + 11 })],
  ['expired', token(HEADER, { ...CLAIMS, iat: IAT - 300, exp: IAT - 10 })],
  ['too old', token(HEADER, { ...CLAIMS, iat: IAT - 311, exp: IAT + 60 })],
  ['issued in the future', token(HEADER, { ...CLAIMS, iat: IAT + 11, exp: IAT + 311 })],
  ['session expired', token({ alg: 'HS256', typ: 'mp-session+jwt' }, { sub: 'usr_1', aud: 'client_1', iat: IAT - 900, exp: IAT }), SESSION_CHECKS],
  ['session of another app', token({ alg: 'HS256', typ: 'mp-session+jwt' }, { sub: 'usr_1', aud: 'client_2', iat: IAT, exp: IAT + 900 }), SESSION_CHECKS],
  ['session without iat', token({ alg: 'HS256', typ: 'mp-session+jwt' }, { sub: 'usr_1', aud: 'client_1', exp: IAT + 900 }), SESSION_CHECKS],
];

describe('HS256 JWTs on node:crypto (lib/jws.ts) against jose', () => {
  for (const [name, jwt, checks] of agreed) {
    it(`agrees with jose: ${name}`, async () => {
      const { kit, jose } = await both(jwt, checks);
      if (jose === 'ok') return assert.equal(kit, 'ok', `jose accepts it, the kit refused it: ${kit === 'ok' ? '' : kit.message}`);
      assert.notEqual(kit, 'ok', `jose refuses it (${jose.message}), the kit accepted it`);
      assert.equal((kit as JwtError).kind, jose.kind, `jose: ${jose.message}; the kit: ${(kit as JwtError).message}`);
      // The kit words a refused `crit` its own way (it supports no extension at all).
      if (!name.startsWith('crit')) assert.equal((kit as JwtError).message, jose.message);
    });
  }

  // Accepted by jose, refused by the kit: never the other way round.
  const stricter: Array<[string, string, JwtFailure]> = [
    ['crit b64 (an extension no kit token uses)', token({ ...HEADER, crit: ['b64'], b64: true }), 'malformed'],
    ['a signature with stray low bits (not the canonical encoding)', (() => {
      const jwt = token();
      const last = jwt.at(-1)!;
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      return `${jwt.slice(0, -1)}${alphabet[alphabet.indexOf(last) ^ 1]}`;
    })(), 'signature'],
  ];
  for (const [name, jwt, kind] of stricter) {
    it(`is stricter than jose: ${name}`, async () => {
      const { kit, jose } = await both(jwt);
      assert.equal(jose, 'ok', 'jose accepts it');
      assert.equal((kit as JwtError).kind, kind);
    });
  }

  it('checks each token by its own protected header, also when headers of several kinds alternate (they are decoded once each)', () => {
    const session = (claims: object) => token({ alg: 'HS256', typ: 'mp-session+jwt' }, claims);
    const sessionClaims = { aud: 'client_1', sub: 'usr_1', iat: IAT, exp: IAT + 900 };
    for (let round = 0; round < 3; round++) {
      assert.equal(verifyJwt(token(), hmacKey(SECRET).node, CHECKS).claims.sub, 'usr_1');
      assert.equal(verifyJwt(session(sessionClaims), hmacKey(SECRET).node, SESSION_CHECKS).claims.sub, 'usr_1');
      assert.throws(() => verifyJwt(session(sessionClaims), hmacKey(SECRET).node, CHECKS), { kind: 'type' });
      assert.throws(() => verifyJwt(raw(b64('{"alg":'), json(CLAIMS)), hmacKey(SECRET).node, CHECKS), { kind: 'malformed' }, 'a header that does not decode, every time');
    }
    assert.ok(Object.isFrozen(verifyJwt(token(), hmacKey(SECRET).node, CHECKS).header), 'a shared header cannot be changed by its reader');
  });

  it('signs tokens that jose verifies, with the header given', async () => {
    const header = encodeHeader({ alg: 'HS256', typ: 'mp-session+jwt' });
    const jwt = signHs256(header, { sub: 'usr_1', aud: 'client_1', iat: IAT, exp: IAT + 900, name: 'Zoë ✓' }, hmacKey(SECRET).node);
    const { payload, protectedHeader } = await jwtVerify(jwt, new TextEncoder().encode(SECRET), { currentDate: new Date(NOW), audience: 'client_1' });
    assert.deepEqual(protectedHeader, { alg: 'HS256', typ: 'mp-session+jwt' });
    assert.equal(payload.name, 'Zoë ✓');
    assert.deepEqual(verifyJwt(jwt, hmacKey(SECRET).node, SESSION_CHECKS).claims, payload);
  });
});
