/**
 * The condition compiler: typed tree → ESTree → JavaScript closure `function (f) { return …; }`
 * where `f` is the fact reader (runtime/facts.ts).
 *
 * - `&&`, `||` and `?:` are emitted as themselves, keeping their short-circuit ([OAR-EXPR-5]);
 *   facts are read where used, so a guarded fact is never produced when the guard decides
 *   ([OAR-FACT-11]). Operands are evaluated left to right, as the interpreter does, so the two
 *   back ends raise the same raise first.
 * - Integer arithmetic calls the int64 helpers (plain-number fast path, exact cold path,
 *   [OAR-EXPR-15]); doubles call helpers that refuse non-finite results ([OAR-EXPR-14]).
 * - Strings compare by code point through helpers only where UTF-16 order can differ (`<` & co.,
 *   the three string built-ins, `size`); `==` is `===`, which is code-point equality.
 * - A list literal of string literals is hoisted into a module constant; under `in` it becomes a
 *   `Set`, so membership in a constant list is one hash lookup and no allocation per evaluation.
 */
import type * as ES from 'estree';
import type { TExpr } from '../expr/typed.js';
import type { BundleHelper } from '../../runtime/helpers.js';
import { canonInt } from '../../runtime/int64.js';
import {
  array, binary, call, conditional, constDecl, fn, id, lit, logical, member, unary,
} from './estree.js';

/** Collects what a group of emitted conditions needs around them. */
export class EmitScope {
  readonly helpers = new Set<BundleHelper>();
  readonly constants: ES.VariableDeclaration[] = [];
  private readonly constByKey = new Map<string, string>();

  constructor(private readonly prefix = 'k') {}

  helper(name: BundleHelper): ES.Identifier {
    this.helpers.add(name);
    return id(name);
  }

  /** Hoist a constant; identical constants are shared (the key is the printed initialiser). */
  constant(key: string, init: ES.Expression): ES.Identifier {
    let name = this.constByKey.get(key);
    if (name === undefined) {
      name = `${this.prefix}${this.constants.length}`;
      this.constByKey.set(key, name);
      this.constants.push(constDecl(name, init));
    }
    return id(name);
  }
}

/** The reader parameter's name in every emitted condition. */
export const READER = 'f';

export function emitConditionFunction(e: TExpr, scope: EmitScope): ES.FunctionExpression {
  return fn([READER], emit(e, scope));
}

/** The members of a list literal made only of string literals, or undefined. */
function constantStrings(e: TExpr): string[] | undefined {
  if (e.k !== 'list' || !e.items.every((x) => x.k === 'lit')) return undefined;
  return e.items.map((x) => (x as Extract<TExpr, { k: 'lit' }>).value as string);
}

export function emit(e: TExpr, s: EmitScope): ES.Expression {
  switch (e.k) {
    case 'lit':
      return lit(e.ty === 'int' ? canonInt(e.value as bigint) : (e.value as string | number | boolean));
    case 'list': {
      const values = constantStrings(e);
      if (values) return s.constant(`list:${JSON.stringify(values)}`, array(values.map(lit)));
      return array(e.items.map((x) => emit(x, s)));
    }
    case 'fact':
      return call(member(id(READER), 'fact'), [lit(e.sym.slot)]);
    case 'call':
      return call(member(id(READER), 'call'), [lit(e.sym.slot), emit(e.arg, s)]);
    case 'size': {
      const arg = emit(e.arg, s);
      if (e.of === 'string') return call(s.helper('cpLength'), [arg]);
      if (e.of === 'list') return member(arg, 'length');
      return call(s.helper('mapSize'), [arg]);
    }
    case 'strfn': {
      const name = e.fn === 'starts_with' ? 'cpStartsWith' : e.fn === 'ends_with' ? 'cpEndsWith' : 'cpContains';
      return call(s.helper(name), [emit(e.s, s), emit(e.t, s)]);
    }
    case 'not':
      return unary('!', emit(e.operand, s));
    case 'neg':
      return e.ty === 'int' ? call(s.helper('ineg'), [emit(e.operand, s)]) : unary('-', emit(e.operand, s));
    case 'and':
      return logical('&&', emit(e.left, s), emit(e.right, s));
    case 'or':
      return logical('||', emit(e.left, s), emit(e.right, s));
    case 'arith':
      return arith(e, s);
    case 'cmp':
      return compare(e, s);
    case 'in': {
      const key = emit(e.left, s);
      const values = constantStrings(e.right);
      if (values) return membership(values, key, s);
      // Key first, container second: the interpreter's order, so both raise the same raise first.
      return call(s.helper(e.of === 'map' ? 'inMap' : 'inList'), [key, emit(e.right, s)]);
    }
    case 'index': {
      const object = emit(e.object, s);
      return call(s.helper(e.of === 'map' ? 'idxMap' : 'idxList'), [object, emit(e.index, s)]);
    }
    case 'cond':
      return conditional(emit(e.test, s), emit(e.then, s), emit(e.else, s));
  }
}

/**
 * Membership in a constant list, hoisted: up to four members a chain of `===` (about 1 ns each),
 * beyond that a `Set` (one hash lookup, about 6 ns) — measured in bench/conditions.
 */
function membership(values: readonly string[], key: ES.Expression, s: EmitScope): ES.Expression {
  const k = JSON.stringify(values);
  if (values.length <= 4) {
    const x = id('x');
    const test = values.map((v) => binary('===', x, lit(v))).reduce((a, b) => logical('||', a, b));
    return call(s.constant(`in:${k}`, fn(['x'], test)), [key]);
  }
  const set = s.constant(`set:${k}`, { type: 'NewExpression', callee: id('Set'), arguments: [array(values.map(lit))] });
  return call(member(set, 'has'), [key]);
}

const INT_OPS: Record<string, BundleHelper> = { '+': 'iadd', '-': 'isub', '*': 'imul', '/': 'idiv', '%': 'imod' };
const DOUBLE_OPS: Record<string, BundleHelper> = { '+': 'dadd', '-': 'dsub', '*': 'dmul', '/': 'ddiv' };

function arith(e: Extract<TExpr, { k: 'arith' }>, s: EmitScope): ES.Expression {
  const l = emit(e.left, s);
  const r = emit(e.right, s);
  if (e.ty === 'string') return binary('+', l, r);
  const helper = (e.ty === 'int' ? INT_OPS : DOUBLE_OPS)[e.op] as BundleHelper;
  return call(s.helper(helper), [l, r]);
}

const JS_CMP: Record<string, ES.BinaryOperator> = { '==': '===', '!=': '!==', '<': '<', '<=': '<=', '>': '>', '>=': '>=' };

function compare(e: Extract<TExpr, { k: 'cmp' }>, s: EmitScope): ES.Expression {
  let l = emit(e.left, s);
  let r = emit(e.right, s);
  const op = JS_CMP[e.op] as ES.BinaryOperator;
  switch (e.mode) {
    case 'string':
      // Equality of code point sequences is equality of UTF-16 strings; order is not.
      if (e.op === '==' || e.op === '!=') return binary(op, l, r);
      return binary(op, call(s.helper('cpCompare'), [l, r]), lit(0));
    case 'int_double':
      l = call(s.helper('toDouble'), [l]);
      break;
    case 'double_int':
      r = call(s.helper('toDouble'), [r]);
      break;
  }
  // int: canonical number|bigint, so === is equality and < is exact across representations.
  return binary(op, l, r);
}
