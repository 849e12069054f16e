/**
 * What a host threw, described without letting the description fail ([OAR-OPS-3]: a failure is
 * routed to `on_error`, and describing it must not throw in turn).
 *
 * JavaScript can throw anything: `null`, a symbol, an object without a prototype (`String(x)`
 * throws "Cannot convert object to primitive value"), an Error whose `message` is a throwing
 * getter, a Proxy whose every trap throws. Each is described by the first of these that works: an
 * Error's string `message`, the value's string conversion, the value's kind.
 */
export function describeThrown(e: unknown): string {
  try {
    if (e instanceof Error) {
      const m: unknown = e.message;
      if (typeof m === 'string') return m;
    }
    if (typeof e === 'symbol') return e.toString();
    const s: unknown = String(e);
    if (typeof s === 'string') return s;
  } catch {
    // a message getter, a toString, or a Proxy trap threw: fall back to the kind of value
  }
  return `a thrown ${e === null ? 'null' : typeof e} that cannot be described`;
}

const promiseThen = Promise.prototype.then;
const ignore = (): void => {};

/**
 * A native Promise the engine refuses and will not await (a detector's or a store's answer) must
 * not become an unhandled rejection, which ends a Node process. Only a native Promise: `then` is
 * the engine's own; a host thenable's `then` is host code and is not called.
 */
export function markHandled(v: unknown): void {
  try {
    promiseThen.call(v, undefined, ignore);
  } catch {
    // not a native Promise
  }
}
