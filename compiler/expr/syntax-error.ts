/**
 * A condition the grammar of A.1 cannot derive, or one beyond the engine's limits. It names the
 * offending construct and its code-point offset ([OAR-EXPR-1]).
 */
export class ExprSyntaxError {
  constructor(
    /** The offending construct, as written or as a short name (`comment`, `line break`). */
    readonly construct: string,
    /** Code-point offset in the condition source. */
    readonly offset: number,
    readonly message: string,
    readonly clause: string,
  ) {}
}
