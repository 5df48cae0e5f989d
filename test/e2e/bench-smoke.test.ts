// `npm run bench` is not part of `npm test` (its figures are read by people, not asserted), so a
// change that breaks it would go unseen. This runs one launch of each series of the start-up
// benchmark, for whether it completes, never for how fast. (What only its full counts meet, as
// the backend's per-user exchange cap once did, it cannot see: run `npm run bench` for that.)
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import elementsBench from '../bench/elements.bench.js';
import launchBench from '../bench/launch.bench.js';
import redisBench from '../bench/redis.bench.js';
import runtimeBench from '../bench/runtime.bench.js';
import serverBench from '../bench/server.bench.js';
import storesBench from '../bench/stores.bench.js';
import webhooksBench from '../bench/webhooks.bench.js';

describe('npm run bench', () => {
  it('runs the start-up benchmark through (one launch of each series)', { timeout: 120_000 }, async (t) => {
    const lines: string[] = [];
    t.mock.method(console, 'log', (line: unknown) => void lines.push(String(line)));
    await runtimeBench({ launches: 1, firstLaunches: 1, changes: 1 });
    const output = lines.join('\n');
    assert.equal(output.match(/navigation start -> kit ready/g)?.length, 4, output);
    assert.match(output, /first listener -> last listener/);
  });

  it('runs the first-launch benchmark through (one launch of each page, after a warm-up round)', { timeout: 120_000 }, async (t) => {
    const lines: string[] = [];
    t.mock.method(console, 'log', (line: unknown) => void lines.push(String(line)));
    await launchBench({ samples: 1 });
    const output = lines.join('\n');
    assert.match(output, /^ +baseline +[\d.]+ ms/m, output);
    assert.match(output, /^ +script tag +[\d.]+ ms .* [\d.]+x the baseline/m, output);
    assert.match(output, /^ +bundled +[\d.]+ ms .* [\d.]+x the baseline/m, output);
  });

  it('runs the elements benchmark through (one page of 20 elements, one plan switch each way; 20 gates against 20 reference gates)', { timeout: 120_000 }, async (t) => {
    const lines: string[] = [];
    t.mock.method(console, 'log', (line: unknown) => void lines.push(String(line)));
    await elementsBench({ sizes: [20], pages: 1, changes: 2, gates: { n: 20, rounds: 2, switches: 2 } });
    const output = lines.join('\n');
    assert.match(output, /^ +20: first render [\d.]+ ms .*unlock [\d.]+ ms, lock [\d.]+ ms/m, output);
    for (const direction of ['unlock', 'lock']) {
      assert.match(output, new RegExp(`^ +${direction} *: <mp-gate> [\\d.]+ ms \\([\\d.]+ ms\\) \\| reference [\\d.]+ ms \\([\\d.]+ ms\\) \\| [\\d.]+× the reference's time \\(to layout [\\d.]+×\\)`, 'm'), output);
    }
  });

  it('runs the server benchmark through (a few hundred tokens, one short round over HTTP against the reference server)', { timeout: 180_000 }, async (t) => {
    const lines: string[] = [];
    t.mock.method(console, 'log', (line: unknown) => void lines.push(String(line)));
    const figures = await serverBench({ tokens: 200, tokenRounds: 1, chunk: 100, rounds: 1, phaseMs: 300, warmupMs: 300, connections: 2 });
    const output = lines.join('\n');
    assert.deepEqual(
      figures.map((figure) => figure.name),
      ['verifyContextToken vs jose jwtVerify', 'POST /session through toNodeHandler', 'GET through requireEntitlement'],
      output,
    );
    assert.ok(figures.every((figure) => Number.isFinite(figure.ratio) && figure.ratio > 0), output);
    assert.match(output, /reference \(node:http by hand, jose\): [\d,]+\/s, p50 [\d.]+ ms, p99 [\d.]+ ms/);
  });

  it('runs the webhooks benchmark through (a few hundred deliveries, against node:crypto and stripe)', { timeout: 120_000 }, async (t) => {
    const lines: string[] = [];
    t.mock.method(console, 'log', (line: unknown) => void lines.push(String(line)));
    const figures = await webhooksBench({ deliveries: 400, rounds: 1, chunk: 100 });
    assert.equal(figures.length, 2, lines.join('\n'));
    assert.ok(figures.every((figure) => Number.isFinite(figure.ratio) && figure.ratio > 0), lines.join('\n'));
  });

  it('runs the Redis benchmark through (50 requests a series, one round), at most two round trips each', { timeout: 120_000 }, async (t) => {
    const lines: string[] = [];
    t.mock.method(console, 'log', (line: unknown) => void lines.push(String(line)));
    await redisBench({ requests: 50, rounds: 1 });
    const output = lines.join('\n');
    assert.match(output, /^launches\/s .*memory: \d+ .*Redis: \d+/m, output);
    assert.match(output, /^deliveries\/s .*memory: \d+ .*Redis: \d+/m, output);
    // Deterministic, unlike the rates: the happy path's round trips.
    for (const what of ['launch', 'delivery']) {
      const trips = Number(new RegExp(`^Redis per ${what}: +([\\d.]+) round trips`, 'm').exec(output)?.[1]);
      assert.ok(trips > 0 && trips <= 2, `${what}: ${trips} round trips`);
    }
  });

  it('runs the memory stores benchmark through (1,000 records a store)', { timeout: 120_000 }, async (t) => {
    const lines: string[] = [];
    t.mock.method(console, 'log', (line: unknown) => void lines.push(String(line)));
    await storesBench({ records: 1_000 });
    const output = lines.join('\n');
    assert.equal(output.match(/^ {2}\S.* -?[\d.]+ MB$/gm)?.length, 4, output);
  });
});
