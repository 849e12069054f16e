/**
 * The engine: `createEngine(bundle, options).decide(occurrence)` evaluates one anchor occurrence
 * against a compiled bundle — section 4 (evaluation, suppression), section 6 (side-effects),
 * section 7 (operational semantics, transforms) and Appendix C (copy) of the spec.
 *
 * The steps, in order:
 *   1. select the rules bound to the occurrence's host-local anchor whose selectors match
 *      ([OAR-SEL-7], [OAR-CONF-8]); rules whose enforcement is `off` are never candidates
 *      ([OAR-EVAL-11]);
 *   2. order them by kind and qualified identifier, amended so suppressors come first
 *      ([OAR-EVAL-1], [OAR-EVAL-18]);
 *   3. evaluate each: `flow` before `when` ([OAR-EVAL-3]), the detector of a detector rule, the
 *      condition; apply suppression and withdrawal ([OAR-EVAL-14]); stop at the first enforced
 *      block or at an `on_error` block ([OAR-EVAL-4], [OAR-OPS-3], [OAR-OPS-5]);
 *   4. resolve the decision by precedence and render its copy ([OAR-EVAL-6], [OAR-EVAL-19],
 *      [OAR-EVAL-20], [OAR-COPY-1]);
 *   5. apply side-effects of enforced rules that fired, in order ([OAR-EVAL-12], [OAR-FIRE-8]) —
 *      after every condition has been evaluated, so all of them saw one counter snapshot
 *      ([OAR-FIRE-6]);
 *   6. apply accumulated transforms unless the decision is block ([OAR-OPS-15] to [OAR-OPS-17]);
 *   7. record the admitted tool step ([OAR-PROF-9]).
 *
 * A failure anywhere a rule is evaluated is routed to that rule's `on_error` — one sink for every
 * failure ([OAR-OPS-3]): provider, detector, raise, wrong type, side-effect, copy. A failure found
 * after the rule fired (its copy in step 4, a side-effect in step 5) means it did not fire after
 * all: evaluation is re-run from its place with it failing there (`failLate`), reading the same
 * facts, detector results and counter snapshot.
 */
import { checkBundle, type Bundle, type BundleRule } from './bundle.js';
import { MemoryCounterStore, counterKeyString, counterName, type CounterKey, type CounterOp, type CounterStore, type CounterValues } from './counters.js';
import { SnapshotStore, type AsyncCounterStore } from './async-counters.js';
import { renderCopyObject } from './copy.js';
import { RESERVED_DETECTORS, type Detector } from './detectors.js';
import type { Advisory, AppliedSideEffect, Decision, DecisionEffect, EventRecord, Outcome, TraceEntry } from './decision.js';
import { OccurrenceFacts, type CounterContext, type Occurrence } from './occurrence.js';
import { Raise } from './raise.js';
import { applyTransforms, readSpans, type AccumulatedTransform, type Span } from './transform.js';

export interface EventSink {
  /** Emit one `publish_event` record ([OAR-FIRE-7]); throw if the stream refuses it ([OAR-FIRE-9]). */
  publish(event: EventRecord): void;
}

export interface EngineOptions {
  counters?: CounterStore;
  /** The store `decideAsync` reads and writes (e.g. `RedisCounterStore` from `oarc/redis`). */
  asyncCounters?: AsyncCounterStore;
  events?: EventSink;
  /** Detector implementations by `detector://` reference; the three reserved ones are built in. */
  detectors?: Readonly<Record<string, Detector>>;
}

export interface Engine {
  readonly bundle: Bundle;
  decide(occurrence: Occurrence): Decision;
  /**
   * Decide against a counter store behind a network (a store shared by replicas): one batched
   * read of every counter the selected rules may observe, before evaluation, and one atomic
   * batched write of every increment and reset, after it — never a round trip per rule, and none
   * when no selected rule reads or writes a counter. Requires `asyncCounters` in the options.
   */
  decideAsync(occurrence: Occurrence): Promise<Decision>;
  /** The recent activity window of a session, oldest step first ([OAR-FACT-12], [OAR-PROF-9]). */
  activity(session: string): readonly string[];
}

const DEFAULT_SESSION = '';
const PRECEDENCE: readonly DecisionEffect[] = ['block', 'transform', 'nudge', 'warn'];

/** A rule as the engine holds it: the bundle's rule plus what is derived once at start-up. */
interface Rule {
  readonly b: BundleRule;
  readonly qid: string;
  readonly overrides: ReadonlySet<string>;
  readonly scope: number;
  readonly detector?: Detector;
  readonly targetSlot: number;
}

interface AnchorRules {
  readonly rules: readonly Rule[];
  /** Does any candidate override another candidate? Only then can [OAR-EVAL-18] reorder. */
  readonly reorders: boolean;
  /**
   * Rules indexed by the value of the string fact most of this anchor's selectors name (`tool`,
   * typically): for each value, the rules whose clause lists it plus the rules with no clause on
   * that fact, in evaluation order. A rule whose clause does not list the value cannot be
   * selected, so it is never looked at: the cost of unselected rules stays near zero.
   */
  readonly index?: SelectionIndex;
}

