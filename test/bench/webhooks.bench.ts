// Webhook verification against its floor: bare node:crypto HMAC + timingSafeEqual + JSON.parse +
// a timestamp check, on the same 1 KB deliveries, in one process. The kit's extra work (input
// checks, zod parsing of the delivery, the replay store, the promise it answers with) counts. Also:
// session-token verifications per second. Target: the kit reaches at least 0.7 of the baseline.
//
// Method: both sides warm up on every delivery, then run on the same chunk of deliveries back to
// back, in alternating order, many times; the ratio is the median over all chunk pairs, so a burst
// of load from elsewhere spoils a few pairs, not the result. Both run in a worker thread of this
// process, started once the machine is quiet: a fresh V8 isolate, free of what the previous
// benchmark of `npm run bench` left in the main one (Playwright's AsyncLocalStorage hook, which
// taxes every promise, its garbage and type feedback).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { cpus } from 'node:os';
import { pathToFileURL } from 'node:url';
import { isMainThread, Worker } from 'node:worker_threads';
import {
  createMemoryReplayStore,
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** CPU time of the whole machine so far: idle, and all of it. */
function cpuTimes(): { idle: number; all: number } {
  let idle = 0;
  let all = 0;
  for (const { times } of cpus()) {
    idle += times.idle;
    all += times.user + times.nice + times.sys + times.idle + times.irq;
  }
  return { idle, all };
}

/** Busy share of the whole machine over `ms` (this process sleeps meanwhile). */
async function busyShare(ms: number): Promise<number> {
  const before = cpuTimes();
  await sleep(ms);
  const after = cpuTimes();
  return after.all > before.all ? 1 - (after.idle - before.idle) / (after.all - before.all) : 0;
}

/** Waits (at most 3 s) for a quiet moment, e.g. while the previous benchmark's Chromium exits. Says what it saw. */
async function settle(): Promise<string> {
  const started = Date.now();
  let busy = await busyShare(100);
  while (busy > 0.25 && Date.now() - started < 3000) busy = await busyShare(100);
  return `waited ${((Date.now() - started) / 1000).toFixed(1)} s for a quiet moment (machine ${Math.round(busy * 100)} % busy)`;
}

// The worker loads this file through tsx's API (the --import hooks of the main thread do not
// reach workers), runs `measure` and hands its lines back.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
import(workerData.tsx)
  .then(({ tsImport }) => tsImport(workerData.bench, workerData.bench))
  .then((bench) => bench.measure())
  .then((lines) => parentPort.postMessage(lines));
`;

function measureInWorker(): Promise<string[]> {
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { tsx: import.meta.resolve('tsx/esm/api'), bench: import.meta.url } });
  return new Promise<string[]>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the benchmark worker exited (code ${code}) without results`)));
  }).finally(() => worker.terminate());
}

const format = (value: number) => Math.round(value).toLocaleString('en-US');
const quantile = (sorted: readonly number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;

export default async function bench(): Promise<void> {
  console.log(await settle());
  for (const line of await measureInWorker()) console.log(line);
}

/** Runs every measurement (in the worker) and returns the report's lines. */
export async function measure(): Promise<string[]> {
  const lines: string[] = [];
  const list = deliveries();
  lines.push(`deliveries: ${DELIVERIES} distinct, ${list[0]!.body.byteLength} bytes each; ${ROUNDS} rounds in chunks of ${CHUNK}, both sides back to back per chunk, in a worker thread`);
  for (let pass = 0; pass < 2; pass++) {
    baseline(list, 0, DELIVERIES);
    await kit(list, 0, DELIVERIES, { secret: SECRET, now: NOW, replayStore: createMemoryReplayStore({ maxEntries: DELIVERIES }) });
  }

  let baselineNs = 0;
  let kitNs = 0;
  const ratios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // A fresh store per round: the same deliveries again would be duplicates.
    const options = { secret: SECRET, now: NOW, replayStore: createMemoryReplayStore({ maxEntries: DELIVERIES }) };
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
  const ratio = quantile(ratios, 0.5);
  const baselineRate = (ROUNDS * DELIVERIES) / (baselineNs / 1e9);
  const kitRate = (ROUNDS * DELIVERIES) / (kitNs / 1e9);
  lines.push(`baseline (HMAC + timingSafeEqual + JSON.parse + timestamp): ${format(baselineRate)} verifications/s`);
  lines.push(`verifyWebhook (+ zod delivery parse + replay store):      ${format(kitRate)} verifications/s`);
  lines.push(
    `ratio (median over ${ratios.length} chunk pairs): ${ratio.toFixed(2)} (target ≥ ${TARGET}) ${ratio >= TARGET ? 'OK' : 'BELOW TARGET'}; ` +
      `middle half ${quantile(ratios, 0.25).toFixed(2)}–${quantile(ratios, 0.75).toFixed(2)}, of the totals ${(kitRate / baselineRate).toFixed(2)}`,
  );

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
  lines.push(`session-token verifications (jose HS256 + claims), best of 3: ${format(bestSessions)} /s`);
  return lines;
}

if (isMainThread && import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await bench();
