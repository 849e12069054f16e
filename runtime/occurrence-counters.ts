/**
 * The counters one occurrence reads and writes ([OAR-FIRE-3] to [OAR-FIRE-6], [OAR-FIRE-11]),
 * without allocating on the hot path: every counter key is built once per (session, rule, scope)
 * and reused by later occurrences, with its store key string, its name ([OAR-CONF-33]) and its
 * op objects; the values a counter had before this occurrence wrote it are kept in reused slots.
 */
import { counterKeyString, counterName, stepCounter, ZERO_COUNTERS as ZERO, type CounterAction, type CounterKey, type CounterOp, type CounterStore, type CounterValues } from './counters.js';
import type { CounterContext } from './occurrence.js';
import { flattened } from './strings.js';

/** A counter key with what the engine derives from it once. */
export interface CounterCell {
  /** Carries its store key string as the non-enumerable `id` (see `CounterKey.id`). */
  readonly key: CounterKey;
  /** `<qualified id>` or `<qualified id>#<scope value>`, as the decision reports it. */
  readonly name: string;
  /**
   * The ops of each run of counter actions a rule lists ([OAR-FIRE-8]) on this key, by the run
   * (a static array of the engine's rule): built on first use; immutable, so a store may keep them.
   */
  readonly batches: Map<readonly CounterAction[], readonly CounterOp[]>;
  /** Has its name been a key of a decision's `counters` before (see `changed`)? */
  reported: boolean;
}

/**
 * Beyond this many cached cells the cache is dropped (between occurrences) and rebuilt on demand:
 * the cache only saves allocation, so it must not grow with every session a gateway ever saw.
 */
const CELL_LIMIT = 1 << 16;

function newCell(rule: string, session: string, scope: string | undefined): CounterCell {
  const key: CounterKey = scope === undefined ? { rule, session } : { rule, session, scope };
  // Flattened, not internalized: a cell is keyed by a session and often a scope value, data that
  // is new at nearly every cell (see `flattened`).
  Object.defineProperty(key, 'id', { value: flattened(counterKeyString(key)) });
  return { key, name: flattened(counterName(key)), batches: new Map(), reported: false };
}

/** A session's cells: rule → its cell (unscoped rule) or scope value → cell (scoped rule). */
type SessionCells = Map<string, CounterCell | Map<string, CounterCell>>;

export class OccurrenceCounters implements CounterContext {
  private store: CounterStore;
  private session = '';
  /** Every cell, by session. */
  private readonly cells = new Map<string, SessionCells>();
  private cellCount = 0;
  /** This occurrence's session's cells, created on first use. */
  private sessionCells: SessionCells | undefined;
  /**
   * The cells this occurrence wrote, in first-write order; the values each had before the first
   * write (reused objects: [OAR-FIRE-6], every read at one occurrence sees one snapshot); and
   * whether the write was applied (a refused write is never reported as a change).
   */
  private readonly written: CounterCell[] = [];
  private readonly before: CounterValues[] = [];
  /** The values after this occurrence's applied writes: the value before, stepped by each op. */
  private readonly after: CounterValues[] = [];
  private readonly applied: boolean[] = [];
  private writes = 0;
  /**
   * The cell last looked up, and the value last read from the store, at this occurrence: a
   * counter is typically named several times at one occurrence — by the rules reading it
   * (`fire_count_of`) and by the rule writing it — each time with the same rule and scope strings.
   */
  private lastRule: string | undefined = undefined;
  private lastScope: string | undefined = undefined;
  private lastCell: CounterCell | undefined = undefined;
  private readCell: CounterCell | undefined = undefined;
  private readValue: CounterValues = ZERO;

  constructor(
    /** Qualified identifier → counter scope slot (or -1), for every loaded rule. */
    readonly scopeOf: ReadonlyMap<string, number>,
    store: CounterStore,
  ) {
    this.store = store;
  }

