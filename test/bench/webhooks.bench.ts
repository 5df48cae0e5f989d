// Webhook verification against two references, on the same 1 KB deliveries, a distinct delivery
// on every call, in one process:
// - bare node:crypto: HMAC, timingSafeEqual, JSON.parse and a timestamp check (target: ours ≥ 0.8×);
// - stripe's `webhooks.constructEvent` (the `stripe` package), which checks less: no schema, no
//   replays (target: ours ≥ 1.0×).
// The kit's extra work counts: input checks, the schema of the delivery, the replay claim in the
// default memory store, the promise it answers with. Also printed: session-token verifications.
//
// Method (stats.ts `interleave`): both sides warm up on every delivery, then run on the same
// chunk of deliveries back to back, in alternating order, many times; the ratio is the median over
// all chunk pairs. Both run in a worker thread, started once the machine is quiet.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { isMainThread } from 'node:worker_threads';
import Stripe from 'stripe';
import {
  createMemoryReplayStore,
  signSessionToken,
  signWebhookBody,
  verifySessionToken,
  verifyWebhook,
  type VerifyWebhookOptions,
} from '../../src/server/index.js';
import { interleave, rate, runInWorker, settle, time, verdict, type Figure } from './stats.js';

const SECRET = 'whsec_bench_0123456789abcdef';
const SESSION_SECRET = 'bench-session-secret-0123456789-abcdefgh';
const NOW = Date.parse('2026-05-01T12:00:00Z');

/** How much to measure: `npm run bench` uses the defaults; test/e2e/bench-smoke.test.ts far fewer. */
export interface WebhooksBenchCounts {
  deliveries: number;
  rounds: number;
  chunk: number;
}
const COUNTS: WebhooksBenchCounts = { deliveries: 20_000, rounds: 8, chunk: 250 };
const TARGET_BARE = 0.8;
const TARGET_STRIPE = 1.0;

interface Signed {
  body: Buffer;
  /** X-Service-Signature */
  signature: string;
  /** Stripe-Signature, over the same body */
  stripe: string;
}

function deliveries(count: number): Signed[] {
  const list: Signed[] = [];
  const t = Math.floor(NOW / 1000) - 30;
  for (let i = 0; i < count; i++) {
    const base = { event: 'subscription.created', timestamp: '2026-05-01T11:59:30Z', data: { user_id: `usr_${i}`, plan: 'pro', note: '' } };
    const padding = 1024 - Buffer.byteLength(JSON.stringify(base));
    base.data.note = 'x'.repeat(Math.max(0, padding));
    const body = Buffer.from(JSON.stringify(base));
    const stripe = `t=${t},v1=${createHmac('sha256', SECRET).update(`${t}.`).update(body).digest('hex')}`;
    list.push({ body, signature: signWebhookBody(body, SECRET), stripe });
  }
  return list;
}

function bare(list: readonly Signed[], from: number, to: number): void {
  for (let i = from; i < to; i++) {
    const { body, signature } = list[i]!;
    const expected = createHmac('sha256', SECRET).update(body).digest();
    if (!timingSafeEqual(expected, Buffer.from(signature.slice(7), 'hex'))) throw new Error('bare: bad signature');
    const value = JSON.parse(body.toString('utf8')) as { timestamp: string };
    if (Math.abs(NOW - Date.parse(value.timestamp)) > 300_000) throw new Error('bare: stale');
  }
}

const stripe = new Stripe('sk_test_bench');

function stripeConstructEvent(list: readonly Signed[], from: number, to: number): void {
  for (let i = from; i < to; i++) {
    const { body, stripe: header } = list[i]!;
    stripe.webhooks.constructEvent(body, header, SECRET, 300, undefined, NOW);
  }
}

async function kit(list: readonly Signed[], from: number, to: number, options: VerifyWebhookOptions): Promise<void> {
  for (let i = from; i < to; i++) {
    const { body, signature } = list[i]!;
    await verifyWebhook(body, signature, options);
  }
}

export default async function webhooksBench(counts: WebhooksBenchCounts = COUNTS): Promise<Figure[]> {
  console.log(await settle());
  const { lines, figures } = await runInWorker<{ lines: string[]; figures: Figure[] }>(import.meta.url, 'measure', counts);
  for (const line of lines) console.log(line);
  return figures;
}

/** Runs every measurement (in the worker) and returns the report's lines and figures. */
export async function measure(counts: WebhooksBenchCounts = COUNTS): Promise<{ lines: string[]; figures: Figure[] }> {
  const lines: string[] = [];
  const figures: Figure[] = [];
  const { deliveries: count, rounds, chunk } = counts;
  const list = deliveries(count);
  const freshOptions = (): VerifyWebhookOptions => ({ secret: SECRET, now: NOW, replayStore: createMemoryReplayStore({ maxEntries: count }) });
  lines.push(`deliveries: ${count} distinct, ${list[0]!.body.byteLength} bytes each; ${rounds} rounds in chunks of ${chunk}, interleaved, in a worker thread`);
  for (let pass = 0; pass < 2; pass++) {
    bare(list, 0, count);
    stripeConstructEvent(list, 0, count);
    await kit(list, 0, count, freshOptions());
  }

  for (const [name, reference, target] of [
    ['bare node:crypto (HMAC + timingSafeEqual + JSON.parse + timestamp)', bare, TARGET_BARE],
    ["stripe's webhooks.constructEvent", stripeConstructEvent, TARGET_STRIPE],
  ] as const) {
    // A fresh store per round: the same deliveries again would be duplicates.
    let options = freshOptions();
    const result = await interleave({
      items: count,
      rounds,
      chunk,
      round: () => void (options = freshOptions()),
      ours: (from, to) => kit(list, from, to, options),
      reference: (from, to) => reference(list, from, to),
    });
    const figure: Figure = {
      name: `webhook verification vs ${name.split(' (')[0]}`,
      ratio: result.ratio,
      target,
      detail: `${rate(result.oursRate)}/s vs ${rate(result.referenceRate)}/s`,
    };
    figures.push(figure);
    lines.push(`${name}: ${rate(result.referenceRate)} verifications/s`);
    lines.push(`  verifyWebhook (+ schema + replay claim): ${rate(result.oursRate)} verifications/s`);
    lines.push(`  ratio (median of ${result.pairs} chunk pairs): ${verdict(figure)}; middle half ${result.low.toFixed(2)}–${result.high.toFixed(2)}`);
  }

  const user = { id: 'usr_1', email: 'ada@example.com', name: 'Ada', avatar_url: 'https://cdn.example/ada.png' };
  const { token } = await signSessionToken({ secret: SESSION_SECRET, audience: 'client_bench', user, appId: 'app_1', host: null, now: NOW });
  const verifyOptions = { secret: SESSION_SECRET, audience: 'client_bench', now: NOW + 1000 };
  const sessions = Math.max(1000, count);
  let bestSessions = 0;
  for (let round = 0; round < 3; round++) {
    const ns = await time(async () => {
      for (let i = 0; i < sessions; i++) await verifySessionToken(token, verifyOptions);
    });
    bestSessions = Math.max(bestSessions, sessions / (ns / 1e9));
  }
  lines.push(`session-token verifications (HS256 + claims), best of 3: ${rate(bestSessions)} /s`);
  return { lines, figures };
}

if (isMainThread && import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await webhooksBench();
