// Webhook verification against its floor: bare node:crypto HMAC + timingSafeEqual + JSON.parse +
// a timestamp check, on the same 1 KB deliveries, in one process. The kit's extra work (input
// checks, zod parsing of the delivery, the replay guard) counts. Also: session-token
// verifications per second. Target: the kit reaches at least 0.7 of the baseline.
import { createHmac, timingSafeEqual } from 'node:crypto';
import {
  createMemoryReplayGuard,
  signSessionToken,
  signWebhookBody,
  verifySessionToken,
  verifyWebhook,
  type VerifyWebhookOptions,
} from '../../src/server/index.js';

const SECRET = 'whsec_bench_0123456789abcdef';
const SESSION_SECRET = 'bench-session-secret-0123456789-abcdefgh';
const NOW = Date.parse('2026-05-01T12:00:00Z');
const DELIVERIES = 20_000;
const ROUNDS = 8;
const CHUNK = 250;
const TARGET = 0.7;

interface Signed {
  body: Buffer;
  signature: string;
}

function deliveries(): Signed[] {
  const list: Signed[] = [];
  for (let i = 0; i < DELIVERIES; i++) {
    const base = { event: 'subscription.created', timestamp: '2026-05-01T11:59:30Z', data: { user_id: `usr_${i}`, plan: 'pro', note: '' } };
    const padding = 1024 - Buffer.byteLength(JSON.stringify(base));
    base.data.note = 'x'.repeat(Math.max(0, padding));
    const body = Buffer.from(JSON.stringify(base));
    list.push({ body, signature: signWebhookBody(body, SECRET) });
  }
  return list;
}

function baseline(list: readonly Signed[], from: number, to: number): void {
  for (let i = from; i < to; i++) {
    const { body, signature } = list[i]!;
    const expected = createHmac('sha256', SECRET).update(body).digest();
    if (!timingSafeEqual(expected, Buffer.from(signature.slice(7), 'hex'))) throw new Error('baseline: bad signature');
    const value = JSON.parse(body.toString('utf8')) as { timestamp: string };
    if (Math.abs(NOW - Date.parse(value.timestamp)) > 300_000) throw new Error('baseline: stale');
  }
}

async function kit(list: readonly Signed[], from: number, to: number, options: VerifyWebhookOptions): Promise<void> {
  for (let i = from; i < to; i++) {
    const { body, signature } = list[i]!;
    await verifyWebhook(body, signature, options);
  }
}

/** Nanoseconds taken by `run`. */
async function time(run: () => void | Promise<void>): Promise<number> {
  const started = process.hrtime.bigint();
  await run();
  return Number(process.hrtime.bigint() - started);
}

const format = (value: number) => Math.round(value).toLocaleString('en-US');

export default async function bench(): Promise<void> {
  const list = deliveries();
  console.log(`deliveries: ${DELIVERIES} distinct, ${list[0]!.body.byteLength} bytes each; ${ROUNDS} rounds in chunks of ${CHUNK}, both sides back to back per chunk`);
  const warmOptions = { secret: SECRET, now: NOW, replayGuard: createMemoryReplayGuard() };
  baseline(list, 0, DELIVERIES);
  await kit(list, 0, DELIVERIES, warmOptions);

  // Both sides run on the same chunk back to back, in alternating order, and the ratio is the
  // median over all chunks: a burst of load from other processes then spoils a few chunk pairs,
  // not the result.
  let baselineNs = 0;
  let kitNs = 0;
  const ratios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const options = { secret: SECRET, now: NOW, replayGuard: createMemoryReplayGuard() };
    for (let from = 0; from < DELIVERIES; from += CHUNK) {
      const to = Math.min(from + CHUNK, DELIVERIES);
      const kitFirst = (from / CHUNK) % 2 === 1;
      const kitBefore = kitFirst ? await time(() => kit(list, from, to, options)) : 0;
      const base = await time(() => baseline(list, from, to));
      const kitTime = kitFirst ? kitBefore : await time(() => kit(list, from, to, options));
      baselineNs += base;
      kitNs += kitTime;
      ratios.push(base / kitTime);
    }
  }
  ratios.sort((a, b) => a - b);
  const ratio = ratios[Math.floor(ratios.length / 2)]!;
  const baselineRate = (ROUNDS * DELIVERIES) / (baselineNs / 1e9);
  const kitRate = (ROUNDS * DELIVERIES) / (kitNs / 1e9);
  console.log(`baseline (HMAC + timingSafeEqual + JSON.parse + timestamp): ${format(baselineRate)} verifications/s`);
  console.log(`verifyWebhook (+ zod delivery parse + replay guard):      ${format(kitRate)} verifications/s`);
  console.log(`ratio (median over ${ratios.length} chunk pairs): ${ratio.toFixed(2)} (target ≥ ${TARGET}) ${ratio >= TARGET ? 'OK' : 'BELOW TARGET'}`);

  const user = { id: 'usr_1', email: 'ada@example.com', name: 'Ada', avatar_url: 'https://cdn.example/ada.png' };
  const { token } = await signSessionToken({ secret: SESSION_SECRET, audience: 'client_bench', user, appId: 'app_1', host: null, now: NOW });
  const verifyOptions = { secret: SESSION_SECRET, audience: 'client_bench', now: NOW + 1000 };
  const sessions = 20_000;
  let bestSessions = 0;
  for (let round = 0; round < 3; round++) {
    const ns = await time(async () => {
      for (let i = 0; i < sessions; i++) await verifySessionToken(token, verifyOptions);
    });
    bestSessions = Math.max(bestSessions, sessions / (ns / 1e9));
  }
  console.log(`session-token verifications (jose HS256 + claims), best of 3: ${format(bestSessions)} /s`);
}
