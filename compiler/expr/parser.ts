/**
 * Recursive-descent parser for exactly the grammar of Appendix A.1 ([OAR-EXPR-1]). Each method is
 * one production. Precedence and associativity come from the grammar ([OAR-EXPR-4]); in particular
 * a relation admits one relational operator, and `unary` admits one prefix operator, so `a < b < c`
 * and `!!a` are rejected rather than grouped.
 *
 * Limits: nodes are counted as they are built ([OAR-EXPR-20]) and parsing stops as soon as the
 * count exceeds the limit ([OAR-EXPR-17]) — tokens are lexed as the parser asks for them, so a
 * 10 MB condition stops after a few thousand; nesting (parentheses, subscripts, arguments, ternary
 * branches) is bounded by MAX_NESTING, so a 100,000-deep condition ends in an error, never a stack
 * overflow. The length of the source is not limited here: only nodes may be ([OAR-EXPR-17]), and
 * a long string literal is one node (documents themselves are bounded in size by the loader).
 */
import type { BinaryOp, Expr } from './ast.js';
import { Lexer, type Token, type TokenKind } from './lexer.js';
import { ExprSyntaxError } from './syntax-error.js';

export interface ParseOptions {
  /** Maximum parse-tree nodes ([OAR-EXPR-17]); default 1024. */
  maxNodes?: number;
}

export const DEFAULT_MAX_NODES = 1024;
/** The floor every engine must accept ([OAR-EXPR-17]). */
export const MIN_MAX_NODES = 256;
/**
 * The largest limit this engine can be configured with. A left-deep chain of N nodes nests N/2
 * calls deep in the emitted code, and acorn (which verifies every emitted program, DESIGN rule 5)
 * runs out of stack near 1,300 nodes: 1024 is the largest power of two that compiles everywhere.
 */
export const MAX_MAX_NODES = 1024;
/**
 * Deepest nesting the parser descends into ([OAR-EXPR-17]). The grammar must be accepted within
 * the node limit ([OAR-EXPR-1]), and parentheses are not nodes ([OAR-EXPR-20]), so nesting is
 * bounded only to keep recursion on the stack: each level costs about ten frames of recursive
 * descent (and as many again in the checker, the emitter, astring and the acorn self-check), and
 * before V8 optimises the parser ~800 levels overflow Node's default stack. 512 levels leave
 * room for the caller's own frames; a condition that goes deeper is rejected with this error,
 * never a RangeError. 512 is twice the [OAR-EXPR-17] floor: no condition within the floor comes
 * near it, and a 512-node condition nested all the way down is accepted.
 */
export const MAX_NESTING = 512;

const RELOPS: ReadonlySet<TokenKind> = new Set(['==', '!=', '<', '<=', '>', '>=', 'in']);

export function parseCondition(src: string, opts: ParseOptions = {}): Expr {
  return new Parser(src, Math.min(opts.maxNodes ?? DEFAULT_MAX_NODES, MAX_MAX_NODES)).parse();
}

class Parser {
  private readonly lexer: Lexer;
  private tok: Token;
  private nodes = 0;
  private depth = 0;
  private readonly maxDepth: number;

  constructor(
    src: string,
    private readonly maxNodes: number,
  ) {
    this.maxDepth = MAX_NESTING;
    this.lexer = new Lexer(src);
    this.tok = this.lexer.next();
  }

  parse(): Expr {
    if (this.at() === 'eof') throw this.fail(this.tok, 'empty condition');
    const e = this.condition();
    if (this.at() !== 'eof') {
      if (RELOPS.has(this.at())) {
        throw this.fail(this.tok, `a relation admits at most one relational operator: '${this.tok.text}' cannot follow another comparison without parentheses`, 'OAR-EXPR-4');
      }
      throw this.fail(this.tok, `unexpected ${describe(this.tok)} after a complete condition`);
    }
    return e;
  }

  // --- productions ---------------------------------------------------------------------------

  private condition(): Expr {
    if (++this.depth > this.maxDepth) {
      throw this.fail(this.tok, `condition is nested more than ${this.maxDepth} levels deep`, 'OAR-EXPR-17');
    }
    const e = this.ternary();
    this.depth--;
    return e;
  }

  /** ternary = disjunction [ "?" ternary ":" ternary ] — right-associative. */
  private ternary(): Expr {
    const test = this.disjunction();
    if (this.at() !== '?') return test;
    const question = this.tok.offset;
    this.advance();
    const consequent = this.condition();
    const colon = this.tok.offset;
    this.expect(':');
    const alternate = this.condition();
    return this.node({ type: 'ternary', offset: test.offset, question, colon, test, consequent, alternate });
  }

  private disjunction(): Expr {
    let left = this.conjunction();
    while (this.at() === '||') {
      const at = this.tok.offset;
      this.advance();
      left = this.binary('||', at, left, this.conjunction());
    }
    return left;
  }

  private conjunction(): Expr {
    let left = this.relation();
    while (this.at() === '&&') {
      const at = this.tok.offset;
      this.advance();
      left = this.binary('&&', at, left, this.relation());
    }
    return left;
  }

  /** relation = addition [ relop addition ] — at most one relational operator ([OAR-EXPR-4]). */
  private relation(): Expr {
    const left = this.addition();
    if (!RELOPS.has(this.at())) return left;
    const op = this.at() as BinaryOp;
    const at = this.tok.offset;
    this.advance();
    const rel = this.binary(op, at, left, this.addition());
    if (RELOPS.has(this.at())) {
      throw this.fail(this.tok, `a relation admits at most one relational operator: '${this.tok.text}' cannot follow '${op}' (write parentheses)`, 'OAR-EXPR-4');
    }
    return rel;
  }

