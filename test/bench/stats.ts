// Figures and measuring conditions shared by the benchmark series.
import { cpus } from 'node:os';
import { Worker } from 'node:worker_threads';

/** The middle value (the mean of the two middle ones for an even count). */
export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** The value at quantile `q` (0..1) of values sorted in ascending order. */
export const quantile = (sorted: readonly number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;

/** Milliseconds as the series print them: `12.3 ms`. */
export const ms = (value: number): string => `${value.toFixed(1)} ms`;

/** A rate as the series print it: `12,345`. */
export const rate = (value: number): string => Math.round(value).toLocaleString('en-US');

/**
 * One figure of `npm run bench`: ours against its reference, measured in the same run. A series
 * returns its figures so that test/bench/run.ts can list them together at the end.
 */
export interface Figure {
  name: string;
  /** Ours over the reference: above 1 is faster than it (for times, the reference's over ours). */
  ratio: number;
  /** The least ratio the figure must reach. */
  target: number;
  /** What else to print beside it: rates, latencies. */
  detail?: string;
}

/** `0.83× (target ≥ 0.8) OK` */
export function verdict(figure: Pick<Figure, 'ratio' | 'target'>): string {
  return `${figure.ratio.toFixed(2)}× (target ≥ ${figure.target}) ${figure.ratio >= figure.target ? 'OK' : 'BELOW TARGET'}`;
}

/** Nanoseconds taken by `run`. */
export async function time(run: () => void | Promise<void>): Promise<number> {
  const started = process.hrtime.bigint();
  await run();
  return Number(process.hrtime.bigint() - started);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
export async function settle(): Promise<string> {
  const started = Date.now();
  let busy = await busyShare(100);
  while (busy > 0.25 && Date.now() - started < 3000) busy = await busyShare(100);
  return `waited ${((Date.now() - started) / 1000).toFixed(1)} s for a quiet moment (machine ${Math.round(busy * 100)} % busy)`;
}

// The worker loads the bench module through tsx's API (the --import hooks of the main thread do
// not reach workers), calls the named export with the given argument and hands its result back.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
import(workerData.tsx)
  .then(({ tsImport }) => tsImport(workerData.module, workerData.module))
  .then((module) => module[workerData.name](workerData.argument))
  .then((result) => parentPort.postMessage(result));
`;

/**
 * Runs `module`'s export `name` in a worker thread: a fresh V8 isolate, free of what the previous
 * benchmark of `npm run bench` left in the main one (Playwright's AsyncLocalStorage hook, which
 * taxes every promise, its garbage and type feedback).
 */
export function runInWorker<T>(module: string, name: string, argument?: unknown): Promise<T> {
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { tsx: import.meta.resolve('tsx/esm/api'), module, name, argument } });
  return new Promise<T>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the benchmark worker exited (code ${code}) without results`)));
  }).finally(() => worker.terminate());
}

/**
 * Interleaved measurement of two functions over the same items: each chunk runs both back to
 * back, in alternating order; the ratio is the median over chunk pairs of (reference time / our
 * time), so a burst of load from elsewhere spoils a few pairs, not the result.
 */
export async function interleave(options: {
  items: number;
  rounds: number;
  chunk: number;
  /** Called before each round (a fresh replay store, say). */
  round?: (round: number) => void;
  ours: (from: number, to: number) => void | Promise<void>;
  reference: (from: number, to: number) => void | Promise<void>;
}): Promise<{ ratio: number; low: number; high: number; oursRate: number; referenceRate: number; pairs: number }> {
  const { items, rounds, chunk, ours, reference } = options;
  let oursNs = 0;
  let referenceNs = 0;
  const ratios: number[] = [];
  for (let round = 0; round < rounds; round++) {
    options.round?.(round);
    for (let from = 0; from < items; from += chunk) {
      const to = Math.min(from + chunk, items);
      const oursFirst = (from / chunk + round) % 2 === 1;
      const before = oursFirst ? await time(() => ours(from, to)) : 0;
      const theirs = await time(() => reference(from, to));
      const mine = oursFirst ? before : await time(() => ours(from, to));
      oursNs += mine;
      referenceNs += theirs;
      ratios.push(theirs / mine);
    }
  }
  ratios.sort((a, b) => a - b);
  return {
    ratio: quantile(ratios, 0.5),
    low: quantile(ratios, 0.25),
    high: quantile(ratios, 0.75),
    oursRate: (rounds * items) / (oursNs / 1e9),
    referenceRate: (rounds * items) / (referenceNs / 1e9),
    pairs: ratios.length,
  };
}
