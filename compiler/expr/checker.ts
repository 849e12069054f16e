/**
 * The type checker of Appendix A.2 against the declared, closed, typed environment ([OAR-FACT-1]
 * to [OAR-FACT-4]). It reports every error it finds (an operand whose type is already wrong does
 * not cascade), and produces the typed tree both back ends consume.
 */
import type { Expr } from './ast.js';
import type { CmpMode, ExprType, TExpr } from './typed.js';
import type { SymbolEntry, SymbolTable } from '../../runtime/types.js';
import { INT64_MAX, INT64_MIN } from '../../runtime/int64.js';
import { closest, meantHint } from '../../runtime/suggest.js';
import { plural } from '../../runtime/plural.js';

export interface CheckError {
  readonly clause: string;
  readonly message: string;
  /** The identifier, operator or construct the error names. */
  readonly token: string;
  readonly offset: number;
  /** What to write instead, when one name is close enough to be the one meant. */
  readonly suggestion?: string;
}

/** A declared symbol the condition names, where it names it. */
export interface SymbolRef {
  readonly sym: SymbolEntry;
  readonly offset: number;
}

/** A `fire_count_of` / `breaker_count_of` read: the function, its literal argument, where. */
export interface CounterRead {
  readonly fn: string;
  readonly name: string;
  readonly offset: number;
}

export interface CheckResult {
  readonly expr?: TExpr;
  readonly errors: readonly CheckError[];
  /**
   * Every declared symbol and counter read the condition names, found even when it has errors, so
   * the checks that depend on them (requires, rule targets) report in the same pass.
   */
  readonly refs: readonly SymbolRef[];
  readonly counterReads: readonly CounterRead[];
}

/** The four built-ins and no fifth ([OAR-EXPR-16]). */
export const BUILTINS: ReadonlySet<string> = new Set(['size', 'starts_with', 'ends_with', 'contains']);

/** Functions a CEL user might reach for, to explain why they are not here. */
const NOT_BUILTINS: Readonly<Record<string, string>> = {
  matches: 'OAR-EXPR-23',
  startsWith: 'OAR-EXPR-16',
  endsWith: 'OAR-EXPR-16',
  has: 'OAR-EXPR-16',
  int: 'OAR-EXPR-16',
  uint: 'OAR-EXPR-16',
  double: 'OAR-EXPR-16',
  string: 'OAR-EXPR-16',
  bool: 'OAR-EXPR-16',
  type: 'OAR-EXPR-16',
  duration: 'OAR-EXPR-16',
  timestamp: 'OAR-EXPR-16',
  lower: 'OAR-EXPR-22',
  upper: 'OAR-EXPR-22',
  lowerAscii: 'OAR-EXPR-22',
};

const COUNTER_READERS: ReadonlySet<string> = new Set(['fire_count_of', 'breaker_count_of']);

const ERR = Symbol('error');
type Out = TExpr | typeof ERR;

const isScalar = (t: ExprType) => t === 'bool' || t === 'int' || t === 'double' || t === 'string';
const isMapType = (t: ExprType) => t === 'map' || t === 'map<string,string>';

/** Type-check a condition, requiring a `bool` result ([OAR-FACT-4]). */
export function checkCondition(e: Expr, symbols: SymbolTable): CheckResult {
  const r = checkExpression(e, symbols);
  if (r.expr && r.expr.ty !== 'bool') {
    return {
      refs: r.refs,
      counterReads: r.counterReads,
      errors: [
        {
          clause: 'OAR-FACT-4',
          message: `condition produces ${r.expr.ty}, not bool`,
          token: r.expr.ty,
          offset: e.offset,
        },
      ],
    };
  }
  return r;
}

