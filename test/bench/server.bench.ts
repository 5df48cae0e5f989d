// The server module against hand-written references, measured in the same run:
//
// 1. Context tokens, in process: `verifyContextToken` (jose's checks and more: the claims'
//    schema, exp - iat ≤ 300 s, host, the jti claimed in the replay store) against jose's
//    `jwtVerify` with a CryptoKey imported once, on distinct tokens. Target ≥ 1.0×.
// 2. Over HTTP, 10 keep-alive connections from a load generator in a process of its own, against
//    two servers, each in a process of its own: the kit (`toNodeHandler(createAppBackend(…))`, and
//    the app's paid route behind `requireEntitlement`) and the reference written by hand on
//    node:http (test/bench/server/reference-server.ts), doing the same work.
//    - `POST /session` (a fresh context token each): target ≥ 0.7×.
//    - `GET` of a paid route behind `requireEntitlement`: target ≥ 0.8×.
//    Each round measures both servers for the same time, in alternating order; the ratio is the
//    median over rounds of the two rates, and p50 / p99 latencies are pooled over the rounds.
//    Beside it, the servers' own CPU time per request (all their threads: the reference's
//    WebCrypto calls run on libuv's), which a machine shared with other work disturbs less.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isMainThread } from 'node:worker_threads';
import { jwtVerify } from 'jose';
import { createMemoryReplayStore, verifyContextToken } from '../../src/server/index.js';
import { CLIENT_ID, CLIENT_SECRET, CONTEXT_TOKEN_CHECKS, DASHBOARD, ISSUER, USERS, contextToken } from './server/fixtures.js';
import type { Phase, PhaseResult } from './server/load.js';
import { interleave, median, quantile, rate, runInWorker, settle, verdict, type Figure } from './stats.js';

/** How much to measure: `npm run bench` uses the defaults; test/e2e/bench-smoke.test.ts far less. */
export interface ServerBenchCounts {
  /** Distinct context tokens verified per round, in chunks of `chunk`. */
  tokens: number;
  tokenRounds: number;
  chunk: number;
  /** HTTP: rounds per route, each side measured for `phaseMs` per round, after `warmupMs` each. */
  rounds: number;
  phaseMs: number;
  warmupMs: number;
  connections: number;
}
const COUNTS: ServerBenchCounts = { tokens: 10_000, tokenRounds: 6, chunk: 200, rounds: 7, phaseMs: 1500, warmupMs: 2000, connections: 10 };

const TARGETS = { contextToken: 1.0, session: 0.7, paid: 0.8 };
const NOW = Date.parse('2026-05-01T12:00:00Z');
const here = fileURLToPath(new URL('./server/', import.meta.url));

export default async function serverBench(counts: ServerBenchCounts = COUNTS): Promise<Figure[]> {
  console.log(await settle());
  const tokens = await runInWorker<{ lines: string[]; figure: Figure }>(import.meta.url, 'measureContextTokens', counts);
  for (const line of tokens.lines) console.log(line);
  const http = await measureHttp(counts);
  return [tokens.figure, ...http];
}

/** verifyContextToken against jose's jwtVerify with a pre-imported CryptoKey (run in a worker). */
export async function measureContextTokens(counts: ServerBenchCounts = COUNTS): Promise<{ lines: string[]; figure: Figure }> {
  const list = Array.from({ length: counts.tokens }, (_, i) => contextToken(i % USERS, NOW));
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(CLIENT_SECRET), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  const currentDate = new Date(NOW + 1000);
  const joseOptions = { ...CONTEXT_TOKEN_CHECKS, currentDate };
  const fresh = () => ({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, issuer: ISSUER, host: DASHBOARD, now: NOW + 1000, replayStore: createMemoryReplayStore({ maxEntries: counts.tokens * 2 }) });
  let options = fresh();
  const ours = async (from: number, to: number) => {
    for (let i = from; i < to; i++) await verifyContextToken(list[i]!, options);
  };
  const reference = async (from: number, to: number) => {
    for (let i = from; i < to; i++) await jwtVerify(list[i]!, key, joseOptions);
  };
  for (let pass = 0; pass < 2; pass++) {
    options = fresh();
    await ours(0, counts.tokens);
    await reference(0, counts.tokens);
  }
  const result = await interleave({ items: counts.tokens, rounds: counts.tokenRounds, chunk: counts.chunk, round: () => void (options = fresh()), ours, reference });
  const figure: Figure = { name: 'verifyContextToken vs jose jwtVerify', ratio: result.ratio, target: TARGETS.contextToken, detail: `${rate(result.oursRate)}/s vs ${rate(result.referenceRate)}/s` };
  return {
    figure,
    lines: [
      `context tokens: ${counts.tokens} distinct, ${counts.tokenRounds} rounds in chunks of ${counts.chunk}, interleaved, in a worker thread`,
      `  jose jwtVerify, CryptoKey imported once: ${rate(result.referenceRate)} verifications/s`,
      `  verifyContextToken (+ schema, host, jti claim): ${rate(result.oursRate)} verifications/s`,
      `  ratio (median of ${result.pairs} chunk pairs): ${verdict(figure)}; middle half ${result.low.toFixed(2)}–${result.high.toFixed(2)}`,
    ],
  };
}

