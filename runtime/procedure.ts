/**
 * What a bundle's per-anchor decision procedures call (compiler/emit/procedure.ts): the shared
 * pieces a specialised procedure does not inline — fact-reader context, detectors, flow windows,
 * transform targets, side-effects through the counter store and the event sink, transforms, the
 * changed counters. The procedure itself selects, evaluates in its precomputed order, suppresses,
 * short-circuits, resolves precedence and builds the trace and the decision.
 *
 * A procedure covers the common path only. Anything rarer — a condition, selector, detector, copy
 * or counter scope that raises ([OAR-OPS-3]), a monitor rule that raises, a bucket whose order
 * depends on the selection — makes it give up by throwing `FALLBACK` (or a raise) *before any
 * side-effect is applied*; the engine then decides the occurrence on its generic path with the same
 * fact reader (cached facts and failures, [OAR-FACT-11]), the same detector results (`detected`)
 * and the same counter snapshot (nothing was written), so the decision is exactly the generic one.
 * Side-effects are applied by the procedure only where they cannot fail: the engine's own
 * in-memory store, and events only when no sink is configured ([OAR-FIRE-9] failures need the
 * generic `failLate`).
 */
import type { BundleRule } from './bundle.js';
import type { CounterAction } from './counters.js';
import type { AppliedSideEffect, Decision, EventRecord } from './decision.js';
import { askDetector, type Detector } from './detectors.js';
import { flowMatches, readWindow } from './flow.js';
import type { Occurrence, OccurrenceFacts } from './occurrence.js';
import { counterOps, type CounterCell, type OccurrenceCounters } from './occurrence-counters.js';
import { isRaise, type Raise } from './raise.js';
import { applyTransformsInto, readSpans, type AccumulatedTransform, type Span } from './transform.js';

/** Thrown by a procedure (through its context) to hand the occurrence to the generic engine. */
export const FALLBACK: unique symbol = Symbol('oarc.procedure.fallback');

/** A per-anchor decision procedure as a bundle carries it. */
export type Procedure = (p: ProcedureRun, f: OccurrenceFacts) => Decision | undefined;

/** What the engine derives once per rule that a procedure needs (engine.ts `Rule`). */
export interface ProcedureRule {
  readonly b: BundleRule;
  readonly qid: string;
  readonly scope: number;
  readonly detector?: Detector;
  readonly targetSlot: number;
  readonly fireSteps: readonly ('publish_event' | readonly CounterAction[])[];
}

/**
 * The detector results of one occurrence, by rule: a detector is asked once ([OAR-FACT-11]), by
 * whichever path evaluates its rule first — the procedure, or the generic engine after a fallback.
 *
 * Each entry carries the occurrence it belongs to, and a new occurrence moves that mark and drops
 * the values the last one recorded (what a detector saw may be a secret it matched): no
 * `Map.clear()` per occurrence, which allocates a fresh table and was a fifth of a decision's time
 * on a pack whose detectors run at every occurrence. There is one entry per detector rule.
 */
export class Detections {
  private occurrence = 0;
  private readonly byRule = new Map<BundleRule, { at: number; v: Readonly<Record<string, unknown>> | Raise | undefined }>();
  /** The entries this occurrence recorded, to drop their values when the next one starts. */
  private readonly recorded: { v: unknown }[] = [];

  get(r: BundleRule): Readonly<Record<string, unknown>> | Raise | undefined {
    const e = this.byRule.get(r);
    return e !== undefined && e.at === this.occurrence ? e.v : undefined;
  }

  set(r: BundleRule, v: Readonly<Record<string, unknown>> | Raise): void {
    let e = this.byRule.get(r);
    if (e === undefined) this.byRule.set(r, (e = { at: this.occurrence, v }));
    else {
      e.at = this.occurrence;
      e.v = v;
    }
    this.recorded.push(e);
  }

