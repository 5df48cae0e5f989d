// The load generator of the server benchmark, in a process of its own (forked by
// server.bench.ts), so that it never shares the servers' event loop. Raw keep-alive connections
// (node:net), each sending one request after the other and timing it; far lighter than an HTTP
// client library, so that the servers, not it, set the pace.
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { DASHBOARD, PAID_PATH, SESSION_PATH, USERS, contextToken, sessionToken } from './fixtures.js';

/** One phase: `route` against `port` for `durationMs` over `connections` connections. */
export interface Phase {
  port: number;
  route: 'session' | 'paid';
  connections: number;
  durationMs: number;
  /** Requests prepared ahead (each launch needs a context token of its own). */
  requests: number;
}

export interface PhaseResult {
  count: number;
  /** Answers other than 200, and connection failures. */
  errors: number;
  firstError: string | null;
  elapsedMs: number;
  /** Each request's latency, in microseconds. */
  latencies: number[];
}

let nextUser = 0;

function prepare(phase: Phase): Buffer[] {
  const head = (method: string, path: string, extra: string) => `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${phase.port}\r\n${extra}\r\n`;
  if (phase.route === 'paid') {
    // Sessions of a few users, sent again and again: a session token is not single-use.
    return Array.from({ length: 64 }, (_, i) => Buffer.from(head('GET', PAID_PATH, `Authorization: Bearer ${sessionToken(i)}\r\n`)));
  }
  const list: Buffer[] = [];
  for (let i = 0; i < phase.requests; i++) {
    const body = JSON.stringify({ context: contextToken(nextUser++ % USERS), host: DASHBOARD });
    list.push(Buffer.from(head('POST', SESSION_PATH, `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`) + body));
  }
  return list;
}

const HEADER_END = Buffer.from('\r\n\r\n');
const CHUNKED_END = Buffer.from('\r\n0\r\n\r\n');

/** Where the answer at the start of `data` ends, or -1 while it is incomplete; its status. */
function answerEnd(data: Buffer): { end: number; status: number } {
  const headerEnd = data.indexOf(HEADER_END);
  if (headerEnd < 0) return { end: -1, status: 0 };
  const head = data.toString('latin1', 0, headerEnd);
  const status = Number(head.slice(9, 12));
  const length = /\r\ncontent-length: *(\d+)/i.exec(head);
  if (length) {
    const end = headerEnd + 4 + Number(length[1]);
    return { end: data.length >= end ? end : -1, status };
  }
  if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
    const last = data.indexOf(CHUNKED_END, headerEnd);
    return { end: last < 0 ? -1 : last + CHUNKED_END.length, status };
  }
  return { end: headerEnd + 4, status };
}

export function run(phase: Phase, requests: Buffer[]): Promise<PhaseResult> {
  const latencies: number[] = [];
  let next = 0;
  let errors = 0;
  let firstError: string | null = null;
  let open = phase.connections;
  const started = performance.now();
  const stopAt = started + phase.durationMs;
  let finished = started;
  const failed = (message: string) => {
    errors++;
    firstError ??= message;
  };
  return new Promise((resolve) => {
    const closed = new Set<Socket>();
    const close = (socket: Socket) => {
      if (closed.has(socket)) return;
      closed.add(socket);
      socket.destroy();
      if (--open === 0) resolve({ count: latencies.length, errors, firstError, elapsedMs: finished - started, latencies });
    };
    for (let c = 0; c < phase.connections; c++) {
      const socket = connect(phase.port, '127.0.0.1');
      socket.setNoDelay(true);
      let data: Buffer = Buffer.alloc(0);
      let sentAt = 0;
      const send = () => {
        const now = performance.now();
        if (now >= stopAt || (phase.route === 'session' && next >= requests.length)) return close(socket);
        sentAt = now;
        socket.write(requests[next++ % requests.length]!);
      };
      socket.on('connect', send);
      socket.on('data', (chunk: Buffer) => {
        data = data.length === 0 ? chunk : Buffer.concat([data, chunk]);
        const { end, status } = answerEnd(data);
        if (end < 0) return;
        const now = performance.now();
        finished = now;
        latencies.push(Math.round((now - sentAt) * 1000));
        if (status !== 200) failed(`HTTP ${status}: ${data.toString('utf8', 0, Math.min(end, 600))}`);
        data = data.subarray(end);
        send();
      });
      socket.on('error', (error) => {
        failed(error.message);
        close(socket);
      });
    }
  });
}

process.on('message', async (phase: Phase | 'stop') => {
  if (phase === 'stop') process.exit(0);
  const requests = prepare(phase);
  const result = await run(phase, requests);
  process.send!(result);
});
process.on('disconnect', () => process.exit(0));
