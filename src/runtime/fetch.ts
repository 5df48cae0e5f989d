/**
 * `kit.fetch`: the page's `fetch` with the session's credential added for the origins that get it
 * (the bearer token inside the dashboard, the cookie on the developer's own site), renewing the
 * session on its expiry or a 401 (docs/runtime.md#the-kit). Every other request goes out as
 * `fetch` would send it.
 */
import { unlessAborted } from './backend.js';
import type { ResolvedOptions } from './options.js';
import type { SessionManager } from './session.js';

/** `kit.fetch` for `session`; relative URLs are resolved against the page (`href`). */
export function authorizedFetch(session: SessionManager, options: ResolvedOptions, href: () => string): (input: RequestInfo | URL, init?: RequestInit) => Promise<Response> {
  return async (input, init) => {
    const request = new Request(typeof input === 'string' ? new URL(input, href()) : input, init);
    if (!session.origins.includes(new URL(request.url).origin)) return options.fetch(request);
    // The session's upkeep is a chunk of its own, loaded after start-up: the caller's signal also
    // ends the wait for it.
    const upkeep = await unlessAborted(session.upkeep(), request.signal);
    return upkeep.authorized((token) => options.fetch(upkeep.attach(request, token)), request.signal);
  };
}