/** A forked process of the benchmark (through tsx, as `npm run bench` runs), and a way to talk to it. */
function child(file: string, args: string[] = []): ChildProcess {
  return fork(`${here}${file}`, args, { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

function nextMessage<T>(forked: ChildProcess): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`a benchmark process exited (code ${code}) before it answered`));
    forked.once('exit', onExit);
    forked.once('message', (message) => {
      forked.off('exit', onExit);
      resolve(message as T);
    });
  });
}

const ms = (microseconds: number) => `${(microseconds / 1000).toFixed(1)} ms`;

async function measureHttp(counts: ServerBenchCounts): Promise<Figure[]> {
  const kit = child('serve.ts', ['kit']);
  const reference = child('serve.ts', ['reference']);
  const load = child('load.ts');
  try {
    const [kitPort, referencePort] = await Promise.all([nextMessage<{ port: number }>(kit), nextMessage<{ port: number }>(reference)]);
    const servers = [
      { name: 'kit', label: 'kit (toNodeHandler + createAppBackend)', port: kitPort.port, process: kit },
      { name: 'reference', label: 'reference (node:http by hand, jose)', port: referencePort.port, process: reference },
    ];
    const cpu = async (server: ChildProcess) => {
      server.send('cpu');
      return (await nextMessage<{ cpu: number }>(server)).cpu;
    };
    const phase = async (server: (typeof servers)[number], route: Phase['route'], durationMs: number, expected: number): Promise<PhaseResult & { cpuPerRequest: number }> => {
      const request: Phase = { port: server.port, route, connections: counts.connections, durationMs, requests: Math.ceil(expected * (durationMs / 1000) * 1.5) + 200 };
      const before = await cpu(server.process);
      load.send(request);
      const result = await nextMessage<PhaseResult>(load);
      const used = (await cpu(server.process)) - before;
      if (result.errors > 0) throw new Error(`${route} on ${server.name}: ${result.errors} failed requests, the first: ${result.firstError}`);
      return { ...result, cpuPerRequest: used / Math.max(1, result.count) };
    };
    const figures: Figure[] = [];
    console.log(`over HTTP: ${counts.connections} keep-alive connections from a load generator process; each server in a process of its own; ${counts.rounds} rounds of ${counts.phaseMs / 1000} s per side, alternating which goes first`);
    for (const route of ['session', 'paid'] as const) {
      // Warm-up, also the estimate of how many launches (fresh context tokens) a phase needs.
      const expected = new Map<string, number>();
      for (const server of servers) {
        const warm = await phase(server, route, counts.warmupMs, 8000);
        expected.set(server.name, warm.count / (warm.elapsedMs / 1000));
      }
      const rates = new Map<string, number[]>(servers.map((server) => [server.name, []]));
      const latencies = new Map<string, number[]>(servers.map((server) => [server.name, []]));
      const cpuTimes = new Map<string, number[]>(servers.map((server) => [server.name, []]));
      const ratios: number[] = [];
      const cpuRatios: number[] = [];
      for (let round = 0; round < counts.rounds; round++) {
        const order = round % 2 === 0 ? servers : [...servers].reverse();
        const rateOf = new Map<string, number>();
        const cpuOf = new Map<string, number>();
        for (const server of order) {
          const result = await phase(server, route, counts.phaseMs, expected.get(server.name)!);
          const perSecond = result.count / (result.elapsedMs / 1000);
          rateOf.set(server.name, perSecond);
          cpuOf.set(server.name, result.cpuPerRequest);
          rates.get(server.name)!.push(perSecond);
          cpuTimes.get(server.name)!.push(result.cpuPerRequest);
          for (const latency of result.latencies) latencies.get(server.name)!.push(latency);
        }
        ratios.push(rateOf.get('kit')! / rateOf.get('reference')!);
        cpuRatios.push(cpuOf.get('reference')! / cpuOf.get('kit')!);
      }
      const describe = (name: string) => {
        const sorted = latencies.get(name)!.sort((a, b) => a - b);
        return { rate: median(rates.get(name)!), p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), cpu: median(cpuTimes.get(name)!) };
      };
      const ours = describe('kit');
      const theirs = describe('reference');
      const title = route === 'session' ? 'POST /session through toNodeHandler' : 'GET through requireEntitlement';
      const figure: Figure = {
        name: title,
        ratio: median(ratios),
        target: route === 'session' ? TARGETS.session : TARGETS.paid,
        detail: `p50 ${ms(ours.p50)} / p99 ${ms(ours.p99)} vs ${ms(theirs.p50)} / ${ms(theirs.p99)}`,
      };
      figures.push(figure);
      const sorted = [...ratios].sort((a, b) => a - b);
      console.log(`${title}:`);
      for (const [server, figures] of [[servers[1]!, theirs], [servers[0]!, ours]] as const) {
        console.log(`  ${server.label}: ${rate(figures.rate)}/s, p50 ${ms(figures.p50)}, p99 ${ms(figures.p99)}; ${Math.round(figures.cpu)} µs of CPU per request`);
      }
      console.log(`  ratio (median of ${ratios.length} rounds): ${verdict(figure)}; rounds ${sorted[0]!.toFixed(2)}–${sorted.at(-1)!.toFixed(2)}`);
      console.log(`  CPU time per request, reference / kit (median of rounds): ${median(cpuRatios).toFixed(2)}×`);
    }
    return figures;
  } finally {
    for (const forked of [kit, reference, load]) if (forked.connected) forked.send('stop');
  }
}

if (isMainThread && import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await serverBench();
