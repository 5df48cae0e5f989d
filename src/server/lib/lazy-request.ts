/**
 * A Web `Request` made only when someone needs more of it than its method, URL and headers
 * (docs/server.md, "Speed"). On Node 20 a `new Request()` costs about 20 µs of CPU (an
 * AbortController, its headers, a stream for any body): most of what the node:http adapter adds
 * to a request. The kit's own handlers read only the method, the URL, the headers and the body
 * bytes the adapter read beforehand, so for them no Request is made at all.
 *
 * The object handed over is a `Proxy` of the Request to be (`lib/lazy.ts`): `instanceof Request`
 * holds, and any other property, method or internal slot is the real Request's, made on first
 * use. Node's fetch implementation finds a Request's internals through symbol-keyed properties,
 * which the proxy passes on, so `fetch(request)`, `new Request(request)` and `request.clone()`
 * work as on the real one. Where they would not (a fetch implementation that keeps them in private
 * fields), a probe at first use sees it and the adapter makes every Request at once, as before.
 */
import { lazyObject, lazyState, PASS, type LazyState } from './lazy.js';
import { LinkedHeaders } from './linked-headers.js';

/** What a lazy request is made of: what the real Request gets, once it is needed. */
interface Parts {
  href: string;
  method: string;
  headers: Array<[string, string]>;
  /** The whole body, read before (a small body of a declared length), or null for none. */
  body: Uint8Array<ArrayBuffer> | null;
}

class RequestState implements LazyState<Request> {
  real: Request | undefined;
  /** The headers handed out before the real Request was made: it is made with them, and they stay `headers` after. */
  view: LinkedHeaders | undefined;

  constructor(readonly parts: Parts) {}

  fast(key: PropertyKey): unknown {
    if (key === 'method') return this.parts.method;
    if (key === 'url') return this.parts.href;
    if (key === 'headers') return this.view ?? this.real?.headers ?? (this.view = LinkedHeaders.of(this.parts.headers));
    return PASS;
  }

  make(): Request {
    if (this.real === undefined) {
      const { href, method, headers, body } = this.parts;
      const init: RequestInit = { method, headers: this.view ?? headers };
      if (body !== null) init.body = body;
      this.real = new Request(href, init);
      this.view?.link(this.real.headers);
    }
    return this.real;
  }
}

/** A Request of these parts, made when first needed; or at once where a probe found that unsafe. */
export function lazyRequest(parts: Parts): Request {
  const state = new RequestState(parts);
  return (supported ??= probe()) ? lazyObject(Request.prototype, state) : state.make();
}

/**
 * The body bytes of a lazy request whose real Request nobody has made: nobody can have read its
 * body then. Undefined for any other request: read it through its `body` as usual.
 */
export function unreadBody(request: Request): Uint8Array | undefined {
  const state = lazyState(request);
  return state instanceof RequestState && state.real === undefined && state.parts.body !== null ? state.parts.body : undefined;
}

let supported: boolean | undefined;

/** Whether a lazy request passes for a real one where the fetch implementation looks inside it. */
function probe(): boolean {
  try {
    const body = new TextEncoder().encode('probe');
    const lazy = lazyObject(Request.prototype, new RequestState({ href: 'http://localhost/probe', method: 'POST', headers: [['x-probe', '1']], body }));
    const cloned = lazy.clone();
    const copy = new Request(lazy);
    return lazy instanceof Request && copy.method === 'POST' && copy.headers.get('x-probe') === '1' && cloned.url === 'http://localhost/probe' && copy.body !== null;
  } catch {
    return false;
  }
}
