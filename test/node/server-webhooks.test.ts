import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  createMemoryReplayGuard,
  receiveWebhook,
  signWebhookBody,
  verifyWebhook,
  WebhookVerificationError,
  isKnownEvent,
  type VerifyWebhookOptions,
  type WebhookReplayGuard,
} from '../../src/server/index.js';
import { parseWebhookDelivery } from '../../src/shared/schemas.js';
import { NOW, WEBHOOK_SECRET } from '../support/server-http.js';

const body = (overrides: Record<string, unknown> = {}) =>
  JSON.stringify({ event: 'subscription.created', timestamp: '2026-05-01T12:00:00Z', data: { user_id: 'usr_1', plan: 'pro' }, ...overrides });

/** A guard that counts what it records, to prove that rejected deliveries change no state. */
function countingGuard(): WebhookReplayGuard & { records: string[] } {
  const inner = createMemoryReplayGuard();
  const records: string[] = [];
  return {
    records,
    seen: (key, now) => inner.seen(key, now),
    record(key, expiresAt, now) {
      records.push(key);
      return inner.record(key, expiresAt, now);
    },
  };
}

const options = (guard = countingGuard(), extra: Partial<VerifyWebhookOptions> = {}): VerifyWebhookOptions => ({
  secret: WEBHOOK_SECRET,
  now: NOW,
  replayGuard: guard,
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

describe('verifyWebhook (DESIGN D)', () => {
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
    for (const input of [raw, bytes, Buffer.from(raw), bytes.buffer.slice(0)]) {
      const delivery = await verifyWebhook(input, signature, options());
      assert.equal(delivery.data.plan, 'Prö ✓ 日本語 🎉');
    }
  });

  it('accepts an upper-case hex signature and surrounding whitespace', async () => {
    const raw = body();
    const signature = signWebhookBody(raw, WEBHOOK_SECRET);
    await verifyWebhook(raw, ` sha256=${signature.slice(7).toUpperCase()} `, options());
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
      { name: 'no body at all', run: (o) => verifyWebhook(undefined as never, good, o), code: 'ERR_WEBHOOK_BODY_INVALID', message: /missing/, status: 400 },
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
      {
        name: 'stale timestamp (301 s old)',
        run: (o) => {
          const text = body({ timestamp: '2026-05-01T11:54:59Z' });
          return verifyWebhook(text, signWebhookBody(text, WEBHOOK_SECRET), o);
        },
        code: 'ERR_WEBHOOK_TIMESTAMP_OUT_OF_TOLERANCE',
        message: /too old: 301 s/,
        status: 400,
      },
      {
        name: 'future timestamp (301 s ahead)',
        run: (o) => {
          const text = body({ timestamp: '2026-05-01T12:05:01Z' });
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
    ];
    for (const c of cases) {
      it(c.name, async () => {
        const guard = countingGuard();
        await rejects(c.run(options(guard)), c.code, c.message, c.status);
        assert.deepEqual(guard.records, [], 'nothing recorded');
      });
    }
  });

  it('honours a custom tolerance, at its edges', async () => {
    const text = body({ timestamp: '2026-05-01T11:59:00Z' });
    const signature = signWebhookBody(text, WEBHOOK_SECRET);
    await verifyWebhook(text, signature, options(undefined, { toleranceSeconds: 60 }));
    await rejects(verifyWebhook(text, signature, options(undefined, { toleranceSeconds: 59 })), 'ERR_WEBHOOK_TIMESTAMP_OUT_OF_TOLERANCE', /tolerance 59 s/, 400);
  });

  it('reports a replayed delivery as a duplicate within the window, and only after it verified', async () => {
    const guard = countingGuard();
    const raw = body();
    const signature = signWebhookBody(raw, WEBHOOK_SECRET);
    await verifyWebhook(raw, signature, options(guard));
    assert.equal(guard.records.length, 1);
    await rejects(verifyWebhook(raw, signature, options(guard, { now: NOW + 1000 })), 'ERR_WEBHOOK_DUPLICATE', /already received/, 409);
    await rejects(verifyWebhook(Buffer.from(raw), signature, options(guard)), 'ERR_WEBHOOK_DUPLICATE', /already received/, 409);
    assert.equal(guard.records.length, 1, 'a duplicate records nothing');

    // A forged copy (bad signature) of a new delivery must not poison the guard for the real one.
    const next = body({ timestamp: '2026-05-01T12:00:01Z' });
    await rejects(verifyWebhook(next, signWebhookBody(next, 'forger'), options(guard)), 'ERR_WEBHOOK_SIGNATURE_MISMATCH', /match/, 401);
    await verifyWebhook(next, signWebhookBody(next, WEBHOOK_SECRET), options(guard));
  });

  it('treats re-signed retries carrying the same delivery id as duplicates', async () => {
    const guard = countingGuard();
    const first = body({ id: 'dlv_1' });
    const retry = body({ id: 'dlv_1', timestamp: '2026-05-01T12:00:30Z' });
    await verifyWebhook(first, signWebhookBody(first, WEBHOOK_SECRET), options(guard));
    await rejects(verifyWebhook(retry, signWebhookBody(retry, WEBHOOK_SECRET), options(guard)), 'ERR_WEBHOOK_DUPLICATE', /already/, 409);
  });

  it('receiveWebhook records only when markHandled is called', async () => {
    const guard = countingGuard();
    const raw = body();
    const signature = signWebhookBody(raw, WEBHOOK_SECRET);
    const first = await receiveWebhook(raw, signature, options(guard));
    assert.deepEqual(guard.records, []);
    const second = await receiveWebhook(raw, signature, options(guard));
    await second.markHandled();
    assert.equal(guard.records.length, 1);
    assert.equal(first.delivery.event, 'subscription.created');
    await rejects(receiveWebhook(raw, signature, options(guard)), 'ERR_WEBHOOK_DUPLICATE', /already/, 409);
  });

  it('works with an asynchronous store', async () => {
    const keys = new Map<string, number>();
    const asyncGuard: WebhookReplayGuard = {
      seen: async (key, now) => (keys.get(key) ?? 0) > now,
      record: async (key, expiresAt) => void keys.set(key, expiresAt),
    };
    const raw = body();
    const signature = signWebhookBody(raw, WEBHOOK_SECRET);
    await verifyWebhook(raw, signature, options(undefined, { replayGuard: asyncGuard }));
    assert.equal([...keys.values()][0], NOW + 300_000, 'kept until the timestamp leaves the window');
    await rejects(verifyWebhook(raw, signature, options(undefined, { replayGuard: asyncGuard })), 'ERR_WEBHOOK_DUPLICATE', /already/, 409);
  });

  it('the default memory guard is bounded and forgets expired records', async () => {
    const guard = createMemoryReplayGuard({ maxEntries: 2 });
    await guard.record('a', NOW + 1000, NOW);
    await guard.record('b', NOW + 1000, NOW);
    await guard.record('c', NOW + 1000, NOW);
    assert.equal(await guard.seen('a', NOW), false, 'oldest dropped when full');
    assert.equal(await guard.seen('b', NOW), true);
    assert.equal(await guard.seen('c', NOW), true);
    assert.equal(await guard.seen('c', NOW + 1000), false, 'expired');
  });
});

describe('verifyWebhook parses exactly like parseWebhookDelivery', () => {
  const samples: unknown[] = [
    { event: 'user.authorized', timestamp: '2026-05-01T12:00:00Z', data: { user_id: 'usr_1', extra: [1] } },
    { event: 'subscription.created', timestamp: '2026-05-01T12:00:00Z', data: { user_id: 'usr_1', plan: 'pro' }, id: 'd1' },
    { event: 'subscription.cancelled', timestamp: '2026-05-01T12:00:00Z', data: { user_id: 'usr_2', plan: 'pro' } },
    { event: 'user.revoked', timestamp: '2026-05-01T12:00:00Z', data: { user_id: 'usr_3' } },
    { event: 'something.new', timestamp: '2026-05-01T12:00:00Z', data: { any: 'thing' } },
  ];
  for (const sample of samples) {
    it((sample as { event: string }).event, async () => {
      const raw = JSON.stringify(sample);
      assert.deepEqual(await verifyWebhook(raw, signWebhookBody(raw, WEBHOOK_SECRET), options()), parseWebhookDelivery(JSON.parse(raw)));
    });
  }
  it('reports the same message for a known kind with bad data', async () => {
    const value = { event: 'user.revoked', timestamp: '2026-05-01T12:00:00Z', data: { user_id: 7 } };
    const expected = (() => {
      try {
        parseWebhookDelivery(value);
      } catch (error) {
        return (error as Error).message;
      }
      return 'no error';
    })();
    const raw = JSON.stringify(value);
    await rejects(verifyWebhook(raw, signWebhookBody(raw, WEBHOOK_SECRET), options()), 'ERR_WEBHOOK_BODY_INVALID', new RegExp(expected.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), 400);
  });
});
