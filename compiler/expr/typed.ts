/**
 * The typed tree the checker produces and both back ends consume: the interpreter walks it, the
 * emitter turns it into JavaScript. Every decision that depends on types (which arithmetic, which
 * comparison, which container) is made once, here, so the two back ends cannot disagree about it.
 */
import type { FactType, FactSymbol, FunctionSymbol } from '../../runtime/types.js';

export type ExprType = FactType;

interface Typed {
  readonly ty: ExprType;
  readonly offset: number;
}

export type TExpr =
  | (Typed & { k: 'lit'; value: boolean | bigint | number | string })
  | (Typed & { k: 'list'; items: readonly TExpr[] })
  | (Typed & { k: 'fact'; sym: FactSymbol })
  /** An observation function; `target` is the rule a `fire_count_of`/`breaker_count_of` names. */
  | (Typed & { k: 'call'; sym: FunctionSymbol; arg: TExpr; target?: string })
  | (Typed & { k: 'size'; of: 'string' | 'list' | 'map'; arg: TExpr })
  | (Typed & { k: 'strfn'; fn: 'starts_with' | 'ends_with' | 'contains'; s: TExpr; t: TExpr })
  | (Typed & { k: 'not'; operand: TExpr })
  | (Typed & { k: 'neg'; operand: TExpr })
  | (Typed & { k: 'and' | 'or'; left: TExpr; right: TExpr })
  /** `ty` is `int`, `double` or `string` (concatenation). */
  | (Typed & { k: 'arith'; op: '+' | '-' | '*' | '/' | '%'; left: TExpr; right: TExpr })
  | (Typed & { k: 'cmp'; op: CmpOp; mode: CmpMode; left: TExpr; right: TExpr })
  | (Typed & { k: 'in'; of: 'list' | 'map'; left: TExpr; right: TExpr })
  | (Typed & { k: 'index'; of: 'map' | 'list'; object: TExpr; index: TExpr })
  | (Typed & { k: 'cond'; test: TExpr; then: TExpr; else: TExpr });

export type CmpOp = '==' | '!=' | '<' | '<=' | '>' | '>=';

/**
 * How two operands compare: same-typed scalars, or an `int` promoted to `double` on the named
 * side ([OAR-EXPR-10], [OAR-EXPR-11]).
 */
export type CmpMode = 'bool' | 'int' | 'double' | 'string' | 'int_double' | 'double_int';
