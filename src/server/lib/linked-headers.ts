/**
 * The `headers` of a lazy Request or answer (`lib/lazy.ts`): one object before and after the real
 * instance is made, so that a change through a reference kept from before is not lost. Until
 * then it holds the headers itself; the real instance is made with its entries (read through its
 * iterator, which is its own, so a fetch implementation copies them as they are now), and from
 * then on every method acts on the real instance's headers.
 */
export class LinkedHeaders extends Headers {
  #real: Headers | undefined;

  /** From now on, every read and change is `real`'s. */
  link(real: Headers): void {
    this.#real = real;
  }

  override append(name: string, value: string): void {
    if (this.#real) this.#real.append(name, value);
    else super.append(name, value);
  }

  override delete(name: string): void {
    if (this.#real) this.#real.delete(name);
    else super.delete(name);
  }

  override get(name: string): string | null {
    return this.#real ? this.#real.get(name) : super.get(name);
  }

  override getSetCookie(): string[] {
    return this.#real ? this.#real.getSetCookie() : super.getSetCookie();
  }

  override has(name: string): boolean {
    return this.#real ? this.#real.has(name) : super.has(name);
  }

  override set(name: string, value: string): void {
    if (this.#real) this.#real.set(name, value);
    else super.set(name, value);
  }

  override forEach(callback: (value: string, name: string, parent: Headers) => void, thisArg?: unknown): void {
    if (this.#real) this.#real.forEach((value, name) => callback.call(thisArg, value, name, this));
    else super.forEach(callback, thisArg);
  }

  override entries(): ReturnType<Headers['entries']> {
    return this.#real ? this.#real.entries() : super.entries();
  }

  override keys(): ReturnType<Headers['keys']> {
    return this.#real ? this.#real.keys() : super.keys();
  }

  override values(): ReturnType<Headers['values']> {
    return this.#real ? this.#real.values() : super.values();
  }

  override [Symbol.iterator](): ReturnType<Headers['entries']> {
    return this.entries();
  }
}
