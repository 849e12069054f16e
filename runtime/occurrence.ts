/**
 * The fact environment of one anchor occurrence: what the host observed (plain values or lazy
 * providers), what oarc derives from other observations (DESIGN "Decisions the spec leaves
 * open"), the core facts (`anchor`, the counters), and the facts a detector produced for the rule
 * being evaluated ([OAR-FACT-11]: local to that rule).
 *
 * Every value is checked against its declared type before use ([OAR-FACT-26]); an absent value is
 * the zero of its type ([OAR-FACT-25]); a provider that throws is a provider failure. Host facts
 * are produced once per occurrence and cached — including a failure, so a failing provider is
 * asked once and fails every rule that reads it the same way.
 */
import type { BundleSymbol } from './bundle.js';
import type { FactReader } from './facts.js';
import { ZERO_COUNTERS, type CounterValues } from './counters.js';
import type { FactType } from './types.js';
import { Raise, isRaise } from './raise.js';
import { describeThrown } from './thrown.js';
import { checkValue, isMap, mapGet, zeroValue, type OarMap } from './values.js';
import { asInt } from './int64.js';
import { cpLength } from './strings.js';
import { toolArgsFingerprint } from './fingerprint.js';

/** A tool call as a host adapter receives it ([OAR-FACT-28], [OAR-CONF-40]). */
export interface ToolCall {
  name: string;
  arguments?: Record<string, unknown>;
}

/** One anchor occurrence, as the host describes it. */
export interface Occurrence {
  /** The host-local anchor identifier ([OAR-CONF-29]). */
  anchor: string;
  session?: string;
  /**
   * Observations by fact or function name. A function value under a fact's name is a lazy
   * provider, called at most once, only if a selected rule reads the fact ([OAR-FACT-11]); under
   * an observation function's name it is called with the argument; any other value under a
   * function's name is its result for every argument ([OAR-CONF-26]).
   */
  facts?: Readonly<Record<string, unknown>>;
  /** The content at a content anchor, for transforms and `content_length`. */
  content?: string;
  toolCall?: ToolCall;
  /** An explicit activity window for this occurrence only ([OAR-PROF-9], [OAR-CONF-40]). */
  recentActivity?: readonly string[];
  /** What `detector://fixture` reports when a rule invokes it ([OAR-CONF-25]). */
  detectorFacts?: Readonly<Record<string, unknown>>;
}

/** Reads a rule's counters; `fire_count_of` resolves its target's scope through `scopeOf`. */
export interface CounterContext {
  /** Qualified identifier → counter scope slot (or -1), for every loaded rule. */
  readonly scopeOf: ReadonlyMap<string, number>;
  /**
   * The values of `rule`'s counters in this occurrence's session (`scope`: the rule's scope value,
   * undefined when it declares none) as this occurrence observes them: every read at one
   * occurrence observes the same snapshot, even one made after a side-effect ([OAR-FIRE-6]).
   */
  read(rule: string, scope: string | undefined): CounterValues;
}

/** What each lazy provider of an occurrence produced, by fact name: its value, or its failure. */
export type ProviderMemo = Map<string, { failed: boolean; value: unknown }>;

const hasOwn = Object.prototype.hasOwnProperty;
const UNSET = 0;
const VALUE = 1;
const FAILED = 2;

export class OccurrenceFacts implements FactReader {
  private occ: Occurrence = { anchor: '' };
  private anchorValue = '';
  private readonly state: Uint8Array;
  private readonly cache: unknown[];
  private readonly bySlotName: readonly string[];
  /** The rule being evaluated (qualified id) and its counter scope slot. */
  rule = '';
  ruleScope = -1;
  /** Facts the current rule's detector produced, or null. */
  overlay: Readonly<Record<string, unknown>> | null = null;
  /**
   * While rendering the copy of an `on_error` block whose rule's detector failed or never ran:
   * the detector and the slots of what it would have produced. Those facts are unavailable — they
   * raise rather than read as their zero ([OAR-COPY-11]) — unless the host supplied them; every
   * other fact is a host observation and renders as usual, its zero when absent ([OAR-FACT-25],
   * [OAR-COPY-7]). Null otherwise.
   */
  unavailable: { readonly ref: string; readonly slots: Uint8Array } | null = null;
  counters: CounterContext | null = null;
  private memo: ProviderMemo | undefined = undefined;
  /** The content's length in code points, once computed at this occurrence; -1 before. */
  private contentCodePoints = -1;
  private readonly special: {
    fireCount: number; breakerCount: number; fireCountOf: number; breakerCountOf: number; anchor: number;
  };
  private readonly derivedFact: ReadonlyMap<number, (self: OccurrenceFacts) => unknown>;
  private readonly derivedFn: ReadonlyMap<number, (self: OccurrenceFacts, arg: string) => unknown>;

