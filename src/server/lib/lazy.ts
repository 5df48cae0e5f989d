/**
 * An object that passes for an instance of a Web class (`Request`, `Response`) while the real
 * instance is made only when first needed: the `Proxy` behind `lazy-request.ts` and
 * `lazy-response.ts` (docs/server.md, "Speed"). `instanceof` holds through the target's
 * prototype; what the state answers itself (`fast`) costs nothing, and anything else, internal
 * symbol-keyed slots included, is the real instance's.
 *
 * What the app adds to the object itself (`request.user = …`, `Object.defineProperty(request, …)`,
 * as a middleware tags a request) is the proxy's own target's, as it would be the instance's: it is
 * read, listed, described and deleted there, consistently, and never makes the real instance.
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

/** Read through the proxy, gives its state (the target holds no such property). */
const HELD = Symbol('lazy state');

/** A base class whose constructor returns the object it is given: a subclass's fields go onto that object. */
class Stamped {
  constructor(target: object) {
    return target as Stamped;
  }
}

/**
 * The target of a lazy object: its state is a private field, which no trap, `Object.keys` or
 * descriptor sees, so the target's own properties are only what the app adds. (A `WeakMap` from
 * target to state did the same at ten times the cost per request.)
 */
class Target extends Stamped {
  readonly #state: LazyState<object>;

  constructor(target: object, state: LazyState<object>) {
    super(target);
    this.#state = state;
  }

  static stateOf(target: object): LazyState<object> {
    return (target as Target).#state;
  }
}

/**
 * The traps not given here (`set`, `defineProperty`, `getOwnPropertyDescriptor`, `deleteProperty`,
 * `ownKeys`) act on the target, as on any object whose prototype is the class's: an assignment
 * makes an own property there (a getter of the prototype without a setter refuses it, as on the
 * real instance), which `get` and `has` then find first.
 */
const handler: ProxyHandler<object> = {
  get(target, key, receiver) {
    const state = Target.stateOf(target);
    if (key === HELD) return state;
    // A getter the app added runs on the object it was added to: the proxy, as on the real instance.
    if (Object.hasOwn(target, key)) return Reflect.get(target, key, receiver);
    // Not a thenable (neither a Request nor a Response has `then`): awaiting one must not make it.
    if (key === 'then') return undefined;
    const answer = state.fast(key);
    if (answer !== PASS) return answer;
    const real = state.make();
    const value: unknown = Reflect.get(real, key, real);
    // Methods run on the real instance (a fetch implementation may keep its internals in private fields).
    return typeof value === 'function' && key !== 'constructor' ? value.bind(real) : value;
  },
  has: (target, key) => Reflect.has(target, key) || Reflect.has(Target.stateOf(target).make(), key),
};

/** A lazy instance of the class whose prototype is `prototype`. */
export function lazyObject<T extends object>(prototype: T, state: LazyState<T>): T {
  const target = new Target(Object.create(prototype) as object, state as LazyState<object>);
  return new Proxy(target, handler) as T;
}

/** The state of a lazy object, or undefined for anything else. */
export function lazyState(value: unknown): LazyState<object> | undefined {
  return typeof value === 'object' && value !== null ? ((value as Record<symbol, unknown>)[HELD] as LazyState<object> | undefined) : undefined;
}