/**
 * `byValue` holds, per value, the rules whose clause on the indexed fact lists it; `without` the
 * rules with no clause on that fact. Both are in evaluation order; `pos` (a rule's place in the
 * anchor's list) merges them. Built in one pass, so start-up stays linear in the number of rules.
 */
interface SelectionIndex {
  readonly slot: number;
  readonly byValue: ReadonlyMap<string, readonly Rule[]>;
  readonly without: readonly Rule[];
  readonly pos: ReadonlyMap<Rule, number>;
}

const NO_RULES: readonly Rule[] = [];

/** Merge two lists of rules already in evaluation order into `out`. */
function mergeByPosition(a: readonly Rule[], b: readonly Rule[], pos: ReadonlyMap<Rule, number>, out: Rule[]): Rule[] {
  out.length = 0;
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    out.push((pos.get(a[i] as Rule) as number) < (pos.get(b[j] as Rule) as number) ? (a[i++] as Rule) : (b[j++] as Rule));
  }
  while (i < a.length) out.push(a[i++] as Rule);
  while (j < b.length) out.push(b[j++] as Rule);
  return out;
}

/** The selection index of an anchor's rules, when at least two of them name one string fact. */
function selectionIndex(rules: readonly Rule[], symbols: Bundle['symbols']): AnchorRules['index'] {
  const uses = new Map<number, number>();
  for (const r of rules) {
    for (const c of r.b.selector) {
      const s = symbols[c.slot];
      if (s?.kind === 'fact' && s.type === 'string') uses.set(c.slot, (uses.get(c.slot) ?? 0) + 1);
    }
  }
  let slot = -1;
  let best = 1;
  for (const [s, n] of uses) if (n > best || (n === best && slot >= 0 && s < slot)) [slot, best] = [s, n];
  if (slot < 0) return undefined;
  const byValue = new Map<string, Rule[]>();
  const without: Rule[] = [];
  const pos = new Map<Rule, number>();
  rules.forEach((r, i) => {
    pos.set(r, i);
    const clause = r.b.selector.find((c) => c.slot === slot);
    if (clause === undefined) {
      without.push(r);
      return;
    }
    for (const v of new Set(clause.values)) {
      const list = byValue.get(v);
      if (list === undefined) byValue.set(v, [r]);
      else list.push(r);
    }
  });
  return { slot, byValue, without, pos };
}

export function createEngine(bundle: Bundle, options: EngineOptions = {}): Engine {
  checkBundle(bundle);
  return new RuleEngine(bundle, options);
}

class RuleEngine implements Engine {
  private readonly counters: CounterStore;
  private readonly asyncCounters?: AsyncCounterStore;
  private readonly events?: EventSink;
  private readonly facts: OccurrenceFacts;
  private readonly byAnchor = new Map<string, AnchorRules>();
  private readonly byQid = new Map<string, Rule>();
  private readonly anchorValue = new Map<string, string>();
  private readonly scopeOf = new Map<string, number>();
  private readonly sessions = new Map<string, string[]>();
  /** Counter values as they were before this occurrence wrote them ([OAR-FIRE-6]), by store key. */
  readonly written = new Map<string, CounterValues>();
  private readonly preInvoke?: string;
  private readonly toolSlot: number;
  /** Scratch list for the selection index's merge; consumed before the next occurrence. */
  private readonly merged: Rule[] = [];
  /** The per-occurrence state and the fact reader's counter context, reused (see `Occ`). */
  private readonly occurrence: Occ;
  private readonly context: CounterContext;
  /** Names of declared facts (not functions): a function value under one is a lazy provider. */
  private readonly factNames: ReadonlySet<string>;