/** Type-check an expression of any type (used by tests and tools; rules need `checkCondition`). */
export function checkExpression(e: Expr, symbols: SymbolTable): CheckResult {
  const c = new Checker(symbols);
  const out = c.check(e);
  const found = { refs: c.refs, counterReads: c.counterReads };
  return out === ERR || c.errors.length > 0 ? { errors: c.errors, ...found } : { expr: out, errors: [], ...found };
}

class Checker {
  readonly errors: CheckError[] = [];
  readonly refs: SymbolRef[] = [];
  readonly counterReads: CounterRead[] = [];

  constructor(private readonly symbols: SymbolTable) {}

  private err(clause: string, token: string, offset: number, message: string, suggestion?: string): typeof ERR {
    this.errors.push({ clause, token, offset, message: message + meantHint(suggestion), ...(suggestion === undefined ? {} : { suggestion }) });
    return ERR;
  }

  /** The declared name closest to a misspelled one; a call looks among functions first. */
  private suggest(name: string, call: boolean): string | undefined {
    const fns = this.symbols.symbols.filter((s) => s.kind === 'function').map((s) => s.name);
    const facts = this.symbols.symbols.filter((s) => s.kind === 'fact').map((s) => s.name);
    return call ? closest(name, [...BUILTINS, ...fns]) ?? closest(name, facts) : closest(name, facts) ?? closest(name, fns);
  }

  check(e: Expr): Out {
    switch (e.type) {
      case 'bool':
        return { k: 'lit', ty: 'bool', offset: e.offset, value: e.value };
      case 'int':
        // [OAR-EXPR-21] an integer literal must fit 64 bits; 2^63 only right after unary minus.
        if (e.value > INT64_MAX && !(e.negated && e.value === -INT64_MIN)) {
          return this.err('OAR-EXPR-21', e.value.toString(), e.offset, `integer literal ${e.value} does not fit in a 64-bit int`);
        }
        return { k: 'lit', ty: 'int', offset: e.offset, value: e.value };
      case 'double':
        // [OAR-EXPR-21] a double literal whose nearest binary64 value is not finite is rejected.
        if (!Number.isFinite(e.value)) {
          return this.err('OAR-EXPR-21', e.text, e.offset, `double literal ${e.text} is not a finite binary64 value`);
        }
        return { k: 'lit', ty: 'double', offset: e.offset, value: e.value };
      case 'string':
        return { k: 'lit', ty: 'string', offset: e.offset, value: e.value };
      case 'list':
        return this.list(e);
      case 'ident':
        return this.ident(e.name, e.offset);
      case 'call':
        return this.call(e.callee, e.args, e.offset);
      case 'index':
        return this.index(e);
      case 'unary':
        return this.unary(e);
      case 'binary':
        return this.binary(e);
      case 'ternary':
        return this.ternary(e);
    }
  }

  /** [OAR-EXPR-21] `list<string>` when every member is a string, `list<map>` when every member is a map. */
  private list(e: Extract<Expr, { type: 'list' }>): Out {
    if (e.elements.length === 0) {
      return this.err('OAR-EXPR-21', '[]', e.offset, 'the empty list literal [] is rejected: its type cannot be inferred');
    }
    const items = e.elements.map((x) => this.check(x));
    if (items.some((x) => x === ERR)) return ERR;
    const typed = items as TExpr[];
    if (typed.every((x) => x.ty === 'string')) return { k: 'list', ty: 'list<string>', offset: e.offset, items: typed };
    if (typed.every((x) => x.ty === 'map')) return { k: 'list', ty: 'list<map>', offset: e.offset, items: typed };
    const types = [...new Set(typed.map((x) => x.ty))].join(', ');
    return this.err('OAR-EXPR-21', '[', e.offset, `a list literal [ … ] must have all string or all map members (found ${types}); no other list type exists`);
  }

  private ident(name: string, offset: number): Out {
    const sym = this.symbols.lookup(name);
    if (sym === undefined) return this.unknown(name, offset);
    if (sym.kind === 'function') {
      return this.err('OAR-FACT-3', name, offset, `'${name}' is an observation function; call it as ${name}(…)`);
    }
    this.refs.push({ sym, offset });
    return { k: 'fact', ty: sym.type, offset, sym };
  }

