import { createServer } from 'node:http';
import { jsonResponse, toNodeHandler } from '../../../src/server/index.ts';
import { createKitServer } from './kit-server.ts';
import { createReferenceServer } from './reference-server.ts';
const which = process.argv[2];
const handlers: Record<string, any> = {
  bare: (req: any, res: any) => { res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }); res.end(JSON.stringify({ user: 'usr_1', plan: 'pro' })); },
  adapter: toNodeHandler(async () => jsonResponse({ user: 'usr_1', plan: 'pro' })),
};
const server = which === 'kit' ? await createKitServer() : which === 'reference' ? await createReferenceServer() : createServer(handlers[which]);
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as any).port }));
process.on('message', (m) => { if (m === 'cpu') { const u = process.cpuUsage(); process.send!({ cpu: u.user + u.system }); } else process.exit(0); });
