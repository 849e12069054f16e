/**
 * Checked 64-bit integer arithmetic ([OAR-EXPR-15], [OAR-EXPR-21]) without BigInt on the hot path.
 *
 * An OAR `int` is represented canonically: a `number` when it is a safe integer, a `bigint` only
 * outside ±(2^53−1). One representation per value means `===` is equality and `<` is exact (JS
 * compares number and bigint by mathematical value). Each operation first tries plain number
 * arithmetic; when both operands are numbers and the result is a safe integer the result is exact
 * (rounding can only push a true result of magnitude ≥ 2^53 to a value that is still ≥ 2^53). Only
 * when that guard fails does the cold path compute exactly with BigInt and raise on overflow.
 */
import { Raise } from './raise.js';

export type Int = number | bigint;

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
const SAFE_MAX = Number.MAX_SAFE_INTEGER;
const BIG_SAFE_MAX = BigInt(SAFE_MAX);

/** The canonical representation of an exact integer known to be within int64. */
export function canonInt(b: bigint): Int {
  return b <= BIG_SAFE_MAX && b >= -BIG_SAFE_MAX ? Number(b) : b;
}

function checked(b: bigint): Int {
  if (b > INT64_MAX || b < INT64_MIN) throw new Raise('overflow', 'integer overflow');
  return canonInt(b);
}

export function iadd(a: Int, b: Int): Int {
  if (typeof a === 'number' && typeof b === 'number') {
    const r = a + b;
    if (r <= SAFE_MAX && r >= -SAFE_MAX) return r;
  }
  return checked(BigInt(a) + BigInt(b));
}

export function isub(a: Int, b: Int): Int {
  if (typeof a === 'number' && typeof b === 'number') {
    const r = a - b;
    if (r <= SAFE_MAX && r >= -SAFE_MAX) return r;
  }
  return checked(BigInt(a) - BigInt(b));
}

export function imul(a: Int, b: Int): Int {
  if (typeof a === 'number' && typeof b === 'number') {
    const r = a * b;
    if (r <= SAFE_MAX && r >= -SAFE_MAX) return r === 0 ? 0 : r; // no -0 in int
  }
  return checked(BigInt(a) * BigInt(b));
}

/** Truncating division ([OAR-EXPR-21]: `-7 / 2 == -3`), exact for every operand. */
export function idiv(a: Int, b: Int): Int {
  if (b === 0) throw new Raise('division_by_zero', 'integer division by zero');
  if (typeof a === 'number' && typeof b === 'number') {
    // Math.trunc(a / b) rounds for large operands; (a - a % b) / b is exact for safe integers.
    const r = (a - (a % b)) / b;
    return r === 0 ? 0 : r;
  }
  return checked(BigInt(a) / BigInt(b)); // BigInt division truncates; INT64_MIN / -1 overflows
}

/** Remainder with the sign of the dividend ([OAR-EXPR-21]: `-7 % 2 == -1`). */
export function imod(a: Int, b: Int): Int {
  if (b === 0) throw new Raise('division_by_zero', 'integer modulo by zero');
  if (typeof a === 'number' && typeof b === 'number') {
    const r = a % b;
    return r === 0 ? 0 : r;
  }
  return checked(BigInt(a) % BigInt(b));
}

export function ineg(a: Int): Int {
  if (typeof a === 'number') return a === 0 ? 0 : -a;
  return checked(-a);
}

/** An int promoted to double for a mixed comparison ([OAR-EXPR-10], [OAR-EXPR-11]). */
export function toDouble(a: Int): number {
  return typeof a === 'number' ? a : Number(a);
}

/** Is `v` an integer that an OAR `int` can hold? Returns its canonical form, or undefined. */
export function asInt(v: unknown): Int | undefined {
  if (typeof v === 'number') {
    if (Number.isSafeInteger(v)) return v === 0 ? 0 : v;
    if (!Number.isInteger(v)) return undefined;
    const b = BigInt(v);
    return b <= INT64_MAX && b >= INT64_MIN ? b : undefined;
  }
  if (typeof v === 'bigint') return v <= INT64_MAX && v >= INT64_MIN ? canonInt(v) : undefined;
  return undefined;
}
