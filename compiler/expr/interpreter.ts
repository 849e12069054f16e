/**
 * The tree-walking interpreter: the executable reading of Appendix A, written for clarity rather
 * than speed, and the oracle the compiled back end is cross-checked against.
 *
 * It deliberately shares no arithmetic or string code with the compiled back end: ints are BigInt
 * throughout, and strings are turned into arrays of code points before any comparison, so a bug in
 * the runtime's fast paths shows up as a disagreement rather than being reproduced here.
 */
import type { TExpr } from './typed.js';
import type { FactReader } from '../../runtime/facts.js';
import { Raise, isRaise } from '../../runtime/raise.js';
import { INT64_MAX, INT64_MIN, canonInt } from '../../runtime/int64.js';
import { mapHas, mapGet, mapSize, type OarMap } from '../../runtime/values.js';

export type EvalResult = { ok: true; value: unknown } | { ok: false; raise: Raise };

/** Evaluate a typed expression; a raise is returned as a value, anything else is a bug. */
export function interpret(e: TExpr, reader: FactReader): EvalResult {
  try {
    return { ok: true, value: toRuntime(e.ty, evaluate(e, reader)) };
  } catch (x) {
    if (isRaise(x)) return { ok: false, raise: x };
    throw x;
  }
}

/** Interpreter-internal values: ints are always bigint. */
type V = boolean | bigint | number | string | readonly unknown[] | OarMap;

function toRuntime(ty: string, v: V): unknown {
  return ty === 'int' ? canonInt(v as bigint) : v;
}

function int(v: V): bigint {
  return v as bigint;
}

function checkedInt(v: bigint): bigint {
  if (v > INT64_MAX || v < INT64_MIN) throw new Raise('overflow', 'integer overflow');
  return v;
}

function checkedDouble(v: number): number {
  if (!Number.isFinite(v)) throw new Raise('non_finite', 'double arithmetic produced a non-finite value');
  return v;
}

function codePoints(s: string): number[] {
  return Array.from(s, (c) => c.codePointAt(0) as number);
}

function compareCodePoints(a: string, b: string): number {
  const x = codePoints(a);
  const y = codePoints(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  }
  return x.length - y.length;
}

function occursAt(s: number[], t: number[], at: number): boolean {
  if (at < 0 || at + t.length > s.length) return false;
  for (let i = 0; i < t.length; i++) if (s[at + i] !== t[i]) return false;
  return true;
}

function evaluate(e: TExpr, r: FactReader): V {
  switch (e.k) {
    case 'lit':
      return e.value;
    case 'list':
      return e.items.map((x) => evaluate(x, r));
    case 'fact': {
      const v = r.fact(e.sym.slot);
      return e.ty === 'int' ? BigInt(v as number | bigint) : (v as V);
    }
    case 'call': {
      const arg = evaluate(e.arg, r);
      const v = r.call(e.sym.slot, e.arg.ty === 'int' ? canonInt(arg as bigint) : arg);
      return e.ty === 'int' ? BigInt(v as number | bigint) : (v as V);
    }
    case 'size': {
      const v = evaluate(e.arg, r);
      if (e.of === 'string') return BigInt(codePoints(v as string).length);
      if (e.of === 'list') return BigInt((v as unknown[]).length);
      return BigInt(mapSize(v as OarMap));
    }
    case 'strfn': {
      const s = codePoints(evaluate(e.s, r) as string);
      const t = codePoints(evaluate(e.t, r) as string);
      if (e.fn === 'starts_with') return occursAt(s, t, 0);
      if (e.fn === 'ends_with') return occursAt(s, t, s.length - t.length);
      for (let i = 0; i + t.length <= s.length; i++) if (occursAt(s, t, i)) return true;
      return false;
    }
    case 'not':
      return !evaluate(e.operand, r);
    case 'neg': {
      const v = evaluate(e.operand, r);
      return e.ty === 'int' ? checkedInt(-int(v)) : -(v as number);
    }
    case 'and':
      // [OAR-EXPR-5] the right operand is not evaluated when the left decides.
      return evaluate(e.left, r) === true ? evaluate(e.right, r) : false;
    case 'or':
      return evaluate(e.left, r) === true ? true : evaluate(e.right, r);
    case 'arith':
      return arith(e.op, e.ty, evaluate(e.left, r), evaluate(e.right, r));
    case 'cmp':
      return compare(e.op, e.mode, evaluate(e.left, r), evaluate(e.right, r));
    case 'in': {
      const key = evaluate(e.left, r) as string;
      const container = evaluate(e.right, r);
      if (e.of === 'list') return (container as unknown[]).some((x) => x === key);
      return mapHas(container as OarMap, key);
    }
    case 'index': {
      const object = evaluate(e.object, r);
      const index = evaluate(e.index, r);
      if (e.of === 'map') {
        const key = index as string;
        if (!mapHas(object as OarMap, key)) throw new Raise('absent_key', `map has no key ${JSON.stringify(key)}`);
        return mapGet(object as OarMap, key) as V;
      }
      const list = object as unknown[];
      const i = int(index);
      // [OAR-EXPR-21] a negative index raises as an out-of-range one does.
      if (i < 0n || i >= BigInt(list.length)) throw new Raise('index_out_of_range', `index ${i} is out of range for a list of ${list.length}`);
      const member = list[Number(i)];
      return member as V;
    }
    case 'cond':
      return evaluate(e.test, r) === true ? evaluate(e.then, r) : evaluate(e.else, r);
  }
}

function arith(op: string, ty: string, a: V, b: V): V {
  if (ty === 'string') return (a as string) + (b as string);
  if (ty === 'int') {
    const x = int(a);
    const y = int(b);
    switch (op) {
      case '+': return checkedInt(x + y);
      case '-': return checkedInt(x - y);
      case '*': return checkedInt(x * y);
      case '/':
        if (y === 0n) throw new Raise('division_by_zero', 'integer division by zero');
        return checkedInt(x / y); // BigInt division truncates toward zero ([OAR-EXPR-21])
      default:
        if (y === 0n) throw new Raise('division_by_zero', 'integer modulo by zero');
        return checkedInt(x % y); // remainder takes the dividend's sign
    }
  }
  const x = a as number;
  const y = b as number;
  switch (op) {
    case '+': return checkedDouble(x + y);
    case '-': return checkedDouble(x - y);
    case '*': return checkedDouble(x * y);
    default:
      // [OAR-EXPR-14] `1.0 / 0.0` raises rather than producing an infinity.
      if (y === 0) throw new Raise('division_by_zero', 'double division by zero');
      return checkedDouble(x / y);
  }
}

function compare(op: string, mode: string, a: V, b: V): boolean {
  let c: number;
  switch (mode) {
    case 'bool':
      c = a === b ? 0 : 1;
      break;
    case 'string':
      c = compareCodePoints(a as string, b as string);
      break;
    case 'int':
      c = int(a) < int(b) ? -1 : int(a) > int(b) ? 1 : 0;
      break;
    default: {
      // [OAR-EXPR-10], [OAR-EXPR-11] an int is promoted to double for the comparison only.
      const x = mode === 'int_double' ? Number(int(a)) : (a as number);
      const y = mode === 'double_int' ? Number(int(b)) : (b as number);
      c = x < y ? -1 : x > y ? 1 : 0;
    }
  }
  switch (op) {
    case '==': return c === 0;
    case '!=': return c !== 0;
    case '<': return c < 0;
    case '<=': return c <= 0;
    case '>': return c > 0;
    default: return c >= 0;
  }
}
