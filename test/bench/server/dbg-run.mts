import { fork } from 'node:child_process';
const here = new URL('.', import.meta.url).pathname;
const kinds = ['bare', 'adapter', 'kit', 'reference'];
const servers = Object.fromEntries(kinds.map((k) => [k, fork(`${here}dbg-serve.mts`, [k], { execArgv: ['--import', 'tsx'] })]));
const load = fork(`${here}load.ts`, [], { execArgv: ['--import', 'tsx'] });
const msg = (p: any) => new Promise<any>((r) => p.once('message', r));
const ports: Record<string, number> = {};
for (const k of kinds) ports[k] = (await msg(servers[k])).port;
const res: Record<string, number[]> = Object.fromEntries(kinds.map((k) => [k, []]));
for (let round = 0; round < 5; round++) for (const k of round % 2 ? [...kinds].reverse() : kinds) {
  servers[k].send('cpu'); const c0 = (await msg(servers[k])).cpu;
  load.send({ port: ports[k], route: 'paid', connections: 10, durationMs: 1000, requests: 0 });
  const r = await msg(load);
  servers[k].send('cpu'); const c1 = (await msg(servers[k])).cpu;
  if (round > 0) res[k].push((c1 - c0) / r.count);
}
for (const k of kinds) console.log(k.padEnd(14), res[k].map((v) => v.toFixed(0)).join(' '), 'µs CPU/request');
for (const p of [...Object.values(servers), load]) p.send('stop');
