/**
 * Counters ([OAR-FIRE-3] to [OAR-FIRE-6], [OAR-FIRE-10]): keyed by the qualified identifier of the
 * rule, the session, and — only when the rule declares `counter_scope` — the scope value, even
 * when that value is empty. The two are different counters.
 */

import { SessionTable, type SessionBound } from './session-table.js';

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

/** Apply one op to a map of counter values by store key ([OAR-FIRE-3], [OAR-FIRE-4]). */
export function applyCounterOp(values: Map<string, CounterValues>, op: CounterOp): void {
  const k = counterKeyString(op.key);
  let v = values.get(k);
  if (v === undefined) values.set(k, (v = { fire_count: 0, breaker_count: 0 }));
  switch (op.action) {
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

  constructor(bound: SessionBound = {}) {
    this.sessions = new SessionTable(bound);
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
      applyCounterOp(values, op);
    }
  }

  /** Forget one session's counters. */
  forgetSession(session: string): void {
    this.sessions.delete(session);
    if (session === this.pinned) this.pinnedValues = undefined;
  }

  /** Forget every counter. */
  clear(): void {
    this.sessions.clear();
    this.pinnedValues = undefined;
  }
}
