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
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryCounterStore } from '../../runtime/counters.js';
import { SessionTable } from '../../runtime/session-table.js';
import { ensureBuilt, ROOT } from '../support/build.js';
import { cap, harness, rule, trace } from './harness.js';

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

  it('the in-memory store holds at most maxCountersPerSession counters in a session: a new one beyond is refused, the others count on', () => {
    const store = new MemoryCounterStore({ maxCountersPerSession: 3 });
    const inc = (session: string, scope: string) => store.apply([{ key: { rule: 'n/R', session, scope }, action: 'increment_counter' }]);
    for (const scope of ['a', 'b', 'c']) inc('s', scope);
    expect(() => inc('s', 'd')).toThrow(/the session already holds 3 counters, the most one session may hold \(maxCountersPerSession\): counter n\/R#d cannot be written/);
    inc('s', 'a'); // a counter it holds counts on
    inc('t', 'd'); // another session has room of its own
    expect(store.read({ rule: 'n/R', session: 's', scope: 'a' }).fire_count).toBe(2);
    expect(store.read({ rule: 'n/R', session: 's', scope: 'd' }).fire_count).toBe(0);
    expect(store.size).toBe(4);
  });

  it('past maxCounters in all, the least recently used sessions are forgotten (counted as evicted), never the one writing', () => {
    const store = new MemoryCounterStore({ maxCounters: 4 });
    const inc = (session: string, scope: string) => store.apply([{ key: { rule: 'n/R', session, scope }, action: 'increment_counter' }]);
    inc('old', 'a');
    inc('old', 'b');
    inc('mid', 'a');
    inc('new', 'a');
    inc('new', 'b'); // 5 > 4: 'old' (2 counters) goes
    expect(store.size).toBe(3);
    expect(store.sessions.evicted).toBe(1);
    expect(store.read({ rule: 'n/R', session: 'old', scope: 'a' }).fire_count).toBe(0);
    for (const scope of ['c', 'd', 'e']) inc('new', scope); // 'mid' goes; then 'new' alone may exceed
    expect(store.read({ rule: 'n/R', session: 'new', scope: 'a' }).fire_count).toBe(1);
    expect(store.sessions.evicted).toBe(2);
    store.forgetSession('new');
    expect(store.size).toBe(0);
    expect(() => new MemoryCounterStore({ maxCountersPerSession: 0 })).toThrow(/maxCountersPerSession must be at least 1/);
  });

  it('[OAR-FIRE-9] a session at its bound of counters: the rule writing a new one takes its on_error, on every back end', () => {
    const PRE = 'tool.pre_invoke';
    const h = harness({
      capability: cap({ profiles: ['tool'] }),
      rules: [
        rule({ id: 'COUNT', namespace: 'n', anchor: PRE, effect: 'allow', counter_scope: 'tool_args_fingerprint', requires: { profiles: ['tool'] }, on_fire: ['increment_counter'] }),
        rule({ id: 'SEEN', namespace: 'n', anchor: PRE, effect: 'nudge', when: 'fire_count_of("COUNT") > 0', requires: { profiles: ['tool'] } }),
      ],
      options: () => ({ counters: new MemoryCounterStore({ maxCountersPerSession: 2 }) }),
    });
    const call = (n: number) => ({ anchor: PRE, session: 's', toolCall: { name: 'read', arguments: { n } } });
    for (const n of [1, 2]) expect(trace(h.decide(call(n)))).toEqual(['n/COUNT:fired', 'n/SEEN:passed']);
    const full = h.decide(call(3));
    expect(trace(full)).toEqual(['n/COUNT:errored']);
    expect(full.decision).toBe('block'); // fail_closed
    expect(full.applied[0]?.error?.message).toMatch(/most one session may hold/);
    expect(trace(h.decide(call(1)))).toEqual(['n/COUNT:fired', 'n/SEEN:fired']); // a counter it holds counts on
  });

  it('the in-memory store forgets a session on request, and keeps the others', () => {
    const store = new MemoryCounterStore();
    for (const session of ['x', 'y']) store.apply([{ key: { rule: 'n/R', session }, action: 'increment_counter' }]);
    store.forgetSession('x');
    expect(store.read({ rule: 'n/R', session: 'x' }).fire_count).toBe(0);
    expect(store.read({ rule: 'n/R', session: 'y' }).fire_count).toBe(1);
  });
});

