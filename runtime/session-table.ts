/**
 * Per-session state with a bound: at most `max` sessions, and none idle longer than `idleMs`.
 * Sessions are kept in least-recently-used order (a Map's insertion order, refreshed on use), so
 * the bound drops the session used longest ago; an idle one is dropped when next looked up or when
 * it reaches the front. Both are counted (`evicted`, `expired`): a session dropped while still
 * active starts again from nothing, which an operator must be able to see.
 */
interface Entry<V> {
  value: V;
  at: number;
}

export interface SessionBound {
  /** At most this many sessions are kept; default 250,000. */
  readonly maxSessions?: number;
  /** A session unused for this long is forgotten; default 24 hours (Redis's default TTL). */
  readonly idleMs?: number;
}

export const DEFAULT_MAX_SESSIONS = 250_000;
export const DEFAULT_IDLE_MS = 86_400_000;

export class SessionTable<V> {
  private readonly map = new Map<string, Entry<V>>();
  private last: string | undefined;
  readonly max: number;
  readonly idleMs: number;
  /** Sessions dropped to stay within `max`, and sessions dropped after `idleMs` unused. */
  evicted = 0;
  expired = 0;

  constructor(bound: SessionBound = {}, private readonly now: () => number = Date.now) {
    this.max = bound.maxSessions ?? DEFAULT_MAX_SESSIONS;
    this.idleMs = bound.idleMs ?? DEFAULT_IDLE_MS;
    if (!(this.max >= 1)) throw new Error(`oarc: maxSessions must be at least 1, got ${String(bound.maxSessions)}`);
    if (!(this.idleMs > 0)) throw new Error(`oarc: idleMs must be above 0, got ${String(bound.idleMs)}`);
  }

  get size(): number {
    return this.map.size;
  }

  /** The session's state, marking it used; undefined when it has none (or it expired). */
  get(session: string): V | undefined {
    const e = this.map.get(session);
    if (e === undefined) return undefined;
    const t = this.now();
    if (t - e.at > this.idleMs) {
      this.delete(session);
      this.expired++;
      return undefined;
    }
    e.at = t;
    if (this.last !== session) {
      // Move to the back: the most recently used.
      this.map.delete(session);
      this.map.set(session, e);
      this.last = session;
    }
    return e.value;
  }

  /** Keep `value` for a session that has none, then drop what the bound no longer allows. */
  add(session: string, value: V): V {
    const t = this.now();
    this.map.set(session, { value, at: t });
    this.last = session;
    for (const [s, e] of this.map) {
      if (this.map.size > this.max) this.evicted++;
      else if (t - e.at > this.idleMs) this.expired++;
      else break;
      this.delete(s);
    }
    return value;
  }

  delete(session: string): void {
    this.map.delete(session);
    if (this.last === session) this.last = undefined;
  }

  clear(): void {
    this.map.clear();
    this.last = undefined;
  }
}
