/**
 * Bounded memory: the engine's per-session state — activity windows, and the default in-memory
 * counter store — is kept for a bounded number of sessions and a bounded idle time, and
 * `endSession` releases all of it. 1,000,000 decisions over 200,000 sessions run in a child
 * process with `--expose-gc` (test/engine/memory-probe.mjs, on the built dist/), measuring the heap
 * retained after a full GC:
 *
 *   - with endSession after each session:   < 16 B per session (nothing is retained; measured ≈ 0)
 *   - without it, bounded to 10,000 sessions: < 250 B per session (the 10,000 kept; measured ≈ 140)
 *
 * (For reference, unbounded — `maxSessions: Infinity` — this pack retains ≈ 1.5 KB per session.)
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryCounterStore } from '../../runtime/counters.js';
import { SessionTable } from '../../runtime/session-table.js';
import { ensureBuilt, ROOT } from '../support/build.js';

function probe(mode: 'end' | 'bounded'): { perSession: number } {
  const out = execFileSync(process.execPath, ['--expose-gc', join(ROOT, 'test', 'engine', 'memory-probe.mjs'), mode], { encoding: 'utf8', timeout: 170_000 });
  return JSON.parse(out) as { perSession: number };
}

describe('retained heap per session, 1,000,000 decisions over 200,000 sessions', () => {
  it('endSession releases a session\'s window and in-memory counters', () => {
    ensureBuilt(['compiler', 'runtime']);
    expect(probe('end').perSession).toBeLessThan(16);
  }, 180_000);

  it('without endSession, the bound holds memory to the sessions it keeps', () => {
    ensureBuilt(['compiler', 'runtime']);
    expect(probe('bounded').perSession).toBeLessThan(250);
  }, 180_000);
});

describe('the session bound', () => {
  it('drops the least recently used session beyond maxSessions, and idle ones, counting both', () => {
    let now = 0;
    const t = new SessionTable<number>({ maxSessions: 2, idleMs: 100 }, () => now);
    t.add('a', 1);
    t.add('b', 2);
    expect(t.get('a')).toBe(1); // a is now the most recently used
    t.add('c', 3);
    expect([t.get('b'), t.get('a'), t.get('c')]).toEqual([undefined, 1, 3]);
    expect(t.evicted).toBe(1);
    now = 150;
    expect(t.get('a')).toBeUndefined();
    expect(t.expired).toBe(1);
    t.add('d', 4); // c, idle too, goes when it reaches the front
    expect(t.size).toBe(1);
    expect(t.expired).toBe(2);
    expect(() => new SessionTable({ maxSessions: 0 })).toThrow(/maxSessions must be at least 1/);
  });

  it('the in-memory store forgets a session on request, and keeps the others', () => {
    const store = new MemoryCounterStore();
    for (const session of ['x', 'y']) store.apply([{ key: { rule: 'n/R', session }, action: 'increment_counter' }]);
    store.forgetSession('x');
    expect(store.read({ rule: 'n/R', session: 'x' }).fire_count).toBe(0);
    expect(store.read({ rule: 'n/R', session: 'y' }).fire_count).toBe(1);
  });
});