  constructor(
    readonly bundle: Bundle,
    options: EngineOptions,
  ) {
    this.counters = options.counters ?? new MemoryCounterStore();
    if (options.asyncCounters) this.asyncCounters = options.asyncCounters;
    if (options.events) this.events = options.events;
    this.facts = new OccurrenceFacts(bundle.symbols);
    this.occurrence = new Occ(this, this.facts);
    this.context = { store: this.counters, session: DEFAULT_SESSION, scopeOf: this.scopeOf, written: this.written };
    const detectors = { ...RESERVED_DETECTORS, ...options.detectors };
    for (const [core, local] of Object.entries(bundle.capability.coreAnchors)) this.anchorValue.set(local, core);
    for (const host of bundle.capability.hostAnchors) this.anchorValue.set(host, host);
    const pre = bundle.capability.coreAnchors['tool.pre_invoke'];
    if (pre !== undefined) this.preInvoke = pre;
    this.toolSlot = bundle.symbols.findIndex((s) => s.name === 'tool');
    this.factNames = new Set(bundle.symbols.filter((s) => s.kind === 'fact').map((s) => s.name));

    const grouped = new Map<string, Rule[]>();
    for (const b of bundle.rules) {
      let detector: Detector | undefined;
      if (b.detector !== undefined) {
        detector = detectors[b.detector];
        // A rule switched off is never evaluated ([OAR-EVAL-11]): an operator may disable a rule
        // whose detector this deployment does not have.
        if (detector === undefined && b.enforcement !== 'off') throw new Error(`oarc: rule ${b.qid} needs detector ${b.detector}, and no implementation is registered for it`);
      }
      const rule: Rule = {
        b,
        qid: b.qid,
        overrides: new Set(b.overrides),
        scope: b.counterScope ?? -1,
        targetSlot: b.transform && b.transform.target !== 'content' ? b.transform.target : -1,
        ...(detector ? { detector } : {}),
      };
      this.byQid.set(b.qid, rule);
      this.scopeOf.set(b.qid, rule.scope);
      if (b.enforcement === 'off') continue; // [OAR-EVAL-11] loaded, never selected
      // [OAR-SEL-6] a clause with an empty list matches nothing: never selected, and its facts
      // (or any other clause's) are never read — even an unreadable one cannot select it.
      if (b.selector.some((c) => c.values.length === 0)) continue;
      const list = grouped.get(b.anchor) ?? [];
      list.push(rule);
      grouped.set(b.anchor, list);
    }
    for (const [anchor, rules] of grouped) {
      const qids = new Set(rules.map((r) => r.qid));
      const index = selectionIndex(rules, bundle.symbols);
      this.byAnchor.set(anchor, { rules, reorders: rules.some((r) => r.b.overrides.some((t) => qids.has(t))), ...(index ? { index } : {}) });
    }
  }

  activity(session: string): readonly string[] {
    return this.sessions.get(session) ?? [];
  }

  decide(occ: Occurrence): Decision {
    const decision = this.run(occ, this.counters, this.events);
    this.recordActivity(occ, occ.session ?? DEFAULT_SESSION, decision.decision);
    return decision;
  }

  async decideAsync(input: Occurrence): Promise<Decision> {
    const store = this.asyncCounters;
    if (store === undefined) throw new Error('oarc: decideAsync needs an asyncCounters store in the engine options');
    // Planning, evaluation and a re-evaluation after a failed write each start from a fresh fact
    // cache: a lazy provider is still asked at most once for the occurrence ([OAR-FACT-11]).
    const occ = this.memoizeProviders(input);
    const session = occ.session ?? DEFAULT_SESSION;
    // One batched read of every counter the selected rules may observe ([OAR-FIRE-6]). A read that
    // fails leaves the snapshot empty: every rule that reads a counter then cannot be evaluated.
    const keys = this.plannedKeys(occ);
    let snapshot: SnapshotStore;
    try {
      snapshot = new SnapshotStore(keys, keys.length === 0 ? [] : await store.readMany(keys));
    } catch (e) {
      snapshot = new SnapshotStore([], [], `the counter store could not be read: ${e instanceof Error ? e.message : String(e)}`);
    }
    const published = new Set<string>();
    const sink = this.events;
    const recording: EventSink | undefined = sink && {
      publish: (event) => {
        sink.publish(event);
        published.add(event.rule);
      },
    };
    let decision = this.run(occ, snapshot, recording);
    // [OAR-PROF-9] the step is read while the fact reader still holds this occurrence: other
    // occurrences may be decided while the write below is in flight.
    let step = this.toolStep(occ);
    // One atomic batched write of the increments and resets, after the decision.
    if (snapshot.pending.length > 0) {
      try {
        await store.applyMany(snapshot.pending);
      } catch (e) {
        // [OAR-FIRE-9] the increments were not applied: every rule that declared one cannot be
        // evaluated. Decide again against a snapshot that refuses writes, so each takes its
        // on_error; events already published for a rule are not published twice.
        const refusing = new SnapshotStore(keys, snapshot.initial, undefined, `the counter store refused the write: ${e instanceof Error ? e.message : String(e)}`);
        decision = this.run(occ, refusing, sink && { publish: (event) => void (published.has(event.rule) || sink.publish(event)) });
        step = this.toolStep(occ);
      }
    }
    if (step !== undefined && decision.decision !== 'block') this.pushStep(session, step);
    return decision;
  }

  /**
   * The occurrence with each lazy fact provider wrapped to run at most once (its value or its
   * failure kept); the occurrence itself when it has none.
   */
  private memoizeProviders(occ: Occurrence): Occurrence {
    const facts = occ.facts;
    if (facts === undefined) return occ;
    let copy: Record<string, unknown> | undefined;
    for (const name of Object.keys(facts)) {
      const provider = facts[name];
      if (typeof provider !== 'function' || !this.factNames.has(name)) continue;
      copy ??= { ...facts };
      let state = 0;
      let kept: unknown;
      copy[name] = () => {
        if (state === 1) return kept;
        if (state === 2) throw kept;
        try {
          kept = (provider as () => unknown)();
          state = 1;
        } catch (e) {
          kept = e;
          state = 2;
          throw e;
        }
        return kept;
      };
    }
    return copy === undefined ? occ : { ...occ, facts: copy };
  }

