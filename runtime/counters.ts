/**
 * Counters ([OAR-FIRE-3] to [OAR-FIRE-6], [OAR-FIRE-10]): keyed by the qualified identifier of the
 * rule, the session, and — only when the rule declares `counter_scope` — the scope value, even
 * when that value is empty. The two are different counters.
 */

import { DEFAULT_MAX_COUNTERS, DEFAULT_MAX_COUNTERS_PER_SESSION, SessionTable, type SessionBound } from './session-table.js';
import { markHandled } from './thrown.js';

export interface CounterKey {
  readonly rule: string;
  readonly session: string;
  /** Absent for an unscoped rule; possibly '' for a scoped one ([OAR-FIRE-10]). */
  readonly scope?: string;
  /**
   * The store key string (`counterKeyString`), when the engine built it with the key: keys the
   * engine hands to a store are built once per counter and reused, and carry it as a
   * non-enumerable property so a read builds no string. Hosts need not set it.
   */
  readonly id?: string;
}

export interface CounterValues {
  fire_count: number;
  breaker_count: number;
}

export type CounterAction = 'increment_counter' | 'reset_counter' | 'increment_breaker' | 'reset_breaker';

/** One counter action on one key. The engine reuses op objects: a store may keep them, never change them. */
export interface CounterOp {
  readonly key: CounterKey;
  readonly action: CounterAction;
}

/**
 * A synchronous counter store. `decide` reads while evaluating (nothing is written until every
 * condition has been evaluated, so every read observes the same snapshot, [OAR-FIRE-6]) and writes
 * after the decision, one `apply` call per run of a rule's consecutive counter actions (an event
 * between two of them splits the batch, so actions reach the store in listed order, [OAR-FIRE-8]).
 */
export interface CounterStore {
  read(key: CounterKey): CounterValues;
  /**
   * Apply the ops in order; throw if they cannot be applied ([OAR-FIRE-9]). The array is the
   * engine's scratch list, reused after the call returns: copy it to keep it.
   */
  apply(ops: readonly CounterOp[]): void;
  /** Optional: release a session's counters (the engine calls it from `endSession`). */
  forgetSession?(session: string): void;
  /**
   * Optional: `decide()` brackets the reads and writes of one occurrence with `begin(session, at)`
   * and `end()`, so a store may look the session up once per decision instead of at every read.
   * `at` is the decision's time (`Date.now()`), read once by the engine.
   */
  begin?(session: string, at: number): void;
  end?(): void;
  /**
   * Optional: put one counter back to `values`, what the occurrence read before writing it. The
   * engine calls it to withdraw the writes of a rule whose later side-effect failed, which makes
   * the rule one that cannot be evaluated and so applies no side-effect ([OAR-FIRE-9],
   * [OAR-OPS-4]), and of rules a late failure left unreached ([OAR-EVAL-12]). A store without it,
   * or whose `restore` returns false (it cannot take that write back), keeps such writes, and the
   * decision reports them as applied.
   */
  restore?(key: CounterKey, values: CounterValues): void | boolean;
}

/** `<qualified id>` or `<qualified id>#<scope value>` ([OAR-CONF-33]). */
export function counterName(key: CounterKey): string {
  return key.scope === undefined ? key.rule : `${key.rule}#${key.scope}`;
}

/** The store's internal key: NUL separators cannot occur in a qualified identifier. */
export function counterKeyString(key: CounterKey): string {
  if (key.id !== undefined) return key.id;
  return key.scope === undefined ? `${key.rule}\u0000${key.session}` : `${key.rule}\u0000${key.session}\u0000${key.scope}`;
}

export const ZERO_COUNTERS: CounterValues = Object.freeze({ fire_count: 0, breaker_count: 0 }) as CounterValues;

/** A count a store may hold: a non-negative safe integer ([OAR-FIRE-4] only adds one or resets to zero). */
function isCount(n: unknown): n is number {
  return Number.isSafeInteger(n) && (n as number) >= 0;
}

