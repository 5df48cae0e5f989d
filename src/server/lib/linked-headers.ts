/**
 * The `headers` of a lazy Request or answer (`lib/lazy.ts`): one object before and after the real
 * instance is made, so that a change through a reference kept from before is not lost. Until
 * then it holds the headers itself; the real instance is made with its entries (read through its
 * iterator, which is its own, so a fetch implementation copies them as they are now), and from
 * then on every method acts on the real instance's headers.
 *
 * A request's headers (`LinkedHeaders.of`) are the adapter's name-value pairs, copied into the
 * Headers only when something needs more than `get`: the kit's routes read one or two headers of
 * a request, and filling a Headers costs more than the rest of a `get` (docs/server.md, "Speed").
 */
export class LinkedHeaders extends Headers {
  #real: Headers | undefined;
  /** Pairs not copied in yet: names lower-case and values trimmed, as node:http gives them. */
  #pairs: ReadonlyArray<readonly [string, string]> | undefined;

  /**
   * Headers of a request's pairs, copied in on first need when each is as node:http's parser gives
   * it (a lower-case name, a string value with nothing to trim); otherwise (a middleware changed
   * `req.headers`) copied in at once, so that Headers normalizes or refuses them as it would.
   */
  static of(pairs: ReadonlyArray<readonly [string, string]>): LinkedHeaders {
    const parsed = pairs.every(([name, value]) => PARSED_NAME.test(name) && typeof value === 'string' && PARSED_VALUE.test(value));
    if (!parsed) return new LinkedHeaders(pairs as Array<[string, string]>);
    const headers = new LinkedHeaders();
    headers.#pairs = pairs;
    return headers;
  }

  /** From now on, every read and change is `real`'s. */
  link(real: Headers): void {
    this.#fill();
    this.#real = real;
  }

  /** Copies the pairs in, once: whatever needs more than `get` sees every header. */
  #fill(): void {
    const pairs = this.#pairs;
    if (pairs === undefined) return;
    this.#pairs = undefined;
    for (const [name, value] of pairs) super.append(name, value);
  }

  override append(name: string, value: string): void {
    if (this.#real) return this.#real.append(name, value);
    this.#fill();
    super.append(name, value);
  }

  override delete(name: string): void {
    if (this.#real) return this.#real.delete(name);
    this.#fill();
    super.delete(name);
  }

  override get(name: string): string | null {
    if (this.#real) return this.#real.get(name);
    const pairs = this.#pairs;
    // A name Headers would refuse is refused by Headers itself.
    if (pairs === undefined || typeof name !== 'string' || !HEADER_NAME.test(name)) {
      this.#fill();
      return super.get(name);
    }
    const wanted = name.toLowerCase();
    let found: string | null = null;
    for (const [key, value] of pairs) if (key === wanted) found = found === null ? value : `${found}, ${value}`;
    return found;
  }

  override getSetCookie(): string[] {
    if (this.#real) return this.#real.getSetCookie();
    this.#fill();
    return super.getSetCookie();
  }

  override has(name: string): boolean {
    if (this.#real) return this.#real.has(name);
    this.#fill();
    return super.has(name);
  }

  override set(name: string, value: string): void {
    if (this.#real) return this.#real.set(name, value);
    this.#fill();
    super.set(name, value);
  }

  override forEach(callback: (value: string, name: string, parent: Headers) => void, thisArg?: unknown): void {
    if (this.#real) return this.#real.forEach((value, name) => callback.call(thisArg, value, name, this));
    this.#fill();
    super.forEach(callback, thisArg);
  }

  override entries(): ReturnType<Headers['entries']> {
    if (this.#real) return this.#real.entries();
    this.#fill();
    return super.entries();
  }

  override keys(): ReturnType<Headers['keys']> {
    if (this.#real) return this.#real.keys();
    this.#fill();
    return super.keys();
  }

  override values(): ReturnType<Headers['values']> {
    if (this.#real) return this.#real.values();
    this.#fill();
    return super.values();
  }

  override [Symbol.iterator](): ReturnType<Headers['entries']> {
    return this.entries();
  }

  /** `console.log` and `util.inspect` show every header, as on any Headers. */
  [Symbol.for('nodejs.util.inspect.custom')](_depth: number, options: object, inspect: (value: unknown, options: object) => string): string {
    return inspect(this.#real ?? new Headers([...this.entries()]), options);
  }
}

/** A header name Headers takes (a token), for which `get` may read the pairs directly. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A name as node:http gives it: a token, lower-case. */
const PARSED_NAME = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/;
/** A value as node:http gives it: bytes (code points up to 255), no white space to trim at either end, no line break or NUL. */
const PARSED_VALUE = /^(?![\t ])[^\0\r\n\u0100-\uffff]*(?<![\t ])$/;