  /** Start the next occurrence: every entry recorded so far is now from an earlier one. */
  clear(): void {
    this.occurrence++;
    const rec = this.recorded;
    if (rec.length === 0) return;
    for (let i = 0; i < rec.length; i++) (rec[i] as { v: unknown }).v = undefined;
    rec.length = 0;
  }
}

/** The context object a procedure receives as `p`: one per engine, reset per occurrence. */
export class ProcedureRun {
  private occ: Occurrence = { anchor: '' };
  private anchorValue = '';
  /** The occurrence's explicit activity window, as the host gave it (read at the first flow rule). */
  private explicit: unknown = undefined;
  /** The activity window the flow rules read, or why it cannot be read; undefined until read. */
  private window: readonly string[] | Raise | undefined = undefined;
  private hasSink = false;
  /**
   * Has this occurrence's procedure applied a side-effect? From then on it cannot hand over (the
   * generic path would apply it again): whatever it throws is what the generic path would throw.
   */
  applied = false;
  /** Per bundle rule index: its counter cell and its transform spans at this occurrence. */
  private readonly cells: (CounterCell | undefined)[] = [];
  private readonly spans: (readonly Span[] | undefined)[] = [];
  private readonly overlays: (Readonly<Record<string, unknown>> | null)[] = [];
  /** The transforms of this occurrence, accumulated in evaluation order ([OAR-OPS-15]); reused. */
  private readonly list: AccumulatedTransform[] = [];
  private listed = 0;

  constructor(
    private readonly rules: readonly ProcedureRule[],
    private readonly facts: OccurrenceFacts,
    private readonly counters: OccurrenceCounters,
    readonly detected: Detections,
    private readonly activity: (session: string) => readonly string[],
  ) {}

  start(occ: Occurrence, session: string, anchorValue: string, hasSink: boolean): void {
    this.occ = occ;
    this.anchorValue = anchorValue;
    this.hasSink = hasSink;
    this.applied = false;
    // As the generic engine does for an anchor with rules: the session's own window is looked up
    // (which marks the session used, for the memory bound) unless the host gave one.
    const explicit = occ.recentActivity;
    this.explicit = explicit;
    this.window = explicit === undefined ? this.activity(session) : undefined;
    this.listed = 0;
  }

  /** Point the reader at rule `i` ([OAR-FIRE-3] its own counters; no detector facts). */
  at(i: number): void {
    const r = this.rules[i] as ProcedureRule;
    const f = this.facts;
    f.rule = r.qid;
    f.ruleScope = r.scope;
    f.overlay = null;
  }

  /** Point the reader at detector rule `i` with what its detector produced (copy, target). */
  cx(i: number): void {
    this.at(i);
    this.facts.overlay = this.overlays[i] ?? null;
  }

  /**
   * [OAR-SEL-1]–[OAR-SEL-7] for the clauses of rule `i` the procedure could not decide statically.
   * A clause whose fact cannot be read leaves attribution to the generic engine.
   */
  sel(i: number): boolean {
    const f = this.facts;
    let out = true;
    let failed = false;
    for (const clause of (this.rules[i] as ProcedureRule).b.selector) {
      let v: unknown;
      try {
        v = f.fact(clause.slot);
      } catch {
        failed = true;
        continue;
      }
      if (typeof v === 'string' ? !clause.values.includes(v) : !(v as string[]).some((m) => clause.values.includes(m))) {
        out = false;
        break;
      }
    }
    // [OAR-SEL-4] an unreadable clause matters only when every other clause matched.
    if (failed && out) throw FALLBACK;
    return out;
  }

  /**
   * [OAR-FACT-12] does rule `i`'s flow occur in the session's recent steps? An explicit window
   * that cannot be read fails every flow rule ([OAR-OPS-3]): the generic engine routes that.
   */
  flow(i: number): boolean {
    let window = this.window;
    if (window === undefined) window = this.window = readWindow(this.explicit);
    if (isRaise(window)) throw FALLBACK;
    return flowMatches((this.rules[i] as ProcedureRule).b.flow as readonly string[], window);
  }

