/**
 * How tests wait: for the event they need, with a hang guard around it (docs/development.md, "Tests
 * on a busy machine"). A hang guard only stops a hung test or process, so it is generous: a
 * machine with both cores busy never reaches it. It is never how a test waits for something.
 */

/** How long one awaited event, process or page may take before the test calls it hung. */
export const HANG_MS = 60_000;

/** A promise settled from outside. A rejection nobody awaited yet is not reported as unhandled. */
export function deferred(): { promise: Promise<void>; resolve: () => void; reject: (error: Error) => void } {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  promise.catch(() => {});
  return { promise, resolve, reject };
}

/** Resolves once `condition()` holds, polled every 10 ms; fails saying `what` at the hang guard. */
export async function until(condition: () => boolean, what: string, ms = HANG_MS): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() >= deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** What `work` settles with, or a rejection saying `what` once `ms` (a hang guard) has passed. */
export async function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let deadline: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_resolve, reject) => (deadline = setTimeout(() => reject(new Error(what)), ms)));
  return Promise.race([work, late]).finally(() => clearTimeout(deadline));
}

/**
 * Lets the event loop turn `count` times. Code driven by a virtual clock moves on by turns, not
 * by wall time, so this gives it the same room on a busy machine as on a quiet one: where a test
 * asserts that something did not happen, the wrong outcome has had its chance to show.
 */
export async function eventLoopTurns(count: number): Promise<void> {
  for (let turn = 0; turn < count; turn++) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * Resolves with `read()` once it has stayed the same for `turns` turns of the event loop in a row.
 * Every turn polls for I/O, so a count fed by a connection on this machine (bytes read, say) that
 * stays put that long has stopped because nothing more comes, not because the machine is slow.
 */
export async function steadyValue(read: () => number, turns: number): Promise<number> {
  let value = read();
  for (let same = 0; same < turns; ) {
    await new Promise((resolve) => setImmediate(resolve));
    const next = read();
    same = next === value ? same + 1 : 0;
    value = next;
  }
  return value;
}