  private unknown(name: string, offset: number, call = false): typeof ERR {
    // [OAR-FACT-3], [OAR-EXPR-7]: `null` is nothing but an unknown identifier.
    const dot = name.indexOf('.');
    const headName = name.slice(0, dot);
    const head = dot === -1 ? undefined : this.symbols.lookup(headName);
    const hint = head ? ` (there is no field selection: '${headName}' is a declared ${head.kind === 'fact' ? 'fact' : 'function'}, '${name}' is not)` : '';
    // `tool_args.path` means the argument `path`: offer the typed reader that reads it.
    const reader = head?.name === 'tool_args' && this.symbols.lookup('tool_arg_string')?.kind === 'function' ? `tool_arg_string(${JSON.stringify(name.slice(dot + 1))})` : undefined;
    return this.err('OAR-FACT-3', name, offset, `unknown identifier '${name}': not a declared fact or observation function${hint}`, reader ?? (head ? undefined : this.suggest(name, call)));
  }

  private call(name: string, args: readonly Expr[], offset: number): Out {
    if (BUILTINS.has(name)) return this.builtin(name, args, offset);
    const sym = this.symbols.lookup(name);
    if (sym === undefined) {
      // Own property only: `constructor(s)` or `toString(s)` must not find Object.prototype's
      // members and be reported under a function instead of a clause ([OAR-FACT-3]).
      const clause = Object.hasOwn(NOT_BUILTINS, name) ? NOT_BUILTINS[name] : undefined;
      if (clause) {
        return this.err(clause, name, offset, `'${name}' is not a built-in: the language has exactly size, starts_with, ends_with and contains`);
      }
      const member = name.lastIndexOf('.');
      if (member > 0 && this.symbols.lookup(name.slice(0, member))) {
        return this.err('OAR-EXPR-2', name, offset, `'${name}(…)' is a member call, which the language does not have; built-ins are called as functions, e.g. starts_with(s, p)`);
      }
      return this.unknown(name, offset, true);
    }
    if (sym.kind === 'fact') return this.err('OAR-FACT-3', name, offset, `'${name}' is a fact, not a function`);
    if (args.length !== 1) {
      return this.err('OAR-FACT-27', name, offset, `'${name}' takes exactly one argument, got ${args.length}`);
    }
    const argExpr = args[0] as Expr;
    // [OAR-FIRE-11] the counter readers take only a string literal naming a loaded rule.
    if (COUNTER_READERS.has(name) && argExpr.type !== 'string') {
      return this.err('OAR-FIRE-11', name, argExpr.offset, `the argument of ${name} must be a string literal naming a rule`);
    }
    this.refs.push({ sym, offset });
    if (COUNTER_READERS.has(name) && argExpr.type === 'string') this.counterReads.push({ fn: name, name: argExpr.value, offset: argExpr.offset });
    const arg = this.check(argExpr);
    if (arg === ERR) return ERR;
    if (arg.ty !== sym.param) {
      return this.err('OAR-FACT-4', name, argExpr.offset, `'${name}' takes ${sym.param}, got ${arg.ty}`);
    }
    const target = argExpr.type === 'string' && COUNTER_READERS.has(name) ? argExpr.value : undefined;
    return target === undefined
      ? { k: 'call', ty: sym.result, offset, sym, arg }
      : { k: 'call', ty: sym.result, offset, sym, arg, target };
  }