/** How a store failure names what came back instead of `{ fire_count, breaker_count }`. */
function kind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number') return Number.isNaN(v) ? 'NaN' : String(v);
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/**
 * The values a host store read back for `key`, checked ([OAR-FIRE-9], [OAR-OPS-3]): an object
 * whose `fire_count` and `breaker_count` are non-negative safe integers, copied so a getter is
 * read once. Anything else — a Promise (an async store passed as `counters`), a string from a
 * network reply, NaN, a negative or fractional count — throws, which the engine treats as the
 * store failing: every rule reading or writing that counter takes its `on_error`. A wrong count
 * is never used: `fire_count >= 3` over NaN is false, and a `fail_closed` rule would allow.
 */
export function checkedValues(v: unknown, key: CounterKey): CounterValues {
  let fire: unknown;
  let breaker: unknown;
  if (typeof v === 'object' && v !== null) {
    fire = (v as Partial<CounterValues>).fire_count;
    breaker = (v as Partial<CounterValues>).breaker_count;
    if (isCount(fire) && isCount(breaker)) return { fire_count: fire + 0, breaker_count: breaker + 0 }; // + 0: no -0
    if (typeof (v as { then?: unknown }).then === 'function') markHandled(v);
  }
  const got = typeof v === 'object' && v !== null ? `fire_count ${kind(fire)}, breaker_count ${kind(breaker)}` : kind(v);
  throw new Error(`oarc: the counter store read ${got} for counter ${counterName(key)}; a counter is a non-negative safe integer`);
}

/**
 * A host's synchronous store, checked: what it reads back goes through `checkedValues`, and an
 * `apply` that returns a Promise (an async store passed as `counters`) is a write whose outcome
 * the engine never learns — a side-effect that cannot be applied ([OAR-FIRE-9]), so it throws.
 * The engine wraps every store a host passes; its own `MemoryCounterStore` is trusted and read
 * directly, so the decision hot path pays nothing.
 */
export function checkedCounters(store: CounterStore): CounterStore {
  return {
    read: (key) => checkedValues(store.read(key), key),
    apply: (ops) => {
      const r: unknown = store.apply(ops);
      if (typeof r === 'object' && r !== null && typeof (r as { then?: unknown }).then === 'function') {
        markHandled(r);
        throw new Error('oarc: the counter store\'s apply returned a Promise: a store passed as `counters` applies synchronously (pass an asynchronous store as `asyncCounters`)');
      }
    },
    forgetSession: (session) => store.forgetSession?.(session),
    begin: (session, at) => store.begin?.(session, at),
    end: () => store.end?.(),
    ...(typeof store.restore === 'function' ? { restore: (key: CounterKey, values: CounterValues) => (store.restore as NonNullable<CounterStore['restore']>).call(store, key, values) !== false } : {}),
  };
}

/** Is `store` the engine's own in-memory store (not a subclass a host may have changed)? */
export function isMemoryStore(store: CounterStore): boolean {
  return store instanceof MemoryCounterStore && Object.getPrototypeOf(store) === MemoryCounterStore.prototype;
}

/** Apply one op to a map of counter values by store key ([OAR-FIRE-3], [OAR-FIRE-4]). */
export function applyCounterOp(values: Map<string, CounterValues>, op: CounterOp): void {
  const k = counterKeyString(op.key);
  let v = values.get(k);
  if (v === undefined) values.set(k, (v = { fire_count: 0, breaker_count: 0 }));
  stepCounter(v, op.action);
}

/** One counter action on a pair of values, in place ([OAR-FIRE-4]). */
export function stepCounter(v: CounterValues, action: CounterAction): void {
  switch (action) {
    case 'increment_counter': v.fire_count++; break;
    case 'reset_counter': v.fire_count = 0; break;
    case 'increment_breaker': v.breaker_count++; break;
    case 'reset_breaker': v.breaker_count = 0; break;
  }
}

/**
 * The in-memory default, bounded like a Redis with a TTL ([OAR-FIRE-5]): a session's counters are
 * kept while it is used, for at most `idleMs` after its last use and for at most `maxSessions`
 * sessions (the least recently used go first; `sessions.evicted` counts them). `forgetSession`
 * releases a session's counters at once — `engine.endSession` calls it.
 */
