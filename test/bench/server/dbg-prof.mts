import { fork } from 'node:child_process';
const here = new URL('.', import.meta.url).pathname;
const k = process.argv[2];
const server = fork(`${here}dbg-serve.mts`, [k], { execArgv: ['--import', 'tsx', '--cpu-prof', '--cpu-prof-dir=/tmp/b/prof3'] });
const load = fork(`${here}load.ts`, [], { execArgv: ['--import', 'tsx'] });
const msg = (p: any) => new Promise<any>((r) => p.once('message', r));
const port = (await msg(server)).port;
for (let i = 0; i < 4; i++) { load.send({ port, route: 'paid', connections: 10, durationMs: 1500, requests: 0 }); const r = await msg(load); console.log(r.count); }
server.send('stop'); load.send('stop');
await new Promise((r) => server.once('exit', r));