/** The bound's meaning, as a list: most recently used last; the simplest code that is plainly right. */
class ModelTable {
  readonly order: { session: string; value: number; at: number }[] = [];
  evicted = 0;
  expired = 0;
  constructor(readonly max: number, readonly idleMs: number) {}
  get(session: string, t: number): number | undefined {
    const i = this.order.findIndex((e) => e.session === session);
    if (i < 0) return undefined;
    const [e] = this.order.splice(i, 1) as [{ session: string; value: number; at: number }];
    if (t - e.at > this.idleMs) {
      this.expired++;
      return undefined;
    }
    e.at = t;
    this.order.push(e);
    return e.value;
  }
  add(session: string, value: number, t: number): void {
    const i = this.order.findIndex((e) => e.session === session);
    if (i >= 0) this.order.splice(i, 1);
    this.order.push({ session, value, at: t });
    while (this.order.length > 1) {
      const h = this.order[0] as { at: number };
      if (this.order.length > this.max) this.evicted++;
      else if (t - h.at > this.idleMs) this.expired++;
      else break;
      this.order.shift();
    }
  }
}

describe('the session table against a plain list model', () => {
  it('keeps, marks, drops and counts exactly as the model on any sequence of operations', () => {
    type Op = { kind: 'get' | 'add' | 'delete'; session: number; dt: number };
    const op = fc.record({ kind: fc.constantFrom<Op['kind']>('get', 'get', 'add', 'delete'), session: fc.integer({ min: 0, max: 6 }), dt: fc.integer({ min: 0, max: 40 }) });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }), fc.array(op, { maxLength: 80 }), (max, ops) => {
        let now = 0;
        const t = new SessionTable<number>({ maxSessions: max, idleMs: 100 }, () => now);
        const m = new ModelTable(max, 100);
        ops.forEach((o, n) => {
          now += o.dt;
          const s = `s${o.session}`;
          if (o.kind === 'get') expect(t.get(s)).toBe(m.get(s, now));
          else if (o.kind === 'add') {
            t.add(s, n);
            m.add(s, n, now);
          } else {
            t.delete(s);
            const i = m.order.findIndex((e) => e.session === s);
            if (i >= 0) m.order.splice(i, 1);
          }
          expect([t.size, t.evicted, t.expired]).toEqual([m.order.length, m.evicted, m.expired]);
        });
      }),
      { numRuns: 500 },
    );
  });

  it('the in-memory store looks a decision\'s session up once, and reads and writes it exactly as without', () => {
    let now = 0;
    const store = new MemoryCounterStore({ idleMs: 100 });
    Object.assign(store.sessions, { now: () => now });
    const key = { rule: 'n/R', session: 'x' };
    store.begin('x', now);
    store.apply([{ key, action: 'increment_counter' }]); // a session the pin had not found
    expect(store.read(key).fire_count).toBe(1);
    store.forgetSession('x'); // forgotten while pinned: gone, and written afresh
    expect(store.read(key).fire_count).toBe(0);
    store.apply([{ key, action: 'increment_counter' }]);
    store.end();
    expect(store.read(key).fire_count).toBe(1);
    now = 500; // idle past the bound: begin() finds it expired, as a plain read would
    store.begin('x', now);
    expect(store.read(key).fire_count).toBe(0);
    store.end();
    expect(store.sessions.expired).toBe(1);
  });
});

describe('a store whose optional begin/end throw', () => {
  it('decides as without them, and the engine is not left busy ([OAR-FIRE-9] reads and writes report the store)', () => {
    class Bracketless extends MemoryCounterStore {
      override begin(): void {
        throw new Error('begin is broken');
      }
      override end(): void {
        throw new Error('end is broken');
      }
    }
    const h = harness({
      capability: cap({ profiles: ['tool'] }),
      rules: [
        rule({ id: 'C', namespace: 't', anchor: 'tool.pre_invoke', effect: 'allow', on_fire: ['increment_counter'] }),
        rule({ id: 'W', namespace: 't', anchor: 'tool.pre_invoke', effect: 'warn', when: 'fire_count_of("t/C") >= 1' }),
      ],
      options: () => ({ counters: new Bracketless() }),
    });
    const occ = { anchor: 'tool.pre_invoke', session: 's', toolCall: { name: 'x', arguments: {} } };
    expect(trace(h.decide(occ))).toEqual(['t/C:fired', 't/W:passed']);
    const second = h.decide(occ); // the counter was written, then read, around the broken hints
    expect(trace(second)).toEqual(['t/C:fired', 't/W:fired']);
    expect(second.counters).toEqual({ 't/C': { fire_count: 2, breaker_count: 0 } });
  });
});
