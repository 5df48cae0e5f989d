/**
 * The kit's JSON answers, made as a `Response` only when someone needs more of them than their
 * status and headers (docs/server.md, "Speed"). `toNodeHandler` writes status, headers and text
 * as they are, so for the kit's own answers no Response object is made at all; anyone else gets a
 * `TextResponse` (a genuine Response) on first use, through a `Proxy` that passes everything on
 * (`lib/lazy.ts`), as `lib/lazy-request.ts` does for requests.
 */
import { lazyObject, lazyState, PASS, type LazyState } from './lazy.js';
import { LinkedHeaders } from './linked-headers.js';
import { TextResponse } from './text-response.js';

type HeadersSource = ConstructorParameters<typeof Headers>[0];

class ResponseState implements LazyState<Response> {
  real: TextResponse | undefined;
  /** The headers handed out before the real Response was made: it is made with them, and they stay `headers` after. */
  view: LinkedHeaders | undefined;
  /** Written by the adapter: whoever looks at it later finds its body read, as after any write. */
  taken = false;

  constructor(
    readonly text: string,
    readonly status: number,
    /** The headers as given (a record costs nothing until someone asks for a Headers). */
    readonly given: HeadersSource,
  ) {
    if (given instanceof LinkedHeaders) this.view = given;
  }

  fast(key: PropertyKey): unknown {
    if (key === 'headers') return this.view ?? this.real?.headers ?? (this.view = new LinkedHeaders(this.given));
    if (this.real !== undefined) return PASS;
    if (key === 'status') return this.status;
    if (key === 'ok') return this.status >= 200 && this.status <= 299;
    if (key === 'statusText') return '';
    return PASS;
  }

  make(): TextResponse {
    if (this.real === undefined) {
      this.real = new TextResponse(this.text, { status: this.status, headers: this.view ?? this.given });
      this.view?.link(this.real.headers);
      if (this.taken) TextResponse.take(this.real);
    }
    return this.real;
  }
}

/**
 * A JSON answer of `text`, made a Response when first needed. Headers given as `LinkedHeaders`
 * are its `headers` as they are (no copy).
 */
export function lazyResponse(text: string, status: number, headers: HeadersSource): Response {
  // Refused at once, as `new Response` would refuse it.
  if (!(status >= 200 && status <= 599) || [204, 205, 304].includes(status)) return new TextResponse(text, { status, headers });
  return lazyObject(Response.prototype, new ResponseState(text, status, headers));
}

/**
 * The status, headers and text of a lazy answer whose body nobody has read, to write as they
 * are; it then counts as read. Undefined for any other answer.
 */
export function takeLazy(response: Response): { status: number; headers: Headers | Readonly<Record<string, string>>; text: string } | undefined {
  const state = lazyState(response);
  if (!(state instanceof ResponseState) || state.taken) return undefined;
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
  return lazyState(value) instanceof ResponseState;
}