  /** The tool step `occ` would record ([OAR-PROF-9]), read from the current fact reader. */
  private toolStep(occ: Occurrence): string | undefined {
    if (this.bundle.capability.activityWindow === 0 || occ.anchor !== this.preInvoke) return undefined;
    let tool: unknown = occ.toolCall?.name;
    if (this.toolSlot >= 0) {
      this.facts.overlay = null; // [OAR-FACT-11] not a detector's facts
      try {
        tool = this.facts.fact(this.toolSlot);
      } catch {
        return undefined;
      }
    }
    return typeof tool === 'string' && tool !== '' ? tool : undefined;
  }

  private pushStep(session: string, tool: string): void {
    const window = this.bundle.capability.activityWindow;
    let steps = this.sessions.get(session);
    if (steps === undefined) this.sessions.set(session, (steps = []));
    steps.push(tool);
    if (steps.length > window) steps.splice(0, steps.length - window);
  }

  /** Evaluate one occurrence against `store` (reads, then writes after the decision) and `sink`. */
  private run(occ: Occurrence, store: CounterStore, sink: EventSink | undefined): Decision {
    const session = occ.session ?? DEFAULT_SESSION;
    const anchorValue = this.anchorValue.get(occ.anchor) ?? occ.anchor;
    const facts = this.facts;
    if (this.written.size > 0) this.written.clear();
    const ctx = this.context;
    ctx.store = store;
    ctx.session = session;
    ctx.written = this.written;
    facts.reset(occ, anchorValue, ctx);
    const candidates = this.byAnchor.get(occ.anchor);
    const run = this.occurrence.start(occ, session, anchorValue, store, sink);
    if (candidates !== undefined) run.evaluate(this.order(this.select(candidates, run), candidates.reorders));
    return run.finish();
  }

  /**
   * The counters an occurrence may read: for every selected rule that reads its own counters or
   * declares a counter action, its own key; for every `fire_count_of` / `breaker_count_of` target,
   * the target's key under the target's own scope at this occurrence ([OAR-FIRE-11]); and the same
   * for a substitute whose copy an `on_error` block may render. A scope fact that cannot be read is
   * left out: the rule that needs it fails on that read, before it would reach the store.
   */
  private plannedKeys(occ: Occurrence): CounterKey[] {
    const candidates = this.byAnchor.get(occ.anchor);
    if (candidates === undefined) return [];
    const session = occ.session ?? DEFAULT_SESSION;
    const anchorValue = this.anchorValue.get(occ.anchor) ?? occ.anchor;
    const planning = new SnapshotStore([], []);
    this.facts.reset(occ, anchorValue, { store: planning, session, scopeOf: this.scopeOf });
    const probe = this.occurrence.start(occ, session, anchorValue, planning, undefined);
    const keys = new Map<string, CounterKey>();
    const add = (qid: string) => {
      const scope = this.scopeOf.get(qid) ?? -1;
      let key: CounterKey;
      if (scope < 0) key = { rule: qid, session };
      else {
        try {
          key = { rule: qid, session, scope: this.facts.fact(scope) as string };
        } catch {
          return;
        }
      }
      keys.set(counterKeyString(key), key);
    };
    for (const r of this.select(candidates, probe)) {
      if (r.b.readsCounters || r.b.onFire.some((a) => a !== 'publish_event')) add(r.qid);
      for (const t of r.b.counterReads) add(t);
      const sub = typeof r.b.onError === 'object' ? this.byQid.get(r.b.onError.rule) : undefined;
      if (sub !== undefined && sub.b.readsCounters) add(sub.qid);
    }
    return [...keys.values()];
  }

  /**
   * [OAR-SEL-1] to [OAR-SEL-7]. A selector fact that cannot be read fails the rule ([OAR-FACT-26])
   * — unless another clause definitely does not match: clauses are a conjunction of the members of
   * a JSON object, which has no order ([OAR-SEL-4]), so the outcome must not depend on which
   * clause was read first.
   */
  private select(anchor: AnchorRules, run: Occ): Rule[] {
    const facts = this.facts;
    const out: Rule[] = [];
    let candidates = anchor.rules;
    const index = anchor.index;
    if (index !== undefined) {
      // An unreadable index fact falls back to the full scan, so failures are attributed exactly
      // as the scan attributes them.
      try {
        const listed = index.byValue.get(facts.fact(index.slot) as string) ?? NO_RULES;
        candidates = listed.length === 0 ? index.without : index.without.length === 0 ? listed : mergeByPosition(listed, index.without, index.pos, this.merged);
      } catch {
        candidates = anchor.rules;
      }
    }
    for (const r of candidates) {
      let selected = true;
      let failure: Raise | undefined;
      for (const clause of r.b.selector) {
        let v: unknown;
        try {
          v = facts.fact(clause.slot);
        } catch (e) {
          failure ??= toRaise(e);
          continue;
        }
        // [OAR-SEL-2] a list<string> fact matches when any member is in the clause's list.
        if (typeof v === 'string' ? !clause.values.includes(v) : !(v as string[]).some((m) => clause.values.includes(m))) {
          selected = false;
          break;
        }
      }
      if (!selected) continue;
      if (failure !== undefined) run.selectorFailure(r, failure);
      out.push(r);
    }
    return out;
  }

