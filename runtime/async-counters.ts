/**
 * Counters behind a network ([OAR-FIRE-5], [OAR-FIRE-6]): a store shared by gateway replicas is
 * read once before an occurrence is evaluated and written once after it is decided — never a round
 * trip per rule. `decideAsync` plans which counters the selected rules may observe, reads them in
 * one batch into a snapshot, evaluates synchronously against the snapshot, and commits every
 * increment and reset in one atomic batch.
 */
import type { CounterKey, CounterOp, CounterStore, CounterValues } from './counters.js';
import { ZERO_COUNTERS, applyCounterOp, checkedValues, counterKeyString } from './counters.js';
import { markHandled } from './thrown.js';

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
 * The values a shared store read for `keys`, checked ([OAR-FIRE-9]): exactly one per key, each a
 * pair of non-negative safe integers (`checkedValues`). A short reply would otherwise read its
 * missing counters as zero, and a long one would mean the store answered another question; either
 * throws, which `decideAsync` treats as a failed read — every rule reading or writing a counter
 * then takes its `on_error`.
 */
function checkedMany(values: unknown, keys: readonly CounterKey[], what: string): CounterValues[] {
  if (!Array.isArray(values)) throw new Error(`oarc: the counter store's ${what} resolved to ${values === null ? 'null' : typeof values}, not a list of counter values`);
  if (values.length !== keys.length) throw new Error(`oarc: the counter store's ${what} returned ${values.length} counter values for ${keys.length} keys`);
  const out: CounterValues[] = new Array(keys.length);
  for (let i = 0; i < keys.length; i++) out[i] = checkedValues(values[i], keys[i] as CounterKey);
  return out;
}

/**
 * A shared store, checked at every reply (the cost is nothing beside the round trip): `readMany`
 * and `readVersioned` values by `checkedMany`; a versioned read's `version` a string and, when
 * `activity` was asked for, its window a list of tool names ([OAR-PROF-9]) — a missing window
 * would silently fall back to this replica's own; `applyIfUnchanged` a boolean, since anything
 * else could report a write applied that was not ([OAR-FIRE-9]). Whatever fails is the store
 * failing, handled as a rejected call is. Every `asyncCounters` store is wrapped, the built-in
 * Redis one included: its values are whatever the keys in Redis hold.
 */
