/**
 * What `decide()` returns for one anchor occurrence ([OAR-EVAL-8], [OAR-OPS-9], [OAR-OPS-23]).
 */
import type { SkippedSpan } from './transform.js';
import type { Effect, SideEffect } from './bundle.js';
import type { CounterValues } from './counters.js';
import type { RaiseCode } from './raise.js';

export type DecisionEffect = 'block' | 'transform' | 'nudge' | 'warn' | 'none';

/** [OAR-OPS-9] the outcome of one selected rule. */
export type Outcome =
  | 'fired' | 'passed' | 'errored' | 'suppressed'
  | 'monitored_fired' | 'monitored_passed' | 'monitored_errored';

export interface TraceEntry {
  rule: string;
  outcome: Outcome;
  /** Why an `errored` / `monitored_errored` rule could not be evaluated ([OAR-OPS-3]). */
  error?: { code: RaiseCode | 'side_effect_failed'; clause: string; message: string };
}

export interface Advisory {
  code: string;
  rule: string;
  copy: Record<string, string>;
}

export interface DecisionTransform {
  rule: string;
  action: 'redact' | 'replace' | 'annotate';
  target: string;
  replacement: string;
}

export interface AppliedSideEffect {
  rule: string;
  action: SideEffect;
}

/** [OAR-FIRE-7] a `publish_event` record. */
export interface EventRecord {
  rule: string;
  anchor: string;
  effect: Effect;
}

export interface Decision {
  /** The effect the occurrence resolved to ([OAR-EVAL-6]). */
  decision: DecisionEffect;
  /** Bare id and qualified identifier of the rule the decision names ([OAR-EVAL-8], [OAR-EVAL-19]). */
  code: string | null;
  rule: string | null;
  /** Rendered copy of that rule; null when the decision is `none` ([OAR-COPY-1], [OAR-COPY-7]). */
  copy: Record<string, string> | null;
  advisories: Advisory[];
  /** The accumulated transforms; empty unless the decision is `transform` ([OAR-OPS-15], [OAR-OPS-17]). */
  transforms: DecisionTransform[];
  /** The content after the transforms, when the occurrence carried content ([OAR-OPS-16]). */
  content?: string;
  skippedTransforms: SkippedSpan[];
  /** The applied-rules trace, in evaluation order ([OAR-OPS-9], [OAR-OPS-10]). */
  applied: TraceEntry[];
  /** Side-effects applied, in application order ([OAR-FIRE-8]). */
  onFire: AppliedSideEffect[];
  events: EventRecord[];
  /** Counters changed at this occurrence, by `<qid>` or `<qid>#<scope>` ([OAR-CONF-33]). */
  counters: Record<string, CounterValues>;
}
