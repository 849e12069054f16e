/**
 * The syntax tree of a condition (Appendix A.1), exactly as parsed: parentheses are gone, nothing
 * is folded. Offsets are code-point offsets into the source, so an error names the same position
 * on every engine whatever its string encoding ([OAR-EXPR-1]).
 */

export type BinaryOp =
  | '||' | '&&'
  | '==' | '!=' | '<' | '<=' | '>' | '>=' | 'in'
  | '+' | '-' | '*' | '/' | '%';

export type UnaryOp = '!' | '-';

interface Node {
  /** Code-point offset of the node's first token. */
  readonly offset: number;
}

export interface BoolLiteral extends Node {
  readonly type: 'bool';
  readonly value: boolean;
}
export interface IntLiteral extends Node {
  readonly type: 'int';
  /** Exact magnitude; range is checked by the type checker ([OAR-EXPR-21]). */
  readonly value: bigint;
  /** True when this literal is the immediate operand of unary minus ([OAR-EXPR-21]). */
  readonly negated: boolean;
}
export interface DoubleLiteral extends Node {
  readonly type: 'double';
  readonly value: number;
  readonly text: string;
}
export interface StringLiteral extends Node {
  readonly type: 'string';
  readonly value: string;
}
export interface ListLiteral extends Node {
  readonly type: 'list';
  readonly elements: readonly Expr[];
}
export interface Identifier extends Node {
  readonly type: 'ident';
  readonly name: string;
}
export interface Call extends Node {
  readonly type: 'call';
  readonly callee: string;
  readonly args: readonly Expr[];
}
export interface Index extends Node {
  readonly type: 'index';
  readonly object: Expr;
  readonly index: Expr;
}
export interface Unary extends Node {
  readonly type: 'unary';
  readonly op: UnaryOp;
  readonly operand: Expr;
}
export interface Binary extends Node {
  readonly type: 'binary';
  readonly op: BinaryOp;
  /** Where the operator itself is: type errors name the operator and point at it. */
  readonly opOffset: number;
  readonly left: Expr;
  readonly right: Expr;
}
export interface Ternary extends Node {
  readonly type: 'ternary';
  /** Where `?` and `:` are. */
  readonly question: number;
  readonly colon: number;
  readonly test: Expr;
  readonly consequent: Expr;
  readonly alternate: Expr;
}

export type Expr =
  | BoolLiteral | IntLiteral | DoubleLiteral | StringLiteral | ListLiteral
  | Identifier | Call | Index | Unary | Binary | Ternary;

/**
 * Node count per [OAR-EXPR-20]: one per literal, identifier, call, index, unary, binary and
 * ternary operation; a list literal counts one plus its members; parentheses count nothing. The
 * parser counts as it builds (so it can stop early); this is the same count over a finished tree.
 */
export function countNodes(e: Expr): number {
  switch (e.type) {
    case 'bool':
    case 'int':
    case 'double':
    case 'string':
    case 'ident':
      return 1;
    case 'list':
      return 1 + e.elements.reduce((n, x) => n + countNodes(x), 0);
    case 'call':
      return 1 + e.args.reduce((n, x) => n + countNodes(x), 0);
    case 'index':
      return 1 + countNodes(e.object) + countNodes(e.index);
    case 'unary':
      return 1 + countNodes(e.operand);
    case 'binary':
      return 1 + countNodes(e.left) + countNodes(e.right);
    case 'ternary':
      return 1 + countNodes(e.test) + countNodes(e.consequent) + countNodes(e.alternate);
  }
}
