/**
 * The demo's load balancer when it runs the sample backend as several instances
 * (`DEMO_REDIS_URL=… npm start`): a round-robin HTTP proxy on 127.0.0.1 that tells which instance
 * served each request, so you can watch launches and webhooks land on either one.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';

export function roundRobinProxy(targets: ReadonlyArray<{ name: string; url: string }>, log: (line: string) => void): Server {
  let next = 0;
  return createServer((req, res) => {
    const target = targets[next++ % targets.length]!;
    const url = new URL(target.url);
    const forward = httpRequest({ host: url.hostname, port: url.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      if ((req.url ?? '').startsWith('/api/')) log(`${target.name}: ${req.method} ${(req.url ?? '').split('?')[0]} → ${answer.statusCode}`);
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    req.pipe(forward);
  });
}
