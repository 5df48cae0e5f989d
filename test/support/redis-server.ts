/**
 * A real `redis-server` for a test (Debian's package; the test command installs it when missing):
 * its own process on a free loopback port, persistence off, stopped by `stop()`. Started again on
 * the same port by `restart()`, empty, as a Redis restarted without persistence comes back.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { createClient } from 'redis';
import { Redis } from 'ioredis';

export interface TestRedis {
  readonly port: number;
  readonly url: string;
  /** Stops the server (SIGTERM) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port, empty. */
  restart(): Promise<void>;
  /** Freezes the process (SIGSTOP): connections stay open, nothing is answered. */
  freeze(): void;
  thaw(): void;
}

/**
 * The environment without faketime's preload (`npm run test:time-travel`): redis-server does not
 * start under libfaketime, and needs no fake clock, since the stores give it relative expiries.
 */
function realClockEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith('FAKETIME') || name === 'DONT_FAKE_MONOTONIC') delete env[name];
  if (env.LD_PRELOAD?.includes('faketime')) {
    const rest = env.LD_PRELOAD.split(/[:\s]+/).filter((path) => path !== '' && !path.includes('faketime'));
    if (rest.length > 0) env.LD_PRELOAD = rest.join(':');
    else delete env.LD_PRELOAD;
  }
  return env;
}

/** Fails with what to do when there is no redis-server on PATH. */
export function assertRedisServer(): void {
  const found = spawnSync('redis-server', ['--version'], { encoding: 'utf8', env: realClockEnv() });
  if (found.error || found.status !== 0) {
    throw new Error('redis-server is not on PATH: install it (Debian/Ubuntu: apt-get install -y redis-server); npm test does so itself');
  }
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts redis-server and resolves once it accepts connections (its own "Ready" line, not a delay). */
export async function startRedis(): Promise<TestRedis> {
  assertRedisServer();
  const port = await freePort();
  let child: ChildProcess;
  const launch = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'notice'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: realClockEnv(),
    });
    await new Promise<void>((resolve, reject) => {
      let output = '';
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (/Ready to accept connections/.test(output)) {
          child.stdout!.off('data', onData);
          child.stdout!.resume();
          resolve();
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.resume();
      child.once('exit', (code) => reject(new Error(`redis-server exited with ${code} before it was ready:\n${output}`)));
      child.once('error', reject);
    });
  };
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGCONT');
    child.kill('SIGTERM');
    await exited;
  };
  await launch();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop,
    restart: async () => {
      await stop();
      await launch();
    },
    freeze: () => void child.kill('SIGSTOP'),
    thaw: () => void child.kill('SIGCONT'),
  };
}

/** The two clients the kit supports, connected to `url`. */
export const REDIS_CLIENTS = {
  'node-redis': async (url: string) => {
    // Reconnects quickly and refuses commands while disconnected (the stores refuse them anyway).
    const client = createClient({ url, disableOfflineQueue: true, socket: { reconnectStrategy: (retries: number) => Math.min(50 + retries * 50, 500) } });
    client.on('error', () => undefined);
    await client.connect();
    return { client, close: async () => void (await client.quit().catch(() => client.disconnect())) };
  },
  ioredis: async (url: string) => {
    const client = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, autoResendUnfulfilledCommands: false, retryStrategy: (times: number) => Math.min(50 + times * 50, 500), lazyConnect: true });
    client.on('error', () => undefined);
    await client.connect();
    return { client, close: async () => void (await client.quit().catch(() => client.disconnect())) };
  },
} as const;