  private addition(): Expr {
    let left = this.multiplication();
    while (this.at() === '+' || this.at() === '-') {
      const op = this.at() as BinaryOp;
      const at = this.tok.offset;
      this.advance();
      left = this.binary(op, at, left, this.multiplication());
    }
    return left;
  }

  private multiplication(): Expr {
    let left = this.unary();
    while (this.at() === '*' || this.at() === '/' || this.at() === '%') {
      const op = this.at() as BinaryOp;
      const at = this.tok.offset;
      this.advance();
      left = this.binary(op, at, left, this.unary());
    }
    return left;
  }

  /** unary = [ "!" | "-" ] postfix — one prefix operator at most. */
  private unary(): Expr {
    const t = this.tok;
    if (t.kind !== '!' && t.kind !== '-') return this.postfix();
    this.advance();
    if (this.at() === '!' || this.at() === '-') {
      throw this.fail(this.tok, `'${t.text}${this.tok.text}': a unary operator cannot apply directly to another (write '${t.text}(${this.tok.text}…)')`);
    }
    // The magnitude 2^63 is admitted only as the immediate operand of unary minus ([OAR-EXPR-21]).
    const negatedLiteral = t.kind === '-' && this.at() === 'int';
    const operand = this.postfix(negatedLiteral);
    return this.node({ type: 'unary', offset: t.offset, op: t.kind, operand });
  }

  /** postfix = primary { "[" condition "]" } */
  private postfix(negatedLiteral = false): Expr {
    let e = this.primary(negatedLiteral);
    while (this.at() === '[') {
      this.advance();
      const index = this.condition();
      this.expect(']');
      e = this.node({ type: 'index', offset: e.offset, object: e, index });
    }
    return e;
  }

  /** primary = literal | call | identifier | "(" condition ")" */
  private primary(negatedLiteral: boolean): Expr {
    const t = this.tok;
    switch (t.kind) {
      case 'true':
      case 'false':
        this.advance();
        return this.node({ type: 'bool', offset: t.offset, value: t.kind === 'true' });
      case 'int': {
        this.advance();
        // Immediate operand only: `-9223372036854775808[0]` is not a negated literal.
        const negated = negatedLiteral && this.at() !== '[';
        return this.node({ type: 'int', offset: t.offset, value: BigInt(t.text), negated });
      }
      case 'double':
        this.advance();
        return this.node({ type: 'double', offset: t.offset, value: Number(t.text), text: t.text });
      case 'string':
        this.advance();
        return this.node({ type: 'string', offset: t.offset, value: t.value as string });
      case '[': {
        this.advance();
        const elements = this.arguments(']');
        return this.node({ type: 'list', offset: t.offset, elements });
      }
      case '(': {
        this.advance();
        const e = this.condition();
        this.expect(')');
        return e;
      }
      case 'ident': {
        this.advance();
        if (this.at() !== '(') return this.node({ type: 'ident', offset: t.offset, name: t.text });
        this.advance();
        const args = this.arguments(')');
        return this.node({ type: 'call', offset: t.offset, callee: t.text, args });
      }
      default:
        throw this.fail(t, `expected an operand, found ${describe(t)}`);
    }
  }

  /** [ condition { "," condition } ] close — no trailing comma. */
  private arguments(close: ')' | ']'): Expr[] {
    const out: Expr[] = [];
    if (this.at() === close) {
      this.advance();
      return out;
    }
    for (;;) {
      out.push(this.condition());
      if (this.at() === ',') {
        this.advance();
        if (this.at() === close) throw this.fail(this.tok, `trailing ',' before '${close}'`);
        continue;
      }
      this.expect(close);
      return out;
    }
  }

  // --- helpers -------------------------------------------------------------------------------

  private binary(op: BinaryOp, opOffset: number, left: Expr, right: Expr): Expr {
    return this.node({ type: 'binary', offset: left.offset, opOffset, op, left, right });
  }

  private node<T extends Expr>(e: T): T {
    if (++this.nodes > this.maxNodes) {
      throw new ExprSyntaxError('condition', e.offset, `condition has more than ${this.maxNodes} nodes, the limit (expression_nodes_max)`, 'OAR-EXPR-17');
    }
    return e;
  }

  /** The current token's kind; a call, so TypeScript does not narrow it across `advance()`. */
  private at(): TokenKind {
    return this.tok.kind;
  }

  private advance(): void {
    this.tok = this.lexer.next();
  }

  private expect(kind: TokenKind): void {
    if (this.at() !== kind) {
      if (kind === ')' || kind === ']' || kind === ':') {
        if (RELOPS.has(this.at())) {
          throw this.fail(this.tok, `a relation admits at most one relational operator: '${this.tok.text}' cannot follow another comparison`, 'OAR-EXPR-4');
        }
      }
      throw this.fail(this.tok, `expected '${kind}', found ${describe(this.tok)}`);
    }
    this.advance();
  }

  private fail(t: Token, message: string, clause = 'OAR-EXPR-1'): ExprSyntaxError {
    return new ExprSyntaxError(t.kind === 'eof' ? 'end of condition' : t.text, t.offset, message, clause);
  }
}

function describe(t: Token): string {
  if (t.kind === 'eof') return 'end of condition';
  if (t.kind === 'ident') return `identifier '${t.text}'`;
  if (t.kind === 'string') return `string ${t.text}`;
  return `'${t.text}'`;
}
