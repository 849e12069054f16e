/**
 * Per-session state with a bound: at most `max` sessions, and none idle longer than `idleMs`.
 * Sessions are kept in least-recently-used order (a Map's insertion order, refreshed on use), so
 * the bound drops the session used longest ago; an idle one is dropped when next looked up or when
 * it reaches the front. Both are counted (`evicted`, `expired`): a session dropped while still
 * active starts again from nothing, which an operator must be able to see.
 */
/** A session's state in the recency list: oldest at `head`, most recently used at `tail`. */
interface Entry<V> {
  readonly session: string;
  value: V;
  at: number;
  prev: Entry<V> | null;
  next: Entry<V> | null;
}

export interface SessionBound {
  /** At most this many sessions are kept; default 250,000. */
  readonly maxSessions?: number;
  /** A session unused for this long is forgotten; default 24 hours (Redis's default TTL). */
  readonly idleMs?: number;
  /**
   * The in-memory counter store (`MemoryCounterStore`): at most this many counters in all; past
   * it the least recently used sessions are forgotten, as past `maxSessions`. Default 1,000,000.
   */
  readonly maxCounters?: number;
  /**
   * At most this many counters in one session: a new one beyond it cannot be written, and the
   * rule writing it takes its `on_error` ([OAR-FIRE-9]). Default 100,000.
   */
  readonly maxCountersPerSession?: number;
}

export const DEFAULT_MAX_SESSIONS = 250_000;
export const DEFAULT_IDLE_MS = 86_400_000;
export const DEFAULT_MAX_COUNTERS = 1_000_000;
export const DEFAULT_MAX_COUNTERS_PER_SESSION = 100_000;

/**
 * The recency order is a doubly linked list through the entries, so marking a session used moves
 * two pointers: re-inserting into a Map (its insertion order) allocated a new hash table every few
 * moves and was the largest single cost of a decision that touched two sessions' tables.
 */
export class SessionTable<V> {
  private readonly map = new Map<string, Entry<V>>();
  private head: Entry<V> | null = null;
  private tail: Entry<V> | null = null;
  readonly max: number;
  readonly idleMs: number;
  /** Sessions dropped to stay within `max`, and sessions dropped after `idleMs` unused. */
  evicted = 0;
  expired = 0;

  constructor(
    bound: SessionBound = {},
    private readonly now: () => number = Date.now,
    /** Told of each session's state as it is dropped (evicted, expired, deleted): a holder of a total keeps it. */
    private readonly dropped?: (value: V) => void,
  ) {
    this.max = bound.maxSessions ?? DEFAULT_MAX_SESSIONS;
    this.idleMs = bound.idleMs ?? DEFAULT_IDLE_MS;
    if (!(this.max >= 1)) throw new Error(`oarc: maxSessions must be at least 1, got ${String(bound.maxSessions)}`);
    if (!(this.idleMs > 0)) throw new Error(`oarc: idleMs must be above 0, got ${String(bound.idleMs)}`);
  }

  get size(): number {
    return this.map.size;
  }

  /**
   * The time by this table's clock. A caller that looks several sessions up for one piece of work
   * (a decision) reads it once and passes it on: on a virtual machine's clock a read costs about
   * as much as the lookup itself.
   */
  clock(): number {
    return this.now();
  }

  /** The session's state, marking it used at `t`; undefined when it has none (or it expired). */
  get(session: string, t: number = this.now()): V | undefined {
    const e = this.map.get(session);
    if (e === undefined) return undefined;
    if (t - e.at > this.idleMs) {
      this.drop(e);
      this.expired++;
      return undefined;
    }
    e.at = t;
    if (e !== this.tail) {
      this.detach(e);
      this.append(e);
    }
    return e.value;
  }

  /** Keep `value` for a session that has none, then drop what the bound no longer allows. */
  add(session: string, value: V, t: number = this.now()): V {
    const old = this.map.get(session);
    if (old !== undefined) this.drop(old);
    const e: Entry<V> = { session, value, at: t, prev: null, next: null };
    this.map.set(session, e);
    this.append(e);
    for (let h = this.head; h !== null && h !== e; h = this.head) {
      if (this.map.size > this.max) this.evicted++;
      else if (t - h.at > this.idleMs) this.expired++;
      else break;
      this.drop(h);
    }
    return value;
  }

  /**
   * Forget the least recently used session other than `keep` (counted as evicted); false when
   * there is none. For a holder whose own bound (a total of counters) is past its limit.
   */
  evictOldest(keep: string): boolean {
    let h = this.head;
    if (h !== null && h.session === keep) h = h.next;
    if (h === null) return false;
    this.evicted++;
    this.drop(h);
    return true;
  }

  delete(session: string): void {
    const e = this.map.get(session);
    if (e !== undefined) this.drop(e);
  }

  /** Unlink `e`, and tell the holder. */
  private drop(e: Entry<V>): void {
    this.unlink(e);
    this.dropped?.(e.value);
  }

  clear(): void {
    this.map.clear();
    this.head = this.tail = null;
  }

  private unlink(e: Entry<V>): void {
    this.map.delete(e.session);
    this.detach(e);
  }

  private detach(e: Entry<V>): void {
    if (e.prev === null) this.head = e.next;
    else e.prev.next = e.next;
    if (e.next === null) this.tail = e.prev;
    else e.next.prev = e.prev;
    e.prev = e.next = null;
  }

  private append(e: Entry<V>): void {
    e.prev = this.tail;
    if (this.tail === null) this.head = e;
    else this.tail.next = e;
    this.tail = e;
  }
}