  constructor(private readonly symbols: readonly BundleSymbol[]) {
    this.state = new Uint8Array(symbols.length);
    this.cache = new Array(symbols.length);
    this.bySlotName = symbols.map((s) => s.name);
    const slot = (name: string) => symbols.findIndex((s) => s.name === name);
    this.special = {
      fireCount: slot('fire_count'),
      breakerCount: slot('breaker_count'),
      fireCountOf: slot('fire_count_of'),
      breakerCountOf: slot('breaker_count_of'),
      anchor: slot('anchor'),
    };
    this.derivedFact = derivedFacts(slot);
    this.derivedFn = derivedFunctions(slot);
  }

  /**
   * Start a new occurrence: forget every cached value. `memo` keeps what lazy providers produced
   * for the occurrence across several evaluations of it (`decideAsync`).
   */
  reset(occ: Occurrence, anchorValue: string, counters: CounterContext, memo?: ProviderMemo): void {
    this.occ = occ;
    this.memo = memo;
    this.anchorValue = anchorValue;
    this.counters = counters;
    this.state.fill(UNSET);
    this.contentCodePoints = -1;
    this.rule = '';
    this.ruleScope = -1;
    this.overlay = null;
    this.unavailable = null;
  }

  get occurrence(): Occurrence {
    return this.occ;
  }

  /**
   * The length in code points of `content`, which must be this occurrence's content (a string):
   * counted once per occurrence — `content_length` ([OAR-EXPR-16]) and the span algorithm
   * ([OAR-OPS-16]) both need it, and counting is a scan of the whole content.
   */
  contentLength(content: string): number {
    let n = this.contentCodePoints;
    if (n < 0) n = this.contentCodePoints = cpLength(content);
    return n;
  }

  fact(slot: number): unknown {
    const sp = this.special;
    if (slot === sp.fireCount || slot === sp.breakerCount) {
      const v = this.readCounters(this.rule, this.ruleScope);
      return slot === sp.fireCount ? v.fire_count : v.breaker_count;
    }
    // 5.3: `anchor` is a property of the occurrence, the same for every rule — no detector
    // observation can change it.
    if (slot === sp.anchor) return this.anchorValue;
    if (this.overlay !== null || this.unavailable !== null) {
      // Host objects (a detector's result, the facts map) may be Proxies or carry getters: whatever
      // they throw is this fact's provider failure ([OAR-OPS-3]), never an exception out of decide.
      try {
        const v = this.fromOverlay(slot);
        if (v !== undefined) return v;
      } catch (e) {
        throw isRaise(e) ? e : new Raise('provider_failure', `fact ${this.bySlotName[slot]}: ${describeThrown(e)}`);
      }
    }
    const st = this.state[slot];
    if (st === VALUE) return this.cache[slot];
    if (st === FAILED) throw this.cache[slot];
    try {
      const v = this.produce(slot);
      this.cache[slot] = v;
      this.state[slot] = VALUE;
      return v;
    } catch (e) {
      const raise = isRaise(e) ? e : new Raise('provider_failure', `fact ${this.bySlotName[slot]}: ${describeThrown(e)}`);
      this.cache[slot] = raise;
      this.state[slot] = FAILED;
      throw raise;
    }
  }

