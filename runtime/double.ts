/**
 * Double arithmetic that never produces an infinity or NaN ([OAR-EXPR-14], [OAR-FACT-23]).
 */
import { Raise } from './raise.js';

function finite(r: number): number {
  if (r - r !== 0) throw new Raise('non_finite', 'double arithmetic produced a non-finite value');
  return r;
}

export function dadd(a: number, b: number): number {
  return finite(a + b);
}
export function dsub(a: number, b: number): number {
  return finite(a - b);
}
export function dmul(a: number, b: number): number {
  return finite(a * b);
}
export function ddiv(a: number, b: number): number {
  if (b === 0) throw new Raise('division_by_zero', 'double division by zero');
  return finite(a / b);
}
