/**
 * Run-time values: the zero value of each type ([OAR-FACT-25]) and the check every produced value
 * passes before anything consumes it ([OAR-FACT-26]).
 *
 * Representation: `bool` → boolean; `int` → canonical number | bigint (see int64.ts); `double` →
 * finite number; `string` → string; lists → arrays; maps → plain objects or `Map`s, read by own
 * property only.
 */
import type { FactType } from './types.js';
import { asInt } from './int64.js';
import { Raise } from './raise.js';

export type OarMap = Readonly<Record<string, unknown>> | ReadonlyMap<string, unknown>;
export type Value = boolean | number | bigint | string | readonly unknown[] | OarMap;

const EMPTY_LIST: readonly unknown[] = Object.freeze([]);
const EMPTY_MAP: OarMap = Object.freeze(Object.create(null) as Record<string, unknown>);

/** The zero value of a type ([OAR-FACT-25]). */
export function zeroValue(type: FactType): Value {
  switch (type) {
    case 'bool':
      return false;
    case 'int':
    case 'double':
      return 0;
    case 'string':
      return '';
    case 'list<string>':
    case 'list<map>':
      return EMPTY_LIST;
    case 'map<string,string>':
    case 'map':
      return EMPTY_MAP;
  }
}

/**
 * A plain-object map's keys are its own *enumerable* string keys — the keys `Object.keys` lists,
 * which `size()` counts and the type check inspects ([OAR-FACT-26]). A non-enumerable own property
 * is not a member: counting it for `in` and indexing but not for `size()` or the check would let a
 * hidden, unchecked value (a number in a `map<string,string>`) reach a condition.
 */
const isOwnKey = Object.prototype.propertyIsEnumerable;

/** Is `v` a map value: a `Map`, or a non-array object? */
export function isMap(v: unknown): v is OarMap {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Key presence by own enumerable property only: `"constructor" in tool_args` is false for `{}`. */
export function mapHas(m: OarMap, key: string): boolean {
  return m instanceof Map ? m.has(key) : isOwnKey.call(m, key);
}

/** The member under `key`, or undefined; own enumerable properties only. */
export function mapGet(m: OarMap, key: string): unknown {
  if (m instanceof Map) return m.get(key);
  return isOwnKey.call(m, key) ? (m as Record<string, unknown>)[key] : undefined;
}

export function mapSize(m: OarMap): number {
  return m instanceof Map ? m.size : Object.keys(m).length;
}

function wrong(type: string, v: unknown, what: string): Raise {
  return new Raise('wrong_type', `${what}: expected ${type}, got ${describe(v)}`);
}

/** A short, safe description of a value's run-time shape, for error messages. */
export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return 'NaN';
    if (!Number.isFinite(v)) return 'infinity';
    return Number.isInteger(v) ? 'integer number' : 'number';
  }
  return typeof v;
}

/**
 * Check a produced value against its declared type and return its canonical form, or throw a
 * `wrong_type` raise ([OAR-FACT-26]: never coerce, never zero). A non-finite double is a provider
 * failure ([OAR-FACT-23]).
 */
export function checkValue(type: FactType, v: unknown, what: string): Value {
  switch (type) {
    case 'bool':
      if (typeof v === 'boolean') return v;
      throw wrong(type, v, what);
    case 'string':
      if (typeof v === 'string') return v;
      throw wrong(type, v, what);
    case 'int': {
      const i = asInt(v);
      if (i !== undefined) return i;
      throw wrong(type, v, what);
    }
    case 'double':
      // A JSON number without a fraction is a valid double; a bigint from a lossless parse is too.
      if (typeof v === 'number') {
        if (Number.isFinite(v)) return v;
        throw new Raise('provider_failure', `${what}: a double must be finite, got ${describe(v)}`);
      }
      if (typeof v === 'bigint') {
        // Beyond the binary64 range the conversion would be an infinity ([OAR-FACT-23]).
        const d = Number(v);
        if (Number.isFinite(d)) return d;
      }
      throw wrong(type, v, what);
    case 'list<string>':
      if (Array.isArray(v) && everyElement(v, (x) => typeof x === 'string')) return v;
      throw wrong(type, v, what);
    case 'list<map>':
      if (Array.isArray(v) && everyElement(v, isMap)) return v;
      throw wrong(type, v, what);
    case 'map':
      if (isMap(v)) return v;
      throw wrong(type, v, what);
    case 'map<string,string>':
      if (isMap(v) && everyMember(v, (x) => typeof x === 'string')) return v;
      throw wrong(type, v, what);
  }
}

/** Every element, holes included: `Array.prototype.every` skips the hole in `[, "a"]`, which
 *  is a list with a member that is not a string (or not a map) ([OAR-FACT-26]). A hole reads as
 *  `undefined`, which no predicate here accepts, so indexing every position is enough (a `k in a`
 *  test per element found nothing more, and cost a lookup on the hot path of every list fact). */
function everyElement(a: readonly unknown[], pred: (x: unknown) => boolean): boolean {
  for (let k = 0; k < a.length; k++) if (!pred(a[k])) return false;
  return true;
}

function everyMember(m: OarMap, pred: (x: unknown) => boolean): boolean {
  if (m instanceof Map) {
    for (const [k, x] of m) if (typeof k !== 'string' || !pred(x)) return false;
    return true;
  }
  for (const k of Object.keys(m)) if (!pred((m as Record<string, unknown>)[k])) return false;
  return true;
}

