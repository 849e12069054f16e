/**
 * A deliberately naive second engine: the evaluation algorithm of sections 4, 6 and 7 of the spec,
 * written straight from the clause text over a loaded pack's checked rules, sharing no code with
 * runtime/engine.ts or runtime/occurrence.ts.
 *
 * Both back ends of the real engine run the same engine code, so the compiled-vs-interpreter
 * differential check cannot see an engine bug. This is the oracle for that part. It reuses only
 * what is cross-checked elsewhere or is not the engine: `interpret` (the condition oracle of
 * Appendix A), `renderCopyObject` (Appendix C rendering), `applyTransforms` (the span algorithm of
 * [OAR-OPS-16]) and `toolArgsFingerprint` ([OAR-FACT-28]).
 *
 * It is written for obviousness, not speed: facts are re-read (never cached), everything is a plain
 * array walk, and a late failure is handled by re-running the whole evaluation.
 *
 * Readings it takes where the spec leaves a choice (the first three are also the engine's
 * documented readings; none is asserted as a bug):
 * - Facts are checked where they are consumed (DESIGN "Decisions the spec leaves open"): a
 *   wrong-typed transform target is read when its rule fires enforced, a wrong-typed copy binding
 *   when the copy is rendered.
 * - A detector rule invokes its detector whenever its `flow` matched, whether or not `when` reads
 *   what the detector reports.
 * - `fire_count_of` reads the target's scope fact in the reading rule's fact context (its detector's
 *   observations included).
 * - Copy is rendered when the decision is resolved, before any side-effect is applied
 *   ([OAR-COPY-1]); side-effects are applied in evaluation order ([OAR-FIRE-8]).
 * - An event sent stays sent: when an action cannot be applied ([OAR-FIRE-9]), the events listed
 *   before it have been published, and are reported; so are those of a rule that fired, had its
 *   side-effects applied, and only then — in the decision resolved again after a later rule's
 *   side-effect failed — turned out to have a copy that cannot be rendered, or to stand after the
 *   rule that now ends the occurrence. Such a rule's counter writes are taken back ([OAR-OPS-4]: a
 *   rule that cannot be evaluated contributes no side-effect; [OAR-EVAL-12]: nor does one never
 *   reached); an event cannot be.
 *
 * Where the spec does decide, it is followed even where the engine once did otherwise (see
 * regressions.test.ts): a failure found after a rule fired — its transform target, a side-effect
 * ([OAR-FIRE-9]), its copy ([OAR-FACT-26]) — makes it a rule that cannot be evaluated, recorded
 * `errored`; not having fired, it suppresses nothing ([OAR-EVAL-14]) and, with `fail_open`,
 * ends nothing ([OAR-OPS-4]).
 *
 * Each decision also lists the rare paths it took (`paths`), so a property can show it reached them.
 */
import type { LoadedPack } from '../../compiler/load/pack.js';
import type { CheckedRule } from '../../compiler/load/model.js';
import { interpret } from '../../compiler/expr/index.js';
import type { FactReader } from '../../runtime/facts.js';
import type { Occurrence } from '../../runtime/occurrence.js';
import type { FactSymbol, FactType, SymbolEntry } from '../../runtime/types.js';
import { Raise } from '../../runtime/raise.js';
import { renderCopyObject } from '../../runtime/copy.js';
import { applyTransforms, type AccumulatedTransform, type SkippedSpan, type Span } from '../../runtime/transform.js';
import { toolArgsFingerprint } from '../../runtime/fingerprint.js';

export type Outcome = 'fired' | 'passed' | 'errored' | 'suppressed' | 'monitored_fired' | 'monitored_passed' | 'monitored_errored';
type Effect = 'block' | 'transform' | 'nudge' | 'warn' | 'none';

/** Rare paths through the algorithm, tallied by the property to show they are reached. */
export type Path =
  | 'selector-failure'
  | 'flow-mismatch'
  | 'detector-overlay'
  | 'late-copy-failure'
  | 'late-side-effect-failure'
  | 'resumed-after-late-failure'
  | 'partial-side-effects'
  | 'on-error-substitute'
  | 'on-error-copy-omitted'
  | 'suppressed-unreached'
  | 'counter-read-of-other-rule'
  | 'scoped-counter';