  /**
   * [OAR-EVAL-18]: while any selected rule remains, take the first (in kind-then-identifier order)
   * none of whose remaining suppressors is still unevaluated.
   */
  private order(selected: Rule[], reorders: boolean): Rule[] {
    if (!reorders || selected.length < 2) return selected;
    const remaining = selected.slice();
    const out: Rule[] = [];
    while (remaining.length > 0) {
      let pick = 0;
      while (pick < remaining.length - 1) {
        const cand = remaining[pick] as Rule;
        if (!remaining.some((s) => s !== cand && s.overrides.has(cand.qid))) break;
        pick++;
      }
      out.push(remaining.splice(pick, 1)[0] as Rule);
    }
    return out;
  }

  /** [OAR-PROF-9]: a tool call admitted at `tool.pre_invoke` becomes a step, after its own rules ran. */
  private recordActivity(occ: Occurrence, session: string, decision: DecisionEffect): void {
    const window = this.bundle.capability.activityWindow;
    if (window === 0 || occ.anchor !== this.preInvoke || decision === 'block') return;
    let tool: unknown = occ.toolCall?.name;
    if (this.toolSlot >= 0) {
      // [OAR-FACT-11] the occurrence's own observation: the facts a detector produced for the
      // last rule presented are local to that rule and must not become the step.
      this.facts.overlay = null;
      try {
        tool = this.facts.fact(this.toolSlot);
      } catch {
        return; // a tool name that cannot be observed is no step
      }
    }
    if (typeof tool !== 'string' || tool === '') return;
    let steps = this.sessions.get(session);
    if (steps === undefined) this.sessions.set(session, (steps = []));
    steps.push(tool);
    if (steps.length > window) steps.splice(0, steps.length - window);
  }

  rule(qid: string): Rule | undefined {
    return this.byQid.get(qid);
  }

}

function toRaise(e: unknown): Raise {
  return e instanceof Raise ? e : new Raise('provider_failure', e instanceof Error ? e.message : String(e));
}

const EMPTY_ORDER: Rule[] = [];

/** Size a reused array to `n` entries, all `empty`. */
function reuse<T>(a: T[], n: number, empty: T): void {
  a.length = n;
  a.fill(empty);
}

/** The state of one occurrence being decided. */
class Occ {
  private order: Rule[] = EMPTY_ORDER;
  private outcome: Outcome[] = [];
  private errors: (Raise | undefined)[] = [];
  private overlays: (Readonly<Record<string, unknown>> | null)[] = [];
  private spans: (readonly Span[] | undefined)[] = [];
  /** What each detector rule's detector returned (or how it failed): it is asked once ([OAR-FACT-11]). */
  private detections: (Readonly<Record<string, unknown>> | Raise | undefined)[] = [];
  /**
   * Rules that fired and then could not be evaluated after all — their copy or a side-effect
   * failed ([OAR-FACT-26], [OAR-FIRE-9]) — by index: on a re-run they fail at their own place.
   */
  private readonly lateFailures = new Map<number, Raise>();
  private readonly selectorErrors = new Map<Rule, Raise>();
  /** Suppressed qualified identifier → index of the first rule that suppressed it. */
  private readonly suppressed = new Map<string, number>();
  /** Index just past the last rule reached; rules at or after it were never evaluated. */
  private reached = 0;
  /** Index of the rule whose failure produced an `on_error` block, or -1. */
  private errorAt = -1;
  private window: readonly string[] = [];

  private occ: Occurrence = { anchor: '' };
  private session = '';
  private anchorValue = '';
  private store: CounterStore = new MemoryCounterStore();
  private sink: EventSink | undefined = undefined;

  /**
   * One per engine, reused for every occurrence: deciding is synchronous from `start` to `finish`,
   * so the per-occurrence state can live in one set of arrays instead of being allocated anew
   * (`decideAsync` runs each of its synchronous stretches the same way).
   */
  constructor(
    private readonly engine: RuleEngine,
    private readonly facts: OccurrenceFacts,
  ) {}

  /** Forget the previous occurrence and start this one. */
  start(occ: Occurrence, session: string, anchorValue: string, store: CounterStore, sink: EventSink | undefined): this {
    this.occ = occ;
    this.session = session;
    this.anchorValue = anchorValue;
    this.store = store;
    this.sink = sink;
    this.order = EMPTY_ORDER;
    this.reached = 0;
    this.errorAt = -1;
    if (this.lateFailures.size > 0) this.lateFailures.clear();
    if (this.selectorErrors.size > 0) this.selectorErrors.clear();
    if (this.suppressed.size > 0) this.suppressed.clear();
    return this;
  }