  /** Start an occurrence of `session` against `store`. */
  start(store: CounterStore, session: string): void {
    this.store = store;
    this.session = session;
    this.writes = 0;
    this.lastCell = undefined;
    this.readCell = undefined;
    // Only here, between occurrences: within one, a counter's cell is one object, which is how
    // `read` finds what this occurrence wrote.
    if (this.cellCount > CELL_LIMIT) {
      this.cells.clear();
      this.cellCount = 0;
    }
    this.sessionCells = this.cells.get(session);
  }

  /** Drop the cells of a session that ended. */
  forget(session: string): void {
    const rules = this.cells.get(session);
    if (rules === undefined) return;
    for (const entry of rules.values()) this.cellCount -= entry instanceof Map ? entry.size : 1;
    this.cells.delete(session);
    if (this.sessionCells === rules) this.sessionCells = undefined;
    this.lastCell = undefined;
    this.readCell = undefined;
  }

  /** The cell of `rule`'s counters in this session; `scope` is undefined for an unscoped rule. */
  cell(rule: string, scope: string | undefined): CounterCell {
    const last = this.lastCell;
    if (last !== undefined && rule === this.lastRule && scope === this.lastScope) return last;
    const cell = this.lookup(rule, scope);
    this.lastRule = rule;
    this.lastScope = scope;
    this.lastCell = cell;
    return cell;
  }

  private lookup(rule: string, scope: string | undefined): CounterCell {
    let rules = this.sessionCells;
    if (rules === undefined) this.cells.set(this.session, (rules = this.sessionCells = new Map()));
    const entry = rules.get(rule);
    if (scope === undefined) {
      if (entry !== undefined && !(entry instanceof Map)) return entry;
      const cell = newCell(rule, this.session, undefined);
      rules.set(rule, cell);
      this.cellCount++;
      return cell;
    }
    let scopes = entry;
    if (!(scopes instanceof Map)) rules.set(rule, (scopes = new Map<string, CounterCell>()));
    let cell = scopes.get(scope);
    if (cell === undefined) {
      scopes.set(scope, (cell = newCell(rule, this.session, scope)));
      this.cellCount++;
    }
    return cell;
  }

  read(rule: string, scope: string | undefined): CounterValues {
    const cell = this.cell(rule, scope);
    if (this.writes > 0) {
      const i = this.written.indexOf(cell);
      if (i >= 0 && i < this.writes) return this.before[i] as CounterValues;
    }
    // Before this occurrence writes a counter, a second read of it is the first one's value
    // ([OAR-FIRE-6]: one snapshot per occurrence); after, it is the value kept above.
    if (cell === this.readCell) return this.readValue;
    const v = this.store.read(cell.key);
    this.readCell = cell;
    this.readValue = v;
    return v;
  }

  /**
   * Apply `ops` (every one on `cell`'s key) to the store, first keeping the value they overwrite
   * for anything read after them at this occurrence. Throws what the store throws ([OAR-FIRE-9]).
   */
  apply(cell: CounterCell, ops: readonly CounterOp[]): void {
    let i = this.written.indexOf(cell);
    if (i < 0 || i >= this.writes) {
      const now = this.store.read(cell.key); // a store that cannot be read records nothing
      i = this.writes++;
      this.written[i] = cell;
      this.before[i] = keep(this.before[i], now);
      this.after[i] = keep(this.after[i], now);
      this.applied[i] = false;
    }
    this.store.apply(ops);
    const after = this.after[i] as CounterValues;
    for (const op of ops) stepCounter(after, op.action);
    this.applied[i] = true;
  }

  /**
   * Why the store will refuse the write, when it knows before one is tried: every write
   * (`decideAsync`'s snapshot after a failed read or a refused batch write), or one of `cell`'s
   * (the in-memory store's session already at its bound of counters); else undefined.
   */
  writeRefusal(cell?: CounterCell): string | undefined {
    const store = this.store as { refusal?: () => string | undefined; room?: (key: CounterKey) => string | undefined };
    return store.refusal?.() ?? (cell === undefined ? undefined : store.room?.(cell.key));
  }

