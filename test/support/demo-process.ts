// Runs demo/start.ts (what `npm start` runs after its build) as a child process and watches its
// output, for the tests of the start script.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { HANG_MS } from './waiting.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const OUTPUT_TIMEOUT_MS = HANG_MS;

export interface StartProcess {
  /** Resolves with everything printed so far once `pattern` shows up in stdout or stderr. */
  waitForOutput(pattern: RegExp): Promise<string>;
  /** Exit code (or 128 + signal number when killed). */
  exited: Promise<number>;
  /** Sends SIGINT, as Ctrl-C does, and resolves with the exit code. */
  interrupt(): Promise<number>;
  kill(signal: NodeJS.Signals): void;
  output(): string;
}

export function spawnStart(env: Record<string, string>): StartProcess {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'demo/start.ts'], {
    cwd: repoRoot,
    env: { ...process.env, ...env, FORCE_COLOR: '0', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const waiters = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk.toString('utf8');
    for (const waiter of waiters) waiter();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number>((resolve) => {
    child.once('exit', (code, signal) => {
      for (const waiter of waiters) waiter();
      resolve(code ?? 128 + (signal === 'SIGINT' ? 2 : signal === 'SIGTERM' ? 15 : 9));
    });
  });

  const waitForOutput = (pattern: RegExp) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => done(new Error(`timed out waiting for ${pattern} in:\n${output}`)), OUTPUT_TIMEOUT_MS);
      const check = () => {
        if (pattern.test(output)) done();
        else if (child.exitCode !== null || child.signalCode !== null) done(new Error(`exited before printing ${pattern}:\n${output}`));
      };
      const done = (error?: Error) => {
        clearTimeout(timer);
        waiters.delete(check);
        if (error) reject(error);
        else resolve(output);
      };
      waiters.add(check);
      check();
    });

  return {
    waitForOutput,
    exited,
    interrupt: () => {
      child.kill('SIGINT');
      return exited;
    },
    kill: (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    output: () => output,
  };
}
