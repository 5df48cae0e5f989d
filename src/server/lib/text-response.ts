/**
 * A `Response` whose body is a string known when it is made: the kit's JSON answers. A genuine
 * `Response` (a subclass: `instanceof`, headers, status and every body reader work as usual), made
 * without the body stream that Node builds for every `new Response(text)`, which costs more than
 * the rest of a small answer together; the stream is made only if someone asks for `body`.
 * `toNodeHandler` writes the text as it is (`TextResponse.take`), and reads nothing.
 */
import { Readable } from 'node:stream';

/** Statuses whose answer has no body: `new Response(text, { status })` refuses them. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

export class TextResponse extends Response {
  #text: string;
  #stream: ReadableStream<Uint8Array<ArrayBuffer>> | undefined;
  #used = false;

  constructor(text: string, init: ResponseInit = {}) {
    super(null, init);
    if (NULL_BODY_STATUSES.has(this.status)) throw new TypeError(`A response with status ${this.status} cannot have a body`);
    this.#text = text;
  }

  /** The text of `response` when it is a `TextResponse` whose body nobody has touched; it is then used. */
  static take(response: Response): string | undefined {
    if (!(response instanceof TextResponse) || response.#used || response.#stream !== undefined) return undefined;
    response.#used = true;
    return response.#text;
  }

  override get body(): ReadableStream<Uint8Array<ArrayBuffer>> {
    if (this.#stream === undefined) {
      // A stream already read stays read: a body read by `text()` is gone from `body` too.
      this.#stream = new Response(this.#used ? '' : this.#text).body!;
      if (this.#used) void this.#stream.cancel();
    }
    return this.#stream;
  }

  override get bodyUsed(): boolean {
    return this.#used || (this.#stream !== undefined && Readable.isDisturbed(this.#stream as unknown as NodeJS.ReadableStream));
  }

  override arrayBuffer(): Promise<ArrayBuffer> {
    return this.#read()?.arrayBuffer() ?? unusable();
  }

  override blob(): Promise<Blob> {
    return this.#read()?.blob() ?? unusable();
  }

  override formData(): Promise<FormData> {
    return this.#read()?.formData() ?? unusable();
  }

  override json(): Promise<unknown> {
    return this.#read()?.json() ?? unusable();
  }

  override text(): Promise<string> {
    return this.#read()?.text() ?? unusable();
  }

  override clone(): Response {
    if (this.bodyUsed) throw new TypeError('Response.clone: Body has already been consumed.');
    const init = { status: this.status, statusText: this.statusText, headers: new Headers(this.headers) };
    if (this.#stream === undefined) return new TextResponse(this.#text, init);
    const [mine, theirs] = this.#stream.tee();
    this.#stream = mine;
    return new Response(theirs, init);
  }

  static {
    // Newer Node versions have `bytes()` as well: it must read this body too, not the empty one.
    if ('bytes' in Response.prototype) {
      Object.defineProperty(TextResponse.prototype, 'bytes', {
        configurable: true,
        writable: true,
        value(this: TextResponse) {
          return (this.#read() as (Response & { bytes(): Promise<Uint8Array> }) | null)?.bytes() ?? unusable();
        },
      });
    }
  }

  /** A plain Response carrying this body, to read it with (this one is then used); null once used. */
  #read(): Response | null {
    if (this.bodyUsed) return null;
    const body = this.#stream ?? this.#text;
    this.#used = true;
    return new Response(body, { headers: this.headers });
  }
}

/** As a Response's body readers do once it is used: the promise rejects, nothing throws. */
function unusable(): Promise<never> {
  return Promise.reject(new TypeError('Body is unusable: Body has already been read'));
}
