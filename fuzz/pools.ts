/**
 * Edge values shared by the property tests (test/property/generators.ts) and `oarc fuzz`: strings
 * where code-point and code-unit answers part, and integers on the edges of the exact-arithmetic
 * fast path and of int64 ([OAR-EXPR-14], [OAR-EXPR-15], [OAR-FACT-23]).
 */

/** Strings used for literals, fact values, list members and map keys alike, so lookups hit. */
export const STRING_POOL: readonly string[] = [
  '', 'a', 'b', 'ab', 'abc', 'A', '/etc/passwd', '/etc', 'http://', 'rm -rf',
  'constructor', '__proto__', 'toString', 'hasOwnProperty', 'prototype', 'length',
  '😀', 'a😀', '😀b', '\uFF5E', '\uD83D', '\uDE00', 'x\uD83D', '\uDE00x', '\uD83D\uDE00\uDE00',
  '\uD800\uDC00', '\uDBFF\uDFFF', '\uD7FF', '\uE000', '\uFFFF', 'e\u0301', 'é',
  '\u0000', '\u2028', '\u2029', '\n', '\t', '"', "'", '\\', '${x}', '*/', '</script>',
];

/**
 * Code units and code points for building strings: lone surrogates and their neighbours,
 * NUL, line separators, astral code points, the ends of the BMP.
 */
export const CODE_UNIT_POOL: readonly string[] = [
  'a', 'b', '/', ' ', '"', "'", '\\', '\n', '\r', '\t', '\u0000', '\u007f', 'é', '\u2028',
  '\uD7FF', '\uD800', '\uDBFF', '\uDC00', '\uDFFF', '\uE000', '\uFF5E', '\uFFFF',
  '😀', '\u{10000}', '\u{10FFFF}',
];

const TWO = 2n;
export const I53 = TWO ** 53n;
export const I63 = TWO ** 63n;

/** Int boundaries as exact magnitudes. */
export const INT_MAGNITUDES: readonly bigint[] = [
  0n, 1n, 2n, 3n, 7n, 10n, TWO ** 31n - 1n, TWO ** 31n, TWO ** 32n, I53 - 3n, I53 - 1n, I53, I53 + 1n, TWO ** 62n, I63 - 1n,
];

/**
 * Int values around the edges, signed: ±2^53 (where exact arithmetic takes over), the int64 range
 * and one beyond it on each side (not an int: a provider failure, [OAR-FACT-23]).
 */
export const EDGE_INT_VALUES: readonly bigint[] = [
  0n, 1n, -1n, 2n, -2n, 7n, -7n, 10n, TWO ** 31n - 1n, -(TWO ** 31n), TWO ** 32n,
  I53 - 1n, -(I53 - 1n), I53, -I53, I53 + 1n, -(I53 + 1n), TWO ** 62n,
  I63 - 1n, -I63, I63, -I63 - 1n,
];