  selectorFailure(r: Rule, raise: Raise): void {
    this.selectorErrors.set(r, raise);
  }

  evaluate(order: Rule[]): void {
    this.order = order;
    const n = order.length;
    reuse(this.outcome, n, undefined);
    reuse(this.errors, n, undefined);
    reuse(this.overlays, n, null);
    reuse(this.spans, n, undefined);
    reuse(this.detections, n, undefined);
    this.window = this.occ.recentActivity ?? this.engine.activity(this.session);
    this.run(0);
  }

  /** Evaluate rules from `start` on, until the end, an enforced block, or an `on_error` block. */
  private run(start: number): void {
    const order = this.order;
    const n = order.length;
    const window = this.window;
    for (let k = start; k < n; k++) {
      this.reached = k + 1;
      const r = order[k] as Rule;
      if (this.suppressed.has(r.qid)) {
        this.outcome[k] = 'suppressed';
        continue;
      }
      const monitor = r.b.enforcement === 'monitor';
      const result = this.selectorErrors.get(r) ?? (this.lateFailures.size > 0 ? this.lateFailures.get(k) : undefined) ?? this.test(r, k, window);
      if (result instanceof Raise) {
        // [OAR-EVAL-10] a monitor rule that raises is recorded; its on_error is not applied.
        if (monitor) {
          this.outcome[k] = 'monitored_errored';
          this.errors[k] = result;
          continue;
        }
        if (this.fail(k, result)) return;
        continue;
      }
      if (monitor) {
        this.outcome[k] = result ? 'monitored_fired' : 'monitored_passed';
        continue;
      }
      if (!result) {
        this.outcome[k] = 'passed';
        continue;
      }
      // [OAR-FACT-11], [OAR-OPS-19]: a transform target is read when its rule fires; malformed
      // spans are a provider failure of this rule.
      if (r.targetSlot >= 0) {
        try {
          this.spans[k] = readSpans(this.facts.fact(r.targetSlot) as unknown[], r.b.transform?.targetName ?? 'target');
        } catch (e) {
          if (this.fail(k, toRaise(e))) return;
          continue;
        }
      }
      this.outcome[k] = 'fired';
      this.suppress(k);
      if (r.b.effect === 'block') return; // [OAR-EVAL-4]
    }
  }

  /** Did rule `r` fire? `flow` first, then its detector, then `when`. A failure is returned. */
  private test(r: Rule, k: number, window: readonly string[]): boolean | Raise {
    const f = this.facts;
    f.rule = r.qid;
    f.ruleScope = r.scope;
    f.overlay = null;
    // [OAR-EVAL-3] flow is tested before when, and when is not evaluated if flow did not match.
    if (r.b.flow !== undefined && !flowMatches(r.b.flow, window)) return false;
    if (r.detector !== undefined) {
      let produced = this.detections[k];
      if (produced === undefined) {
        try {
          produced = r.detector({ ref: r.b.detector as string, rule: r.qid, anchor: this.anchorValue, occurrence: this.occ, facts: f });
        } catch (e) {
          produced = new Raise('provider_failure', `detector ${r.b.detector} failed: ${e instanceof Error ? e.message : String(e)}`);
        }
        this.detections[k] = produced;
      }
      if (produced instanceof Raise) return produced;
      this.overlays[k] = f.overlay = produced;
    }
    if (r.b.when === undefined) return true;
    try {
      return r.b.when(f) === true;
    } catch (e) {
      return toRaise(e);
    }
  }

  /**
   * Rule `k` cannot be evaluated ([OAR-OPS-3]). Returns true when that ends the occurrence
   * (`fail_closed` or a substitution, [OAR-OPS-5]); `fail_open` records it and continues ([OAR-OPS-4]).
   */
  private fail(k: number, raise: Raise): boolean {
    this.outcome[k] = 'errored';
    this.errors[k] = raise;
    if ((this.order[k] as Rule).b.onError === 'fail_open') return false;
    this.errorAt = k;
    this.reached = k + 1;
    return true;
  }

  /**
   * Rule `k` fired, but its copy or one of its side-effects then failed ([OAR-FACT-26],
   * [OAR-FIRE-9]): it is a rule that cannot be evaluated, and so did not fire — it suppresses
   * nothing ([OAR-EVAL-14]) and, if it was the block that ended the occurrence, ends nothing.
   * Evaluation is re-run from its place with it failing there, exactly as if its failure had been
   * found while evaluating it. Conditions are side-effect free, facts and detector results are
   * kept for the occurrence, and counters are read from its snapshot ([OAR-FIRE-6]), so rules
   * before it are unaffected and rules after it decide as they would have.
   */
  private failLate(k: number, raise: Raise): void {
    this.lateFailures.set(k, raise);
    for (const [t, by] of this.suppressed) if (by >= k) this.suppressed.delete(t);
    this.errorAt = -1;
    this.run(k);
  }