export interface RefDecision {
  decision: Effect;
  code: string | null;
  rule: string | null;
  copy: Record<string, string> | null;
  advisories: { code: string; rule: string; copy: Record<string, string> }[];
  transforms: { rule: string; action: string; target: string; replacement: string }[];
  content?: string;
  skippedTransforms: SkippedSpan[];
  applied: { rule: string; outcome: Outcome }[];
  onFire: { rule: string; action: string }[];
  events: { rule: string; anchor: string; effect: string }[];
  counters: Record<string, { fire_count: number; breaker_count: number }>;
}

export interface RefOptions {
  /** Does the event stream refuse a `publish_event` of this rule ([OAR-FIRE-9])? */
  eventFails?: (rule: string) => boolean;
}

const KIND_ORDER = ['schema', 'policy', 'invariant', 'detector'];
const PRECEDENCE: Effect[] = ['block', 'transform', 'nudge', 'warn'];
const hasOwn = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

/** Unicode code point order ([OAR-EVAL-1]). */
function cpCompare(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0) as number);
  const y = Array.from(b, (c) => c.codePointAt(0) as number);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  return x.length - y.length;
}

// --- values -------------------------------------------------------------------------------------

const INT_MIN = -(2n ** 63n);
const INT_MAX = 2n ** 63n - 1n;

