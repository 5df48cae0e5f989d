import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  createMemoryReplayStore,
  receiveWebhook,
  signWebhookBody,
  verifyWebhook,
  WebhookVerificationError,
  isKnownEvent,
  type ReplayStore,
  type VerifyWebhookOptions,
} from '../../src/server/index.js';
import { parseWebhookDelivery } from '../../src/shared/schemas.js';
import { isKitError } from '../../src/shared/errors.js';
import { NOW, WEBHOOK_SECRET, asyncReplayStore, at } from '../support/server-http.js';
import { deferred } from '../support/waiting.js';

const body = (overrides: Record<string, unknown> = {}) =>
  JSON.stringify({ event: 'subscription.created', timestamp: at(0), data: { user_id: 'usr_1', plan: 'pro' }, ...overrides });

/** The memory store, listing every key it is asked to claim: rejected deliveries must not reach it. */
function countingStore(): ReplayStore & { claims: string[]; releases: string[] } {
  const inner = createMemoryReplayStore();
  const claims: string[] = [];
  const releases: string[] = [];
  return {
    claims,
    releases,
    claim(key, expiresAt, now) {
      claims.push(key);
      return inner.claim(key, expiresAt, now);
    },
    release(key) {
      releases.push(key);
      return inner.release(key);
    },
  };
}

const options = (store: ReplayStore = countingStore(), extra: Partial<VerifyWebhookOptions> = {}): VerifyWebhookOptions => ({
  secret: WEBHOOK_SECRET,
  now: NOW,
  replayStore: store,
  ...extra,
});

async function rejects(pending: Promise<unknown>, code: string, message: RegExp, status: number) {
  await assert.rejects(pending, (error: unknown) => {
    assert.ok(error instanceof WebhookVerificationError, `expected a WebhookVerificationError, got ${String(error)}`);
    assert.equal(error.code, code);
    assert.match(error.message, message);
    assert.equal(error.status, status);
    return true;
  });
}

