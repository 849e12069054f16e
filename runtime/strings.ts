/**
 * String operations by Unicode code point ([OAR-FACT-23], [OAR-EXPR-10], [OAR-EXPR-22]).
 *
 * JS strings are UTF-16. Equality of code point sequences is equality of code unit sequences, but
 * ordering and substring tests differ where surrogates are involved: U+FF5E sorts before U+1F600
 * by code point, after it by code unit; and "\uD83D" is a code-unit prefix of "😀" but not a
 * code-point prefix. A lone surrogate is treated as the code point of the same value, exactly as
 * `String.prototype.codePointAt` and `Array.from` read it.
 */

const isHigh = (u: number) => u >= 0xd800 && u <= 0xdbff;
const isLow = (u: number) => u >= 0xdc00 && u <= 0xdfff;

/** Global, so `test` resumes at `lastIndex`: a native scan from one high surrogate to the next. */
const HIGH_SURROGATES = /[\uD800-\uDBFF]/g;

/** Number of code points ([OAR-EXPR-16] `size`). */
export function cpLength(s: string): number {
  // Without a high surrogate there is no pair, and every code unit is a code point. With some,
  // the regex finds each one natively and only it is looked at here: walking every unit in JS
  // cost as much again as the scan (a reply or a tool result is hundreds of characters).
  const re = HIGH_SURROGATES;
  re.lastIndex = 0;
  if (!re.test(s)) return s.length;
  let count = s.length;
  do {
    const next = re.lastIndex; // just past the high surrogate
    if (next < s.length && isLow(s.charCodeAt(next))) {
      count--; // a pair: one code point
      re.lastIndex = next + 1;
    }
  } while (re.test(s)); // false at the end, which also resets lastIndex
  return count;
}

/** Three-way comparison by code point: negative, zero or positive. */
export function cpCompare(a: string, b: string): number {
  if (a === b) return 0;
  const n = a.length < b.length ? a.length : b.length;
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i === n) return a.length - b.length; // one is a prefix of the other
  const x = a.charCodeAt(i);
  const y = b.charCodeAt(i);
  if (x < 0xd800 && y < 0xd800) return x - y; // the common case: no surrogate in sight
  // The code point containing unit i may start at i - 1 (a pair whose high half both share).
  const s = i > 0 && isHigh(a.charCodeAt(i - 1)) && (isLow(x) || isLow(y)) ? i - 1 : i;
  return (a.codePointAt(s) as number) - (b.codePointAt(s) as number);
}

/** True when a code-unit match at [at, at + len) of `s` does not split a surrogate pair. */
function onBoundaries(s: string, at: number, len: number): boolean {
  if (at > 0 && isLow(s.charCodeAt(at)) && isHigh(s.charCodeAt(at - 1))) return false;
  const end = at + len;
  if (end < s.length && isLow(s.charCodeAt(end)) && isHigh(s.charCodeAt(end - 1))) return false;
  return true;
}

export function cpStartsWith(s: string, prefix: string): boolean {
  return s.startsWith(prefix) && onBoundaries(s, 0, prefix.length);
}

export function cpEndsWith(s: string, suffix: string): boolean {
  return s.endsWith(suffix) && onBoundaries(s, s.length - suffix.length, suffix.length);
}

export function cpContains(s: string, sub: string): boolean {
  let at = s.indexOf(sub);
  while (at !== -1) {
    if (onBoundaries(s, at, sub.length)) return true;
    at = s.indexOf(sub, at + 1);
  }
  return false;
}

/**
 * `s` as V8's one flat, internalized copy. A string built by concatenation is a rope: as a Map key
 * every lookup walks it (measured: ~28 ns a lookup against ~9 ns for a flat key), as a property
 * name it is internalized again at every use, and as a piece of a longer text it is one more node
 * to walk when that text is flattened. For strings built once and used at every occurrence (a
 * counter's key and name, a quoted rule id); a property key is the cheapest way JavaScript offers
 * to get the internalized string.
 */
export function internalized(s: string): string {
  for (const k in { [s]: 0 }) return k;
  return s;
}

/**
 * `s` flattened in place (a rope becomes one sequential string; `charCodeAt` flattens it to read
 * a unit), for strings built from data — a session id, a scope value — that are used as Map keys
 * many times but are new more often than not. `internalized` would give each one a hidden class
 * of its own (a fresh object with that key): measured at 1.8 µs per new string, against about 0.2 µs.
 */
export function flattened(s: string): string {
  s.charCodeAt(0);
  return s;
}