  /**
   * Take back what this occurrence wrote to `cell` (a rule that then failed, [OAR-OPS-4]): the
   * store puts the counter back to the value read before, and the change is no longer reported.
   * False when the store cannot (a host store without `restore`, or one whose `restore` says it
   * cannot): the writes stand, and are reported.
   */
  withdraw(cell: CounterCell): boolean {
    const i = this.written.indexOf(cell);
    const restore = this.store.restore;
    if (i < 0 || i >= this.writes || !this.applied[i] || restore === undefined) return false;
    const before = this.before[i] as CounterValues;
    if (restore.call(this.store, cell.key, before) === false) return false;
    this.applied[i] = false;
    keep(this.after[i], before);
    return true;
  }

  /**
   * [OAR-EVAL-12] every counter this occurrence changed, by name, with its value now: the value
   * read before the first write, stepped by every op applied ([OAR-FIRE-4]) — not read back from
   * the store, so a host store that answers a write with a bad read cannot make `decide()` throw
   * after its rules were decided, and the decision costs one store read less per counter written.
   */
  changed(): Record<string, CounterValues> {
    if (this.writes === 0) return {};
    // Names reported before have their hidden classes built already, so `{}` is cheapest; a name
    // never reported is most likely never seen again either (see `keyedByData`).
    let fresh = false;
    for (let i = 0; i < this.writes; i++) if (!(this.written[i] as CounterCell).reported) fresh = true;
    const out: Record<string, CounterValues> = fresh ? keyedByData<CounterValues>() : {};
    for (let i = 0; i < this.writes; i++) {
      if (!this.applied[i]) continue;
      const v = this.after[i] as CounterValues;
      const b = this.before[i] as CounterValues;
      // [OAR-CONF-21] only a counter whose value changed: a reset of a zero, or an increment and
      // a reset at one occurrence, writes without changing anything.
      if (v.fire_count === b.fire_count && v.breaker_count === b.breaker_count) continue;
      const cell = this.written[i] as CounterCell;
      cell.reported = true;
      out[cell.name] = { fire_count: v.fire_count, breaker_count: v.breaker_count };
    }
    return out;
  }
}

/**
 * An empty plain object (its prototype `Object.prototype`, as any `{}`) already in V8's dictionary
 * mode, for keys that are data: a counter's name carries its scope value, a tool-call fingerprint
 * more often than not, so nearly every name is new. Each new name added to a `{}` makes V8 build a
 * hidden class and a transition to it from the empty object's, which cost about 1 µs per changed
 * counter (measured: 1.0-1.25 µs per one-key object against 0.4 µs this way) and a transition
 * tree that only grows. Deleting a property other than the last turns the object into a dictionary,
 * where adding a key is a hash-table insert. Enumeration order stays insertion order. Used when a
 * name has never been reported: for names that recur (a stream that repeats its calls), the hidden
 * classes exist and `{}` costs a few nanoseconds where this costs about 0.3 µs.
 */
function keyedByData<V>(): Record<string, V> {
  const o: Record<string, unknown> = { a: 0, b: 0 };
  delete o.a;
  delete o.b;
  return o as Record<string, V>;
}

/** `now`'s values in the reused slot `kept` (a new object the first time). */
function keep(kept: CounterValues | undefined, now: CounterValues): CounterValues {
  if (kept === undefined) return { fire_count: now.fire_count, breaker_count: now.breaker_count };
  kept.fire_count = now.fire_count;
  kept.breaker_count = now.breaker_count;
  return kept;
}

/** The ops of `actions` on `cell`'s key, in order. */
export function counterOps(cell: CounterCell, actions: readonly CounterAction[]): readonly CounterOp[] {
  let ops = cell.batches.get(actions);
  if (ops === undefined) cell.batches.set(actions, (ops = actions.map((action) => ({ key: cell.key, action }))));
  return ops;
}
