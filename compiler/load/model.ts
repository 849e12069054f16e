/**
 * The checked rule: everything the loader proved about one rule document, in the form the emitter
 * and the engine consume. Names follow the spec's fields; every reference is resolved.
 */
import type { CheckedCondition } from '../expr/index.js';
import type { CopyMember, CopyProgram } from '../../runtime/copy.js';
import type { FactSymbol, SymbolEntry } from '../../runtime/types.js';
import type { SourceLocation } from '../diagnostics.js';

export type Kind = 'schema' | 'policy' | 'invariant' | 'detector';
export type Effect = 'block' | 'warn' | 'nudge' | 'allow' | 'transform';
export type Enforcement = 'enforce' | 'monitor' | 'off';
export type SideEffect = 'increment_counter' | 'reset_counter' | 'publish_event' | 'increment_breaker' | 'reset_breaker';
export type TransformAction = 'redact' | 'replace' | 'annotate';

/** [OAR-EVAL-1]: kinds evaluate in this order. */
export const KIND_RANK: Readonly<Record<Kind, number>> = { schema: 0, policy: 1, invariant: 2, detector: 3 };

export type OnError =
  | { readonly mode: 'fail_closed' }
  | { readonly mode: 'fail_open' }
  /** [OAR-OPS-5]: block carrying another loaded rule's identifiers. */
  | { readonly mode: 'substitute'; readonly rule: string; readonly id: string };

export interface SelectorClause {
  readonly fact: FactSymbol;
  /** The clause's list; empty means the rule is never selected ([OAR-SEL-6]). */
  readonly values: readonly string[];
}

export interface CheckedTransform {
  readonly action: TransformAction;
  /** Defaulted: `redact` without a replacement substitutes `[REDACTED]` ([OAR-OPS-13]). */
  readonly replacement: string;
  /** `content`, or the `list<map>` fact whose members are the spans ([OAR-OPS-14]). */
  readonly target: 'content' | FactSymbol;
}

export interface CheckedRule {
  /** The qualified identifier `<namespace>/<id>`, or the bare id without a namespace ([OAR-DOC-8]). */
  readonly qid: string;
  readonly id: string;
  readonly namespace?: string;
  readonly kind: Kind;
  readonly effect: Effect;
  /** As declared; configuration documents may change it ([OAR-CFG-3]). */
  readonly enforcement: Enforcement;
  readonly mandatory: boolean;
  /** The anchor as written in the document. */
  readonly anchor: string;
  /** The host-local anchor the rule binds to, after [OAR-PROF-4] resolution. */
  readonly localAnchor: string;
  /** True when `anchor` is a core anchor (portability, [OAR-PROF-6]). */
  readonly coreAnchor: boolean;
  readonly selector: readonly SelectorClause[];
  readonly when?: CheckedCondition;
  readonly flow?: readonly string[];
  readonly onError: OnError;
  readonly onFire: readonly SideEffect[];
  /** Resolved qualified identifiers this rule suppresses ([OAR-EVAL-13]). */
  readonly overrides: readonly string[];
  readonly requires: { readonly profiles: readonly string[]; readonly facts: readonly string[] };
  readonly transform?: CheckedTransform;
  /** The `detector://` reference of a `kind: detector` rule ([OAR-DOC-23]). */
  readonly detector?: string;
  readonly copy: Readonly<Partial<Record<CopyMember, CopyProgram>>>;
  readonly counterScope?: FactSymbol;
  /** Qualified identifiers read by `fire_count_of` / `breaker_count_of` ([OAR-FIRE-11]). */
  readonly counterReads: readonly string[];
  /** Every symbol the rule references from any field ([OAR-FACT-11], [OAR-FACT-20]). */
  readonly references: readonly SymbolEntry[];
  readonly source: SourceLocation;
}