export class MemoryCounterStore implements CounterStore {
  /** Per session, its counters by store key. */
  readonly sessions: SessionTable<Map<string, CounterValues>>;
  /** Counters held in all sessions, and the bounds on them (`SessionBound`). */
  private total = 0;
  readonly maxCounters: number;
  readonly maxCountersPerSession: number;

  constructor(bound: SessionBound = {}) {
    this.sessions = new SessionTable(bound, Date.now, (values) => void (this.total -= values.size));
    this.maxCounters = bound.maxCounters ?? DEFAULT_MAX_COUNTERS;
    this.maxCountersPerSession = bound.maxCountersPerSession ?? DEFAULT_MAX_COUNTERS_PER_SESSION;
    if (!(this.maxCounters >= 1)) throw new Error(`oarc: maxCounters must be at least 1, got ${String(bound.maxCounters)}`);
    if (!(this.maxCountersPerSession >= 1)) throw new Error(`oarc: maxCountersPerSession must be at least 1, got ${String(bound.maxCountersPerSession)}`);
  }

  /** Counters held now, in all sessions. */
  get size(): number {
    return this.total;
  }

  /**
   * Why `key` cannot be written, or undefined: a counter not held yet, in a session that holds
   * `maxCountersPerSession` already. Memory stays bounded whatever one session sends — a call
   * scoped by its fingerprint ([OAR-FIRE-10]) is a new counter at each new call — and the bound
   * fails the writing rule closed ([OAR-FIRE-9]) rather than forgetting counters, which could
   * forget the one a breaker is counting.
   */
  room(key: CounterKey): string | undefined {
    const values = this.values(key.session);
    if (values === undefined || values.size < this.maxCountersPerSession || values.has(counterKeyString(key))) return undefined;
    return `the session already holds ${values.size} counters, the most one session may hold (maxCountersPerSession): counter ${counterName(key)} cannot be written`;
  }

  /**
   * The session of the decision under way and its counters, looked up once by `begin`: a lookup
   * reads the clock (for the idle bound), which costs more than the rest of a read, and one
   * decision reads and writes its session's counters several times within microseconds.
   */
  private pinned: string | undefined = undefined;
  private pinnedValues: Map<string, CounterValues> | undefined = undefined;
  private pinnedAt = 0;

  begin(session: string, at: number = this.sessions.clock()): void {
    this.pinned = session;
    this.pinnedAt = at;
    this.pinnedValues = this.sessions.get(session, at);
  }

  end(): void {
    this.pinned = undefined;
    this.pinnedValues = undefined;
  }

  private values(session: string): Map<string, CounterValues> | undefined {
    return session === this.pinned ? this.pinnedValues : this.sessions.get(session);
  }

  read(key: CounterKey): CounterValues {
    return this.values(key.session)?.get(counterKeyString(key)) ?? ZERO_COUNTERS;
  }

  apply(ops: readonly CounterOp[]): void {
    for (const op of ops) {
      const s = op.key.session;
      let values = this.values(s);
      if (values === undefined) {
        if (s === this.pinned) values = this.pinnedValues = this.sessions.add(s, new Map(), this.pinnedAt);
        else values = this.sessions.add(s, new Map());
      }
      const k = counterKeyString(op.key);
      let v = values.get(k);
      if (v === undefined) {
        const full = this.room(op.key);
        if (full !== undefined) throw new Error(`oarc: ${full}`);
        values.set(k, (v = { fire_count: 0, breaker_count: 0 }));
        // Past the total, the least recently used sessions go, as past maxSessions.
        if (++this.total > this.maxCounters) while (this.total > this.maxCounters && this.sessions.evictOldest(s));
      }
      stepCounter(v, op.action);
    }
  }

  restore(key: CounterKey, values: CounterValues): void {
    const v = this.values(key.session)?.get(counterKeyString(key));
    if (v === undefined) return; // never written: it reads as the zero it was
    v.fire_count = values.fire_count;
    v.breaker_count = values.breaker_count;
  }

  /** Forget one session's counters. */
  forgetSession(session: string): void {
    this.sessions.delete(session);
    if (session === this.pinned) this.pinnedValues = undefined;
  }

  /** Forget every counter. */
  clear(): void {
    this.sessions.clear();
    this.total = 0;
    this.pinnedValues = undefined;
  }
}
