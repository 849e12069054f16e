/**
 * Counters behind a network ([OAR-FIRE-5], [OAR-FIRE-6]): a store shared by gateway replicas is
 * read once before an occurrence is evaluated and written once after it is decided — never a round
 * trip per rule. `decideAsync` plans which counters the selected rules may observe, reads them in
 * one batch into a snapshot, evaluates synchronously against the snapshot, and commits every
 * increment and reset in one atomic batch.
 */
import type { CounterKey, CounterOp, CounterStore, CounterValues } from './counters.js';
import { ZERO_COUNTERS, applyCounterOp, counterKeyString } from './counters.js';

export interface AsyncCounterStore {
  /** The values of every key, in order, in one round trip. */
  readMany(keys: readonly CounterKey[]): Promise<CounterValues[]>;
  /** Apply every op in order, atomically (all or none), in one round trip; reject on failure. */
  applyMany(ops: readonly CounterOp[]): Promise<void>;
}

/** What a versioned store read: the values of the keys, and the session's version with them. */
export interface VersionedRead {
  readonly values: CounterValues[];
  /** Changes whenever any counter (or the activity window) of the session changes; opaque to the engine. */
  readonly version: string;
  /** The session's activity window, oldest step first, when it was asked for ([OAR-PROF-9]). */
  readonly activity?: readonly string[];
}

/** A tool step to append to the session's shared window, which keeps its last `window` steps. */
export interface SharedStep {
  readonly tool: string;
  readonly window: number;
}

/**
 * A store shared by replicas that can make their decisions serialisable: every write to a session's
 * counters moves the session's version, and a write is applied only if the version is still the
 * one its decision read — otherwise the engine reads and evaluates again.
 */
export interface VersionedCounterStore extends AsyncCounterStore {
  /** Does the store hold sessions' activity windows for every replica ([OAR-PROF-9])? */
  readonly sharesActivity?: boolean;
  /**
   * The values of every key (all of `session`) and the session's version — and, when `activity`
   * is above 0, its last `activity` steps — atomically, in one round trip.
   */
  readVersioned(session: string, keys: readonly CounterKey[], activity?: number): Promise<VersionedRead>;
  /**
   * Apply every op (all on `session`'s counters) and append `step` to its window, atomically, if
   * the session's version is still `version` ('' applies unconditionally), moving it; resolve
   * false, applying nothing, if it moved. Reject on failure.
   */
  applyIfUnchanged(session: string, version: string, ops: readonly CounterOp[], step?: SharedStep): Promise<boolean>;
}

export function isVersioned(store: AsyncCounterStore): store is VersionedCounterStore {
  const s = store as Partial<VersionedCounterStore>;
  return typeof s.readVersioned === 'function' && typeof s.applyIfUnchanged === 'function';
}

/**
 * Resolves from the macrotask queue. A store that fails at once (a client that rejects every
 * command while disconnected) settles its promise as a microtask: a host awaiting decisions back
 * to back would then never let timers or I/O run — the client's reconnect among them. Every
 * failed store call therefore waits for one turn of the event loop before the decision returns.
 */
export function macrotask(): Promise<void> {
  return new Promise((resolve) => {
    if (typeof setImmediate === 'function') setImmediate(resolve);
    else setTimeout(resolve, 0);
  });
}

/**
 * The synchronous face the engine evaluates against: reads come from the batch read before
 * evaluation; writes are collected for the batch written after it. A read of a key that was not
 * planned is an engine bug, reported as a failure rather than answered with a guess.
 */
export class SnapshotStore implements CounterStore {
  private readonly values = new Map<string, CounterValues>();
  readonly pending: CounterOp[] = [];

  /**
   * `readFailure`: the batch read failed, and every read says so. `writeFailure`: the batch write
   * failed, and every write says so — the engine then routes each writing rule to its `on_error`.
   */
  constructor(
    keys: readonly CounterKey[],
    readonly initial: readonly CounterValues[],
    private readonly readFailure?: string,
    private readonly writeFailure?: string,
  ) {
    keys.forEach((k, i) => this.values.set(counterKeyString(k), { ...(initial[i] ?? ZERO_COUNTERS) }));
  }

  read(key: CounterKey): CounterValues {
    if (this.readFailure !== undefined) throw new Error(this.readFailure);
    const v = this.values.get(counterKeyString(key));
    if (v === undefined) throw new Error(`oarc: counter ${key.rule} was not in the snapshot read before evaluation`);
    return v;
  }

  /** Collects the ops and applies them to the snapshot, so the decision reports the new values. */
  apply(ops: readonly CounterOp[]): void {
    if (this.writeFailure !== undefined) throw new Error(this.writeFailure);
    for (const op of ops) {
      this.pending.push(op);
      applyCounterOp(this.values, op);
    }
  }
}
