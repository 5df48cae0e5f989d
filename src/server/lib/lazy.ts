/**
 * An object that passes for an instance of a Web class (`Request`, `Response`) while the real
 * instance is made only when first needed: the `Proxy` behind `lazy-request.ts` and
 * `lazy-response.ts` (docs/server.md, "Speed"). `instanceof` holds through the target's
 * prototype; what the state answers itself (`fast`) costs nothing, and anything else, internal
 * symbol-keyed slots included, is the real instance's.
 */

/** What `fast` returns for a property it leaves to the real instance. */
export const PASS: unique symbol = Symbol('pass');

/** What a lazy object is made of. */
export interface LazyState<T extends object> {
  /** The value of `key` without the real instance, or `PASS`. */
  fast(key: PropertyKey): unknown;
  /** The real instance, made on the first call. */
  make(): T;
}

const HELD = Symbol('lazy state');

interface Target {
  [HELD]: LazyState<object>;
}

const handler: ProxyHandler<Target> = {
  get(target, key) {
    const state = target[HELD];
    if (key === HELD) return state;
    // Not a thenable (neither a Request nor a Response has `then`): awaiting one must not make it.
    if (key === 'then') return undefined;
    const answer = state.fast(key);
    if (answer !== PASS) return answer;
    const real = state.make();
    const value: unknown = Reflect.get(real, key, real);
    // Methods run on the real instance (a fetch implementation may keep its internals in private fields).
    return typeof value === 'function' && key !== 'constructor' ? value.bind(real) : value;
  },
  set: (target, key, value) => Reflect.set(target[HELD].make(), key, value),
  has: (target, key) => Reflect.has(Object.getPrototypeOf(target) as object, key) || Reflect.has(target[HELD].make(), key),
};

/** A lazy instance of the class whose prototype is `prototype`. */
export function lazyObject<T extends object>(prototype: T, state: LazyState<T>): T {
  const target = Object.create(prototype) as Target;
  target[HELD] = state;
  return new Proxy(target, handler) as unknown as T;
}

/** The state of a lazy object, or undefined for anything else. */
export function lazyState(value: unknown): LazyState<object> | undefined {
  return typeof value === 'object' && value !== null ? (value as Partial<Target>)[HELD] : undefined;
}