  /**
   * The fact as the current rule's detector observed it ([OAR-FACT-11]), undefined when the
   * occurrence's own observation applies; raises when the fact is unavailable ([OAR-COPY-11]).
   */
  private fromOverlay(slot: number): unknown {
    const name = this.bySlotName[slot] as string;
    if (this.overlay !== null) {
      if (hasOwn.call(this.overlay, name)) return checkValue(this.typeOf(slot), this.overlay[name], `detector fact ${name}`);
      // [OAR-FACT-11] a fact oarc derives from other facts (content_contains_untrusted from
      // content_trust_tiers, …) may rest on what this rule's detector produced: derive it for this
      // rule alone, never through the occurrence cache, so it neither leaks to a later rule nor
      // hides the detector's observation behind a value cached for an earlier one.
      const derived = this.derivedFact.get(slot);
      const facts = this.occ.facts;
      if (derived !== undefined && !(facts !== undefined && hasOwn.call(facts, name))) return derived(this);
    }
    const unavailable = this.unavailable;
    if (unavailable !== null && unavailable.slots[slot] === 1 && !this.hostSupplies(slot)) {
      throw new Raise('provider_failure', `fact ${name} is unavailable: detector ${unavailable.ref} produced no observations`);
    }
    return undefined;
  }

  call(slot: number, arg: unknown): unknown {
    const sp = this.special;
    if (slot === sp.fireCountOf || slot === sp.breakerCountOf) {
      const target = arg as string;
      const scope = this.counters?.scopeOf.get(target) ?? -1;
      const v = this.readCounters(target, scope);
      return slot === sp.fireCountOf ? v.fire_count : v.breaker_count;
    }
    const sym = this.symbols[slot] as Extract<BundleSymbol, { kind: 'function' }>;
    try {
      return this.observe(sym, slot, arg);
    } catch (e) {
      throw isRaise(e) ? e : new Raise('provider_failure', `function ${sym.name} failed: ${describeThrown(e)}`);
    }
  }

  /** An observation function's result: the host's implementation, a derived one, or the zero. */
  private observe(sym: Extract<BundleSymbol, { kind: 'function' }>, slot: number, arg: unknown): unknown {
    const name = sym.name;
    const source = this.overlay !== null && hasOwn.call(this.overlay, name) ? this.overlay : this.occ.facts;
    if (source !== undefined && hasOwn.call(source, name)) {
      const impl = source[name];
      const result: unknown = typeof impl === 'function' ? (impl as (a: unknown) => unknown)(arg) : impl;
      if (result !== undefined) return checkValue(sym.result, result, `function ${name}`);
    }
    const derived = this.derivedFn.get(slot);
    return derived ? derived(this, arg as string) : zeroValue(sym.result);
  }

  /** The counters of `rule`, keyed by its scope value at this occurrence ([OAR-FIRE-11]). */
  readCounters(rule: string, scopeSlot: number): CounterValues {
    const c = this.counters;
    if (c === null) return ZERO_COUNTERS;
    return c.read(rule, scopeSlot < 0 ? undefined : this.scopeValue(scopeSlot));
  }

  /**
   * A counter scope value ([OAR-FIRE-10]): the occurrence's observation of the scope fact, never
   * what a detector produced for the rule being evaluated. Every rule that reads or writes a
   * counter at one occurrence — the rule itself, a `fire_count_of` reader ([OAR-FIRE-11]), the
   * plan of a batched read — then names the same counter ([OAR-FIRE-6]); a detector's
   * observations stay local to its rule's condition, target and copy ([OAR-FACT-11]).
   */
  scopeValue(scopeSlot: number): string {
    const overlay = this.overlay;
    if (overlay === null) return this.fact(scopeSlot) as string;
    this.overlay = null;
    try {
      return this.fact(scopeSlot) as string;
    } finally {
      this.overlay = overlay;
    }
  }

  private typeOf(slot: number): FactType {
    const s = this.symbols[slot] as BundleSymbol;
    return s.kind === 'fact' ? s.type : s.result;
  }

  private produce(slot: number): unknown {
    if (slot === this.special.anchor) return this.anchorValue;
    const name = this.bySlotName[slot] as string;
    const facts = this.occ.facts;
    const type = this.typeOf(slot);
    if (facts !== undefined && hasOwn.call(facts, name)) {
      let v = facts[name];
      if (typeof v === 'function') v = this.provide(name, v as () => unknown);
      if (v !== undefined) return checkValue(type, v, `fact ${name}`);
    }
    const derived = this.derivedFact.get(slot);
    return derived ? derived(this) : zeroValue(type);
  }

