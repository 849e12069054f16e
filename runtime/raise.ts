/**
 * A run-time raise: the typed value a condition produces when it cannot be evaluated
 * ([OAR-OPS-3]). The engine routes every raise to the rule's `on_error`; nothing here is a crash.
 *
 * Deliberately not an `Error` subclass: raises are ordinary control flow for a rule engine and must
 * not pay for a captured stack trace.
 */
export type RaiseCode =
  | 'absent_key' // [OAR-EXPR-13] a map<string,string> indexed by a key it does not carry
  | 'index_out_of_range' // [OAR-EXPR-13], [OAR-EXPR-21] out-of-range or negative list index
  | 'division_by_zero' // [OAR-EXPR-14]
  | 'non_finite' // [OAR-EXPR-14] a double operation produced an infinity or NaN
  | 'overflow' // [OAR-EXPR-15] int64 overflow
  | 'wrong_type' // [OAR-FACT-26] a produced value does not have its declared type
  | 'provider_failure'; // [OAR-OPS-3] a fact provider or detector failed

export const RAISE_CLAUSE: Readonly<Record<RaiseCode, string>> = {
  absent_key: 'OAR-EXPR-13',
  index_out_of_range: 'OAR-EXPR-13',
  division_by_zero: 'OAR-EXPR-14',
  non_finite: 'OAR-EXPR-14',
  overflow: 'OAR-EXPR-15',
  wrong_type: 'OAR-FACT-26',
  provider_failure: 'OAR-OPS-3',
};

export class Raise {
  readonly clause: string;
  /** A brand, so a raise is told from a host value without running host code (see `isRaise`). */
  readonly #raise = true;
  constructor(
    readonly code: RaiseCode,
    readonly message: string,
  ) {
    this.clause = RAISE_CLAUSE[code];
  }
  toString(): string {
    return `${this.message} [${this.clause}]`;
  }

  /** `isRaise` (a static member, so it can test the private brand). */
  static is(x: unknown): x is Raise {
    return typeof x === 'object' && x !== null && #raise in x && x.#raise;
  }
}

/**
 * Is `x` a raise? Unlike `instanceof`, which runs a Proxy's `getPrototypeOf` trap, a brand check
 * runs no host code: a host may throw anything, and telling what it threw must not throw again.
 */
export function isRaise(x: unknown): x is Raise {
  return Raise.is(x);
}
