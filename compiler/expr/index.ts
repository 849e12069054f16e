/**
 * The condition language end to end: parse → check → count → compile or interpret.
 */
import { generate } from 'astring';
import type * as ES from 'estree';
import type { SymbolTable } from '../../runtime/types.js';
import type { FactReader } from '../../runtime/facts.js';
import { BUNDLE_HELPERS, type BundleHelper } from '../../runtime/helpers.js';
import type { Expr } from './ast.js';
import { countNodes } from './ast.js';
import { parseCondition, DEFAULT_MAX_NODES } from './parser.js';
import { ExprSyntaxError } from './syntax-error.js';
import { checkCondition, checkExpression, type CounterRead, type SymbolRef } from './checker.js';
import type { TExpr } from './typed.js';
import { EmitScope, emitConditionFunction } from '../emit/condition.js';
import { verifyGenerated } from '../emit/verify.js';

export { interpret, type EvalResult } from './interpreter.js';
export type { TExpr } from './typed.js';
export type { Expr } from './ast.js';
export type { CheckError, CounterRead, SymbolRef } from './checker.js';
export { DEFAULT_MAX_NODES, MIN_MAX_NODES, MAX_MAX_NODES } from './parser.js';

/** A problem with a condition: a syntax error, a limit, or a type error — each names a token. */
export interface ConditionError {
  readonly clause: string;
  readonly message: string;
  readonly token: string;
  /** Code-point offset in the condition source. */
  readonly offset: number;
  /** What to write instead, when one name is close enough to be the one meant. */
  readonly suggestion?: string;
}

export interface CheckedCondition {
  readonly source: string;
  readonly ast: Expr;
  readonly typed: TExpr;
  /** Node count per [OAR-EXPR-20]. */
  readonly nodes: number;
}

export interface ConditionOptions {
  /** The engine's declared node limit ([OAR-EXPR-17]). */
  maxNodes?: number;
  /** Check as a rule condition (must be `bool`, [OAR-FACT-4]); default true. */
  requireBool?: boolean;
}

/** What a condition names, found whether or not it checks: see `CheckResult`. */
interface Named {
  readonly refs: readonly SymbolRef[];
  readonly counterReads: readonly CounterRead[];
}

export type CheckOutcome = ({ ok: true; condition: CheckedCondition } | { ok: false; errors: ConditionError[] }) & Named;

/** Parse and type-check a condition against the symbol environment. Never throws on bad input. */
export function checkConditionSource(source: string, symbols: SymbolTable, opts: ConditionOptions = {}): CheckOutcome {
  let ast: Expr;
  try {
    ast = parseCondition(source, { maxNodes: opts.maxNodes ?? DEFAULT_MAX_NODES });
  } catch (e) {
    if (e instanceof ExprSyntaxError) {
      return { ok: false, errors: [{ clause: e.clause, message: e.message, token: e.construct, offset: e.offset }], refs: [], counterReads: [] };
    }
    throw e;
  }
  const r = opts.requireBool === false ? checkExpression(ast, symbols) : checkCondition(ast, symbols);
  const named = { refs: r.refs, counterReads: r.counterReads };
  if (!r.expr) return { ok: false, errors: r.errors.map((x) => ({ ...x })), ...named };
  return { ok: true, condition: { source, ast, typed: r.expr, nodes: countNodes(ast) }, ...named };
}

export type ConditionFn = (reader: FactReader) => unknown;

/**
 * Print one condition as a standalone script body: hoisted constants, then
 * `return function (f) { … }`. The runtime helpers it uses are its free names.
 */
export function printCondition(typed: TExpr): { code: string; helpers: BundleHelper[] } {
  const scope = new EmitScope();
  const fnExpr = emitConditionFunction(typed, scope);
  const program: ES.Program = {
    type: 'Program',
    sourceType: 'script',
    body: [...scope.constants, { type: 'ReturnStatement', argument: fnExpr }],
  };
  return { code: generate(program), helpers: [...scope.helpers].sort() };
}

/**
 * The in-process path: compile a checked condition into a closure now. Used by tests and by hosts
 * that load packs at run time; precompiled bundles never use `new Function` (they are modules).
 */
export function loadCondition(typed: TExpr): ConditionFn {
  const { code, helpers } = printCondition(typed);
  verifyGenerated(code, new Set(helpers));
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const factory = new Function(...helpers, code) as (...h: unknown[]) => ConditionFn;
  return factory(...helpers.map((h) => BUNDLE_HELPERS[h]));
}
