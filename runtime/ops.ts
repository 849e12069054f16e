/**
 * Operations the compiled conditions call that are neither arithmetic nor string helpers: indexing
 * with its raises ([OAR-EXPR-13], [OAR-EXPR-21]).
 */
import { Raise } from './raise.js';
import { mapGet, mapHas, type OarMap } from './values.js';
import type { Int } from './int64.js';

/** `m[k]` on a `map<string,string>`: an absent key raises ([OAR-EXPR-13]). */
export function idxMap(m: OarMap, k: string): unknown {
  if (!mapHas(m, k)) throw new Raise('absent_key', `map has no key ${JSON.stringify(k)}`);
  return mapGet(m, k);
}

/** `l[i]` on a list: a negative or out-of-range index raises ([OAR-EXPR-13], [OAR-EXPR-21]). */
export function idxList(l: readonly unknown[], i: Int): unknown {
  if (typeof i !== 'number' || i < 0 || i >= l.length) {
    throw new Raise('index_out_of_range', `index ${i} is out of range for a list of ${l.length}`);
  }
  return l[i];
}

/** `k in l` on a `list<string>` ([OAR-EXPR-12]); the key comes first, as it is evaluated first. */
export function inList(k: string, l: readonly unknown[]): boolean {
  return l.includes(k);
}

const isOwnKey = Object.prototype.propertyIsEnumerable;

/**
 * `k in m` on a map: key presence by own enumerable property only ([OAR-EXPR-12]), exactly as
 * `mapHas` decides it (runtime/values.ts) — the key set `size()` counts and indexing reads
 * ([OAR-FACT-26]). Its own body rather than a call to `mapHas`: measured, V8 then inlines the
 * own-property check at the call site.
 */
export function inMap(k: string, m: OarMap): boolean {
  return m instanceof Map ? m.has(k) : isOwnKey.call(m, k);
}
