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
import { checkBundle, type Bundle, type BundleRule, type BundleSymbol, type SideEffect } from './bundle.js';
import { MemoryCounterStore, checkedCounters, isMemoryStore, counterKeyString, counterName, type CounterAction, type CounterKey, type CounterStore, type CounterValues } from './counters.js';
import { SnapshotStore, checkedAsyncCounters, isVersioned, macrotask, type AsyncCounterStore, type Committed } from './async-counters.js';
import { EventLedger } from './event-ledger.js';
import { SessionQueue } from './session-queue.js';
import { SessionTable, type SessionBound } from './session-table.js';
import { askDetector, DETECTOR_BACKED_PROFILES, RESERVED_DETECTORS, type Detector } from './detectors.js';
import { HostInputError, OccurrenceCheck } from './host-input.js';
import type { Advisory, AppliedSideEffect, Decision, DecisionEffect, EventRecord, Outcome, TraceEntry } from './decision.js';
import { OccurrenceFacts, type Occurrence, type ProviderMemo } from './occurrence.js';
import { OccurrenceCounters, counterOps, type CounterCell } from './occurrence-counters.js';
import { Raise, isRaise } from './raise.js';
import { describeThrown, markHandled } from './thrown.js';
import { applyTransformsInto, readSpans, type AccumulatedTransform, type Span } from './transform.js';
import { AmendedOrder, indexSlot, type OrderNode } from './order.js';
import { Detections, ProcedureRun, type Procedure } from './procedure.js';
import { flowMatches, readWindow } from './flow.js';

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
  /**
   * How many sessions' in-memory state (activity windows, and the counters of the default store)
   * is kept, and for how long unused: defaults 250,000 sessions and 24 hours.
   */
  sessions?: SessionBound;
  /**
   * Decide through the bundle's per-anchor decision procedures where it has them (the default),
   * or `false`: always on the generic engine (the reference path the procedures are checked against).
   */
  procedures?: boolean;
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
  /**
   * The session has ended: forget its activity window and the counter keys cached for it, and
   * release its counters from a store that can (`forgetSession`: the in-memory store can; a shared
   * store's are the store's, expired by its TTL). Deciding for the session again starts it afresh.
   */
  endSession(session: string): void;
}

const DEFAULT_SESSION = '';
/** How often `decideAsync` reads and evaluates again when another replica wrote the session meanwhile. */
const MAX_ATTEMPTS = 16;
const NO_STEPS: readonly string[] = Object.freeze([]);
const PRECEDENCE: readonly DecisionEffect[] = ['block', 'transform', 'nudge', 'warn'];

/** A rule as the engine holds it: the bundle's rule plus what is derived once at start-up. */
interface Rule extends OrderNode {
  readonly b: BundleRule;
  readonly qid: string;
  readonly overrides: ReadonlySet<string>;
  readonly scope: number;
  readonly detector?: Detector;
  /**
   * For a detector rule: its reference and the slots of the facts its detector produces — the
   * detector-backed profiles' and those the registered detector lists ([OAR-COPY-11]).
   */
  readonly unobserved?: { readonly ref: string; readonly slots: Uint8Array };
  readonly targetSlot: number;
  /**
   * `on_fire` as the engine applies it ([OAR-FIRE-8]): each `publish_event`, and each run of
   * consecutive counter actions, which reaches the store as one batch.
   */
  readonly fireSteps: readonly ('publish_event' | readonly CounterAction[])[];
  /** The rules of its anchor that its `overrides` names (filled once the anchor's rules are known). */
  readonly targets: Rule[];
}

/**
 * The slots of what a detector produces ([OAR-COPY-11]): every fact of a detector-backed profile
 * ([OAR-OPS-22]) and every declared fact the registered detector lists in `produces`.
 */
function detectorProduces(symbols: readonly BundleSymbol[], detector: Detector | undefined): Uint8Array {
  const listed = new Set(detector?.produces ?? []);
  const slots = new Uint8Array(symbols.length);
  symbols.forEach((s, i) => {
    if (s.kind === 'fact' && (DETECTOR_BACKED_PROFILES.includes(s.tier) || listed.has(s.name))) slots[i] = 1;
  });
  return slots;
}

/**
 * What an event sink's `publish` returned. A Promise (an `async publish`, which TypeScript lets a
 * host pass for a `void` method) is a write whose outcome the engine never learns: reported as
 * published it could be a refused one, and a rejection nobody handles ends a Node process. It is
 * the stream failing to take the event ([OAR-FIRE-9]), as a counter store's Promise is.
 */
function published(result: unknown): void {
  if (typeof result !== 'object' || result === null || typeof (result as { then?: unknown }).then !== 'function') return;
  markHandled(result);
  throw new Error('the event sink\'s publish returned a Promise: publish is synchronous — a sink that writes asynchronously must queue the event and return, and take care of its own delivery');
}

