/** Combining abort signals without `AbortSignal.any`. */

export interface LinkedSignal {
  /** Aborts, with the same reason, as soon as one of the sources does. */
  readonly signal: AbortSignal;
  /** Detaches it from the sources; call it once the work is done. */
  dispose(): void;
}

/**
 * `AbortSignal.any` that can be undone. On Node 20, every `AbortSignal.any` call leaves an entry
 * on each source for good (nodejs/node#55351), so a long-lived source (a server's shutdown signal,
 * a caller's app-wide signal) grows by one entry per request. Listeners removed by `dispose()`
 * leave nothing behind.
 *
 * @example
 * const linked = linkSignals(callerSignal, AbortSignal.timeout(10_000));
 * try {
 *   await fetch(url, { signal: linked.signal });
 * } finally {
 *   linked.dispose();
 * }
 */
export function linkSignals(...sources: AbortSignal[]): LinkedSignal {
  const controller = new AbortController();
  const aborted = sources.find((source) => source.aborted);
  if (aborted) {
    controller.abort(aborted.reason);
    return { signal: controller.signal, dispose: () => {} };
  }
  const dispose = () => {
    for (const source of sources) source.removeEventListener('abort', onAbort);
  };
  function onAbort(this: AbortSignal) {
    dispose();
    controller.abort(this.reason);
  }
  for (const source of sources) source.addEventListener('abort', onAbort, { once: true });
  return { signal: controller.signal, dispose };
}
