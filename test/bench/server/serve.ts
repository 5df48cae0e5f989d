// A benchmark server in a process of its own (forked by server.bench.ts): `kit` or `reference`
// by argument. It listens on a free loopback port, says which over IPC, tells the CPU time it has
// used when asked ('cpu'), and exits when told ('stop').
import type { AddressInfo } from 'node:net';
import { createKitServer } from './kit-server.js';
import { createReferenceServer } from './reference-server.js';

const server = process.argv[2] === 'kit' ? await createKitServer() : await createReferenceServer();
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
process.on('message', (message) => {
  if (message === 'cpu') {
    const { user, system } = process.cpuUsage();
    process.send!({ cpu: user + system });
    return;
  }
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
process.on('disconnect', () => process.exit(0));