function canonical(b: bigint): number | bigint {
  return b >= -BigInt(Number.MAX_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b;
}

/** An OAR int ([OAR-FACT-23]): an exact integer within 64 bits, in canonical form. */
function intOf(v: unknown): number | bigint | undefined {
  if (typeof v === 'number' && Number.isInteger(v)) {
    const b = BigInt(v);
    return b >= INT_MIN && b <= INT_MAX ? canonical(b) : undefined;
  }
  if (typeof v === 'bigint') return v >= INT_MIN && v <= INT_MAX ? canonical(v) : undefined;
  return undefined;
}

function isMapValue(v: unknown): v is object {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function memberOf(m: object, key: string): unknown {
  if (m instanceof Map) return m.get(key);
  return Object.prototype.propertyIsEnumerable.call(m, key) ? (m as Record<string, unknown>)[key] : undefined;
}

function hasMember(m: object, key: string): boolean {
  return m instanceof Map ? m.has(key) : Object.prototype.propertyIsEnumerable.call(m, key);
}

function everyIndex(a: unknown[], ok: (x: unknown) => boolean): boolean {
  for (let i = 0; i < a.length; i++) if (!(i in a) || !ok(a[i])) return false;
  return true;
}

/** [OAR-FACT-26]: a produced value of the wrong type is a provider failure, never a coercion. */
function check(type: FactType, v: unknown, what: string): unknown {
  switch (type) {
    case 'bool':
      if (typeof v === 'boolean') return v;
      break;
    case 'string':
      if (typeof v === 'string') return v;
      break;
    case 'int': {
      const i = intOf(v);
      if (i !== undefined) return i;
      break;
    }
    case 'double':
      if (typeof v === 'number') {
        if (Number.isFinite(v)) return v;
        throw new Raise('provider_failure', `${what} is not finite`); // [OAR-FACT-23]
      }
      if (typeof v === 'bigint' && Number.isFinite(Number(v))) return Number(v);
      break;
    case 'list<string>':
      if (Array.isArray(v) && everyIndex(v, (x) => typeof x === 'string')) return v;
      break;
    case 'list<map>':
      if (Array.isArray(v) && everyIndex(v, isMapValue)) return v;
      break;
    case 'map':
      if (isMapValue(v)) return v;
      break;
    case 'map<string,string>':
      if (isMapValue(v)) {
        const entries = v instanceof Map ? [...v.entries()] : Object.keys(v).map((k) => [k, (v as Record<string, unknown>)[k]]);
        if (entries.every(([k, x]) => typeof k === 'string' && typeof x === 'string')) return v;
      }
      break;
  }
  throw new Raise('wrong_type', `${what} is not a ${type}`);
}

function zero(type: FactType): unknown {
  switch (type) {
    case 'bool':
      return false;
    case 'int':
    case 'double':
      return 0;
    case 'string':
      return '';
    case 'list<string>':
    case 'list<map>':
      return [];
    default:
      return {};
  }
}

// --- rules --------------------------------------------------------------------------------------

interface Rule {
  c: CheckedRule;
  qid: string;
  enforcement: 'enforce' | 'monitor' | 'off';
}

type Counters = Map<string, { fire_count: number; breaker_count: number }>;

const keyOf = (rule: string, session: string, scope: string | undefined) => JSON.stringify(scope === undefined ? [rule, session] : [rule, session, scope]);
const nameOf = (rule: string, scope: string | undefined) => (scope === undefined ? rule : `${rule}#${scope}`);

/** Everything a fact read needs at one occurrence. */
interface Env {
  symbols: readonly SymbolEntry[];
  occ: Occurrence;
  anchorValue: string;
  session: string;
  /** Counter values before the occurrence ([OAR-FIRE-6]). */
  snapshot: Counters;
  rules: Map<string, Rule>;
  /** Note a rare path this occurrence takes. */
  note: (path: Path) => void;
}

/**
 * The fact environment of one rule's evaluation ([OAR-FACT-25], [OAR-FACT-26], [OAR-FACT-11]):
 * the host's observations, values derived from the tool call and the content, the core facts, and
 * what this rule's own detector reported.
 */
class Reader implements FactReader {
  constructor(
    private readonly env: Env,
    /** The rule whose evaluation this is (for `fire_count`, `breaker_count`); null outside one. */
    private readonly rule: Rule | null,
    private readonly overlay: Readonly<Record<string, unknown>> | null,
    /**
     * Rendering the copy of a rule whose detector failed or never ran: what the detector would
     * have produced is unavailable, not zero ([OAR-COPY-11]).
     */
    private readonly detectorMissing = false,
  ) {}

  fact(slot: number): unknown {
    const sym = this.env.symbols[slot] as FactSymbol;
    const name = sym.name;
    if (name === 'fire_count' || name === 'breaker_count') {
      if (this.rule === null) return 0;
      return this.counters(this.rule.qid)[name];
    }
    // 5.3: the anchor is a property of the occurrence; every rule observes the same value.
    if (name === 'anchor') return this.env.anchorValue;
    if (this.overlay !== null && hasOwn(this.overlay, name)) return check(sym.type, this.overlay[name], `detector fact ${name}`);
    // [OAR-COPY-11] only what the detector would have produced is unavailable: the facts of the
    // detector-backed profiles ([OAR-OPS-22]). Everything else is a host observation with a zero
    // value ([OAR-FACT-25], [OAR-COPY-7]); what the host supplied itself is observed.
    if (this.detectorMissing && sym.tier.kind === 'profile' && DETECTOR_PROFILES.has(sym.tier.profile) && !hasOwn(this.env.occ.facts ?? {}, name)) {
      throw new Raise('provider_failure', `${name}: the detector observed nothing`);
    }
    return this.host(sym);
  }

  private host(sym: FactSymbol): unknown {
    const { occ } = this.env;
    const facts = occ.facts ?? {};
    if (hasOwn(facts, sym.name)) {
      let v = facts[sym.name];
      if (typeof v === 'function') {
        try {
          v = (v as () => unknown)();
        } catch {
          throw new Raise('provider_failure', `provider of ${sym.name} failed`);
        }
      }
      if (v !== undefined) return check(sym.type, v, `fact ${sym.name}`);
    }
    // Observations derived from the tool call and the content ([OAR-CONF-40], the content profile).
    switch (sym.name) {
      case 'tool':
        return occ.toolCall === undefined ? '' : check('string', occ.toolCall.name, 'tool call name');
      case 'tool_args':
        return occ.toolCall?.arguments === undefined ? {} : check('map', occ.toolCall.arguments, 'tool call arguments');
      case 'tool_args_fingerprint':
        if (occ.toolCall === undefined) return '';
        try {
          return toolArgsFingerprint(occ.toolCall.name, occ.toolCall.arguments ?? {});
        } catch {
          throw new Raise('provider_failure', 'fingerprint');
        }
      case 'content_length':
        return occ.content === undefined ? 0 : Array.from(occ.content).length;
    }
    return zero(sym.type);
  }

  call(slot: number, arg: unknown): unknown {
    const sym = this.env.symbols[slot] as Extract<SymbolEntry, { kind: 'function' }>;
    const name = sym.name;
    if (name === 'fire_count_of' || name === 'breaker_count_of') {
      const v = this.counters(arg as string);
      if (v.fire_count !== 0 || v.breaker_count !== 0) this.env.note('counter-read-of-other-rule');
      return name === 'fire_count_of' ? v.fire_count : v.breaker_count;
    }
    const source = this.overlay !== null && hasOwn(this.overlay, name) ? this.overlay : (this.env.occ.facts ?? {});
    if (hasOwn(source, name)) {
      let v = source[name];
      if (typeof v === 'function') {
        try {
          v = (v as (a: unknown) => unknown)(arg);
        } catch {
          throw new Raise('provider_failure', `function ${name} failed`);
        }
      }
      if (v !== undefined) return check(sym.result, v, `function ${name}`);
    }
    if (name === 'tool_arg_string' || name === 'tool_arg_int' || name === 'tool_arg_bool') {
      const argsSym = this.env.symbols.find((s) => s.name === 'tool_args') as FactSymbol;
      const args = this.fact(argsSym.slot) as object;
      const m = memberOf(args, arg as string);
      if (name === 'tool_arg_string') return typeof m === 'string' ? m : '';
      if (name === 'tool_arg_bool') return typeof m === 'boolean' ? m : false;
      return intOf(m) ?? 0;
    }
    return zero(sym.result);
  }

  /** A rule's counters under its own scope, as they were before this occurrence ([OAR-FIRE-6], [OAR-FIRE-11]). */
  counters(qid: string): { fire_count: number; breaker_count: number } {
    const key = keyOf(qid, this.env.session, this.scopeValue(qid));
    return this.env.snapshot.get(key) ?? { fire_count: 0, breaker_count: 0 };
  }

  /**
   * [OAR-FIRE-10]: the value of the rule's `counter_scope` fact, or undefined when it has none —
   * as the occurrence observes it, never through a detector's observations ([OAR-FACT-11]), so
   * every rule at the occurrence names the same counter ([OAR-FIRE-6]).
   */
  scopeValue(qid: string): string | undefined {
    const scope = this.env.rules.get(qid)?.c.counterScope;
    return scope === undefined ? undefined : (new Reader(this.env, this.rule, null).fact(scope.slot) as string);
  }
}

/** [OAR-OPS-22]: the profiles whose facts only a registered detector produces. */
const DETECTOR_PROFILES: ReadonlySet<string> = new Set(['secrets', 'pii', 'prompt-injection', 'jailbreak', 'moderation']);

function settle<T>(f: () => T): T | Raise {
  try {
    return f();
  } catch (e) {
    if (e instanceof Raise) return e;
    throw e;
  }
}

// --- the engine ---------------------------------------------------------------------------------

interface Pending {
  rule: Rule;
  ops: { action: string; key?: string; name?: string }[];
}

/** Why a rule that fired turned out to be one that cannot be evaluated. */
type Late = 'copy' | 'side-effect';

interface Run {
  /** Rules that fired whose side-effects would not all apply (found after the decision). */
  refused: Set<string>;
  trace: { rule: Rule; outcome: Outcome }[];
  overlays: Map<string, Readonly<Record<string, unknown>> | null>;
  spans: Map<string, Span[]>;
  pending: Map<string, Pending>;
  /** The rule whose failure ended the occurrence with an `on_error` block ([OAR-OPS-3], [OAR-OPS-5]). */
  failed?: Rule;
}

/** The reference's refusal of an occurrence at an anchor the host does not have. */
export class UnknownAnchor extends Error {
  constructor(readonly anchor: string) {
    super(`unknown anchor ${anchor}`);
  }
}

export class ReferenceEngine {
  private readonly rules: Rule[];
  private readonly byQid = new Map<string, Rule>();
  private readonly counters: Counters = new Map();
  private readonly activity = new Map<string, string[]>();
  private readonly localToCore = new Map<string, string>();
  private readonly preInvoke: string | undefined;

  constructor(
    private readonly pack: LoadedPack,
    private readonly options: RefOptions = {},
  ) {
    this.rules = pack.rules.map((c) => ({ c, qid: c.qid, enforcement: pack.enforcement.get(c.qid) ?? c.enforcement }));
    for (const r of this.rules) this.byQid.set(r.qid, r);
    for (const [core, local] of pack.capability.coreAnchors) this.localToCore.set(local, core);
    for (const h of pack.capability.hostAnchors) this.localToCore.set(h, h);
    this.preInvoke = pack.capability.coreAnchors.get('tool.pre_invoke');
  }

  sessionActivity(session: string): string[] {
    return [...(this.activity.get(session) ?? [])];
  }

  decide(occ: Occurrence): RefDecision & { paths: Path[] } {
    // [OAR-CONF-29]: an occurrence names a host-local anchor; any other is the host's mistake,
    // refused rather than decided `none`.
    if (!this.localToCore.has(occ.anchor)) throw new UnknownAnchor(occ.anchor);
    const paths: Path[] = [];
    const session = occ.session ?? '';
    const env: Env = {
      symbols: this.pack.symbols,
      occ,
      anchorValue: this.localToCore.get(occ.anchor) ?? occ.anchor,
      session,
      snapshot: new Map([...this.counters].map(([k, v]) => [k, { ...v }])),
      rules: this.byQid,
      note: (path) => {
        if (!paths.includes(path)) paths.push(path);
      },
    };
    const window = occ.recentActivity ?? this.activity.get(session) ?? [];

    // [OAR-SEL-7]: the anchor, enforcement not off, every selector clause matching.
    const selected: Rule[] = [];
    const selectorFailure = new Map<Rule, Raise>();
    for (const r of this.rules) {
      if (r.c.localAnchor !== occ.anchor || r.enforcement === 'off') continue;
      const sel = this.select(r, env);
      if (sel === false) continue;
      if (sel instanceof Raise) {
        env.note('selector-failure');
        selectorFailure.set(r, sel);
      }
      selected.push(r);
    }
    const order = this.order(selected);

    // A failure found only after the rule fired — its copy could not be rendered ([OAR-FACT-26]),
    // or one of its side-effects could not be applied ([OAR-FIRE-9]) — makes it a rule that cannot
    // be evaluated. Evaluate again with it failing, until nothing new fails. Copy is rendered when
    // the decision is resolved, before any side-effect is applied; side-effects are applied in
    // evaluation order. Counters are untouched until the end, so every run sees one snapshot.
    const late = new Map<string, Late>();
    // Side-effects found to fail are found by applying them, in evaluation order: whatever was
    // written before the failure stays written, and reported, even for a rule that later turns
    // out not to have fired (its copy failing in the decision resolved again) — a counter already
    // advanced or an event already sent cannot be taken back.
    const written = new Map<string, Pending['ops']>();
    for (;;) {
      const run = this.evaluate(order, env, window, selectorFailure, late);
      const resolved = this.resolve(run, env);
      if ('copyFailure' in resolved) {
        env.note('late-copy-failure');
        late.set(resolved.copyFailure, 'copy');
        continue;
      }
      const refused = run.trace.find((e) => e.outcome === 'fired' && run.refused.has(e.rule.qid));
      if (refused !== undefined) {
        env.note('late-side-effect-failure');
        for (const e of run.trace.slice(0, run.trace.indexOf(refused) + 1)) {
          const p = run.pending.get(e.rule.qid);
          if (e.outcome === 'fired' && p !== undefined) written.set(e.rule.qid, p.ops);
        }
        late.set(refused.rule.qid, 'side-effect');
        continue;
      }
      const decision = this.finish(run, resolved, env, occ, order, written);
      this.recordActivity(occ, env, decision.decision);
      return { ...decision, paths };
    }
  }

  /** [OAR-SEL-1]..[OAR-SEL-5]; a clause that cannot be read fails the rule ([OAR-FACT-26]) unless
   *  another clause already rules it out (clauses are a conjunction, [OAR-SEL-4], in no order). */
  private select(r: Rule, env: Env): boolean | Raise {
    // [OAR-SEL-6]: a clause with an empty list matches nothing, whatever its fact would say.
    if (r.c.selector.some((clause) => clause.values.length === 0)) return false;
    const reader = new Reader(env, null, null);
    let failure: Raise | undefined;
    for (const clause of r.c.selector) {
      const v = settle(() => reader.fact(clause.fact.slot));
      if (v instanceof Raise) {
        failure ??= v;
        continue;
      }
      const members = typeof v === 'string' ? [v] : (v as string[]);
      if (!members.some((m) => clause.values.includes(m))) return false;
    }
    return failure ?? true;
  }

  /** [OAR-EVAL-1] amended by [OAR-EVAL-18], by the algorithm the clause states. */
  private order(selected: Rule[]): Rule[] {
    const remaining = [...selected].sort(
      (a, b) => KIND_ORDER.indexOf(a.c.kind) - KIND_ORDER.indexOf(b.c.kind) || cpCompare(a.qid, b.qid),
    );
    const out: Rule[] = [];
    while (remaining.length > 0) {
      const next = remaining.find((r) => !remaining.some((s) => s !== r && s.c.overrides.includes(r.qid)));
      if (next === undefined) throw new Error('reference: a suppression cycle was loaded');
      out.push(next);
      remaining.splice(remaining.indexOf(next), 1);
    }
    return out;
  }

  private evaluate(order: Rule[], env: Env, window: readonly string[], selectorFailure: Map<Rule, Raise>, late: Map<string, Late>): Run {
    const run: Run = { refused: new Set(), trace: [], overlays: new Map(), spans: new Map(), pending: new Map() };
    const suppressed = new Set<string>();
    let stopped = false;
    for (const r of order) {
      if (stopped) {
        // [OAR-OPS-10]: a rule never reached is omitted, unless it was suppressed.
        if (suppressed.has(r.qid)) {
          env.note('suppressed-unreached');
          run.trace.push({ rule: r, outcome: 'suppressed' });
        }
        continue;
      }
      if (suppressed.has(r.qid)) {
        run.trace.push({ rule: r, outcome: 'suppressed' });
        continue;
      }
      const monitor = r.enforcement === 'monitor';
      const result = selectorFailure.get(r) ?? this.test(r, env, window, run);
      if (monitor) {
        // [OAR-EVAL-10], [OAR-OPS-9]: recorded, never acted on, on_error not applied.
        run.trace.push({ rule: r, outcome: result instanceof Raise ? 'monitored_errored' : result ? 'monitored_fired' : 'monitored_passed' });
        continue;
      }
      if (result === false) {
        run.trace.push({ rule: r, outcome: 'passed' });
        continue;
      }
      let failure = result instanceof Raise ? result : undefined;
      if (failure === undefined) {
        failure = this.contribute(r, env, run, late.get(r.qid));
        if (failure !== undefined && late.has(r.qid) && r.c.onError.mode === 'fail_open' && r !== order[order.length - 1]) {
          env.note('resumed-after-late-failure');
        }
      }
      if (failure !== undefined) {
        run.trace.push({ rule: r, outcome: 'errored' });
        // [OAR-OPS-4] fail_open: recorded, no contribution, evaluation continues.
        if (r.c.onError.mode === 'fail_open') continue;
        // [OAR-OPS-3], [OAR-OPS-5]: block, and nothing later is evaluated.
        run.failed = r;
        stopped = true;
        continue;
      }
      run.trace.push({ rule: r, outcome: 'fired' });
      // [OAR-EVAL-14]: an enforced rule that fires suppresses what it overrides (never transitively).
      for (const t of r.c.overrides) suppressed.add(t);
      // [OAR-EVAL-4]: the first enforced block ends the occurrence.
      if (r.c.effect === 'block') stopped = true;
    }
    return run;
  }

  /** Did the rule fire? `flow` first, never `when` when it did not match ([OAR-EVAL-3]). */
  private test(r: Rule, env: Env, window: readonly string[], run: Run): boolean | Raise {
    if (r.c.flow !== undefined && !subsequence(r.c.flow, window)) {
      env.note('flow-mismatch');
      return false;
    }
    let overlay: Readonly<Record<string, unknown>> | null = null;
    if (r.c.detector !== undefined) {
      // [OAR-CONF-25]: the three reserved detectors.
      if (r.c.detector === 'detector://error') return new Raise('provider_failure', 'detector://error');
      overlay = r.c.detector === 'detector://fixture' ? (env.occ.detectorFacts ?? {}) : {};
      if (Object.keys(overlay).length > 0) env.note('detector-overlay');
    }
    run.overlays.set(r.qid, overlay);
    if (r.c.when === undefined) return true;
    const out = interpret(r.c.when.typed, new Reader(env, r, overlay));
    return out.ok ? out.value === true : out.raise;
  }

  /**
   * What an enforced rule that fired contributes besides its effect: its transform's spans
   * ([OAR-OPS-19]) and its side-effects ([OAR-FIRE-9]), both of which can make it a rule that
   * cannot be evaluated. Returns the failure, if any.
   */
  private contribute(r: Rule, env: Env, run: Run, late: Late | undefined): Raise | undefined {
    if (late === 'copy') return new Raise('wrong_type', 'copy');
    const reader = new Reader(env, r, run.overlays.get(r.qid) ?? null);
    const t = r.c.transform;
    if (t !== undefined && t.target !== 'content') {
      const target = t.target;
      const spans = settle(() => readSpans(reader.fact(target.slot) as unknown[]));
      if (spans instanceof Raise) return spans;
      run.spans.set(r.qid, spans);
    }
    // [OAR-FIRE-8], [OAR-FIRE-9]: the actions are applied in the order listed; one that cannot be
    // applied makes the rule one that cannot be evaluated. Those before it have been applied — an
    // event already written cannot be unwritten — and are reported as applied, nothing after it.
    // A counter scope that cannot be read is known before any action: then none is applied.
    const ops: Pending['ops'] = [];
    run.pending.set(r.qid, { rule: r, ops });
    const counts = r.c.onFire.some((a) => a !== 'publish_event');
    const scope = counts ? settle(() => reader.scopeValue(r.qid)) : undefined;
    for (const action of r.c.onFire) {
      let refused = false;
      if (action === 'publish_event') {
        refused = scope instanceof Raise || this.options.eventFails?.(r.qid) === true;
        if (!refused) ops.push({ action });
      } else {
        refused = scope instanceof Raise;
        if (!(scope instanceof Raise)) {
          if (scope !== undefined) env.note('scoped-counter');
          ops.push({ action, key: keyOf(r.qid, env.session, scope), name: nameOf(r.qid, scope) });
        }
      }
      if (refused) {
        if (late === 'side-effect') {
          if (ops.length > 0) env.note('partial-side-effects');
          return new Raise('provider_failure', 'side-effect');
        }
        run.refused.add(r.qid);
        break;
      }
    }
    return undefined;
  }

  /** [OAR-EVAL-6], [OAR-EVAL-19], [OAR-EVAL-20], [OAR-COPY-1], [OAR-COPY-7], [OAR-COPY-9]. */
  private resolve(run: Run, env: Env): { copyFailure: string } | Pick<RefDecision, 'decision' | 'code' | 'rule' | 'copy' | 'advisories'> {
    if (run.failed !== undefined) {
      const failing = run.failed;
      const oe = failing.c.onError;
      const named = oe.mode === 'substitute' ? (this.byQid.get(oe.rule) as Rule) : failing;
      if (named !== failing) env.note('on-error-substitute');
      // [OAR-COPY-11]: a copy that cannot be rendered for an on_error block is omitted.
      // A detector that failed or never ran observed nothing: its facts are unavailable, not zero.
      const overlay = run.overlays.get(named.qid) ?? null;
      const missing = overlay === null && named.c.detector !== undefined;
      const copy = settle(() => renderCopyObject(named.c.copy, new Reader(env, named, overlay, missing)));
      if (copy instanceof Raise) env.note('on-error-copy-omitted');
      return { decision: 'block', code: named.c.id, rule: named.qid, copy: copy instanceof Raise ? {} : copy, advisories: [] };
    }
    const fired = run.trace.filter((e) => e.outcome === 'fired').map((e) => e.rule);
    const effect = PRECEDENCE.find((e) => fired.some((r) => r.c.effect === e));
    if (effect === undefined) return { decision: 'none', code: null, rule: null, copy: null, advisories: [] };
    const withEffect = fired.filter((r) => r.c.effect === effect);
    const presented = effect === 'nudge' || effect === 'warn' ? withEffect : [withEffect[0] as Rule];
    const advisories: RefDecision['advisories'] = [];
    for (const r of presented) {
      const copy = settle(() => renderCopyObject(r.c.copy, new Reader(env, r, run.overlays.get(r.qid) ?? null)));
      if (copy instanceof Raise) return { copyFailure: r.qid };
      advisories.push({ code: r.c.id, rule: r.qid, copy });
    }
    const first = advisories[0] as RefDecision['advisories'][number];
    return {
      decision: effect,
      code: first.code,
      rule: first.rule,
      copy: first.copy,
      advisories: effect === 'nudge' || effect === 'warn' ? advisories : [],
    };
  }

  private finish(
    run: Run,
    resolved: Pick<RefDecision, 'decision' | 'code' | 'rule' | 'copy' | 'advisories'>,
    env: Env,
    occ: Occurrence,
    order: readonly Rule[],
    written: ReadonlyMap<string, Pending['ops']>,
  ): RefDecision {
    // [OAR-EVAL-12], [OAR-FIRE-8]: side-effects of every enforced rule that fired, in evaluation
    // order, each rule's in the order listed — and what was written before a failure.
    const onFire: RefDecision['onFire'] = [];
    const events: RefDecision['events'] = [];
    const changed = new Map<string, string>();
    /** Each written counter's values before the occurrence's first write of it. */
    const before = new Map<string, string>();
    const outcome = new Map(run.trace.map((e) => [e.rule.qid, e.outcome]));
    for (const r of order) {
      let ops = written.get(r.qid) ?? (outcome.get(r.qid) === 'fired' ? run.pending.get(r.qid)?.ops : undefined);
      if (ops === undefined) continue;
      if (outcome.get(r.qid) !== 'fired') {
        // A rule that did not fire after all applies no side-effect ([OAR-OPS-3], [OAR-OPS-4],
        // [OAR-EVAL-12]): its counter writes are taken back; an event already sent cannot be.
        env.note('partial-side-effects');
        ops = ops.filter((op) => op.action === 'publish_event');
      }
      for (const op of ops) {
        onFire.push({ rule: r.qid, action: op.action });
        if (op.action === 'publish_event') {
          events.push({ rule: r.qid, anchor: env.anchorValue, effect: r.c.effect }); // [OAR-FIRE-7]
          continue;
        }
        const key = op.key as string;
        const v = this.counters.get(key) ?? { fire_count: 0, breaker_count: 0 };
        if (!before.has(key)) before.set(key, `${v.fire_count},${v.breaker_count}`);
        if (op.action === 'increment_counter') v.fire_count += 1;
        else if (op.action === 'reset_counter') v.fire_count = 0;
        else if (op.action === 'increment_breaker') v.breaker_count += 1;
        else v.breaker_count = 0;
        this.counters.set(key, v);
        changed.set(op.name as string, key);
      }
    }
    const counters: RefDecision['counters'] = {};
    for (const [name, key] of changed) {
      const now = this.counters.get(key) as { fire_count: number; breaker_count: number };
      // [OAR-CONF-21] a counter written back to the value it had is not a change.
      if (`${now.fire_count},${now.breaker_count}` !== before.get(key)) counters[name] = { ...now };
    }

    const d: RefDecision = {
      ...resolved,
      transforms: [],
      skippedTransforms: [],
      applied: run.trace.map((e) => ({ rule: e.rule.qid, outcome: e.outcome })),
      onFire,
      events,
      counters,
    };
    if (resolved.decision === 'transform') {
      // [OAR-OPS-15]: every enforced rule that fired with transform, in evaluation order.
      const list: AccumulatedTransform[] = [];
      for (const e of run.trace) {
        const t = e.rule.c.transform;
        if (e.outcome !== 'fired' || t === undefined) continue;
        d.transforms.push({ rule: e.rule.qid, action: t.action, target: t.target === 'content' ? 'content' : t.target.name, replacement: t.replacement });
        list.push({ rule: e.rule.qid, action: t.action, replacement: t.replacement, target: t.target === 'content' ? 'content' : (run.spans.get(e.rule.qid) ?? []) });
      }
      if (occ.content !== undefined) {
        const out = applyTransforms(occ.content, list);
        d.content = out.content;
        d.skippedTransforms = out.skipped;
      }
    } else if (occ.content !== undefined) {
      // [OAR-CONF-34]: the content after the applied transforms; none is applied at a block
      // ([OAR-OPS-17]) or when no transform fired, so the content is unchanged.
      d.content = occ.content;
    }
    return d;
  }

  /** [OAR-PROF-9]: the host's tool name becomes a step after a `tool.pre_invoke` that did not block. */
  private recordActivity(occ: Occurrence, env: Env, decision: Effect): void {
    const size = this.pack.capability.activityWindow;
    if (size === 0 || occ.anchor !== this.preInvoke || decision === 'block') return;
    const toolSym = this.pack.symbols.find((s) => s.name === 'tool');
    const tool = toolSym === undefined ? occ.toolCall?.name : settle(() => new Reader(env, null, null).fact(toolSym.slot));
    if (typeof tool !== 'string' || tool === '') return;
    const steps = [...(this.activity.get(env.session) ?? []), tool];
    this.activity.set(env.session, steps.slice(Math.max(0, steps.length - size)));
  }
}

/** [OAR-FACT-12]: the flow's steps appear in order, not necessarily contiguously. */
function subsequence(flow: readonly string[], window: readonly string[]): boolean {
  let i = 0;
  for (const step of window) if (i < flow.length && step === flow[i]) i++;
  return i === flow.length;
}

/** [OAR-OPS-19]: every member a map with `start` and `end` non-negative integers, start <= end. */
function readSpans(members: unknown[]): Span[] {
  return members.map((m) => {
    if (!isMapValue(m) || !hasMember(m, 'start') || !hasMember(m, 'end')) throw new Raise('provider_failure', 'span without a range');
    const start = intOf(memberOf(m, 'start'));
    const end = intOf(memberOf(m, 'end'));
    if (start === undefined || end === undefined || start < 0 || end < 0 || start > end) throw new Raise('provider_failure', 'malformed span');
    return { start: Number(start), end: Number(end) };
  });
}