  private builtin(name: string, args: readonly Expr[], offset: number): Out {
    const want = name === 'size' ? 1 : 2;
    if (args.length !== want) {
      return this.err('OAR-EXPR-16', name, offset, `${name} takes ${plural(want, 'argument')}, got ${args.length}`);
    }
    const typed = args.map((a) => this.check(a));
    if (typed.some((x) => x === ERR)) return ERR;
    const [a, b] = typed as TExpr[];
    if (name === 'size') {
      const x = a as TExpr;
      const of = x.ty === 'string' ? 'string' : x.ty === 'list<string>' || x.ty === 'list<map>' ? 'list' : isMapType(x.ty) ? 'map' : undefined;
      if (!of) return this.err('OAR-EXPR-16', 'size', offset, `size takes a string, list or map, got ${x.ty}`);
      return { k: 'size', ty: 'int', offset, of, arg: x };
    }
    if (a!.ty !== 'string' || b!.ty !== 'string') {
      return this.err('OAR-EXPR-16', name, offset, `${name} takes (string, string), got (${a!.ty}, ${b!.ty})`);
    }
    return { k: 'strfn', ty: 'bool', offset, fn: name as 'starts_with' | 'ends_with' | 'contains', s: a!, t: b! };
  }

  /** [OAR-EXPR-13], [OAR-EXPR-19] */
  private index(e: Extract<Expr, { type: 'index' }>): Out {
    const object = this.check(e.object);
    const index = this.check(e.index);
    if (object === ERR || index === ERR) return ERR;
    // The diagnostic names what was indexed ([OAR-CONF-30]): the fact, or the bracket when the
    // indexed value is itself an expression.
    const subject = e.object.type === 'ident' ? e.object.name : undefined;
    if (object.ty === 'map') {
      const what = subject === undefined ? 'a map' : `'${subject}' is a map and`;
      const rewrite = subject === 'tool_args' && e.index.type === 'string' ? `, e.g. tool_arg_string(${JSON.stringify(e.index.value)})` : '';
      return this.err('OAR-EXPR-19', subject ?? '[', e.offset, `${what} cannot be indexed: its members have no declared type; use \`in\`, size(), or a typed observation function${rewrite}`);
    }
    if (object.ty === 'map<string,string>' && index.ty === 'string') {
      return { k: 'index', ty: 'string', offset: e.offset, of: 'map', object, index };
    }
    if ((object.ty === 'list<string>' || object.ty === 'list<map>') && index.ty === 'int') {
      return { k: 'index', ty: object.ty === 'list<string>' ? 'string' : 'map', offset: e.offset, of: 'list', object, index };
    }
    return this.err('OAR-EXPR-13', subject ?? '[', e.offset, `cannot index ${subject === undefined ? object.ty : `'${subject}' (${object.ty})`} with ${index.ty}`);
  }

  private unary(e: Extract<Expr, { type: 'unary' }>): Out {
    // Fold `-9223372036854775808`: the only way to write the least int ([OAR-EXPR-21]).
    if (e.op === '-' && e.operand.type === 'int' && e.operand.negated) {
      const v = -e.operand.value;
      if (v < INT64_MIN) return this.err('OAR-EXPR-21', e.operand.value.toString(), e.operand.offset, `integer literal ${e.operand.value} does not fit in a 64-bit int`);
      return { k: 'lit', ty: 'int', offset: e.offset, value: v };
    }
    const operand = this.check(e.operand);
    if (operand === ERR) return ERR;
    if (e.op === '!') {
      if (operand.ty !== 'bool') return this.err('OAR-EXPR-8', '!', e.offset, `'!' takes bool, got ${operand.ty}`);
      return { k: 'not', ty: 'bool', offset: e.offset, operand };
    }
    if (operand.ty !== 'int' && operand.ty !== 'double') {
      return this.err('OAR-EXPR-9', '-', e.offset, `unary '-' takes int or double, got ${operand.ty}`);
    }
    return { k: 'neg', ty: operand.ty, offset: e.offset, operand };
  }