  /**
   * Ask a lazy provider ([OAR-FACT-11]): at most once per occurrence, even across the fact caches
   * of the several evaluations `decideAsync` may make of it (its `memo`).
   */
  private provide(name: string, provider: () => unknown): unknown {
    const memo = this.memo;
    let kept = memo?.get(name);
    if (kept === undefined) {
      try {
        kept = { failed: false, value: provider() };
      } catch (e) {
        kept = { failed: true, value: new Raise('provider_failure', `provider of fact ${name} failed: ${describeThrown(e)}`) };
      }
      memo?.set(name, kept);
    }
    if (kept.failed) throw kept.value;
    return kept.value;
  }

  /** Does the occurrence itself observe the fact in `slot` (supplied by the host, or derived from what it supplied)? */
  private hostSupplies(slot: number): boolean {
    const facts = this.occ.facts;
    return facts !== undefined && hasOwn.call(facts, this.bySlotName[slot] as string);
  }

  /** The host's `tool_args`, from facts or from the tool call; undefined when neither. */
  toolArgs(slot: number): OarMap | undefined {
    if (slot >= 0) return this.fact(slot) as OarMap;
    return this.occ.toolCall?.arguments;
  }
}

/**
 * Facts derived from other observations when the host did not supply them under their own name
 * (DESIGN decisions; [OAR-FACT-28], [OAR-CONF-40]). These are observations, not verdicts
 * ([OAR-FACT-5]).
 */
function derivedFacts(slot: (name: string) => number): Map<number, (self: OccurrenceFacts) => unknown> {
  const m = new Map<number, (self: OccurrenceFacts) => unknown>();
  const at = (name: string, f: (self: OccurrenceFacts) => unknown) => {
    const s = slot(name);
    if (s >= 0) m.set(s, f);
  };
  at('tool', (o) => {
    const t = o.occurrence.toolCall;
    return t === undefined ? '' : checkValue('string', t.name, 'tool_call.name');
  });
  at('tool_args', (o) => {
    const t = o.occurrence.toolCall;
    if (t === undefined || t.arguments === undefined) return zeroValue('map');
    return checkValue('map', t.arguments, 'tool_call.arguments');
  });
  // [OAR-FACT-28] the adapter's digest of the tool call; an absent tool call has an empty one.
  at('tool_args_fingerprint', (o) => {
    const t = o.occurrence.toolCall;
    if (t === undefined) return '';
    const args = t.arguments;
    return toolArgsFingerprint(checkValue('string', t.name, 'tool_call.name') as string, args === undefined ? {} : checkValue('map', args, 'tool_call.arguments'));
  });
  // The same check on both back ends: content that is not a string is a wrong-typed observation.
  at('content_length', (o) => {
    const c = o.occurrence.content;
    return c === undefined ? 0 : o.contentLength(checkValue('string', c, 'content') as string);
  });
  const tiers = slot('content_trust_tiers');
  at('content_contains_untrusted', (o) => (tiers >= 0 ? (o.fact(tiers) as string[]).includes('untrusted') : false));
  const lists = ['content_roles', 'content_origins', 'content_authorities', 'content_trust_tiers', 'content_sources'].map(slot).filter((s) => s >= 0);
  at('content_segment_count', (o) => lists.reduce((n, s) => Math.max(n, (o.fact(s) as unknown[]).length), 0));
  return m;
}

/** `tool_arg_*`: the named argument of the tool call, by own property, exact type or zero. */
function derivedFunctions(slot: (name: string) => number): Map<number, (self: OccurrenceFacts, arg: string) => unknown> {
  const m = new Map<number, (self: OccurrenceFacts, arg: string) => unknown>();
  const argsSlot = slot('tool_args');
  const arg = (o: OccurrenceFacts, name: string): unknown => {
    const args = o.toolArgs(argsSlot);
    return args !== undefined && isMap(args) ? mapGet(args, name) : undefined;
  };
  const at = (name: string, f: (self: OccurrenceFacts, arg: string) => unknown) => {
    const s = slot(name);
    if (s >= 0) m.set(s, f);
  };
  at('tool_arg_string', (o, n) => {
    const v = arg(o, n);
    return typeof v === 'string' ? v : '';
  });
  at('tool_arg_int', (o, n) => asInt(arg(o, n)) ?? 0);
  at('tool_arg_bool', (o, n) => {
    const v = arg(o, n);
    return typeof v === 'boolean' ? v : false;
  });
  return m;
}