describe('verifyWebhook (docs/decisions.md#webhooks)', () => {
  it('returns a typed delivery for a genuine string body', async () => {
    const raw = body();
    const delivery = await verifyWebhook(raw, signWebhookBody(raw, WEBHOOK_SECRET), options());
    assert.ok(isKnownEvent(delivery));
    assert.equal(delivery.event, 'subscription.created');
    if (delivery.event === 'subscription.created') assert.equal(delivery.data.plan, 'pro');
  });

  it('verifies genuine multibyte UTF-8 bodies given as bytes, Buffer, ArrayBuffer or string', async () => {
    const raw = body({ data: { user_id: 'usr_1', plan: 'Prö ✓ 日本語 🎉' } });
    const bytes = new TextEncoder().encode(raw);
    const signature = signWebhookBody(bytes, WEBHOOK_SECRET);
    assert.equal(signature, signWebhookBody(raw, WEBHOOK_SECRET));
    assert.equal(signature, signWebhookBody(bytes.buffer.slice(0), WEBHOOK_SECRET), 'signed from an ArrayBuffer, as verified from one');
    for (const input of [raw, bytes, Buffer.from(raw), bytes.buffer.slice(0)]) {
      const delivery = await verifyWebhook(input, signature, options());
      assert.equal(delivery.data.plan, 'Prö ✓ 日本語 🎉');
    }
  });

  it('verifies a body holding a genuine U+FFFD, the replacement character of the decoder', async () => {
    const raw = Buffer.from(body({ data: { user_id: 'usr_1', plan: 'pro \uFFFD' } }));
    const delivery = await verifyWebhook(raw, signWebhookBody(raw, WEBHOOK_SECRET), options());
    assert.equal(delivery.data.plan, 'pro \uFFFD');
  });

  it('reads a bad header after a good one as bad (nothing carries over between calls)', async () => {
    const raw = body();
    const good = signWebhookBody(raw, WEBHOOK_SECRET);
    await verifyWebhook(raw, good, options());
    await rejects(verifyWebhook(raw, `${good.slice(0, 40)}zz${good.slice(42)}`, options()), 'ERR_WEBHOOK_SIGNATURE_MALFORMED', /64 hex/, 401);
    await rejects(verifyWebhook(`${raw} `, good, options()), 'ERR_WEBHOOK_SIGNATURE_MISMATCH', /does not match/, 401);
  });

  it('accepts an upper-case hex signature and surrounding whitespace', async () => {
    const raw = body();
    const signature = signWebhookBody(raw, WEBHOOK_SECRET);
    await verifyWebhook(raw, ` sha256=${signature.slice(7).toUpperCase()} `, options());
  });

  it('verifies a body given as a DataView or a typed array over part of a larger buffer', async () => {
    const raw = Buffer.from(body());
    const signature = signWebhookBody(raw, WEBHOOK_SECRET);
    const buffer = new ArrayBuffer(raw.length + 16);
    new Uint8Array(buffer).fill(0x20).set(raw, 8);
    await verifyWebhook(new DataView(buffer, 8, raw.length), signature, options());
    const bytes = new Int8Array(buffer).subarray(8, 8 + raw.length);
    assert.equal(bytes.byteOffset, 8);
    await verifyWebhook(bytes, signature, options());
  });

  it('passes unknown event kinds on as generic events', async () => {
    const raw = body({ event: 'plan.renamed', data: { from: 'a', to: 'b' } });
    const delivery = await verifyWebhook(raw, signWebhookBody(raw, WEBHOOK_SECRET), options());
    assert.equal(isKnownEvent(delivery), false);
    assert.deepEqual(delivery.data, { from: 'a', to: 'b' });
  });

  it('accepts any of several secrets (rotation)', async () => {
    const raw = body();
    const secrets = ['new-secret', WEBHOOK_SECRET];
    await verifyWebhook(raw, signWebhookBody(raw, WEBHOOK_SECRET), options(undefined, { secret: undefined, secrets }));
    await verifyWebhook(body({ id: 'd2' }), signWebhookBody(body({ id: 'd2' }), 'new-secret'), options(undefined, { secrets }));
  });

  describe('bad input ends in a typed error and no state change', () => {
    const raw = body();
    const good = signWebhookBody(raw, WEBHOOK_SECRET);
    const cases: Array<{ name: string; run: (o: VerifyWebhookOptions) => Promise<unknown>; code: string; message: RegExp; status: number }> = [
      { name: 'missing header', run: (o) => verifyWebhook(raw, undefined, o), code: 'ERR_WEBHOOK_SIGNATURE_MISSING', message: /missing/, status: 401 },
      { name: 'empty header', run: (o) => verifyWebhook(raw, '', o), code: 'ERR_WEBHOOK_SIGNATURE_MISSING', message: /X-Service-Signature/, status: 401 },
      { name: 'malformed header (no prefix)', run: (o) => verifyWebhook(raw, good.slice(7), o), code: 'ERR_WEBHOOK_SIGNATURE_MALFORMED', message: /sha256=/, status: 401 },
      { name: 'malformed header (short hex)', run: (o) => verifyWebhook(raw, good.slice(0, -2), o), code: 'ERR_WEBHOOK_SIGNATURE_MALFORMED', message: /64 hex/, status: 401 },
      { name: 'malformed header (other algorithm)', run: (o) => verifyWebhook(raw, good.replace('sha256', 'sha1'), o), code: 'ERR_WEBHOOK_SIGNATURE_MALFORMED', message: /form/, status: 401 },
      {
        name: 'malformed header (a non-hex digit at the end)',
        run: (o) => verifyWebhook(raw, `${good.slice(0, -1)}g`, o),
        code: 'ERR_WEBHOOK_SIGNATURE_MALFORMED',
        message: /64 hex/,
        status: 401,
      },
      {
        // Otherwise the copy would verify under a new replay key (the first 64 digits are compared, the key is all of them).
        name: 'malformed header (a correct signature with characters appended)',
        run: (o) => verifyWebhook(raw, `${good}00`, o),
        code: 'ERR_WEBHOOK_SIGNATURE_MALFORMED',
        message: /64 hex/,
        status: 401,
      },
      {
        // Node's hex decoder reads the low byte of each UTF-16 unit: U+0130 'İ' would pass for '0',
        // and the copy would verify under a replay key of its own.
        name: 'malformed header (a look-alike of a hex digit above U+00FF)',
        run: (o) => verifyWebhook(raw, `${good.slice(0, 7)}${String.fromCharCode(0x100 + good.charCodeAt(7))}${good.slice(8)}`, o),
        code: 'ERR_WEBHOOK_SIGNATURE_MALFORMED',
        message: /64 hex/,
        status: 401,
      },
      { name: 'malformed header (sha512= prefix, same length)', run: (o) => verifyWebhook(raw, good.replace('sha256=', 'sha512='), o), code: 'ERR_WEBHOOK_SIGNATURE_MALFORMED', message: /sha256=/, status: 401 },
      { name: 'malformed header (xxxxxx= prefix, same length)', run: (o) => verifyWebhook(raw, good.replace('sha256=', 'xxxxxx='), o), code: 'ERR_WEBHOOK_SIGNATURE_MALFORMED', message: /sha256=/, status: 401 },
      { name: 'malformed header (not a string)', run: (o) => verifyWebhook(raw, [good] as never, o), code: 'ERR_WEBHOOK_SIGNATURE_MALFORMED', message: /form/, status: 401 },
      { name: 'tampered body', run: (o) => verifyWebhook(raw.replace('pro', 'max'), good, o), code: 'ERR_WEBHOOK_SIGNATURE_MISMATCH', message: /does not match/, status: 401 },
      { name: 'tampered body (one extra space)', run: (o) => verifyWebhook(`${raw} `, good, o), code: 'ERR_WEBHOOK_SIGNATURE_MISMATCH', message: /does not match/, status: 401 },
      { name: 'wrong secret', run: (o) => verifyWebhook(raw, signWebhookBody(raw, 'not-the-secret'), o), code: 'ERR_WEBHOOK_SIGNATURE_MISMATCH', message: /any configured secret/, status: 401 },
      {
        name: 'multibyte body re-encoded as Latin-1',
        run: (o) => {
          const text = body({ data: { user_id: 'usr_1', plan: 'Prö' } });
          return verifyWebhook(Buffer.from(text, 'latin1'), signWebhookBody(text, WEBHOOK_SECRET), o);
        },
        code: 'ERR_WEBHOOK_SIGNATURE_MISMATCH',
        message: /does not match/,
        status: 401,
      },
      {
        name: 'a parsed object instead of the raw body',
        run: (o) => verifyWebhook(JSON.parse(raw) as never, good, o),
        code: 'ERR_WEBHOOK_BODY_PARSED',
        message: /raw request body.*already parsed object.*express\.raw/s,
        status: 500,
      },
      // Express 5 with express.raw whose type does not match (or no parser): a set-up mistake, 500.
      {
        name: 'no body at all',
        run: (o) => verifyWebhook(undefined as never, good, o),
        code: 'ERR_WEBHOOK_BODY_PARSED',
        message: /^verifyWebhook got undefined for the raw request body: no body parser read it\. .*express\.raw/,
        status: 500,
      },
      { name: 'a null body', run: (o) => verifyWebhook(null as never, good, o), code: 'ERR_WEBHOOK_BODY_PARSED', message: /got null for the raw request body/, status: 500 },
      { name: 'body not JSON', run: (o) => verifyWebhook('not json', signWebhookBody('not json', WEBHOOK_SECRET), o), code: 'ERR_WEBHOOK_BODY_INVALID', message: /JSON/, status: 400 },
      {
        name: 'body not UTF-8',
        run: (o) => {
          const bytes = Uint8Array.from([0x7b, 0xff, 0x7d]);
          return verifyWebhook(bytes, signWebhookBody(bytes, WEBHOOK_SECRET), o);
        },
        code: 'ERR_WEBHOOK_BODY_INVALID',
        message: /UTF-8/,
        status: 400,
      },
      {
        name: 'JSON but not a delivery',
        run: (o) => verifyWebhook('[1,2]', signWebhookBody('[1,2]', WEBHOOK_SECRET), o),
        code: 'ERR_WEBHOOK_BODY_INVALID',
        message: /webhook delivery/,
        status: 400,
      },
      {
        name: 'known event with bad data',
        run: (o) => {
          const text = body({ data: { user_id: 'bob' } });
          return verifyWebhook(text, signWebhookBody(text, WEBHOOK_SECRET), o);
        },
        code: 'ERR_WEBHOOK_BODY_INVALID',
        message: /subscription\.created delivery at data/,
        status: 400,
      },
      {
        name: 'timestamp not a date',
        run: (o) => {
          const text = body({ timestamp: 'yesterday' });
          return verifyWebhook(text, signWebhookBody(text, WEBHOOK_SECRET), o);
        },
        code: 'ERR_WEBHOOK_TIMESTAMP_INVALID',
        message: /ISO 8601/,
        status: 400,
      },
      {
        name: 'timestamp impossible date',
        run: (o) => {
          const text = body({ timestamp: '2026-13-45T99:00:00Z' });
          return verifyWebhook(text, signWebhookBody(text, WEBHOOK_SECRET), o);
        },
        code: 'ERR_WEBHOOK_TIMESTAMP_INVALID',
        message: /ISO 8601/,
        status: 400,
      },
      // Not ISO 8601 with a zone, or a day no calendar has (Date.parse would roll it over into the
      // next month): refused whatever the tolerance.
      ...[
        ['an HTTP date', 'Fri, 01 May 2026 12:00:00 GMT'],
        ['a date without a time', '2026-05-01'],
        ['no time zone', '2026-05-01T12:00:00'],
        ['on an impossible day', '2026-04-31T12:00:00Z'],
        ['on an impossible day', '2026-02-30T12:00:00Z'],
        ['on an impossible day', '2026-02-29T12:00:00+02:00'],
        // Date.parse takes an expanded year; its impossible day would also escape the day check,
        // which reads the day at a fixed place.
        ['with an expanded year', '+002026-05-01T12:00:00Z'],
        ['on an impossible day, with an expanded year', '+002026-04-31T12:00:00Z'],
      ].map(([what, timestamp]) => ({
        name: `timestamp ${what} (${timestamp})`,
        run: (o: VerifyWebhookOptions) => {
          const text = body({ timestamp });
          return verifyWebhook(text, signWebhookBody(text, WEBHOOK_SECRET), { ...o, toleranceSeconds: 365 * 86_400 });
        },
        code: 'ERR_WEBHOOK_TIMESTAMP_INVALID',
        message: /ISO 8601/,
        status: 400,
      })),
      {
        name: 'stale timestamp (301 s old)',
        run: (o) => {
          const text = body({ timestamp: at(-301) });
          return verifyWebhook(text, signWebhookBody(text, WEBHOOK_SECRET), o);
        },
        code: 'ERR_WEBHOOK_TIMESTAMP_OUT_OF_TOLERANCE',
        message: /too old: 301 s/,
        status: 400,
      },
      {
        name: 'future timestamp (301 s ahead)',
        run: (o) => {
          const text = body({ timestamp: at(301) });
          return verifyWebhook(text, signWebhookBody(text, WEBHOOK_SECRET), o);
        },
        code: 'ERR_WEBHOOK_TIMESTAMP_OUT_OF_TOLERANCE',
        message: /too far in the future/,
        status: 400,
      },
      {
        name: 'no secret configured',
        run: (o) => verifyWebhook(raw, good, { ...o, secret: '' }),
        code: 'ERR_WEBHOOK_NO_SECRET',
        message: /secret/,
        status: 500,
      },
      { name: 'no secret at all', run: (o) => verifyWebhook(raw, good, { ...o, secret: undefined }), code: 'ERR_WEBHOOK_NO_SECRET', message: /secret/, status: 500 },
      { name: 'an empty list of secrets', run: (o) => verifyWebhook(raw, good, { ...o, secrets: [] }), code: 'ERR_WEBHOOK_NO_SECRET', message: /secrets/, status: 500 },
      {
        name: 'a list of secrets with an empty one',
        run: (o) => verifyWebhook(raw, good, { ...o, secret: undefined, secrets: [WEBHOOK_SECRET, ''] }),
        code: 'ERR_WEBHOOK_NO_SECRET',
        message: /^verifyWebhook: secrets\[1\] is empty or not a string; each secret must be a non-empty string$/,
        status: 500,
      },
      {
        // Otherwise the empty key would be tried: a body signed with it would verify.
        name: 'a list of secrets whose first is empty (the body signed with the empty key)',
        run: (o) => verifyWebhook(raw, `sha256=${createHmac('sha256', '').update(raw).digest('hex')}`, { ...o, secret: undefined, secrets: ['', WEBHOOK_SECRET] }),
        code: 'ERR_WEBHOOK_NO_SECRET',
        message: /^verifyWebhook: secrets\[0\] is empty or not a string/,
        status: 500,
      },
      {
        name: 'a list of secrets with a missing one (an unset variable)',
        run: (o) => verifyWebhook(raw, good, { ...o, secret: undefined, secrets: [WEBHOOK_SECRET, undefined as unknown as string] }),
        code: 'ERR_WEBHOOK_NO_SECRET',
        message: /^verifyWebhook: secrets\[1\] is empty or not a string/,
        status: 500,
      },
      {
        name: 'a list of secrets with a number',
        run: (o) => verifyWebhook(raw, good, { ...o, secret: undefined, secrets: [WEBHOOK_SECRET, 42 as unknown as string] }),
        code: 'ERR_WEBHOOK_NO_SECRET',
        message: /^verifyWebhook: secrets\[1\] is empty or not a string/,
        status: 500,
      },
      {
        name: 'several secrets, none of them the signer',
        run: (o) => verifyWebhook(raw, good, { ...o, secret: undefined, secrets: ['one', 'two'] }),
        code: 'ERR_WEBHOOK_SIGNATURE_MISMATCH',
        message: /any configured secret/,
        status: 401,
      },
      {
        // Inside a JSON string the decoder's U+FFFD parses: only the UTF-8 check refuses it.
        name: 'body not UTF-8 only inside a string of otherwise valid JSON',
        run: (o) => {
          const [before, after] = body({ data: { user_id: 'usr_1', plan: 'pr|o' } }).split('|') as [string, string];
          const bytes = Buffer.concat([Buffer.from(before), Buffer.from([0xff]), Buffer.from(after)]);
          return verifyWebhook(bytes, signWebhookBody(bytes, WEBHOOK_SECRET), o);
        },
        code: 'ERR_WEBHOOK_BODY_INVALID',
        message: /UTF-8/,
        status: 400,
      },
      {
        name: 'body not UTF-8 but also holding a genuine U+FFFD',
        run: (o) => {
          const bytes = Buffer.concat([Buffer.from(body({ data: { user_id: 'usr_1', plan: 'pro \uFFFD' } })), Buffer.from([0xc0, 0x80])]);
          return verifyWebhook(bytes, signWebhookBody(bytes, WEBHOOK_SECRET), o);
        },
        code: 'ERR_WEBHOOK_BODY_INVALID',
        message: /UTF-8/,
        status: 400,
      },
    ];
    for (const c of cases) {
      it(c.name, async () => {
        const store = countingStore();
        await rejects(c.run(options(store)), c.code, c.message, c.status);
        assert.deepEqual(store.claims, [], 'the store was not asked');
      });
    }
  });

  it('honours a custom tolerance, at its edges', async () => {
    const text = body({ timestamp: at(-60) });
    const signature = signWebhookBody(text, WEBHOOK_SECRET);
    await verifyWebhook(text, signature, options(undefined, { toleranceSeconds: 60 }));
    await rejects(verifyWebhook(text, signature, options(undefined, { toleranceSeconds: 59 })), 'ERR_WEBHOOK_TIMESTAMP_OUT_OF_TOLERANCE', /tolerance 59 s/, 400);
  });

  it('accepts the last day of every month and February 29 of leap years, and refuses the day after', async () => {
    const wide = { toleranceSeconds: 200 * 365 * 86_400 };
    const valid = ['2026-01-31', '2026-02-28', '2026-03-31', '2026-04-30', '2026-06-30', '2026-07-31', '2026-08-31', '2026-09-30', '2026-11-30', '2026-12-31', '2024-02-29', '2000-02-29'];
    for (const day of valid) {
      const text = body({ timestamp: `${day}T23:30:00-01:00` });
      const delivery = await verifyWebhook(text, signWebhookBody(text, WEBHOOK_SECRET), options(undefined, wide));
      assert.equal(delivery.timestamp.slice(0, 10), day);
    }
    for (const day of ['2026-06-31', '2026-09-31', '2026-11-31', '2100-02-29', '1900-02-29', '2024-02-30']) {
      const text = body({ timestamp: `${day}T00:00:00Z` });
      await rejects(verifyWebhook(text, signWebhookBody(text, WEBHOOK_SECRET), options(undefined, wide)), 'ERR_WEBHOOK_TIMESTAMP_INVALID', /ISO 8601/, 400);
    }
  });

  it('refuses a tolerance or clock that is not a finite number with ERR_CONFIG, before looking at the delivery', async () => {
    // Number(process.env.X) of an unset or "5m" variable: NaN would turn the window and the replay claim off.
    const old = body({ timestamp: at(-365 * 86_400) });
    const signature = signWebhookBody(old, WEBHOOK_SECRET);
    for (const extra of [{ toleranceSeconds: Number.NaN }, { toleranceSeconds: Infinity }, { toleranceSeconds: -1 }, { now: Number.NaN }, { now: new Date('no') }, { now: '1767225600000' as unknown as number }]) {
      const store = countingStore();
      await assert.rejects(verifyWebhook(old, signature, options(store, extra)), (error: unknown) => {
        assert.ok(isKitError(error, 'ERR_CONFIG'), `${JSON.stringify(extra)}: ${String(error)}`);
        assert.equal(error.status, 500);
        assert.match(error.message, /verifyWebhook: (toleranceSeconds must be a finite number|now must be a time in ms since the epoch or a Date)/);
        return true;
      });
      assert.deepEqual(store.claims, []);
    }
  });

  it('holds a delivery accepted at the very edge of the window as a duplicate there', async () => {
    const store = countingStore();
    const raw = body();
    const signature = signWebhookBody(raw, WEBHOOK_SECRET);
    const edge = { now: NOW + 300_000, toleranceSeconds: 300 };
    await verifyWebhook(raw, signature, options(store, edge));
    await rejects(verifyWebhook(raw, signature, options(store, edge)), 'ERR_WEBHOOK_DUPLICATE', /already received/, 409);
  });

  it('reports a replayed delivery as a duplicate within the window, and only after it verified', async () => {
    const store = countingStore();
    const raw = body();
    const signature = signWebhookBody(raw, WEBHOOK_SECRET);
    await verifyWebhook(raw, signature, options(store));
    assert.deepEqual(store.claims, [`webhook:${signature.slice(7)}`], 'claimed under the webhook: namespace');
    await rejects(verifyWebhook(raw, signature, options(store, { now: NOW + 1000 })), 'ERR_WEBHOOK_DUPLICATE', /already received/, 409);
    await rejects(verifyWebhook(Buffer.from(raw), signature, options(store)), 'ERR_WEBHOOK_DUPLICATE', /already received/, 409);
    const upperCase = `\tsha256=${signature.slice(7).toUpperCase()} `;
    await rejects(verifyWebhook(raw, upperCase, options(store)), 'ERR_WEBHOOK_DUPLICATE', /already received/, 409);
    assert.equal(new Set(store.claims).size, 1, 'every copy names the same delivery');

    // A forged copy (bad signature) of a new delivery must not poison the store for the real one.
    const next = body({ timestamp: at(1) });
    await rejects(verifyWebhook(next, signWebhookBody(next, 'forger'), options(store)), 'ERR_WEBHOOK_SIGNATURE_MISMATCH', /match/, 401);
    assert.equal(store.claims.length, 4, 'the forgery did not reach the store');
    await verifyWebhook(next, signWebhookBody(next, WEBHOOK_SECRET), options(store));
  });

  it('holds a delivery dated in the future until its timestamp has left the window, not now', async () => {
    // Sent at NOW + 240 s: acceptable until NOW + 540 s, so still held at NOW + 302 s.
    const store = createMemoryReplayStore();
    const raw = body({ timestamp: at(240) });
    const signature = signWebhookBody(raw, WEBHOOK_SECRET);
    await verifyWebhook(raw, signature, options(store));
    await rejects(verifyWebhook(raw, signature, options(store, { now: NOW + 302_000 })), 'ERR_WEBHOOK_DUPLICATE', /already received/, 409);
  });

  it('a replay with only some hex letters in upper case is still a duplicate', async () => {
    const store = createMemoryReplayStore();
    const raw = body();
    const signature = signWebhookBody(raw, WEBHOOK_SECRET);
    assert.match(signature.slice(7), /f/, 'the signature holds an f to upper-case');
    await verifyWebhook(raw, signature, options(store));
    await rejects(verifyWebhook(raw, `sha256=${signature.slice(7).replaceAll('f', 'F')}`, options(store)), 'ERR_WEBHOOK_DUPLICATE', /already received/, 409);
  });

  it('an empty delivery id names no delivery: two different deliveries with id "" are both handled', async () => {
    const store = countingStore();
    for (const raw of [body({ id: '' }), body({ id: '', timestamp: at(1) })]) {
      const delivery = await verifyWebhook(raw, signWebhookBody(raw, WEBHOOK_SECRET), options(store));
      assert.equal(delivery.id, '');
    }
    assert.ok(!store.claims.some((key) => key.startsWith('webhook:id:')), 'no id key claimed');
  });

  it('treats re-signed retries carrying the same delivery id as duplicates', async () => {
    const store = countingStore();
    const first = body({ id: 'dlv_1' });
    const retry = body({ id: 'dlv_1', timestamp: at(30) });
    const firstSignature = signWebhookBody(first, WEBHOOK_SECRET);
    const retrySignature = signWebhookBody(retry, WEBHOOK_SECRET);
    await verifyWebhook(first, firstSignature, options(store));
    await rejects(verifyWebhook(retry, retrySignature, options(store)), 'ERR_WEBHOOK_DUPLICATE', /already/, 409);
    assert.deepEqual(store.claims, [`webhook:${firstSignature.slice(7)}`, 'webhook:id:dlv_1', `webhook:${retrySignature.slice(7)}`, 'webhook:id:dlv_1']);
  });

  it('of two identical copies with an id, one is handled even when a shared store answers out of order', async () => {
    // A store shared by two processes: the first claim to arrive is answered after the second.
    const claimed = new Set<string>();
    const secondAnswered = deferred();
    let calls = 0;
    const store: ReplayStore = {
      claim: async (key) => {
        const call = calls++;
        if (call === 0) await secondAnswered.promise;
        try {
          if (claimed.has(key)) return false;
          claimed.add(key);
          return true;
        } finally {
          if (call === 1) secondAnswered.resolve();
        }
      },
      release: (key) => void claimed.delete(key),
    };
    const raw = body({ id: 'dlv_7' });
    const signature = signWebhookBody(raw, WEBHOOK_SECRET);
    const copies = await Promise.allSettled([verifyWebhook(raw, signature, options(store)), verifyWebhook(raw, signature, options(store))]);
    assert.deepEqual(copies.map((copy) => copy.status), ['rejected', 'fulfilled'], 'the second copy, answered first, is the one handled');
  });

  it('a re-signed retry stays a duplicate after the first copy has left the window', async () => {
    // First copy sent at NOW, the retry re-signed 60 s later. The id's claim lasts until the
    // first copy leaves the window (NOW + 300 s); the retry's own copy is acceptable until NOW + 360 s.
    const store = createMemoryReplayStore();
    const first = body({ id: 'dlv_9' });
    const retry = body({ id: 'dlv_9', timestamp: at(60) });
    const retrySignature = signWebhookBody(retry, WEBHOOK_SECRET);
    await verifyWebhook(first, signWebhookBody(first, WEBHOOK_SECRET), options(store));
    await rejects(verifyWebhook(retry, retrySignature, options(store, { now: NOW + 61_000 })), 'ERR_WEBHOOK_DUPLICATE', /already/, 409);
    await rejects(verifyWebhook(retry, retrySignature, options(store, { now: NOW + 320_000 })), 'ERR_WEBHOOK_DUPLICATE', /already/, 409);
    await rejects(receiveWebhook(retry, retrySignature, options(store, { now: NOW + 359_000 })), 'ERR_WEBHOOK_DUPLICATE', /already/, 409);
  });

  it('receiveWebhook claims on receipt, so a concurrent copy is a duplicate at once', async () => {
    const raw = body();
    const signature = signWebhookBody(raw, WEBHOOK_SECRET);
    for (const store of [countingStore(), asyncReplayStore()]) {
      const [first, second] = await Promise.allSettled([receiveWebhook(raw, signature, options(store)), receiveWebhook(raw, signature, options(store))]);
      assert.equal(first.status, 'fulfilled');
      assert.equal(first.value.delivery.event, 'subscription.created');
      assert.equal(second.status, 'rejected');
      assert.equal((second.reason as WebhookVerificationError).code, 'ERR_WEBHOOK_DUPLICATE');
    }
  });

  it('receiveWebhook’s release() frees the delivery for the retry, once only', async () => {
    const store = countingStore();
    const raw = body();
    const signature = signWebhookBody(raw, WEBHOOK_SECRET);
    const failed = await receiveWebhook(raw, signature, options(store));
    await failed.release();
    const retry = await receiveWebhook(raw, signature, options(store));
    await failed.release();
    assert.equal(store.releases.length, 1, 'a second release() does nothing');
    await rejects(receiveWebhook(raw, signature, options(store)), 'ERR_WEBHOOK_DUPLICATE', /already/, 409);
    assert.equal(retry.delivery.event, 'subscription.created');
  });

  it('receiveWebhook’s release() rejects when the store fails to release, whether it throws or rejects', async () => {
    const raw = body({ id: 'dlv_5' });
    const signature = signWebhookBody(raw, WEBHOOK_SECRET);
    const releases: Array<() => Promise<void>> = [
      () => Promise.reject(new Error('release failed')),
      () => {
        throw new Error('release failed');
      },
    ];
    for (const release of releases) {
      const received = await receiveWebhook(raw, signature, options({ claim: () => true, release }));
      await assert.rejects(received.release(), /release failed/);
    }
  });

  it('releases the signature it claimed when the id claim fails, so the retry is no duplicate', async () => {
    const store = countingStore();
    let down = true;
    const flaky: ReplayStore = {
      claim: (key, expiresAt, now) => {
        if (down && key.startsWith('webhook:id:')) throw new Error('store unreachable');
        return store.claim(key, expiresAt, now);
      },
      release: (key) => store.release(key),
    };
    const raw = body({ id: 'dlv_9' });
    const signature = signWebhookBody(raw, WEBHOOK_SECRET);
    await assert.rejects(verifyWebhook(raw, signature, options(flaky)), /store unreachable/);
    assert.deepEqual(store.releases, [`webhook:${signature.slice(7)}`]);
    down = false;
    assert.equal((await verifyWebhook(raw, signature, options(flaky))).id, 'dlv_9', 'the retry is handled');

    // A release that fails as well is not swallowed: the caller (and the backend's onError) hears
    // of both, whether the release rejects or throws at once.
    const releases: Array<() => Promise<void>> = [
      () => Promise.reject(new Error('release failed')),
      () => {
        throw new Error('release failed');
      },
    ];
    for (const release of releases) {
      const broken: ReplayStore = {
        claim: (key) => {
          if (key.startsWith('webhook:id:')) throw new Error('store unreachable');
          return true;
        },
        release,
      };
      await assert.rejects(verifyWebhook(raw, signature, options(broken)), (error: unknown) => {
        assert.ok(error instanceof AggregateError);
        assert.deepEqual(
          error.errors.map((e: Error) => e.message),
          ['store unreachable', 'release failed'],
        );
        return true;
      });
    }
  });

  it('works with an asynchronous store', async () => {
    const store = asyncReplayStore();
    const raw = body();
    const signature = signWebhookBody(raw, WEBHOOK_SECRET);
    await verifyWebhook(raw, signature, options(store));
    assert.deepEqual([...store.keys], [[`webhook:${signature.slice(7)}`, NOW + 300_001]], 'kept until the timestamp has left the window');
    await rejects(verifyWebhook(raw, signature, options(store)), 'ERR_WEBHOOK_DUPLICATE', /already/, 409);
    const copies = await Promise.allSettled([1, 2].map(() => verifyWebhook(body({ id: 'dlv_2' }), signWebhookBody(body({ id: 'dlv_2' }), WEBHOOK_SECRET), options(store))));
    assert.deepEqual(copies.map((copy) => copy.status).sort(), ['fulfilled', 'rejected'], 'one of two concurrent copies passes');

    const next = body({ id: 'dlv_3' });
    const received = await receiveWebhook(next, signWebhookBody(next, WEBHOOK_SECRET), options(store));
    assert.ok(store.keys.has('webhook:id:dlv_3'));
    await received.release();
    assert.ok(!store.keys.has('webhook:id:dlv_3'), 'released');
  });

  it('fails with ERR_CONFIG (500, so the marketplace retries) when a store answers something else than a boolean', async () => {
    const raw = body();
    const signature = signWebhookBody(raw, WEBHOOK_SECRET);
    for (const answer of ['OK', null, Promise.resolve(null)]) {
      const store = { claim: () => answer, release: () => {} } as unknown as ReplayStore;
      await assert.rejects(verifyWebhook(raw, signature, options(store)), { code: 'ERR_CONFIG', status: 500, message: /true or false/ });
      await assert.rejects(receiveWebhook(raw, signature, options(store)), { code: 'ERR_CONFIG', status: 500 });
    }
  });

  it('the memory store forgets expired keys, and release() frees a key', async () => {
    const store = createMemoryReplayStore({ maxEntries: 2 });
    assert.equal(await store.claim('a', NOW + 1000, NOW), true);
    assert.equal(await store.claim('a', NOW + 1000, NOW), false);
    assert.equal(await store.claim('a', NOW + 3000, NOW + 1000), true, 'expired keys are forgotten');
    await store.release('a');
    assert.equal(await store.claim('a', NOW + 3000, NOW + 1000), true, 'released');
    // Released from the older generation too (with maxEntries 2, each holds one key).
    assert.equal(await store.claim('b', NOW + 2000, NOW + 1000), true);
    await store.release('a');
    assert.equal(await store.claim('a', NOW + 3000, NOW + 1000), true, 'released from the older generation');
  });

  it('refuses a memory store size that is not a number of at least 2', () => {
    for (const maxEntries of [NaN, 0, -1, 1, 1.5, '100' as unknown as number]) {
      assert.throws(() => createMemoryReplayStore({ maxEntries }), { code: 'ERR_CONFIG', message: /maxEntries must be a finite number of at least 2/ }, String(maxEntries));
    }
  });

  it('the memory store holds exactly maxEntries live keys, odd or even', async () => {
    for (const maxEntries of [2, 3, 4, 5, 8, 9]) {
      const store = createMemoryReplayStore({ maxEntries });
      for (let i = 0; i < maxEntries; i++) assert.equal(await store.claim(`k${i}`, NOW + 60_000, NOW), true, `key ${i + 1} of ${maxEntries}`);
      await assert.rejects(async () => store.claim('one-more', NOW + 60_000, NOW), { code: 'ERR_REPLAY_STORE_FULL' }, `maxEntries ${maxEntries}`);
      // A key released from the newer half makes room for one.
      await store.release(`k${maxEntries - 1}`);
      assert.equal(await store.claim('one-more', NOW + 60_000, NOW), true, `maxEntries ${maxEntries}, after a release`);
      await assert.rejects(async () => store.claim('two-more', NOW + 60_000, NOW), { code: 'ERR_REPLAY_STORE_FULL' });
    }
  });

  it('the full memory store fails closed: 503 ERR_REPLAY_STORE_FULL, and no live key is forgotten', async () => {
    const store = createMemoryReplayStore({ maxEntries: 100 });
    for (let i = 0; i < 100; i++) assert.equal(await store.claim(`k${i}`, NOW + 60_000 + i, NOW), true);
    await assert.rejects(async () => store.claim('new', NOW + 60_000, NOW + 1), {
      code: 'ERR_REPLAY_STORE_FULL',
      status: 503,
      message: /up to 60 s\. Raise maxEntries \(replayStoreSize of createAppBackend\) or pass shared stores/,
    });
    for (let i = 0; i < 100; i++) assert.equal(await store.claim(`k${i}`, NOW + 60_000, NOW + 1), false, `k${i} is still a replay`);
    // Once the earliest key has expired, there is room again; the others are kept.
    assert.equal(await store.claim('new', NOW + 120_000, NOW + 60_000), true);
    assert.equal(await store.claim('k99', NOW + 120_000, NOW + 60_000), false, 'the later keys are kept');

    // Through verifyWebhook, the delivery is answered 503 (so the marketplace retries), not as a duplicate.
    const full = createMemoryReplayStore({ maxEntries: 2 });
    await full.claim('x', NOW + 600_000, NOW);
    await full.claim('y', NOW + 600_000, NOW);
    const raw = body();
    await assert.rejects(verifyWebhook(raw, signWebhookBody(raw, WEBHOOK_SECRET), options(full)), { code: 'ERR_REPLAY_STORE_FULL', status: 503 });
  });

  it('the memory store never fills under steady traffic of up to maxEntries / 2 keys per key lifetime', async () => {
    const store = createMemoryReplayStore({ maxEntries: 100 });
    // Each key lives 1 s and one arrives every 25 ms: 40 live keys at any time.
    for (let i = 0; i < 10_000; i++) assert.equal(await store.claim(`k${i}`, NOW + i * 25 + 1000, NOW + i * 25), true);
    assert.equal(await store.claim('k9999', NOW + 300_000, NOW + 9_999 * 25), false, 'the newest key is still held');
  });
});

