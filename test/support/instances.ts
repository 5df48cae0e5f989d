/**
 * Several app backend instances as separate Node processes (test/support/backend-instance.ts),
 * and a small round-robin proxy on 127.0.0.1 in front of them, as a load balancer would be.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { roundRobinProxy } from '../../demo/proxy.js';

const script = fileURLToPath(new URL('./backend-instance.ts', import.meta.url));

export interface Instance {
  url: string;
  /** Every line it printed so far. */
  lines: string[];
  /** Resolves with the first line (printed so far or later) that matches. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  stop(): Promise<void>;
}

/** Starts one instance and resolves once it prints that it listens (no fixed delay). */
export async function startInstance(env: Record<string, string>): Promise<Instance> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  let stderr = '';
  let pending = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    const parts = pending.split('\n');
    pending = parts.pop()!;
    lines.push(...parts);
    for (const wake of waiters) wake();
  });
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const waitFor = (pattern: RegExp, timeoutMs = 60_000) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const found = lines.find((line) => pattern.test(line));
        if (found === undefined) return false;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(found);
        return true;
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms; stdout:\n${lines.join('\n')}\nstderr:\n${stderr}`));
      }, timeoutMs);
      if (!check()) waiters.add(check);
      child.once('exit', (code) => {
        if (!waiters.has(check)) return;
        waiters.delete(check);
        clearTimeout(timer);
        reject(new Error(`the instance exited (${code}) before printing ${pattern}; stderr:\n${stderr}`));
      });
    });
  const port = Number((await waitFor(/^listening \d+$/)).split(' ')[1]);
  return {
    url: `http://127.0.0.1:${port}`,
    lines,
    waitFor,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export interface Proxy {
  url: string;
  close(): Promise<void>;
}

/** A round-robin HTTP proxy on 127.0.0.1 (the demo's): each request goes to the next of `targets`. */
export async function startProxy(targets: readonly string[]): Promise<Proxy> {
  const server: Server = roundRobinProxy(
    targets.map((url, i) => ({ name: `instance ${i + 1}`, url })),
    () => undefined,
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