  /** Run rule `i`'s detector (once per occurrence) and point the reader at its facts; true. */
  det(i: number): true {
    const r = this.rules[i] as ProcedureRule;
    this.at(i);
    let produced = this.detected.get(r.b);
    if (produced === undefined) {
      produced = askDetector(r.detector as Detector, r.b.detector as string, r.qid, this.anchorValue, this.occ, this.facts);
      this.detected.set(r.b, produced);
    }
    if (isRaise(produced)) throw FALLBACK;
    this.overlays[i] = this.facts.overlay = produced;
    return true;
  }

  /** [OAR-OPS-19] read the spans of rule `i`'s transform target, when it fired. */
  sp(i: number): void {
    const r = this.rules[i] as ProcedureRule;
    if (r.detector === undefined) this.at(i);
    this.spans[i] = readSpans(this.facts.fact(r.targetSlot) as unknown[], r.b.transform?.targetName ?? 'target');
  }

  /**
   * Before any side-effect: the counter cell of fired rule `i` (its scope read, [OAR-FIRE-10]),
   * and whether its events could fail. Either problem hands over to the generic engine.
   */
  pre(i: number): void {
    const r = this.rules[i] as ProcedureRule;
    for (const step of r.fireSteps) {
      if (step === 'publish_event') {
        if (this.hasSink) throw FALLBACK;
        continue;
      }
      let cell: CounterCell;
      if (r.scope < 0) cell = this.counters.cell(r.qid, undefined);
      else {
        this.cx(i);
        cell = this.counters.cell(r.qid, this.facts.scopeValue(r.scope));
      }
      // A write the store would refuse (the session at its bound of counters): on_error's path.
      if (this.counters.writeRefusal(cell) !== undefined) throw FALLBACK;
      this.cells[i] = cell;
    }
  }

  /** [OAR-FIRE-8] apply fired rule `i`'s `on_fire` in the order listed (cannot fail: see above). */
  fire(i: number, onFire: AppliedSideEffect[], events: EventRecord[]): void {
    const r = this.rules[i] as ProcedureRule;
    this.applied = true;
    for (const step of r.fireSteps) {
      if (step === 'publish_event') {
        events.push({ rule: r.qid, anchor: this.anchorValue, effect: r.b.effect });
        onFire.push({ rule: r.qid, action: step });
        continue;
      }
      const c = this.cells[i] as CounterCell;
      this.counters.apply(c, counterOps(c, step));
      for (const action of step) onFire.push({ rule: r.qid, action });
    }
  }

  /** [OAR-OPS-15] accumulate fired transform rule `i` into `d`, in evaluation order. */
  tf(i: number, d: Decision): void {
    const r = this.rules[i] as ProcedureRule;
    const t = r.b.transform as NonNullable<BundleRule['transform']>;
    d.transforms.push({ rule: r.qid, action: t.action, target: t.targetName, replacement: t.replacement });
    const entry: AccumulatedTransform = { rule: r.qid, action: t.action, replacement: t.replacement, target: t.target === 'content' ? 'content' : (this.spans[i] ?? []) };
    this.list[this.listed++] = entry;
  }

  /** [OAR-EVAL-12] the counters this occurrence changed. */
  changed(): Decision['counters'] {
    return this.counters.changed();
  }

  /** The content delivered ([OAR-CONF-34], [OAR-OPS-16], [OAR-OPS-17]); the decision, done. */
  end(d: Decision): Decision {
    const content = this.occ.content;
    if (content === undefined) return d;
    if (d.decision === 'transform') {
      this.list.length = this.listed;
      d.content = applyTransformsInto(content, this.list, d.skippedTransforms, this.facts.contentLength(content));
    } else d.content = content;
    return d;
  }
}
