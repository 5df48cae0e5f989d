/**
 * A Web `Request` made only when someone needs more of it than its method, URL and headers
 * (docs/server.md, "Speed"). On Node 20 a `new Request()` costs about 20 µs of CPU (an
 * AbortController, its headers, a stream for any body): most of what the node:http adapter adds
 * to a request. The kit's own handlers read only the method, the URL, the headers and the body
 * bytes the adapter read beforehand, so for them no Request is made at all.
 *
 * The object handed over is a `Proxy` of the Request to be: `instanceof Request` holds, and any
 * other property, method or internal slot is the real Request's, made on first use. Node's fetch
 * implementation finds a Request's internals through symbol-keyed properties, which the proxy
 * passes on, so `fetch(request)`, `new Request(request)` and `request.clone()` work as on the real
 * one. Where they would not (a fetch implementation that keeps them in private fields), a probe at
 * first use sees it and the adapter makes every Request at once, as before.
 */

/** What a lazy request is made of: what the real Request gets, once it is needed. */
interface Parts {
  href: string;
  method: string;
  headers: Array<[string, string]>;
  /** The whole body, read before (a small body of a declared length), or null for none. */
  body: Uint8Array<ArrayBuffer> | null;
}

interface State extends Parts {
  real: Request | undefined;
  /** The headers handed out before the real Request was made: it is made with them. */
  view: Headers | undefined;
}

/** Where a lazy object's target keeps its state; the proxy hands it out under the same key. */
const STATE = Symbol('lazy request');

interface Lazy {
  [STATE]: State;
}

const handler: ProxyHandler<object> = {
  get(target, key) {
    const state = (target as Lazy)[STATE];
    if (key === STATE) return state;
    if (key === 'method') return state.method;
    if (key === 'url') return state.href;
    if (key === 'headers') return state.real?.headers ?? (state.view ??= new Headers(state.headers));
    // Not a thenable (a Request has no `then`): awaiting it must not make it.
    if (key === 'then') return undefined;
    const real = materialize(state);
    const value: unknown = Reflect.get(real, key, real);
    // Methods run on the real Request (a fetch implementation may keep its internals in private fields).
    return typeof value === 'function' && key !== 'constructor' ? value.bind(real) : value;
  },
  set: (target, key, value) => Reflect.set(materialize((target as Lazy)[STATE]), key, value),
  has: (target, key) => Reflect.has(Request.prototype, key) || Reflect.has(materialize((target as Lazy)[STATE]), key),
};

function materialize(state: State): Request {
  if (state.real === undefined) {
    const init: RequestInit = { method: state.method, headers: state.view ?? state.headers };
    if (state.body !== null) init.body = state.body;
    state.real = new Request(state.href, init);
  }
  return state.real;
}

/** A Request of these parts, made when first needed; or at once where a probe found that unsafe. */
export function lazyRequest(parts: Parts): Request {
  if (!(supported ??= probe())) return materialize({ ...parts, real: undefined, view: undefined });
  const state: State = { ...parts, real: undefined, view: undefined };
  // The target has no own properties; its prototype makes `instanceof Request` hold.
  const target = Object.create(Request.prototype) as object;
  const request = new Proxy(target, handler) as unknown as Request;
  (target as Lazy)[STATE] = state;
  return request;
}

/**
 * The body bytes of a lazy request whose real Request nobody has made: nobody can have read its
 * body then. Undefined for any other request: read it through its `body` as usual.
 */
export function unreadBody(request: Request): Uint8Array | undefined {
  const state = (request as Partial<Lazy>)[STATE];
  return state !== undefined && state.real === undefined && state.body !== null ? state.body : undefined;
}

let supported: boolean | undefined;

/** Whether a lazy request passes for a real one where the fetch implementation looks inside it. */
function probe(): boolean {
  supported = true;
  try {
    const body = new TextEncoder().encode('probe');
    const lazy = lazyRequest({ href: 'http://localhost/probe', method: 'POST', headers: [['x-probe', '1']], body });
    const cloned = lazy.clone();
    const copy = new Request(lazy);
    return lazy instanceof Request && copy.method === 'POST' && copy.headers.get('x-probe') === '1' && cloned.url === 'http://localhost/probe' && copy.body !== null;
  } catch {
    return false;
  } finally {
    supported = undefined;
  }
}
