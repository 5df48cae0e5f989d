/**
 * The kit's JSON answers, made as a `Response` only when someone needs more of them than their
 * status and headers (docs/server.md, "Speed"). `toNodeHandler` writes status, headers and text
 * as they are, so for the kit's own answers no Response object is made at all; anyone else gets a
 * `TextResponse` (a genuine Response) on first use, through a `Proxy` that passes everything on,
 * as `lib/lazy-request.ts` does for requests.
 */
import { TextResponse } from './text-response.js';

/** What a lazy answer is made of. */
interface State {
  text: string;
  status: number;
  /** The headers as given (a record costs nothing until someone asks for a Headers). */
  given: ConstructorParameters<typeof Headers>[0];
  view: Headers | undefined;
  real: TextResponse | undefined;
  /** Written by the adapter: whoever looks at it later finds its body read, as after any write. */
  taken: boolean;
}

/** Where a lazy object's target keeps its state; the proxy hands it out under the same key. */
const STATE = Symbol('lazy response');

interface Lazy {
  [STATE]: State;
}

const handler: ProxyHandler<object> = {
  get(target, key) {
    const state = (target as Lazy)[STATE];
    if (key === STATE) return state;
    if (state.real === undefined) {
      if (key === 'status') return state.status;
      if (key === 'ok') return state.status >= 200 && state.status <= 299;
      if (key === 'statusText') return '';
      if (key === 'headers') return (state.view ??= new Headers(state.given));
      if (key === 'then') return undefined;
    }
    const real = materialize(state);
    const value: unknown = Reflect.get(real, key, real);
    return typeof value === 'function' && key !== 'constructor' ? value.bind(real) : value;
  },
  set: (target, key, value) => Reflect.set(materialize((target as Lazy)[STATE]), key, value),
  has: (target, key) => Reflect.has(Response.prototype, key) || Reflect.has(materialize((target as Lazy)[STATE]), key),
};

function materialize(state: State): TextResponse {
  if (state.real === undefined) {
    state.real = new TextResponse(state.text, { status: state.status, headers: state.view ?? state.given });
    if (state.taken) TextResponse.take(state.real);
  }
  return state.real;
}

/** A JSON answer of `text`, made a Response when first needed. */
export function lazyResponse(text: string, status: number, headers: ConstructorParameters<typeof Headers>[0]): Response {
  // Refused at once, as `new Response` would refuse it.
  if (!(status >= 200 && status <= 599) || [204, 205, 304].includes(status)) return new TextResponse(text, { status, headers });
  const state: State = { text, status, given: headers, view: headers instanceof Headers ? headers : undefined, real: undefined, taken: false };
  const target = Object.create(Response.prototype) as object;
  const response = new Proxy(target, handler) as unknown as Response;
  (target as Lazy)[STATE] = state;
  return response;
}

/**
 * The status, headers and text of a lazy answer that nobody made a Response of, to write as they
 * are; it then counts as read. Undefined for any other answer.
 */
export function takeLazy(response: Response): { status: number; headers: Headers | Readonly<Record<string, string>>; text: string } | undefined {
  const state = (response as Partial<Lazy>)[STATE];
  if (state === undefined || state.taken) return undefined;
  if (state.real !== undefined) {
    // Made a Response by someone who left its body alone: its text is still there to write.
    const text = TextResponse.take(state.real);
    return text === undefined ? undefined : { status: state.real.status, headers: state.real.headers, text };
  }
  state.taken = true;
  return { status: state.status, headers: state.view ?? (state.given as Readonly<Record<string, string>>), text: state.text };
}

/** True for a lazy answer (a Response in all but its making). */
export function isLazyResponse(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as Partial<Lazy>)[STATE] !== undefined;
}