  /** [OAR-EVAL-14] suppress what rule `k` overrides; withdraw what was already evaluated. */
  private suppress(k: number): void {
    const r = this.order[k] as Rule;
    if (r.overrides.size === 0) return;
    for (const t of r.overrides) if (!this.suppressed.has(t)) this.suppressed.set(t, k);
    for (let j = 0; j < k; j++) {
      if (r.overrides.has((this.order[j] as Rule).qid)) this.outcome[j] = 'suppressed';
    }
  }

  finish(): Decision {
    let resolved = this.resolve();
    const onFire: AppliedSideEffect[] = [];
    const events: EventRecord[] = [];
    const changed = new Map<string, CounterKey>();
    // [OAR-EVAL-12], [OAR-FIRE-2], [OAR-FIRE-8]: enforced rules that fired, in evaluation order.
    for (let k = 0; k < this.reached; k++) {
      if (this.outcome[k] !== 'fired') continue;
      if (this.errorAt >= 0 && k > this.errorAt) break;
      const r = this.order[k] as Rule;
      if (r.b.onFire.length === 0) continue;
      const failure = this.applySideEffects(r, k, onFire, events, changed);
      if (failure !== undefined) {
        this.failLate(k, failure);
        resolved = this.resolve();
      }
    }
    const counters: Decision['counters'] = {};
    for (const [name, key] of changed) counters[name] = { ...this.store.read(key) };

    const decision: Decision = {
      decision: resolved.effect,
      code: resolved.code,
      rule: resolved.rule,
      copy: resolved.copy,
      advisories: resolved.advisories,
      transforms: [],
      skippedTransforms: [],
      applied: this.trace(),
      onFire,
      events,
      counters,
    };
    // [OAR-OPS-17] a block discards the transforms: there is no content to deliver.
    if (resolved.effect === 'transform') this.transform(decision);
    else if (resolved.effect !== 'block' && this.occ.content !== undefined) decision.content = this.occ.content;
    return decision;
  }

  /**
   * Apply one rule's `on_fire` in the order listed ([OAR-FIRE-8]); a failure is returned
   * ([OAR-FIRE-9]). Counter writes are batched, but a batch is flushed before each event, so the
   * store and the stream see the actions in the listed order. An action is reported applied
   * (`onFire`, `events`, `counters`) only once it has been: a refused write is never reported.
   */
  private applySideEffects(r: Rule, k: number, onFire: AppliedSideEffect[], events: EventRecord[], changed: Map<string, CounterKey>): Raise | undefined {
    const ops: CounterOp[] = [];
    let key: CounterKey | undefined;
    const flush = () => {
      if (ops.length === 0) return;
      // [OAR-FIRE-6] keep the value this occurrence read, for anything evaluated or rendered after
      // this write (a decision resolved again, evaluation resumed after a failed block).
      const ks = counterKeyString(key as CounterKey);
      if (!this.engine.written.has(ks)) this.engine.written.set(ks, { ...this.store.read(key as CounterKey) });
      this.store.apply(ops);
      for (const op of ops) onFire.push({ rule: r.qid, action: op.action });
      ops.length = 0;
      changed.set(counterName(key as CounterKey), key as CounterKey);
    };
    try {
      for (const action of r.b.onFire) {
        if (action === 'publish_event') {
          flush();
          const event: EventRecord = { rule: r.qid, anchor: this.anchorValue, effect: r.b.effect };
          this.sink?.publish(event);
          events.push(event);
          onFire.push({ rule: r.qid, action });
        } else {
          if (key === undefined) key = this.counterKey(r, k);
          ops.push({ key, action });
        }
      }
      flush();
    } catch (e) {
      // A counter scope that cannot be read is the fact failure it is ([OAR-FACT-26]), not a store's.
      if (e instanceof Raise) return e;
      return new Raise('provider_failure', `side-effect of ${r.qid} could not be applied: ${e instanceof Error ? e.message : String(e)}`);
    }
    return undefined;
  }

  private counterKey(r: Rule, k: number): CounterKey {
    if (r.scope < 0) return { rule: r.qid, session: this.session };
    this.context(k);
    return { rule: r.qid, session: this.session, scope: this.facts.fact(r.scope) as string };
  }

  /** Point the fact reader at rule `k` (its counters, its detector's facts) for copy and keys. */
  private context(k: number): void {
    const r = this.order[k] as Rule;
    this.facts.rule = r.qid;
    this.facts.ruleScope = r.scope;
    this.facts.overlay = this.overlays[k] ?? null;
  }