export function checkedAsyncCounters(store: AsyncCounterStore): AsyncCounterStore {
  const readMany = async (keys: readonly CounterKey[]): Promise<CounterValues[]> => checkedMany(await store.readMany(keys), keys, 'readMany');
  const applyMany = (ops: readonly CounterOp[]): Promise<void> => store.applyMany(ops);
  if (!isVersioned(store)) return { readMany, applyMany };
  const checked: VersionedCounterStore = {
    readMany,
    applyMany,
    get sharesActivity() {
      return store.sharesActivity;
    },
    async readVersioned(session, keys, activity) {
      const read: unknown = await store.readVersioned(session, keys, activity);
      if (typeof read !== 'object' || read === null) throw new Error(`oarc: the counter store's readVersioned resolved to ${read === null ? 'null' : typeof read}, not { values, version }`);
      const r = read as Partial<VersionedRead>;
      const values = checkedMany(r.values, keys, 'readVersioned');
      const version: unknown = r.version;
      if (typeof version !== 'string') throw new Error(`oarc: the counter store's readVersioned returned a version that is ${typeof version}, not a string`);
      if (activity === undefined || activity <= 0) return { values, version };
      const steps: unknown = r.activity;
      if (!Array.isArray(steps) || steps.some((s) => typeof s !== 'string')) throw new Error(`oarc: the counter store's readVersioned was asked for the activity window and returned ${Array.isArray(steps) ? 'a list that is not of tool names' : typeof steps}`);
      return { values, version, activity: steps as string[] };
    },
    async applyIfUnchanged(session, version, ops, step) {
      const applied: unknown = await store.applyIfUnchanged(session, version, ops, step);
      if (typeof applied !== 'boolean') {
        markHandled(applied);
        throw new Error(`oarc: the counter store's applyIfUnchanged resolved to ${applied === null ? 'null' : typeof applied}, not whether the write was applied`);
      }
      return applied;
    },
  };
  return checked;
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
  /** The ops this evaluation adds to what the shared store holds: the next batch write. */
  readonly pending: CounterOp[] = [];
  /** Keys of `committed` this evaluation wrote again (see `kept`). */
  private readonly touched = new Set<string>();

  /**
   * `readFailure`: the batch read failed, and every read says so. `writeFailure`: the batch write
   * failed, and every write of a key not in `committed` says so — the engine then routes each
   * writing rule to its `on_error`. `committed`: by store key, what an earlier pass of this
   * occurrence already wrote to the shared store; this pass's ops on those keys are those same ops
   * (the evaluation is deterministic up to the event refusal that caused the pass), so they are
   * counted, not sent again, and cannot be taken back.
   */
  constructor(
    keys: readonly CounterKey[],
    readonly initial: readonly CounterValues[],
    private readonly readFailure?: string,
    private readonly writeFailure?: string,
    private readonly committed: ReadonlyMap<string, Committed> = NONE,
  ) {
    keys.forEach((k, i) => this.values.set(counterKeyString(k), { ...(initial[i] ?? ZERO_COUNTERS) }));
  }

  /** Why every write will be refused, when that is known before any is tried. */
  refusal(): string | undefined {
    return this.readFailure ?? (this.committed.size === 0 ? this.writeFailure : undefined);
  }

  /** Why a write of `key` will be refused: the batch write failed and the key was not written before it. */
  room(key: CounterKey): string | undefined {
    return this.writeFailure !== undefined && !this.committed.has(counterKeyString(key)) ? this.writeFailure : undefined;
  }

  read(key: CounterKey): CounterValues {
    if (this.readFailure !== undefined) throw new Error(this.readFailure);
    const v = this.values.get(counterKeyString(key));
    if (v === undefined) throw new Error(`oarc: counter ${key.rule} was not in the snapshot read before evaluation`);
    return v;
  }

  /** Collects the ops and applies them to the snapshot, so the decision reports the new values. */
  apply(ops: readonly CounterOp[]): void {
    for (const op of ops) {
      const id = counterKeyString(op.key);
      if (this.committed.has(id)) this.touched.add(id);
      else if (this.writeFailure !== undefined) throw new Error(this.writeFailure);
      else this.pending.push(op);
      applyCounterOp(this.values, op);
    }
  }

  /**
   * A withdrawn rule's writes never reach the store: its ops leave the batch (one rule owns a
   * key). False for a key already written: those writes stand, and the decision reports them.
   */
  restore(key: CounterKey, values: CounterValues): boolean {
    const id = counterKeyString(key);
    if (this.committed.has(id)) return false;
    let n = 0;
    for (const op of this.pending) if (counterKeyString(op.key) !== id) this.pending[n++] = op;
    this.pending.length = n;
    const v = this.values.get(id);
    if (v !== undefined) {
      v.fire_count = values.fire_count;
      v.breaker_count = values.breaker_count;
    }
    return true;
  }

  /**
   * The keys written by an earlier pass that this one did not write again — rules a refused event
   * left unreached ([OAR-EVAL-12]) — with the values the store now holds: the decision reports them
   * ([OAR-FIRE-9]: nothing applied goes unreported). An untouched key still has its value from the
   * read, so [OAR-CONF-21] (only a counter whose value changed) is judged against that.
   */
  kept(): Committed[] {
    const out: Committed[] = [];
    for (const [id, held] of this.committed) {
      if (this.touched.has(id)) continue;
      const before = this.values.get(id) ?? ZERO_COUNTERS;
      if (held.values.fire_count !== before.fire_count || held.values.breaker_count !== before.breaker_count) out.push(held);
    }
    return out;
  }

  /** What this pass's batch, once written, holds for each of its keys: the next pass's `committed`. */
  commit(into: Map<string, Committed>): void {
    for (const op of this.pending) {
      const id = counterKeyString(op.key);
      let held = into.get(id);
      if (held === undefined) into.set(id, (held = { key: op.key, values: { ...(this.values.get(id) ?? ZERO_COUNTERS) }, ops: [] }));
      held.ops.push(op);
    }
  }
}

/** A counter an earlier pass of the occurrence wrote: the ops written, and the values the shared store holds for it. */
export interface Committed {
  readonly key: CounterKey;
  readonly values: CounterValues;
  readonly ops: CounterOp[];
}

const NONE: ReadonlyMap<string, Committed> = new Map();