describe('verifyWebhook parses exactly like parseWebhookDelivery', () => {
  const samples: unknown[] = [
    { event: 'user.authorized', timestamp: at(0), data: { user_id: 'usr_1', extra: [1] } },
    { event: 'subscription.created', timestamp: at(0), data: { user_id: 'usr_1', plan: 'pro' }, id: 'd1' },
    { event: 'subscription.cancelled', timestamp: at(0), data: { user_id: 'usr_2', plan: 'pro' } },
    { event: 'user.revoked', timestamp: at(0), data: { user_id: 'usr_3' } },
    { event: 'something.new', timestamp: at(0), data: { any: 'thing' } },
    // Unknown top-level keys are dropped, unknown data keys kept (a "__proto__" key never is).
    { event: 'user.revoked', timestamp: at(0), data: { user_id: 'usr_3', nested: { deep: [1, { x: null }] } }, extra: true },
    // NOW, written with an offset and with milliseconds.
    { event: 'subscription.created', timestamp: '2026-05-01T14:00:00+02:00', data: JSON.parse('{"user_id":"usr_4","plan":"p","__proto__":"x"}'), id: '' },
    { event: 'subscription.cancelled', timestamp: '2026-05-01T12:00:00.123Z', data: { plan: 'pro', user_id: 'usr_5' } },
    { event: 'user.authorized ', timestamp: at(0), data: {} },
  ];
  for (const sample of samples) {
    it((sample as { event: string }).event, async () => {
      const raw = JSON.stringify(sample);
      assert.deepEqual(await verifyWebhook(raw, signWebhookBody(raw, WEBHOOK_SECRET), options()), parseWebhookDelivery(JSON.parse(raw)));
    });
  }
  const invalid: Array<[string, unknown]> = [
    ['a known kind with bad data', { event: 'user.revoked', timestamp: at(0), data: { user_id: 7 } }],
    ['an empty plan', { event: 'subscription.created', timestamp: at(0), data: { user_id: 'usr_1', plan: '' } }],
    ['a null id', { event: 'user.revoked', timestamp: at(0), data: { user_id: 'usr_1' }, id: null }],
    ['data as an array', { event: 'user.authorized', timestamp: at(0), data: ['usr_1'] }],
    ['a numeric timestamp', { event: 'user.revoked', timestamp: 1, data: { user_id: 'usr_1' } }],
    ['an unknown kind without data', { event: 'plan.renamed', timestamp: at(0) }],
    ['an empty event', { event: '', timestamp: at(0), data: {} }],
  ];
  for (const [name, value] of invalid) {
    it(`reports the same message for ${name}`, async () => {
      const expected = (() => {
        try {
          parseWebhookDelivery(value);
        } catch (error) {
          return (error as Error).message;
        }
        return 'no error';
      })();
      assert.notEqual(expected, 'no error');
      const raw = JSON.stringify(value);
      await rejects(verifyWebhook(raw, signWebhookBody(raw, WEBHOOK_SECRET), options()), 'ERR_WEBHOOK_BODY_INVALID', new RegExp(`^${expected.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`), 400);
    });
  }
});