  /**
   * Resolve the decision ([OAR-EVAL-6], [OAR-EVAL-19], [OAR-EVAL-20]) and render its copy. Copy is
   * read only for the rules the decision presents; if that read fails, the rule is one that cannot
   * be evaluated ([OAR-FACT-26]) and takes its `on_error`, and the decision is resolved again.
   */
  private resolve(): { effect: DecisionEffect; code: string | null; rule: string | null; copy: Record<string, string> | null; advisories: Advisory[] } {
    for (;;) {
      if (this.errorAt >= 0) return this.errorBlock();
      let effect: DecisionEffect = 'none';
      let first = -1;
      for (const e of PRECEDENCE) {
        first = this.firstFired(e);
        if (first >= 0) {
          effect = e;
          break;
        }
      }
      if (effect === 'none') return { effect, code: null, rule: null, copy: null, advisories: [] };
      const advisories: Advisory[] = [];
      let failed = false;
      const members = effect === 'nudge' || effect === 'warn' ? this.allFired(effect) : [first];
      for (const k of members) {
        const r = this.order[k] as Rule;
        let copy: Record<string, string>;
        try {
          this.context(k);
          copy = renderCopyObject(r.b.copy, this.facts);
        } catch (e) {
          this.failLate(k, toRaise(e));
          failed = true;
          break;
        }
        advisories.push({ code: r.b.id, rule: r.qid, copy });
      }
      if (failed) continue;
      const primary = advisories[0] as Advisory;
      return {
        effect,
        code: primary.code,
        rule: primary.rule,
        copy: primary.copy,
        advisories: effect === 'nudge' || effect === 'warn' ? advisories : [],
      };
    }
  }

  /** [OAR-OPS-3] / [OAR-OPS-5]: block with the failing rule's identifiers, or the substitute's. */
  private errorBlock(): { effect: DecisionEffect; code: string; rule: string; copy: Record<string, string>; advisories: Advisory[] } {
    const failing = this.order[this.errorAt] as Rule;
    const onError = failing.b.onError;
    const named = typeof onError === 'object' ? this.engine.rule(onError.rule) : failing;
    const code = typeof onError === 'object' ? onError.id : failing.b.id;
    const rule = typeof onError === 'object' ? onError.rule : failing.qid;
    // [OAR-COPY-11] if rendering this copy fails, the block keeps its identifiers and no copy.
    let copy: Record<string, string> = {};
    if (named !== undefined) {
      try {
        this.facts.rule = named.qid;
        this.facts.ruleScope = named.scope;
        this.facts.overlay = named === failing ? (this.overlays[this.errorAt] ?? null) : null;
        copy = renderCopyObject(named.b.copy, this.facts);
      } catch {
        copy = {};
      }
    }
    return { effect: 'block', code, rule, copy, advisories: [] };
  }

  private firstFired(effect: DecisionEffect): number {
    for (let k = 0; k < this.reached; k++) {
      if (this.outcome[k] === 'fired' && (this.order[k] as Rule).b.effect === effect) return k;
    }
    return -1;
  }

  private allFired(effect: DecisionEffect): number[] {
    const out: number[] = [];
    for (let k = 0; k < this.reached; k++) {
      if (this.outcome[k] === 'fired' && (this.order[k] as Rule).b.effect === effect) out.push(k);
    }
    return out;
  }

  /**
   * [OAR-OPS-9], [OAR-OPS-10]: every rule reached, in evaluation order; a rule never reached is
   * omitted unless it was suppressed.
   */
  private trace(): TraceEntry[] {
    const out: TraceEntry[] = [];
    for (let k = 0; k < this.order.length; k++) {
      const r = this.order[k] as Rule;
      if (k >= this.reached) {
        // A suppressor that ends up past the rule that ended the occurrence (its copy or a
        // side-effect failed later, [OAR-OPS-3]) counts as never reached: so does its suppression.
        const by = this.suppressed.get(r.qid);
        if (by !== undefined && by < this.reached) out.push({ rule: r.qid, outcome: 'suppressed' });
        continue;
      }
      const outcome = this.outcome[k] as Outcome;
      const err = this.errors[k];
      out.push(err !== undefined && (outcome === 'errored' || outcome === 'monitored_errored')
        ? { rule: r.qid, outcome, error: { code: err.code, clause: err.clause, message: err.message } }
        : { rule: r.qid, outcome });
    }
    return out;
  }

  /** [OAR-OPS-15], [OAR-OPS-16]: accumulate in evaluation order and apply to the content. */
  private transform(d: Decision): void {
    const list: AccumulatedTransform[] = [];
    for (let k = 0; k < this.reached; k++) {
      const r = this.order[k] as Rule;
      const t = r.b.transform;
      if (this.outcome[k] !== 'fired' || t === undefined) continue;
      d.transforms.push({ rule: r.qid, action: t.action, target: t.targetName, replacement: t.replacement });
      list.push({ rule: r.qid, action: t.action, replacement: t.replacement, target: t.target === 'content' ? 'content' : (this.spans[k] ?? []) });
    }
    if (this.occ.content === undefined) return;
    const result = applyTransforms(this.occ.content, list);
    d.content = result.content;
    d.skippedTransforms = result.skipped;
  }
}

/** [OAR-FACT-12]: the steps appear in order as a (not necessarily contiguous) subsequence. */
export function flowMatches(flow: readonly string[], window: readonly string[]): boolean {
  let i = 0;
  for (const step of window) {
    if (step === flow[i]) i++;
    if (i === flow.length) return true;
  }
  return i === flow.length;
}