/** Split `on_fire` into events and runs of consecutive counter actions. */
function fireSteps(onFire: readonly SideEffect[]): Rule['fireSteps'] {
  const steps: ('publish_event' | CounterAction[])[] = [];
  for (const action of onFire) {
    const last = steps[steps.length - 1];
    if (action === 'publish_event') steps.push(action);
    else if (last === undefined || last === 'publish_event') steps.push([action]);
    else last.push(action);
  }
  return steps;
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

/** What `decideAsync` reads before evaluating: the counters, and whether a selected rule has `flow`. */
interface Plan {
  readonly keys: CounterKey[];
  readonly flow: boolean;
}

/**
 * A list of rules reused by every occurrence: `items[0]` to `items[n - 1]` are current. The
 * backing array never shrinks — truncating a V8 array trims or drops its storage, and refilling it
 * would allocate again.
 */
class RuleList {
  readonly items: Rule[] = [];
  n = 0;

  clear(): this {
    this.n = 0;
    return this;
  }

  push(r: Rule): void {
    this.items[this.n++] = r;
  }
}

/** Merge two lists of rules already in evaluation order into `out`. */
function mergeByPosition(a: readonly Rule[], b: readonly Rule[], pos: ReadonlyMap<Rule, number>, out: RuleList): RuleList {
  out.clear();
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
  const slot = indexSlot(rules.map((r) => r.b), symbols);
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

/**
 * A store's optional `begin`/`end` around one decision (`session` undefined: the end). They are a
 * hint: one that throws changes nothing, as the reads and writes that follow report the store's
 * state themselves ([OAR-FIRE-9]) — so it can neither escape `decide` nor leave the engine busy.
 */
function bracket(store: CounterStore, session: string | undefined, at: number): void {
  try {
    if (session === undefined) store.end?.();
    else store.begin?.(session, at);
  } catch {
    // see above
  }
}

class RuleEngine implements Engine {
  private readonly store: CounterStore;
  private readonly asyncCounters?: AsyncCounterStore;
  private readonly events?: EventSink;
  private readonly facts: OccurrenceFacts;
  private readonly byAnchor = new Map<string, AnchorRules>();
  private readonly byQid = new Map<string, Rule>();
  private readonly anchorValue = new Map<string, string>();
  private readonly scopeOf = new Map<string, number>();
  /** Sessions' activity windows ([OAR-PROF-9]), bounded (`EngineOptions.sessions`). */
  private readonly sessions: SessionTable<string[]>;
  private readonly preInvoke?: string;
  private readonly toolSlot: number;
  /**
   * Scratch lists, reused by every occurrence (deciding is synchronous from selection to the
   * returned decision): the selection index's merge, the selected rules, and their order.
   */
  private readonly merged = new RuleList();
  private readonly selected = new RuleList();
  private readonly ordered = new RuleList();
  private readonly orderer = new AmendedOrder<Rule>();
  /** The per-occurrence state and the counters it reads and writes, reused (see `Occ`). */
  private readonly occurrence: Occ;
  readonly counters: OccurrenceCounters;
  private readonly inputCheck: OccurrenceCheck;
  /** Is an occurrence being evaluated? Deciding does not nest (`enter`). */
  private busy = false;
  /** When the decision under way started (the session table's clock): its session lookups' time. */
  private at = 0;
  /** `decideAsync` calls waiting for, or holding, their session's turn. */
  private readonly queue = new SessionQueue();
  /** The bundle's decision procedures by host-local anchor, when this engine uses them. */
  private readonly procedures = new Map<string, Procedure>();
  private readonly procedureRun: ProcedureRun;
  /** Detector results of the current occurrence, shared by the procedure and the generic path. */
  readonly detected = new Detections();
  /** Occurrences a procedure handed to the generic path (for tests: the common path must not). */
  procedureFallbacks = 0;

  constructor(
    readonly bundle: Bundle,
    options: EngineOptions,
  ) {
    // A host's store is checked ([OAR-FIRE-9]: a count it cannot give is a failure, never a wrong
    // count); the engine's own in-memory store is trusted and read directly.
    const counters = options.counters;
    this.store = counters === undefined ? new MemoryCounterStore(options.sessions) : isMemoryStore(counters) ? counters : checkedCounters(counters);
    this.sessions = new SessionTable(options.sessions);
    // Every shared store is checked: its values come from outside the process ([OAR-FIRE-9]).
    if (options.asyncCounters) this.asyncCounters = checkedAsyncCounters(options.asyncCounters);
    if (options.events) this.events = options.events;
    this.facts = new OccurrenceFacts(bundle.symbols);
    this.inputCheck = new OccurrenceCheck(bundle);
    this.occurrence = new Occ(this, this.facts);
    this.counters = new OccurrenceCounters(this.scopeOf, this.store);
    const detectors = { ...RESERVED_DETECTORS, ...options.detectors };
    for (const [core, local] of Object.entries(bundle.capability.coreAnchors)) this.anchorValue.set(local, core);
    for (const host of bundle.capability.hostAnchors) this.anchorValue.set(host, host);
    const pre = bundle.capability.coreAnchors['tool.pre_invoke'];
    if (pre !== undefined) this.preInvoke = pre;
    this.toolSlot = bundle.symbols.findIndex((s) => s.name === 'tool');

    const grouped = new Map<string, Rule[]>();
    const byIndex: Rule[] = [];
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
        fireSteps: fireSteps(b.onFire),
        targets: [],
        pending: false,
        pos: 0,
        indeg: 0,
        ...(detector ? { detector } : {}),
        ...(b.detector !== undefined ? { unobserved: { ref: b.detector, slots: detectorProduces(bundle.symbols, detector) } } : {}),
      };
      byIndex.push(rule);
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
      const here = new Map(rules.map((r) => [r.qid, r]));
      let reorders = false;
      for (const r of rules) {
        for (const t of r.overrides) {
          const target = here.get(t);
          if (target === undefined || target === r) continue;
          r.targets.push(target);
          reorders = true;
        }
      }
      const index = selectionIndex(rules, bundle.symbols);
      this.byAnchor.set(anchor, { rules, reorders, ...(index ? { index } : {}) });
    }
    this.procedureRun = new ProcedureRun(byIndex, this.facts, this.counters, this.detected, (s) => this.activity(s));
    // A procedure applies side-effects itself only where they cannot fail (runtime/procedure.ts):
    // with a host's own counter store, every occurrence takes the generic path.
    const ownStore = isMemoryStore(this.store);
    if (options.procedures !== false && ownStore && bundle.procedures !== undefined) {
      for (const [anchor, procedure] of Object.entries(bundle.procedures)) this.procedures.set(anchor, procedure);
    }
  }

  /**
   * A host's mistake in the occurrence is a thrown `HostInputError`, never a decision (see
   * host-input.ts). Anything else the check meets (a revoked Proxy as the occurrence) is left to
   * evaluation, which routes the failure to the consuming rule's `on_error` ([OAR-OPS-3]).
   */
  private checkInput(occ: Occurrence): void {
    try {
      this.inputCheck.check(occ);
    } catch (e) {
      if (e instanceof HostInputError) throw e;
    }
  }

  activity(session: string): readonly string[] {
    return this.sessions.get(session, this.busy ? this.at : this.sessions.clock()) ?? NO_STEPS;
  }

  endSession(session: string): void {
    this.sessions.delete(session);
    this.counters.forget(session);
    this.store.forgetSession?.(session);
  }

  decide(occ: Occurrence): Decision {
    this.checkInput(occ);
    this.enter();
    const store = this.store;
    try {
      bracket(store, occ.session ?? DEFAULT_SESSION, this.at);
      const decision = this.run(occ, store, this.events, undefined);
      // [OAR-PROF-9] a tool call admitted at `tool.pre_invoke` becomes a step, after its own rules ran.
      if (decision.decision !== 'block') {
        const step = this.toolStep(occ);
        if (step !== undefined) this.pushStep(occ.session ?? DEFAULT_SESSION, step);
      }
      return decision;
    } finally {
      this.busy = false;
      bracket(store, undefined, 0);
    }
  }

  /**
   * Deciding reuses one set of per-occurrence state (see `Occ`), so a decision cannot start while
   * another is being evaluated — as it would if a lazy provider, a detector, a counter store or an
   * event sink called `decide()`. That call is refused before it touches anything: the outer
   * decision sees the provider (or detector, store, sink) fail with this error, and routes it to
   * the rule's `on_error` like any other failure ([OAR-OPS-3]).
   */
  private enter(): void {
    if (this.busy) {
      throw new Error('oarc: decide() was called while this engine is evaluating another occurrence (from a fact provider, detector, counter store or event sink); decisions cannot nest — call decideAsync() to decide it after the current one, or use another engine');
    }
    this.busy = true;
    // One clock read per evaluation, for every session lookup it makes (counters, activity).
    this.at = this.sessions.clock();
  }

  decideAsync(occ: Occurrence): Promise<Decision> {
    const store = this.asyncCounters;
    if (store === undefined) return Promise.reject(new Error('oarc: decideAsync needs an asyncCounters store in the engine options'));
    try {
      this.checkInput(occ);
    } catch (e) {
      return Promise.reject(e);
    }
    // One session's decisions run one at a time, in call order, so that each observes the
    // counters (and activity) its predecessors left: N concurrent calls decide exactly as N
    // sequential ones would. A queued decision always starts from a later microtask, never inside
    // its caller, so calling decideAsync from a provider or detector is safe: it waits its turn.
    return this.queue.run(occ.session ?? DEFAULT_SESSION, () => this.decideShared(store, occ));
  }

  /**
   * One decision against a counter store behind a network ([OAR-FIRE-6]): plan, read once,
   * evaluate against the snapshot, write once, then publish the decision's events (EventLedger).
   * Against a versioned store the write is applied only if the session's counters are still those
   * read; if another replica moved them meanwhile, the occurrence is read and evaluated again (at
   * most `MAX_ATTEMPTS` times), so decisions across replicas are serialisable too. Lazy providers
   * are asked at most once across every evaluation ([OAR-FACT-11]): their results are kept in `memo`.
   */
  private async decideShared(store: AsyncCounterStore, occ: Occurrence): Promise<Decision> {
    const session = occ.session ?? DEFAULT_SESSION;
    const memo: ProviderMemo = new Map();
    this.enter();
    let plan: Plan;
    try {
      plan = this.plannedKeys(occ, memo);
    } finally {
      this.busy = false;
    }
    const keys = plan.keys;
    const versioned = isVersioned(store) ? store : undefined;
    // [OAR-PROF-9] a store that shares activity windows holds the session's steps for every
    // replica: read with the counters when a selected flow rule needs it, appended with the writes.
    const windowSize = this.bundle.capability.activityWindow;
    const shares = versioned?.sharesActivity === true && windowSize > 0;
    const readWindow = shares && plan.flow && occ.recentActivity === undefined ? windowSize : 0;
    // Events are recorded by each evaluation and published once its counter writes are in the
    // store (runtime/event-ledger.ts): an evaluation thrown away never told the stream anything.
    const ledger = this.events === undefined ? undefined : new EventLedger(this.events, published);
    for (let attempt = 1; ; attempt++) {
      // One batched read of every counter the selected rules may observe (and the shared window).
      // A read that fails leaves the snapshot empty: every rule that reads a counter then cannot
      // be evaluated.
      let initial: readonly CounterValues[] = [];
      let readFailure: string | undefined;
      let version = '';
      let window: readonly string[] | Raise | undefined;
      try {
        if (keys.length > 0 || readWindow > 0) {
          if (versioned !== undefined) {
            const read = await versioned.readVersioned(session, keys, readWindow);
            version = read.version;
            window = read.activity;
            initial = read.values;
          } else initial = await store.readMany(keys);
        }
      } catch (e) {
        await macrotask();
        readFailure = `the counter store could not be read: ${describeThrown(e)}`;
        // [OAR-OPS-3] a flow rule whose window could not be read cannot be evaluated either.
        if (readWindow > 0) window = new Raise('provider_failure', `the activity window could not be read: ${describeThrown(e)}`);
      }
      // Passes over this read: each writes what the one before had not ([OAR-FIRE-6]: one
      // snapshot), then publishes its events; a refused event makes its rule fail, and the next
      // pass decides with that. Each pass refuses one event more or ends, so they are bounded.
      const committed = new Map<string, Committed>();
      let stepWritten = false;
      let writeFailure: string | undefined;
      for (;;) {
        const snapshot = new SnapshotStore(readFailure === undefined ? keys : [], initial, readFailure, writeFailure, committed.size === 0 ? undefined : new Map(committed));
        const [decision, step] = this.evaluateShared(occ, snapshot, ledger?.pass(), memo, window);
        const shared = shares && !stepWritten && step !== undefined && decision.decision !== 'block' ? { tool: step, window: windowSize } : undefined;
        if (snapshot.pending.length > 0 || shared !== undefined) {
          // One atomic batched write of the increments and resets (and the step), after the decision.
          let refused: string | undefined;
          try {
            if (versioned === undefined) await store.applyMany(snapshot.pending);
            else {
              // Only a first write is conditional: after one held (or an event reached the
              // stream), reading afresh could decide differently from what was already applied.
              const fresh = committed.size === 0 && !stepWritten && !(ledger?.started ?? false);
              if (!(await versioned.applyIfUnchanged(session, fresh ? version : '', snapshot.pending, shared))) {
                if (fresh && attempt < MAX_ATTEMPTS) break;
                refused = fresh
                  ? `the session's counters changed under each of ${MAX_ATTEMPTS} attempts (other replicas deciding for the same session)`
                  : 'the counter store turned back an unconditional write';
              }
            }
          } catch (e) {
            await macrotask();
            refused = describeThrown(e);
          }
          if (refused === undefined) {
            snapshot.commit(committed);
            if (shared !== undefined) stepWritten = true;
          } else if (snapshot.pending.length > 0) {
            // [OAR-FIRE-9] the increments were not applied: every rule that declared one cannot
            // be evaluated. Decide again against a snapshot that refuses writes, so each takes its
            // on_error. (A lost step alone changes no decision: it is not retried.)
            writeFailure = `the counter store refused the write: ${refused}`;
            continue;
          }
        }
        if (ledger !== undefined && !ledger.publish()) continue;
        // Writes the store holds of rules this pass did not apply again (a refused event left them
        // unreached, or failed its rule before its counter actions): reported as applied, as a
        // store without `restore` reports them in decide() ([OAR-FIRE-9]).
        for (const { key, values, ops } of snapshot.kept()) {
          decision.counters[counterName(key)] = { ...values };
          for (const op of ops) decision.onFire.push({ rule: key.rule, action: op.action });
        }
        return this.admitted(session, decision, step);
      }
    }
  }

  /** One synchronous evaluation for `decideShared`, and the tool step it would record. */
  private evaluateShared(occ: Occurrence, snapshot: SnapshotStore, sink: EventSink | undefined, memo: ProviderMemo, window: readonly string[] | Raise | undefined): [Decision, string | undefined] {
    this.enter();
    try {
      const decision = this.run(occ, snapshot, sink, memo, window);
      // [OAR-PROF-9] the step is read while the fact reader still holds this occurrence: other
      // occurrences may be decided while the write is in flight.
      return [decision, this.toolStep(occ)];
    } finally {
      this.busy = false;
    }
  }

  /** [OAR-PROF-9] record the admitted tool step, and return the decision. */
  private admitted(session: string, decision: Decision, step: string | undefined): Decision {
    if (step !== undefined && decision.decision !== 'block') {
      this.at = this.sessions.clock(); // after the store's round trip
      this.pushStep(session, step);
    }
    return decision;
  }

  /** The tool step `occ` would record ([OAR-PROF-9]), read from the current fact reader. */
  private toolStep(occ: Occurrence): string | undefined {
    if (this.bundle.capability.activityWindow === 0 || occ.anchor !== this.preInvoke) return undefined;
    let tool: unknown;
    try {
      if (this.toolSlot >= 0) {
        // [OAR-FACT-11] the occurrence's own observation: the facts a detector produced for the
        // last rule presented are local to that rule and must not become the step.
        this.facts.overlay = null;
        tool = this.facts.fact(this.toolSlot);
      } else tool = occ.toolCall?.name;
    } catch {
      return undefined; // a tool name that cannot be observed is no step
    }
    return typeof tool === 'string' && tool !== '' ? tool : undefined;
  }

  private pushStep(session: string, tool: string): void {
    const window = this.bundle.capability.activityWindow;
    const steps = this.sessions.get(session, this.at) ?? this.sessions.add(session, [], this.at);
    steps.push(tool);
    while (steps.length > window) steps.shift();
  }

  /** Evaluate one occurrence against `store` (reads, then writes after the decision) and `sink`. */
  private run(occ: Occurrence, store: CounterStore, sink: EventSink | undefined, memo: ProviderMemo | undefined, window?: readonly string[] | Raise): Decision {
    const session = occ.session ?? DEFAULT_SESSION;
    const anchorValue = this.anchorValue.get(occ.anchor) ?? occ.anchor;
    this.counters.start(store, session);
    this.facts.reset(occ, anchorValue, this.counters, memo);
    this.detected.clear();
    const procedure = store === this.store ? this.procedures.get(occ.anchor) : undefined;
    if (procedure !== undefined) {
      const decided = this.specialised(procedure, occ, session, anchorValue, sink);
      if (decided !== undefined) return decided;
    }
    const candidates = this.byAnchor.get(occ.anchor);
    const run = this.occurrence.start(occ, session, anchorValue, sink, window);
    if (candidates !== undefined) run.evaluate(this.order(this.select(candidates, run), candidates.reorders));
    return run.finish();
  }

  /**
   * The occurrence decided by its anchor's procedure, or undefined when the procedure handed it
   * over — before applying any side-effect, so the generic path then decides it exactly (with the
   * same cached facts, detector results and counter snapshot; runtime/procedure.ts).
   */
  private specialised(procedure: Procedure, occ: Occurrence, session: string, anchorValue: string, sink: EventSink | undefined): Decision | undefined {
    this.procedureRun.start(occ, session, anchorValue, sink !== undefined);
    let decided: Decision | undefined;
    try {
      decided = procedure(this.procedureRun, this.facts);
    } catch (e) {
      // Past its first side-effect a procedure does what the generic path does from there on
      // (only the host's own occurrence members can still throw: read by both at the same step).
      if (this.procedureRun.applied) throw e;
      decided = undefined;
    }
    if (decided === undefined) {
      this.procedureFallbacks++;
      // The reader as `facts.reset` left it (its caches kept): the generic path selects with no
      // rule's detector facts in view ([OAR-FACT-11]).
      this.facts.rule = '';
      this.facts.ruleScope = -1;
      this.facts.overlay = null;
    }
    return decided;
  }

  /**
   * The counters an occurrence may read: for every selected rule that reads its own counters or
   * declares a counter action, its own key; for every `fire_count_of` / `breaker_count_of` target,
   * the target's key under the target's own scope at this occurrence ([OAR-FIRE-11]); and the same
   * for a substitute whose copy an `on_error` block may render. A scope fact that cannot be read is
   * left out: the rule that needs it fails on that read, before it would reach the store.
   */
  private plannedKeys(occ: Occurrence, memo: ProviderMemo): Plan {
    const candidates = this.byAnchor.get(occ.anchor);
    if (candidates === undefined) return { keys: [], flow: false };
    const session = occ.session ?? DEFAULT_SESSION;
    const anchorValue = this.anchorValue.get(occ.anchor) ?? occ.anchor;
    const planning = new SnapshotStore([], []);
    this.counters.start(planning, session);
    this.facts.reset(occ, anchorValue, this.counters, memo);
    const probe = this.occurrence.start(occ, session, anchorValue, undefined);
    const keys = new Map<string, CounterKey>();
    const add = (qid: string) => {
      const scope = this.scopeOf.get(qid) ?? -1;
      let cell: CounterCell;
      try {
        cell = this.counters.cell(qid, scope < 0 ? undefined : this.facts.scopeValue(scope));
      } catch {
        return;
      }
      keys.set(counterKeyString(cell.key), cell.key);
    };
    const selected = this.select(candidates, probe);
    let flow = false;
    for (let i = 0; i < selected.n; i++) {
      const r = selected.items[i] as Rule;
      if (r.b.flow !== undefined) flow = true;
      if (r.b.readsCounters || r.b.onFire.some((a) => a !== 'publish_event')) add(r.qid);
      for (const t of r.b.counterReads) add(t);
      const sub = typeof r.b.onError === 'object' ? this.byQid.get(r.b.onError.rule) : undefined;
      if (sub !== undefined && sub.b.readsCounters) add(sub.qid);
    }
    return { keys: [...keys.values()], flow };
  }

  /**
   * [OAR-SEL-1] to [OAR-SEL-7]. A selector fact that cannot be read fails the rule ([OAR-FACT-26])
   * — unless another clause definitely does not match: clauses are a conjunction of the members of
   * a JSON object, which has no order ([OAR-SEL-4]), so the outcome must not depend on which
   * clause was read first.
   */
  private select(anchor: AnchorRules, run: Occ): RuleList {
    const facts = this.facts;
    const out = this.selected.clear();
    let candidates = anchor.rules;
    let count = candidates.length;
    const index = anchor.index;
    if (index !== undefined) {
      // An unreadable index fact falls back to the full scan, so failures are attributed exactly
      // as the scan attributes them.
      try {
        const listed = index.byValue.get(facts.fact(index.slot) as string) ?? NO_RULES;
        if (listed.length === 0) candidates = index.without;
        else if (index.without.length === 0) candidates = listed;
        else candidates = mergeByPosition(listed, index.without, index.pos, this.merged).items;
        count = candidates === this.merged.items ? this.merged.n : candidates.length;
      } catch {
        candidates = anchor.rules;
        count = candidates.length;
      }
    }
    for (let c = 0; c < count; c++) {
      const r = candidates[c] as Rule;
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
        if (typeof v === 'string' ? !clause.values.includes(v) : !anyIn(v as string[], clause.values)) {
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

  /** [OAR-EVAL-18] amended order of the selection (runtime/order.ts): O((n + e) log n). */
  private order(selected: RuleList, reorders: boolean): RuleList {
    if (!reorders || selected.n < 2) return selected;
    const out = this.ordered;
    out.n = this.orderer.order(selected.items, selected.n, out.items);
    return out;
  }

  rule(qid: string): Rule | undefined {
    return this.byQid.get(qid);
  }

}

/** Is any member of `list` in `values`? */
function anyIn(list: readonly string[], values: readonly string[]): boolean {
  for (const m of list) if (values.includes(m)) return true;
  return false;
}

function toRaise(e: unknown): Raise {
  return isRaise(e) ? e : new Raise('provider_failure', describeThrown(e));
}

const EMPTY_ORDER: readonly Rule[] = [];
const NO_ADVISORIES: readonly Advisory[] = [];

/** Set the first `n` entries of a reused array to `empty` (never shrinking it: see `RuleList`). */
function reuse<T>(a: T[], n: number, empty: T): void {
  for (let i = 0; i < n; i++) a[i] = empty;
}

/**
 * The state of one occurrence being decided. One per engine, reused for every occurrence:
 * deciding is synchronous from `start` to `finish`, so the per-occurrence state lives in one set
 * of arrays and fields instead of being allocated anew — the hot path of `decide` allocates what
 * it returns (`decideAsync` runs each of its synchronous stretches the same way).
 */
class Occ {
  /** The selected rules in evaluation order: `order[0]` to `order[count - 1]`. */
  private order: readonly Rule[] = EMPTY_ORDER;
  private count = 0;
  private outcome: Outcome[] = [];
  private errors: (Raise | undefined)[] = [];
  private overlays: (Readonly<Record<string, unknown>> | null)[] = [];
  private spans: (readonly Span[] | undefined)[] = [];
  /** What each detector rule's detector returned (or how it failed): it is asked once ([OAR-FACT-11]). */
  private detections: (Readonly<Record<string, unknown>> | Raise | undefined)[] = [];
  /** Index of the first rule that fired and suppressed each rule ([OAR-EVAL-14]), or -1. */
  private suppressedBy: number[] = [];
  /**
   * Rules that fired and then could not be evaluated after all — their copy or a side-effect
   * failed ([OAR-FACT-26], [OAR-FIRE-9]) — by index: on a re-run they fail at their own place.
   */
  private readonly lateFailures = new Map<number, Raise>();
  private readonly selectorErrors = new Map<Rule, Raise>();
  /** By index, the counter cell a rule's side-effects wrote at this occurrence (`finish`), if any. */
  private wrote: (CounterCell | undefined)[] = [];
  /** Index just past the last rule reached; rules at or after it were never evaluated. */
  private reached = 0;
  /** Index of the rule whose failure produced an `on_error` block, or -1. */
  private errorAt = -1;
  private window: readonly string[] = [];
  /** The session's window as the shared store holds it (`decideAsync`), or why it could not be read. */
  private shared: readonly string[] | Raise | undefined = undefined;
  /** Why the occurrence's explicit activity window cannot be read, if it cannot: its `flow` rules fail. */
  private windowError: Raise | undefined = undefined;

  /** The resolved decision ([OAR-EVAL-6]), set by `resolve`. */
  private effect: DecisionEffect = 'none';
  private code: string | null = null;
  private named: string | null = null;
  private copy: Record<string, string> | null = null;
  private advisories: readonly Advisory[] = NO_ADVISORIES;

  private occ: Occurrence = { anchor: '' };
  private session = '';
  private anchorValue = '';
  private sink: EventSink | undefined = undefined;

  constructor(
    private readonly engine: RuleEngine,
    private readonly facts: OccurrenceFacts,
  ) {}

  /** Forget the previous occurrence and start this one. */
  start(occ: Occurrence, session: string, anchorValue: string, sink: EventSink | undefined, shared?: readonly string[] | Raise): this {
    this.occ = occ;
    this.shared = shared;
    this.session = session;
    this.anchorValue = anchorValue;
    this.sink = sink;
    this.order = EMPTY_ORDER;
    this.count = 0;
    this.reached = 0;
    this.errorAt = -1;
    if (this.lateFailures.size > 0) this.lateFailures.clear();
    if (this.selectorErrors.size > 0) this.selectorErrors.clear();
    return this;
  }

  selectorFailure(r: Rule, raise: Raise): void {
    this.selectorErrors.set(r, raise);
  }

  evaluate(order: RuleList): void {
    this.order = order.items;
    this.count = order.n;
    const n = order.n;
    reuse(this.outcome, n, undefined);
    reuse(this.errors, n, undefined);
    reuse(this.overlays, n, null);
    reuse(this.spans, n, undefined);
    reuse(this.detections, n, undefined);
    reuse(this.suppressedBy, n, -1);
    const explicit = this.occ.recentActivity;
    this.windowError = undefined;
    const shared = this.shared;
    if (explicit === undefined) {
      if (isRaise(shared)) this.windowError = shared;
      this.window = shared === undefined ? this.engine.activity(this.session) : isRaise(shared) ? NO_STEPS : shared;
    } else {
      const w = readWindow(explicit);
      if (isRaise(w)) this.windowError = w;
      this.window = isRaise(w) ? NO_STEPS : w;
    }
    this.run(0);
  }

  /** Evaluate rules from `start` on, until the end, an enforced block, or an `on_error` block. */
  private run(start: number): void {
    const order = this.order;
    const n = this.count;
    const window = this.window;
    for (let k = start; k < n; k++) {
      this.reached = k + 1;
      const r = order[k] as Rule;
      if ((this.suppressedBy[k] as number) >= 0) {
        this.outcome[k] = 'suppressed';
        continue;
      }
      const monitor = r.b.enforcement === 'monitor';
      const result = this.selectorErrors.get(r) ?? (this.lateFailures.size > 0 ? this.lateFailures.get(k) : undefined) ?? this.test(r, k, window);
      if (isRaise(result)) {
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
    if (r.b.flow !== undefined) {
      if (this.windowError !== undefined) return this.windowError;
      if (!flowMatches(r.b.flow, window)) return false;
    }
    if (r.detector !== undefined) {
      let produced = this.detections[k] ?? this.engine.detected.get(r.b);
      if (produced === undefined) {
        produced = askDetector(r.detector, r.b.detector as string, r.qid, this.anchorValue, this.occ, f);
        this.engine.detected.set(r.b, produced);
      }
      this.detections[k] = produced;
      if (isRaise(produced)) return produced;
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
    const by = this.suppressedBy;
    for (let j = 0; j < this.count; j++) if ((by[j] as number) >= k) by[j] = -1;
    this.errorAt = -1;
    this.run(k);
  }

  /**
   * [OAR-EVAL-14] suppress what rule `k` overrides; withdraw what was already evaluated. A rule
   * keeps the first (earliest) rule that suppressed it, so a later withdrawal by `failLate` of
   * that one alone lifts it.
   */
  private suppress(k: number): void {
    const r = this.order[k] as Rule;
    if (r.overrides.size === 0) return;
    const order = this.order;
    for (let j = 0; j < this.count; j++) {
      if (j === k || (this.suppressedBy[j] as number) >= 0 || !r.overrides.has((order[j] as Rule).qid)) continue;
      this.suppressedBy[j] = k;
      if (j < k) this.outcome[j] = 'suppressed';
    }
  }

  finish(): Decision {
    this.resolve();
    const onFire: AppliedSideEffect[] = [];
    const events: EventRecord[] = [];
    // [OAR-EVAL-12], [OAR-FIRE-2], [OAR-FIRE-8]: enforced rules that fired, in evaluation order.
    let withdrawn: Set<string> | undefined;
    for (let k = 0; k < this.reached; k++) {
      this.wrote[k] = undefined;
      if (this.outcome[k] !== 'fired') continue;
      if (this.errorAt >= 0 && k > this.errorAt) break;
      const r = this.order[k] as Rule;
      if (r.b.onFire.length === 0) continue;
      const failure = this.applySideEffects(r, k, onFire, events);
      if (failure === undefined) continue;
      this.failLate(k, failure);
      this.resolve();
      // [OAR-FIRE-9] rule k cannot be evaluated after all, so it applies no side-effect
      // ([OAR-OPS-4], [OAR-FIRE-2]); and the decision resolved again may have made an earlier rule
      // fail too (its copy, now presented, cannot be rendered) or end the occurrence before rules
      // whose side-effects were applied ([OAR-EVAL-12]: an unreached rule applies none). Their
      // counter writes are taken back; an event already published cannot be, and stays reported.
      for (let j = 0; j <= k; j++) {
        if (this.outcome[j] !== 'fired' || (this.errorAt >= 0 && j > this.errorAt)) withdrawn = this.withdraw(j, withdrawn);
      }
    }
    const decision: Decision = {
      decision: this.effect,
      code: this.code,
      rule: this.named,
      copy: this.copy,
      advisories: this.advisories === NO_ADVISORIES ? [] : (this.advisories as Advisory[]),
      transforms: [],
      skippedTransforms: [],
      applied: this.trace(),
      onFire: withdrawn === undefined ? onFire : onFire.filter((e) => e.action === 'publish_event' || !(withdrawn as Set<string>).has(e.rule)),
      events,
      counters: this.engine.counters.changed(),
    };
    // `content` is the occurrence's content after the transforms that were applied
    // ([OAR-CONF-34], [OAR-OPS-16]). A block discards every accumulated transform and none is
    // applied ([OAR-OPS-17]), so at a block it is the content unchanged — which the host must not
    // deliver: the decision says so ([OAR-PROF-10]).
    if (this.effect === 'transform') this.transform(decision);
    else if (this.occ.content !== undefined) decision.content = this.occ.content;
    return decision;
  }

  /**
   * Apply one rule's `on_fire` in the order listed ([OAR-FIRE-8]); a failure is returned
   * ([OAR-FIRE-9]). Each run of consecutive counter actions reaches the store as one batch, so the
   * store and the event stream see the actions in the listed order. An action is reported applied
   * (`onFire`, `events`, `counters`) only once it has been: a refused write is never reported.
   */
  private applySideEffects(r: Rule, k: number, onFire: AppliedSideEffect[], events: EventRecord[]): Raise | undefined {
    let cell: CounterCell | undefined;
    try {
      // The counter key first: a scope that cannot be read ([OAR-FACT-26]) is known before any
      // action is applied, so the rule then applies none — not the events listed before its
      // counter actions ([OAR-FIRE-9], [OAR-OPS-4]: no side-effect).
      for (const step of r.fireSteps) {
        if (step === 'publish_event') continue;
        cell = this.counterCell(r, k);
        // Likewise a store known to refuse the write (decideAsync's, after its read or its batch
        // write failed; the in-memory store, the session at its bound): the rule fails before it
        // publishes anything.
        const refused = this.engine.counters.writeRefusal(cell);
        if (refused !== undefined) throw new Error(refused);
        break;
      }
      for (const step of r.fireSteps) {
        if (step === 'publish_event') {
          const event: EventRecord = { rule: r.qid, anchor: this.anchorValue, effect: r.b.effect };
          if (this.sink !== undefined) published(this.sink.publish(event));
          events.push(event);
          onFire.push({ rule: r.qid, action: step });
          continue;
        }
        const c = cell as CounterCell;
        this.wrote[k] = c;
        this.engine.counters.apply(c, counterOps(c, step));
        for (const action of step) onFire.push({ rule: r.qid, action });
      }
    } catch (e) {
      // A counter scope that cannot be read is the fact failure it is ([OAR-FACT-26]), not a store's.
      if (isRaise(e)) return e;
      return new Raise('provider_failure', `side-effect of ${r.qid} could not be applied: ${describeThrown(e)}`);
    }
    return undefined;
  }

  /** Take back rule `j`'s counter writes at this occurrence, if any and if the store can; the rules whose writes were taken back. */
  private withdraw(j: number, withdrawn: Set<string> | undefined): Set<string> | undefined {
    const cell = this.wrote[j];
    if (cell === undefined || !this.engine.counters.withdraw(cell)) return withdrawn;
    this.wrote[j] = undefined;
    return (withdrawn ?? new Set()).add((this.order[j] as Rule).qid);
  }

  /** The counters of rule `k` at this occurrence: its session and its scope value ([OAR-FIRE-5]). */
  private counterCell(r: Rule, k: number): CounterCell {
    if (r.scope < 0) return this.engine.counters.cell(r.qid, undefined);
    this.context(k);
    return this.engine.counters.cell(r.qid, this.facts.scopeValue(r.scope));
  }

  /** Point the fact reader at rule `k` (its counters, its detector's facts) for copy and keys. */
  private context(k: number): void {
    const r = this.order[k] as Rule;
    this.facts.rule = r.qid;
    this.facts.ruleScope = r.scope;
    this.facts.overlay = this.overlays[k] ?? null;
  }

  /** Set the resolved decision's fields. */
  private resolved(effect: DecisionEffect, code: string | null, rule: string | null, copy: Record<string, string> | null, advisories: readonly Advisory[]): void {
    this.effect = effect;
    this.code = code;
    this.named = rule;
    this.copy = copy;
    this.advisories = advisories;
  }

  /**
   * Resolve the decision ([OAR-EVAL-6], [OAR-EVAL-19], [OAR-EVAL-20]) and render its copy. Copy is
   * read only for the rules the decision presents; if that read fails, the rule is one that cannot
   * be evaluated ([OAR-FACT-26]) and takes its `on_error`, and the decision is resolved again.
   */
  private resolve(): void {
    for (;;) {
      if (this.errorAt >= 0) return this.errorBlock();
      let effect: DecisionEffect = 'none';
      let first = -1;
      for (const e of PRECEDENCE) {
        first = this.nextFired(e, 0);
        if (first >= 0) {
          effect = e;
          break;
        }
      }
      if (effect === 'none') return this.resolved('none', null, null, null, NO_ADVISORIES);
      const r = this.order[first] as Rule;
      const copy = this.render(first);
      if (copy === undefined) continue;
      // [OAR-EVAL-20] nudge and warn present every rule of that effect that fired, in order.
      if (effect !== 'nudge' && effect !== 'warn') return this.resolved(effect, r.b.id, r.qid, copy, NO_ADVISORIES);
      const advisories: Advisory[] = [{ code: r.b.id, rule: r.qid, copy }];
      let failed = false;
      for (let k = this.nextFired(effect, first + 1); k >= 0; k = this.nextFired(effect, k + 1)) {
        const more = this.render(k);
        if (more === undefined) {
          failed = true;
          break;
        }
        advisories.push({ code: (this.order[k] as Rule).b.id, rule: (this.order[k] as Rule).qid, copy: more });
      }
      if (!failed) return this.resolved(effect, r.b.id, r.qid, copy, advisories);
    }
  }

  /** The copy of rule `k`; undefined when it could not be read — the rule then failed late. */
  private render(k: number): Record<string, string> | undefined {
    try {
      this.context(k);
      return (this.order[k] as Rule).b.copy(this.facts);
    } catch (e) {
      this.failLate(k, toRaise(e));
      return undefined;
    }
  }

  /** [OAR-OPS-3] / [OAR-OPS-5]: block with the failing rule's identifiers, or the substitute's. */
  private errorBlock(): void {
    const failing = this.order[this.errorAt] as Rule;
    const onError = failing.b.onError;
    const named = typeof onError === 'object' ? this.engine.rule(onError.rule) : failing;
    const code = typeof onError === 'object' ? onError.id : failing.b.id;
    const rule = typeof onError === 'object' ? onError.rule : failing.qid;
    // [OAR-COPY-11] if rendering this copy fails, the block keeps its identifiers and no copy.
    let copy: Record<string, string> = {};
    if (named !== undefined) {
      const f = this.facts;
      try {
        f.rule = named.qid;
        f.ruleScope = named.scope;
        f.overlay = this.observed(named);
        // [OAR-COPY-11], [OAR-FACT-11]: a detector that failed, or never ran at this occurrence,
        // produced nothing — what it would have observed is unavailable, not zero, and a copy
        // that needs it is omitted. The host's own observations still render ([OAR-COPY-7]).
        if (f.overlay === null && named.unobserved !== undefined) f.unavailable = named.unobserved;
        copy = named.b.copy(f);
      } catch {
        copy = {};
      } finally {
        f.unavailable = null;
      }
    }
    this.resolved('block', code, rule, copy, NO_ADVISORIES);
  }

  /** What `r`'s detector produced at this occurrence, or null (no detector, or it did not produce). */
  private observed(r: Rule): Readonly<Record<string, unknown>> | null {
    for (let k = 0; k < this.reached; k++) if (this.order[k] === r) return this.overlays[k] ?? null;
    return null;
  }

  /** The first rule at or after `from` that fired (enforced) with `effect`, or -1. */
  private nextFired(effect: DecisionEffect, from: number): number {
    for (let k = from; k < this.reached; k++) {
      if (this.outcome[k] === 'fired' && (this.order[k] as Rule).b.effect === effect) return k;
    }
    return -1;
  }

  /**
   * [OAR-OPS-9], [OAR-OPS-10]: every rule reached, in evaluation order; a rule never reached is
   * omitted unless it was suppressed.
   */
  private trace(): TraceEntry[] {
    const out: TraceEntry[] = [];
    for (let k = 0; k < this.count; k++) {
      const r = this.order[k] as Rule;
      if (k >= this.reached) {
        // A suppressor that ends up past the rule that ended the occurrence (its copy or a
        // side-effect failed later, [OAR-OPS-3]) counts as never reached: so does its suppression.
        const by = this.suppressedBy[k] as number;
        if (by >= 0 && by < this.reached) out.push({ rule: r.qid, outcome: 'suppressed' });
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
    d.content = applyTransformsInto(this.occ.content, list, d.skippedTransforms, this.facts.contentLength(this.occ.content));
  }
}
