/**
 * The engine's counter cells (runtime/occurrence-counters.ts): keys built once per session, rule
 * and scope value and reused, the snapshot of [OAR-FIRE-6] kept in reused slots, and a cache that
 * stays bounded. The engine-level behaviour is in side-effects.test.ts; these pin the pieces.
 */
import { describe, expect, it } from 'vitest';
import { MemoryCounterStore, counterKeyString, type CounterOp, type CounterStore } from '../../runtime/counters.js';
import { OccurrenceCounters, counterOps } from '../../runtime/occurrence-counters.js';

const SCOPES = new Map([['r', -1], ['s', 3]]);

function counters(store: CounterStore = new MemoryCounterStore()): { c: OccurrenceCounters; store: CounterStore } {
  const c = new OccurrenceCounters(SCOPES, store);
  return { c, store };
}

describe('counter cells', () => {
  it('[OAR-FIRE-5] [OAR-FIRE-10] one cell per session, rule and scope value, reused across occurrences', () => {
    const { c, store } = counters();
    c.start(store, 's1');
    const unscoped = c.cell('r', undefined);
    const scoped = c.cell('s', 'k');
    const empty = c.cell('s', '');
    c.start(store, 's1');
    expect(c.cell('r', undefined)).toBe(unscoped);
    expect(c.cell('s', 'k')).toBe(scoped);
    expect(c.cell('s', '')).toBe(empty);
    expect(empty).not.toBe(scoped);
    c.start(store, 's2');
    expect(c.cell('r', undefined)).not.toBe(unscoped);
    // The key is the plain key a store expects; its store string rides along, not enumerable.
    expect(Object.keys(unscoped.key)).toEqual(['rule', 'session']);
    expect(empty.key).toEqual({ rule: 's', session: 's1', scope: '' });
    expect(counterKeyString(empty.key)).toBe(counterKeyString({ ...empty.key }));
    expect([unscoped.name, scoped.name, empty.name]).toEqual(['r', 's#k', 's#']);
  });

  it('[OAR-FIRE-8] op batches are built once per cell and run of actions', () => {
    const { c, store } = counters();
    c.start(store, 's1');
    const cell = c.cell('r', undefined);
    const run = ['increment_counter', 'increment_breaker'] as const;
    const ops = counterOps(cell, run);
    expect(ops).toEqual([{ key: cell.key, action: 'increment_counter' }, { key: cell.key, action: 'increment_breaker' }]);
    expect(counterOps(cell, run)).toBe(ops);
  });

  it.each([
    ['names never reported (a dictionary inside V8)', 1],
    ['names reported before (a {})', 2],
  ])('[OAR-EVAL-12] [OAR-CONF-33] the changed counters are a plain object, by name, in first-write order: %s', (_, times) => {
    const { c, store } = counters();
    let changed: Record<string, { fire_count: number; breaker_count: number }> = {};
    for (let n = 1; n <= times; n++) {
      c.start(store, 's1');
      // Names that are data (scope values, here one that looks like an index and one like a
      // prototype member).
      for (const scope of ['zz', '7', 'toString', 'a']) {
        const cell = c.cell('s', scope);
        c.apply(cell, counterOps(cell, ['increment_counter']));
      }
      changed = c.changed();
    }
    const v = `{"fire_count":${times},"breaker_count":0}`;
    expect(Object.getPrototypeOf(changed)).toBe(Object.prototype);
    expect(Object.keys(changed)).toEqual(['s#zz', 's#7', 's#toString', 's#a']);
    expect(JSON.stringify(changed)).toBe(`{"s#zz":${v},"s#7":${v},"s#toString":${v},"s#a":${v}}`);
    expect(Object.hasOwn(changed, 'a')).toBe(false);
    expect(Object.hasOwn(changed, 'b')).toBe(false);
  });

  it('[OAR-FIRE-6] reads after a write see the value before it; the change is reported with the value after', () => {
    const { c, store } = counters();
    c.start(store, 's1');
    const cell = c.cell('r', undefined);
    c.apply(cell, counterOps(cell, ['increment_counter']));
    c.apply(cell, counterOps(cell, ['increment_counter']));
    expect(c.read('r', undefined)).toEqual({ fire_count: 0, breaker_count: 0 });
    expect(c.changed()).toEqual({ r: { fire_count: 2, breaker_count: 0 } });
    c.start(store, 's1');
    expect(c.read('r', undefined)).toEqual({ fire_count: 2, breaker_count: 0 });
    expect(c.changed()).toEqual({});
  });

  it('[OAR-FIRE-9] a write the store refuses, or a store that cannot be read, is never reported as a change', () => {
    const refusing: CounterStore = {
      read: () => ({ fire_count: 5, breaker_count: 0 }),
      apply: (_ops: readonly CounterOp[]) => {
        throw new Error('refused');
      },
    };
    const unreadable: CounterStore = {
      read: () => {
        throw new Error('down');
      },
      apply: () => {},
    };
    for (const store of [refusing, unreadable]) {
      const { c } = counters(store);
      c.start(store, 's1');
      const cell = c.cell('r', undefined);
      expect(() => c.apply(cell, counterOps(cell, ['increment_counter']))).toThrow();
      expect(c.changed()).toEqual({});
    }
  });

  it('past 65,536 cells the cache is dropped between occurrences, never within one, and counts carry on', () => {
    const { c, store } = counters();
    c.start(store, 'keep');
    const kept = c.cell('r', undefined);
    c.apply(kept, counterOps(kept, ['increment_counter']));
    for (let i = 0; i <= 1 << 16; i++) c.cell('s', `k${i}`);
    expect(c.cell('r', undefined)).toBe(kept); // still the same occurrence
    c.start(store, 'keep');
    const rebuilt = c.cell('r', undefined);
    expect(rebuilt).not.toBe(kept);
    expect(rebuilt.key).toEqual(kept.key);
    expect(c.read('r', undefined)).toEqual({ fire_count: 1, breaker_count: 0 });
  });

  it('forget drops one session\'s cells only', () => {
    const { c, store } = counters();
    c.start(store, 'a');
    const a = c.cell('s', 'k');
    c.start(store, 'b');
    const b = c.cell('s', 'k');
    c.forget('a');
    c.forget('nobody');
    expect(c.cell('s', 'k')).toBe(b);
    c.start(store, 'a');
    expect(c.cell('s', 'k')).not.toBe(a);
  });

  it('[OAR-FIRE-6] a counter named again at one occurrence is read once; after a write, the snapshot; the next occurrence reads afresh', () => {
    const inner = new MemoryCounterStore();
    let reads = 0;
    const store: CounterStore = {
      read: (key) => {
        reads++;
        return inner.read(key);
      },
      apply: (ops) => inner.apply(ops),
    };
    const c = new OccurrenceCounters(SCOPES, store);
    c.start(store, 's1');
    expect(c.read('s', 'k').fire_count).toBe(0);
    expect(c.read('s', 'k').fire_count).toBe(0);
    expect(reads).toBe(1); // the second read of the same counter is the first one's value
    expect(c.read('r', undefined).fire_count).toBe(0);
    expect(c.read('s', 'k').fire_count).toBe(0);
    expect(reads).toBe(3); // another counter in between: read again, from the store
    const cell = c.cell('s', 'k');
    c.apply(cell, counterOps(cell, ['increment_counter']));
    expect(c.read('s', 'k').fire_count).toBe(0); // the snapshot, not the written value
    expect(c.changed()).toEqual({ 's#k': { fire_count: 1, breaker_count: 0 } });
    c.start(store, 's1');
    expect(c.read('s', 'k').fire_count).toBe(1); // a new occurrence sees the write
    inner.clear(); // the host clears its store between occurrences
    c.start(store, 's1');
    expect(c.read('s', 'k').fire_count).toBe(0);
  });
});