  private binary(e: Extract<Expr, { type: 'binary' }>): Out {
    const left = this.check(e.left);
    const right = this.check(e.right);
    if (left === ERR || right === ERR) return ERR;
    const l = left.ty;
    const r = right.ty;
    const offset = e.opOffset;
    const op = e.op;
    switch (op) {
      case '&&':
      case '||':
        if (l !== 'bool' || r !== 'bool') return this.err('OAR-EXPR-8', op, offset, `'${op}' takes two bool, got ${l} and ${r}`);
        return { k: op === '&&' ? 'and' : 'or', ty: 'bool', offset: e.offset, left, right };
      case '+':
      case '-':
      case '*':
      case '/':
      case '%': {
        // [OAR-EXPR-9] two int or two double; `%` two int; `+` also two string.
        const ok = (l === r && (l === 'int' || (l === 'double' && op !== '%') || (l === 'string' && op === '+')));
        if (!ok) return this.err('OAR-EXPR-9', op, offset, `'${op}' cannot take ${l} and ${r}`);
        return { k: 'arith', ty: l, offset: e.offset, op, left, right };
      }
      case '<':
      case '<=':
      case '>':
      case '>=': {
        // [OAR-EXPR-10] two int, two double, one of each, or two string.
        const mode = numericMode(l, r) ?? (l === 'string' && r === 'string' ? 'string' : undefined);
        if (!mode) return this.err('OAR-EXPR-10', op, offset, `'${op}' cannot compare ${l} with ${r}`);
        return { k: 'cmp', ty: 'bool', offset: e.offset, op, mode, left, right };
      }
      case '==':
      case '!=': {
        // [OAR-EXPR-11] same type or int/double; [OAR-EXPR-21] aggregates are rejected.
        if (!isScalar(l) || !isScalar(r)) {
          if (l === r) return this.err('OAR-EXPR-21', op, offset, `'${op}' on two ${l} values is rejected: aggregates cannot be compared`);
          return this.err('OAR-EXPR-11', op, offset, `'${op}' cannot compare ${l} with ${r}`);
        }
        const mode: CmpMode | undefined = l === r ? (l as CmpMode) : numericMode(l, r);
        if (!mode) return this.err('OAR-EXPR-11', op, offset, `'${op}' cannot compare ${l} with ${r}`);
        return { k: 'cmp', ty: 'bool', offset: e.offset, op, mode, left, right };
      }
      case 'in': {
        // [OAR-EXPR-12] string in list<string>, or string in a map (key presence).
        if (l === 'string' && r === 'list<string>') return { k: 'in', ty: 'bool', offset: e.offset, of: 'list', left, right };
        if (l === 'string' && isMapType(r)) return { k: 'in', ty: 'bool', offset: e.offset, of: 'map', left, right };
        return this.err('OAR-EXPR-12', 'in', offset, `'in' takes a string and a list<string> or map, got ${l} and ${r}`);
      }
    }
  }

  private ternary(e: Extract<Expr, { type: 'ternary' }>): Out {
    const test = this.check(e.test);
    const then = this.check(e.consequent);
    const otherwise = this.check(e.alternate);
    if (test === ERR || then === ERR || otherwise === ERR) return ERR;
    if (test.ty !== 'bool') return this.err('OAR-EXPR-8', '?', e.question, `the ternary condition (before '?') must be bool, got ${test.ty}`);
    if (then.ty !== otherwise.ty) {
      return this.err('OAR-EXPR-8', ':', e.colon, `the ternary branches (either side of ':') must have the same type, got ${then.ty} and ${otherwise.ty}`);
    }
    return { k: 'cond', ty: then.ty, offset: e.offset, test, then, else: otherwise };
  }
}

function numericMode(l: ExprType, r: ExprType): CmpMode | undefined {
  if (l === 'int' && r === 'int') return 'int';
  if (l === 'double' && r === 'double') return 'double';
  if (l === 'int' && r === 'double') return 'int_double';
  if (l === 'double' && r === 'int') return 'double_int';
  return undefined;
}
