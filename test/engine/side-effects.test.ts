/**
 * Stateful effects (section 6): counters and breakers keyed by rule, session and counter scope,
 * read through one snapshot per occurrence, written in declared order; `publish_event` records;
 * and a side-effect that cannot be applied sending its rule down `on_error`.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  MemoryCounterStore,
  type CounterKey,
  type CounterOp,
  type CounterStore,
  type CounterValues,
  type EventRecord,
  type EventSink,
} from '../../runtime/index.js';
import type { Backend } from '../../compiler/index.js';
import { asyncMemory, BACKENDS, cap, fired, harness, head, rule, trace } from './harness.js';

const CAP = cap({
  profiles: ['tool'],
  hostFacts: [{ name: 'acme.gw.key', type: 'string' }, { name: 'acme.gw.n', type: 'int' }],
});
const PRE = 'tool.pre_invoke';

function r(id: string, effect: string, extra: Record<string, unknown> = {}): string {
  return rule({ id, namespace: 'c', anchor: PRE, effect, requires: { profiles: ['tool'], facts: ['acme.gw.key', 'acme.gw.n'] }, ...extra });
}

const call = (name: string, args: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({ anchor: PRE, toolCall: { name, arguments: args }, ...extra });

/** The fingerprint of [OAR-FACT-28], computed here independently of the runtime. */
function fingerprint(canonical: string): string {
  return createHash('sha256').update(`oar-tool-1.0\u0000${canonical}`, 'utf8').digest('hex');
}

/** A counter store that logs every apply, and can be told to refuse. */
class LoggingStore implements CounterStore {
  readonly inner = new MemoryCounterStore();
  readonly keys: CounterKey[] = [];
  refuse = false;
  constructor(private readonly log: string[]) {}
  read(key: CounterKey): CounterValues {
    return this.inner.read(key);
  }
  apply(ops: readonly CounterOp[]): void {
    if (this.refuse) throw new Error('counter store unreachable');
    for (const op of ops) {
      this.log.push(`${op.key.rule}:${op.action}`);
      this.keys.push(op.key);
    }
    this.inner.apply(ops);
  }
}

/** An event sink that logs, and refuses records of the rules named in `refuse`. */
function sink(log: string[], records: EventRecord[], refuse: readonly string[] = []): EventSink {
  return {
    publish(e) {
      if (refuse.includes(e.rule)) throw new Error('event stream refused the write');
      log.push(`${e.rule}:publish_event`);
      records.push(e);
    },
  };
}

describe('counters', () => {
  it('[OAR-FIRE-3] [OAR-FIRE-4] increment_counter adds one to fire_count, read by fire_count_of', () => {
    const h = harness({
      capability: CAP,
      rules: [r('COUNT', 'allow', { on_fire: ['increment_counter'] }), r('AT_TWO', 'warn', { when: 'fire_count_of("COUNT") == 2' })],
    });
    const ds = h.run([{ anchor: PRE }, { anchor: PRE }, { anchor: PRE }, { anchor: PRE }]);
    expect(ds.map((d) => trace(d))).toEqual(
      ['passed', 'passed', 'fired', 'passed'].map((o) => [`c/AT_TWO:${o}`, 'c/COUNT:fired']),
    );
    expect(ds.map((d) => d.counters)).toEqual([1, 2, 3, 4].map((n) => ({ 'c/COUNT': { fire_count: n, breaker_count: 0 } })));
  });

  it('[OAR-FIRE-3] fire_count counts declared increments, not firings', () => {
    const h = harness({
      capability: CAP,
      rules: [r('FIRES', 'allow'), r('READ', 'warn', { when: 'fire_count_of("FIRES") == 0' })],
    });
    const ds = h.run([{ anchor: PRE }, { anchor: PRE }, { anchor: PRE }]);
    expect(ds.map((d) => trace(d))).toEqual(Array(3).fill(['c/FIRES:fired', 'c/READ:fired']));
    expect(ds.map((d) => d.counters)).toEqual([{}, {}, {}]);
  });

  it('[OAR-FIRE-2] [OAR-OPS-1] actions apply only when the rule fired and is enforced', () => {
    const h = harness({
      capability: CAP,
      rules: [
        r('PASSES', 'warn', { when: 'false', on_fire: ['increment_counter', 'publish_event'] }),
        r('WATCHED', 'warn', { enforcement: 'monitor', on_fire: ['increment_breaker', 'publish_event'] }),
        r('READ', 'nudge', { when: 'fire_count_of("PASSES") + breaker_count_of("WATCHED") == 0' }),
      ],
    });
    for (const d of h.run([{ anchor: PRE }, { anchor: PRE }])) {
      expect(trace(d)).toEqual(['c/PASSES:passed', 'c/READ:fired', 'c/WATCHED:monitored_fired']);
      expect(d.onFire).toEqual([]);
      expect(d.events).toEqual([]);
      expect(d.counters).toEqual({});
    }
  });

  it('[OAR-FIRE-4] [OAR-FIRE-8] one rule\'s actions apply in the order listed', () => {
    const h = harness({
      capability: CAP,
      rules: [
        r('INC_INC_RESET', 'allow', { on_fire: ['increment_counter', 'increment_counter', 'reset_counter'] }),
        r('RESET_INC_INC', 'allow', { on_fire: ['reset_counter', 'increment_counter', 'increment_counter'] }),
        r('BREAKER', 'allow', { on_fire: ['increment_breaker', 'increment_counter', 'increment_breaker'] }),
        r('BRK_RESET', 'allow', { on_fire: ['increment_breaker', 'reset_breaker', 'increment_counter'] }),
      ],
    });
    const [first, second] = h.run([{ anchor: PRE }, { anchor: PRE }]);
    expect(fired(first!)).toEqual([
      'c/BREAKER:increment_breaker', 'c/BREAKER:increment_counter', 'c/BREAKER:increment_breaker',
      'c/BRK_RESET:increment_breaker', 'c/BRK_RESET:reset_breaker', 'c/BRK_RESET:increment_counter',
      'c/INC_INC_RESET:increment_counter', 'c/INC_INC_RESET:increment_counter', 'c/INC_INC_RESET:reset_counter',
      'c/RESET_INC_INC:reset_counter', 'c/RESET_INC_INC:increment_counter', 'c/RESET_INC_INC:increment_counter',
    ]);
    expect(first!.counters).toEqual({
      'c/BREAKER': { fire_count: 1, breaker_count: 2 },
      'c/BRK_RESET': { fire_count: 1, breaker_count: 0 },
      'c/RESET_INC_INC': { fire_count: 2, breaker_count: 0 },
    });
    // INC_INC_RESET ends where it began (0, 0), and RESET_INC_INC where the first occurrence left
    // it (2, 0): written, not changed, so not reported ([OAR-CONF-21]).
    expect(second!.counters).toEqual({
      'c/BREAKER': { fire_count: 2, breaker_count: 4 },
      'c/BRK_RESET': { fire_count: 2, breaker_count: 0 },
    });
  });

  it('[OAR-FIRE-6] every condition at one occurrence reads the counters as they were before its side-effects', () => {
    // A_INC increments; SELF reads its own counter and increments it; B_READ and Z_READ read
    // A_INC's. A rule's own increment does not change what its condition read, and two rules
    // cannot disagree, whichever side of the incrementing rule they sort on.
    const h = harness({
      capability: CAP,
      rules: [
        r('B_READ', 'nudge', { when: 'fire_count_of("A_INC") == 0' }),
        r('A_INC', 'allow', { on_fire: ['increment_counter'] }),
        r('SELF', 'warn', { when: 'fire_count == 0', on_fire: ['increment_counter'], copy: { what: 'self={{ fire_count }}' } }),
        r('Z_READ', 'nudge', { when: 'fire_count_of("A_INC") == 0 && fire_count_of("SELF") == 0' }),
      ],
    });
    const [first, second] = h.run([{ anchor: PRE }, { anchor: PRE }]);
    expect(trace(first!)).toEqual(['c/A_INC:fired', 'c/B_READ:fired', 'c/SELF:fired', 'c/Z_READ:fired']);
    expect(trace(second!)).toEqual(['c/A_INC:fired', 'c/B_READ:passed', 'c/SELF:passed', 'c/Z_READ:passed']);
    // Copy is rendered against the same snapshot (reading chosen: the occurrence's fact environment).
    const warnOnly = harness({ capability: CAP, rules: [r('SELF', 'warn', { on_fire: ['increment_counter'], copy: { what: 'self={{ fire_count }}' } })] });
    expect(warnOnly.run([{ anchor: PRE }, { anchor: PRE }]).map((d) => d.copy)).toEqual([{ what: 'self=0' }, { what: 'self=1' }]);
  });

  it('[OAR-FIRE-3] a rule reads its own breaker_count: it trips itself after two firings', () => {
    const h = harness({ capability: CAP, rules: [r('TRIP', 'warn', { when: 'breaker_count < 2', on_fire: ['increment_breaker'] })] });
    const ds = h.run([{ anchor: PRE }, { anchor: PRE }, { anchor: PRE }]);
    expect(ds.map((d) => trace(d)[0])).toEqual(['c/TRIP:fired', 'c/TRIP:fired', 'c/TRIP:passed']);
    expect(ds.map((d) => d.counters)).toEqual([{ 'c/TRIP': { fire_count: 0, breaker_count: 1 } }, { 'c/TRIP': { fire_count: 0, breaker_count: 2 } }, {}]);
  });

  it('[OAR-FACT-26] [OAR-FIRE-9] a counter scope that cannot be read when the counter is written fails the rule', () => {
    const h = harness({
      capability: CAP,
      rules: [r('SCOPED', 'warn', { counter_scope: 'acme.gw.key', on_fire: ['increment_counter'] }), r('OTHER', 'nudge', { on_fire: ['increment_counter'] })],
    });
    const d = h.decide({ anchor: PRE, facts: { 'acme.gw.key': 5 } });
    expect(head(d)).toEqual({ decision: 'block', code: 'SCOPED', rule: 'c/SCOPED' });
    expect(trace(d)).toEqual(['c/OTHER:fired', 'c/SCOPED:errored']);
    expect(d.applied[1]?.error?.code).toBe('wrong_type');
    expect(d.counters).toEqual({ 'c/OTHER': { fire_count: 1, breaker_count: 0 } });
  });

  it('[OAR-FIRE-9] [OAR-OPS-4] a counter scope that cannot be read fails the rule before any action: the event listed first is not published', () => {
    const h = harness({
      capability: CAP,
      rules: [
        r('A_PUB', 'warn', { counter_scope: 'acme.gw.key', on_fire: ['publish_event', 'increment_counter'], on_error: 'fail_open' }),
        r('B_OK', 'nudge', { on_fire: ['publish_event'] }),
      ],
    });
    const d = h.decide({ anchor: PRE, facts: { 'acme.gw.key': 5 } });
    expect(trace(d)).toEqual(['c/A_PUB:errored', 'c/B_OK:fired']);
    expect(d.onFire).toEqual([{ rule: 'c/B_OK', action: 'publish_event' }]);
    expect(d.events.map((e) => e.rule)).toEqual(['c/B_OK']);
  });

  it('[OAR-FIRE-5] counters are keyed by session', () => {
    const h = harness({
      capability: CAP,
      rules: [r('COUNT', 'allow', { on_fire: ['increment_counter'] }), r('READ', 'warn', { when: 'fire_count_of("COUNT") >= 2' })],
    });
    h.run([{ anchor: PRE, session: 'a' }, { anchor: PRE, session: 'a' }]);
    expect(trace(h.decide({ anchor: PRE, session: 'b' }))[1]).toBe('c/READ:passed');
    expect(trace(h.decide({ anchor: PRE }))[1]).toBe('c/READ:passed');
    expect(trace(h.decide({ anchor: PRE, session: 'a' }))[1]).toBe('c/READ:fired');
  });

  const COUNT_AND_READ = [r('COUNT', 'allow', { counter_scope: 'acme.gw.key', on_fire: ['increment_counter'] }), r('READ', 'warn', { when: 'fire_count_of("COUNT") >= 2' })];
  const keyed = (session: string) => ({ anchor: PRE, session, facts: { 'acme.gw.key': 'k' } });

  it('[OAR-FIRE-5] ending a session releases its counters from the in-memory store; other sessions count on', () => {
    const h = harness({ capability: CAP, rules: COUNT_AND_READ });
    h.run([keyed('a'), keyed('a'), keyed('b')]);
    h.endSession('a');
    const d = h.decide(keyed('a'));
    expect(trace(d)[1]).toBe('c/READ:passed');
    expect(d.counters).toEqual({ 'c/COUNT#k': { fire_count: 1, breaker_count: 0 } }); // a starts afresh
    expect(trace(h.decide(keyed('b')))[1]).toBe('c/READ:passed'); // b has counted once
    expect(trace(h.decide(keyed('b')))[1]).toBe('c/READ:fired');
  });

  it('[OAR-FIRE-5] a host store that cannot forget a session keeps its counters: they count on', () => {
    const h = harness({
      capability: CAP,
      rules: COUNT_AND_READ,
      options: () => {
        const inner = new MemoryCounterStore();
        return { counters: { read: (k) => inner.read(k), apply: (ops) => inner.apply(ops) } };
      },
    });
    h.run([keyed('a'), keyed('b')]);
    h.endSession('a');
    const d = h.decide(keyed('a'));
    expect(trace(d)[1]).toBe('c/READ:passed'); // read before this occurrence's own increment
    expect(d.counters).toEqual({ 'c/COUNT#k': { fire_count: 2, breaker_count: 0 } });
    expect(trace(h.decide(keyed('a')))[1]).toBe('c/READ:fired');
  });

  it('[OAR-FIRE-10] [OAR-CONF-33] a scoped rule counts per scope value, reported as <qid>#<scope>', () => {
    const h = harness({
      capability: CAP,
      rules: [r('SCOPED', 'allow', { counter_scope: 'tool_args_fingerprint', on_fire: ['increment_counter'] })],
    });
    const fp1 = fingerprint('["read",{"p":1.0}]');
    const fp2 = fingerprint('["read",{"p":2.0}]');
    const ds = h.run([call('read', { p: 1 }), call('read', { p: 1 }), call('read', { p: 2 }), { anchor: PRE }, { anchor: PRE }]);
    expect(ds.map((d) => d.counters)).toEqual([
      { [`c/SCOPED#${fp1}`]: { fire_count: 1, breaker_count: 0 } },
      { [`c/SCOPED#${fp1}`]: { fire_count: 2, breaker_count: 0 } },
      { [`c/SCOPED#${fp2}`]: { fire_count: 1, breaker_count: 0 } },
      { 'c/SCOPED#': { fire_count: 1, breaker_count: 0 } },
      { 'c/SCOPED#': { fire_count: 2, breaker_count: 0 } },
    ]);
  });

  it('[OAR-FIRE-10] a declared scope keys by its value even when empty: that counter is not the unscoped one', () => {
    // The same qualified identifier, once unscoped and once scoped, over one shared store (a pack
    // update against a persistent store): the empty scope value must not collide with "no scope".
    const stores: Record<Backend, LoggingStore> = { specialised: new LoggingStore([]), compiled: new LoggingStore([]), interpreter: new LoggingStore([]) };
    const options = (b: Backend) => ({ counters: stores[b] });
    const unscoped = harness({ capability: CAP, rules: [r('R', 'allow', { on_fire: ['increment_counter'] })], options });
    const scoped = harness({
      capability: CAP,
      rules: [r('R', 'warn', { counter_scope: 'tool_args_fingerprint', when: 'fire_count == 0', on_fire: ['increment_counter'] })],
      options,
    });
    expect(unscoped.run([{ anchor: PRE }, { anchor: PRE }]).map((d) => d.counters)).toEqual([
      { 'c/R': { fire_count: 1, breaker_count: 0 } },
      { 'c/R': { fire_count: 2, breaker_count: 0 } },
    ]);
    const d = scoped.decide({ anchor: PRE });
    expect(trace(d)).toEqual(['c/R:fired']);
    expect(d.counters).toEqual({ 'c/R#': { fire_count: 1, breaker_count: 0 } });
    expect(trace(scoped.decide({ anchor: PRE }))).toEqual(['c/R:passed']);
    // The unscoped counter was left alone.
    expect(unscoped.decide({ anchor: PRE }).counters).toEqual({ 'c/R': { fire_count: 3, breaker_count: 0 } });
    for (const s of Object.values(stores)) {
      expect(s.keys.map((k) => ('scope' in k ? `scope=${JSON.stringify(k.scope)}` : 'unscoped'))).toEqual(['unscoped', 'unscoped', 'scope=""', 'unscoped']);
    }
  });

  it('[OAR-CONF-21] a decision reports only the counters its own occurrence changed', () => {
    const h = harness({
      capability: CAP,
      rules: [r('COUNT', 'allow', { selector: { tool: ['x'] }, on_fire: ['increment_counter'] }), r('RESETS', 'allow', { selector: { tool: ['y'] }, on_fire: ['reset_breaker'] })],
    });
    const ds = h.run([call('x'), call('z'), call('y'), call('x'), call('x'), call('y')]);
    // A reset of a breaker already at zero writes it without changing it: no entry. The spec's
    // reason: two engines must not disagree merely because one lists untouched zeroes.
    expect(ds.map((d) => d.counters)).toEqual([
      { 'c/COUNT': { fire_count: 1, breaker_count: 0 } },
      {},
      {},
      { 'c/COUNT': { fire_count: 2, breaker_count: 0 } },
      { 'c/COUNT': { fire_count: 3, breaker_count: 0 } },
      {},
    ]);
  });
});

describe('[OAR-FIRE-11] reading another rule\'s counters', () => {
  it('[OAR-FIRE-11] fire_count_of reads the named rule under that rule\'s own scope at this occurrence', () => {
    const h = harness({
      capability: CAP,
      rules: [
        r('COUNT', 'allow', { counter_scope: 'tool_args_fingerprint', selector: { permission_profile: ['counting'] }, on_fire: ['increment_counter'] }),
        r('READ_BARE', 'warn', { when: 'fire_count_of("COUNT") >= 2' }),
        r('READ_QUALIFIED', 'warn', { when: 'fire_count_of("c/COUNT") >= 2' }),
        rule({ id: 'READ_OTHER_NS', namespace: 'other', anchor: PRE, effect: 'warn', when: 'fire_count_of("c/COUNT") >= 2' }),
      ],
    });
    const counting = { facts: { permission_profile: 'counting' } };
    const ds = h.run([call('x', {}, counting), call('x', {}, counting), call('y', {}, counting), call('y'), call('x')]);
    const readers = (i: number) => trace(ds[i]!).filter((t) => !t.startsWith('c/COUNT'));
    expect(readers(2)).toEqual(['c/READ_BARE:passed', 'c/READ_QUALIFIED:passed', 'other/READ_OTHER_NS:passed']);
    expect(readers(3)).toEqual(['c/READ_BARE:passed', 'c/READ_QUALIFIED:passed', 'other/READ_OTHER_NS:passed']);
    // COUNT is not selected at the last occurrence; its counter is still read under its scope.
    expect(trace(ds[4]!)).toEqual(['c/READ_BARE:fired', 'c/READ_QUALIFIED:fired', 'other/READ_OTHER_NS:fired']);
  });

  it('[OAR-FIRE-11] breaker_count_of reads the breaker; reading never evaluates the named rule', () => {
    let asked = 0;
    const h = harness({
      capability: CAP,
      rules: [
        r('TRIP', 'allow', { selector: { tool: ['trip'] }, when: 'acme.gw.n >= 0', on_fire: ['increment_breaker'] }),
        r('OPEN', 'block', { selector: { tool: ['use'] }, when: 'breaker_count_of("TRIP") >= 1' }),
      ],
    });
    const occ = (tool: string) => () => ({ anchor: PRE, toolCall: { name: tool }, facts: { 'acme.gw.n': () => (asked++, 1) } });
    expect(h.decide(occ('use')).decision).toBe('none');
    expect(asked).toBe(0);
    expect(h.decide(occ('trip')).counters).toEqual({ 'c/TRIP': { fire_count: 0, breaker_count: 1 } });
    expect(asked).toBe(BACKENDS.length); // once per back end
    const d = h.decide(occ('use'));
    expect(head(d)).toEqual({ decision: 'block', code: 'OPEN', rule: 'c/OPEN' });
    expect(asked).toBe(BACKENDS.length);
  });

  it('[OAR-FIRE-11] [OAR-FACT-26] the named rule\'s scope is a fact dependency of the reader, checked as one', () => {
    const h = harness({
      capability: CAP,
      rules: [
        r('COUNT', 'allow', { counter_scope: 'acme.gw.key', selector: { tool: ['count'] }, on_fire: ['increment_counter'] }),
        r('READ', 'warn', { selector: { tool: ['read'] }, when: 'fire_count_of("COUNT") >= 1', on_error: 'fail_open' }),
      ],
    });
    h.decide({ anchor: PRE, toolCall: { name: 'count' }, facts: { 'acme.gw.key': 'k1' } });
    expect(trace(h.decide({ anchor: PRE, toolCall: { name: 'read' }, facts: { 'acme.gw.key': () => 'k1' } }))).toEqual(['c/READ:fired']);
    expect(trace(h.decide({ anchor: PRE, toolCall: { name: 'read' }, facts: { 'acme.gw.key': 'k2' } }))).toEqual(['c/READ:passed']);
    const bad = h.decide({ anchor: PRE, toolCall: { name: 'read' }, facts: { 'acme.gw.key': 7 } });
    expect(trace(bad)).toEqual(['c/READ:errored']);
    expect(bad.applied[0]?.error?.code).toBe('wrong_type');
    const failing = h.decide({ anchor: PRE, toolCall: { name: 'read' }, facts: { 'acme.gw.key': () => { throw new Error('down'); } } });
    expect(trace(failing)).toEqual(['c/READ:errored']);
    expect(failing.applied[0]?.error?.code).toBe('provider_failure');
  });
});

describe('[OAR-FIRE-11] [OAR-FACT-11] a reader with a detector', () => {
  it('[OAR-FIRE-11] [OAR-FIRE-6] the named rule\'s scope is its own at this occurrence, never the reading rule\'s detector\'s', () => {
    // Reading (shared with test/property/reference-engine.ts): the counter read is "the named
    // rule's, under the named rule's own counter_scope evaluated at this occurrence" — the counter
    // the named rule keeps here. What the reader's detector observed is local to the reader
    // ([OAR-FACT-11]), so two readers of one named rule never read two different counters.
    const h = harness({
      capability: cap({ profiles: ['tool'], detectors: ['detector://fixture'], hostFacts: [{ name: 'acme.gw.key', type: 'string' }] }),
      rules: [
        r('COUNT', 'allow', { counter_scope: 'acme.gw.key', selector: { tool: ['count'] }, on_fire: ['increment_counter'], requires: { profiles: ['tool'], facts: ['acme.gw.key'] } }),
        r('READ', 'warn', {
          kind: 'detector',
          detector: { ref: 'detector://fixture' },
          selector: { tool: ['read'] },
          when: 'fire_count_of("COUNT") == 1 && acme.gw.key == "k2"',
          requires: { profiles: ['tool'], facts: ['acme.gw.key'] },
        }),
        r('READ_HOST', 'nudge', { selector: { tool: ['read'] }, when: 'fire_count_of("COUNT") == 0', requires: { profiles: ['tool'], facts: ['acme.gw.key'] } }),
      ],
    });
    expect(h.decide(call('count', {}, { facts: { 'acme.gw.key': 'k2' } })).counters).toEqual({ 'c/COUNT#k2': { fire_count: 1, breaker_count: 0 } });
    // The host observes k1 (COUNT#k1 is 0). READ's own detector reports k2, which READ itself sees
    // (acme.gw.key == "k2" holds) — but the counter it reads is COUNT#k1, as READ_HOST's is.
    const d = h.decide(call('read', {}, { facts: { 'acme.gw.key': 'k1' }, detectorFacts: { 'acme.gw.key': 'k2' } }));
    expect(trace(d)).toEqual(['c/READ_HOST:fired', 'c/READ:passed']);
    const e = h.decide(call('read', {}, { facts: { 'acme.gw.key': 'k2' }, detectorFacts: { 'acme.gw.key': 'k2' } }));
    expect(trace(e)).toEqual(['c/READ_HOST:passed', 'c/READ:fired']);
  });

  it('[OAR-FIRE-10] [OAR-FIRE-6] a detector rule counts under the occurrence\'s scope value, the one every reader names', () => {
    const h = harness({
      capability: cap({ profiles: ['tool'], detectors: ['detector://fixture'], hostFacts: [{ name: 'acme.gw.key', type: 'string' }] }),
      rules: [
        r('COUNT', 'allow', {
          kind: 'detector',
          detector: { ref: 'detector://fixture' },
          counter_scope: 'acme.gw.key',
          when: 'acme.gw.key == "k2" && fire_count == 0',
          on_fire: ['increment_counter'],
          requires: { profiles: ['tool'], facts: ['acme.gw.key'] },
        }),
        r('READ', 'warn', { when: 'fire_count_of("COUNT") == 1', requires: { profiles: ['tool'], facts: ['acme.gw.key'] } }),
      ],
    });
    // The detector says k2 (the condition sees it); the host observes k1: the counter is COUNT#k1.
    const occ = call('x', {}, { facts: { 'acme.gw.key': 'k1' }, detectorFacts: { 'acme.gw.key': 'k2' } });
    expect(h.decide(occ).counters).toEqual({ 'c/COUNT#k1': { fire_count: 1, breaker_count: 0 } });
    // Next time both COUNT's own fire_count and READ's fire_count_of read that same counter.
    expect(trace(h.decide(occ))).toEqual(['c/READ:fired', 'c/COUNT:passed']);
  });
});

describe('[OAR-FIRE-7] [OAR-FIRE-8] [OAR-FIRE-9] events, order, obligations', () => {
  it('[OAR-FIRE-7] publish_event emits one record with the rule, the anchor and the effect', () => {
    const records: EventRecord[] = [];
    const h = harness({
      capability: cap({ profiles: ['tool'], core: { 'tool.pre_invoke': 'gw.pre', 'model.output': 'gw.out' } }),
      rules: [
        rule({ id: 'ALLOWS', namespace: 'c', anchor: 'tool.pre_invoke', effect: 'allow', on_fire: ['publish_event'] }),
        rule({ id: 'WARNS', anchor: 'tool.pre_invoke', effect: 'warn', on_fire: ['publish_event', 'publish_event'] }),
        rule({ id: 'OUT', namespace: 'c', anchor: 'model.output', effect: 'block', on_fire: ['publish_event'] }),
      ],
      options: (b) => ({ events: sink([], b === 'compiled' ? records : []) }),
    });
    const d = h.decide({ anchor: 'gw.pre' });
    const e = h.decide({ anchor: 'gw.out' });
    // Reading chosen: the record's anchor is the `anchor` fact — the core identifier.
    const expected = [
      { rule: 'WARNS', anchor: 'tool.pre_invoke', effect: 'warn' },
      { rule: 'WARNS', anchor: 'tool.pre_invoke', effect: 'warn' },
      { rule: 'c/ALLOWS', anchor: 'tool.pre_invoke', effect: 'allow' },
    ];
    expect(d.events).toEqual(expected);
    expect(e.events).toEqual([{ rule: 'c/OUT', anchor: 'model.output', effect: 'block' }]);
    expect(records).toEqual([...expected, { rule: 'c/OUT', anchor: 'model.output', effect: 'block' }]);
  });

  it('[OAR-FIRE-7] without a sink the records are still carried on the decision; a host anchor is named as itself', () => {
    const h = harness({
      capability: cap({ hostAnchors: ['gw.render'] }),
      rules: [rule({ id: 'RENDER', namespace: 'c', anchor: 'gw.render', effect: 'nudge', on_fire: ['publish_event'] })],
    });
    expect(h.decide({ anchor: 'gw.render' }).events).toEqual([{ rule: 'c/RENDER', anchor: 'gw.render', effect: 'nudge' }]);
  });

  it('[OAR-FIRE-8] actions apply in listed order within a rule and in evaluation order across rules', () => {
    const logs: Record<Backend, string[]> = { specialised: [], compiled: [], interpreter: [] };
    const h = harness({
      capability: CAP,
      rules: [
        r('A', 'allow', { on_fire: ['publish_event'] }),
        r('B', 'warn', { on_fire: ['increment_counter', 'publish_event', 'increment_breaker'] }),
        r('C', 'allow', { on_fire: ['increment_counter'] }),
        // D overrides A, so A waits for it ([OAR-EVAL-18]): evaluation order is B, C, D, A.
        r('D', 'allow', { overrides: ['A'], when: 'false' }),
      ],
      options: (b) => ({ counters: new LoggingStore(logs[b]), events: sink(logs[b], []) }),
    });
    const d = h.decide({ anchor: PRE });
    const order = ['c/B:increment_counter', 'c/B:publish_event', 'c/B:increment_breaker', 'c/C:increment_counter', 'c/A:publish_event'];
    expect(trace(d)).toEqual(['c/B:fired', 'c/C:fired', 'c/D:passed', 'c/A:fired']);
    expect(fired(d)).toEqual(order);
    expect(logs.compiled).toEqual(order);
    expect(logs.interpreter).toEqual(order);
  });

  it('[OAR-FIRE-9] [OAR-OPS-3] an event stream that refuses the write: fail_closed blocks with that rule\'s identifiers', () => {
    const h = harness({
      capability: CAP,
      rules: [r('A_NUDGE', 'nudge', { copy: { what: 'a' } }), r('B_EVENT', 'warn', { on_fire: ['publish_event'], copy: { what: 'b' } }), r('C_COUNT', 'allow', { on_fire: ['increment_counter'] })],
      options: () => ({ events: sink([], [], ['c/B_EVENT']) }),
    });
    const d = h.decide({ anchor: PRE });
    expect(head(d)).toEqual({ decision: 'block', code: 'B_EVENT', rule: 'c/B_EVENT' });
    expect(d.copy).toEqual({ what: 'b' });
    // Reading chosen: the failure happens where B_EVENT is, so C_COUNT counts as never reached —
    // its side-effect is not applied and it leaves the trace.
    expect(trace(d)).toEqual(['c/A_NUDGE:fired', 'c/B_EVENT:errored']);
    expect(d.applied[1]?.error?.code).toBe('provider_failure');
    expect(d.onFire).toEqual([]);
    expect(d.events).toEqual([]);
    expect(d.counters).toEqual({});
    expect(d.advisories).toEqual([]);
  });

  it('[OAR-FIRE-9] [OAR-OPS-4] fail_open: the rule is recorded errored and contributes nothing; the rest applies', () => {
    const records: EventRecord[] = [];
    const h = harness({
      capability: CAP,
      rules: [
        r('A_WARN', 'warn', { on_fire: ['publish_event'], on_error: 'fail_open' }),
        r('B_WARN', 'warn', { on_fire: ['publish_event', 'increment_counter'] }),
      ],
      options: (b) => ({ events: sink([], b === 'compiled' ? records : [], ['c/A_WARN']) }),
    });
    const d = h.decide({ anchor: PRE });
    expect(trace(d)).toEqual(['c/A_WARN:errored', 'c/B_WARN:fired']);
    expect(head(d)).toEqual({ decision: 'warn', code: 'B_WARN', rule: 'c/B_WARN' });
    expect(d.advisories.map((a) => a.rule)).toEqual(['c/B_WARN']);
    expect(fired(d)).toEqual(['c/B_WARN:publish_event', 'c/B_WARN:increment_counter']);
    expect(d.events).toEqual([{ rule: 'c/B_WARN', anchor: 'tool.pre_invoke', effect: 'warn' }]);
    expect(records).toEqual(d.events);
    expect(d.counters).toEqual({ 'c/B_WARN': { fire_count: 1, breaker_count: 0 } });
  });

  it('[OAR-FIRE-9] [OAR-OPS-10] a suppressor past the rule whose side-effect failed suppresses nothing in the trace', () => {
    const h = harness({
      capability: CAP,
      rules: [r('A_EVENT', 'warn', { on_fire: ['publish_event'] }), r('B_SUP', 'allow', { overrides: ['C_T'] }), r('C_T', 'warn')],
      options: () => ({ events: sink([], [], ['c/A_EVENT']) }),
    });
    const d = h.decide({ anchor: PRE });
    expect(head(d)).toEqual({ decision: 'block', code: 'A_EVENT', rule: 'c/A_EVENT' });
    expect(trace(d)).toEqual(['c/A_EVENT:errored']);
  });

  it('[OAR-FIRE-9] [OAR-OPS-4] a rule whose event is refused after its increment applies no side-effect: the increment is taken back', () => {
    const records: EventRecord[] = [];
    const h = harness({
      capability: CAP,
      rules: [
        r('R', 'warn', { on_fire: ['increment_counter', 'publish_event', 'increment_breaker'], on_error: 'fail_open' }),
        r('S_READ', 'nudge', { when: 'fire_count_of("R") > 0' }),
      ],
      options: (b) => ({ events: sink([], b === 'compiled' ? records : [], ['c/R']) }),
    });
    for (const d of h.run([{ anchor: PRE }, { anchor: PRE }])) {
      expect(trace(d)).toEqual(['c/R:errored', 'c/S_READ:passed']);
      expect(head(d)).toEqual({ decision: 'none', code: null, rule: null });
      expect(d.onFire).toEqual([]);
      expect(d.events).toEqual([]);
      expect(d.counters).toEqual({});
    }
    expect(records).toEqual([]);
  });

  it('[OAR-FIRE-9] [OAR-OPS-3] fail_closed: the block carries the rule, and what it wrote before the refusal is taken back', () => {
    const h = harness({
      capability: CAP,
      rules: [r('B', 'warn', { on_fire: ['increment_counter', 'publish_event'] }), r('READ', 'warn', { when: 'fire_count_of("B") > 0' })],
      options: () => ({ events: sink([], [], ['c/B']) }),
    });
    for (const d of h.run([{ anchor: PRE }, { anchor: PRE }])) {
      expect(head(d)).toEqual({ decision: 'block', code: 'B', rule: 'c/B' });
      expect(trace(d)).toEqual(['c/B:errored']);
      expect(d.counters).toEqual({});
      expect(d.onFire).toEqual([]);
    }
  });

  it('[OAR-EVAL-12] [OAR-OPS-10] a late failure that ends the occurrence at an earlier rule takes back the counter writes of the rules after it', () => {
    // A_W would be presented only once C_N's event is refused, and its copy then fails
    // (a wrong-typed fact, fail_closed): the occurrence ends at A_W, and B_X, after it, was never
    // reached. B_X's increment is taken back; its event, already published, cannot be, and stays
    // reported as what happened.
    const h = harness({
      capability: CAP,
      rules: [
        r('A_W', 'warn', { requires: { facts: ['acme.gw.key'] }, copy: { what: 'got {{ acme.gw.key }}' } }),
        r('B_X', 'allow', { on_fire: ['publish_event', 'increment_counter'] }),
        r('C_N', 'nudge', { on_fire: ['publish_event'], on_error: 'fail_open' }),
      ],
      options: () => ({ events: sink([], [], ['c/C_N']) }),
    });
    const d = h.decide({ anchor: PRE, facts: { 'acme.gw.key': 5 } });
    expect(head(d)).toEqual({ decision: 'block', code: 'A_W', rule: 'c/A_W' });
    expect(trace(d)).toEqual(['c/A_W:errored']);
    expect(d.counters).toEqual({});
    expect(d.onFire).toEqual([{ rule: 'c/B_X', action: 'publish_event' }]);
    expect(d.events.map((e) => e.rule)).toEqual(['c/B_X']);
  });

  it('[OAR-FIRE-9] [OAR-OPS-4] decideAsync: an event refused after the batch write makes its rule fail; its increment, already in the store, stands and is reported', async () => {
    // decideAsync publishes an occurrence's events once its counter writes are in the store
    // (runtime/event-ledger.ts), so a failed write never leaves a published event behind; the
    // price is this case: a write in a shared store cannot be taken back, so it is reported.
    for (const b of BACKENDS) {
      const mem = new MemoryCounterStore();
      const written: string[] = [];
      const records: EventRecord[] = [];
      const h = harness({
        capability: CAP,
        rules: [r('R', 'warn', { on_fire: ['increment_counter', 'publish_event'], on_error: 'fail_open' }), r('OK', 'nudge', { on_fire: ['increment_counter', 'publish_event'] })],
        options: () => ({ events: sink([], records, ['c/R']), asyncCounters: asyncMemory(mem, { written }) }),
      });
      const d = await h.engines[b].decideAsync({ anchor: PRE });
      expect(trace(d)).toEqual(['c/OK:fired', 'c/R:errored']);
      expect(head(d)).toEqual({ decision: 'nudge', code: 'OK', rule: 'c/OK' });
      expect(written).toEqual(['c/OK:increment_counter', 'c/R:increment_counter']);
      expect(d.counters).toEqual({ 'c/OK': { fire_count: 1, breaker_count: 0 }, 'c/R': { fire_count: 1, breaker_count: 0 } });
      expect(records.map((e) => e.rule)).toEqual(['c/OK']);
      expect(d.events.map((e) => e.rule)).toEqual(['c/OK']);
    }
  });

  it('[OAR-FIRE-9] decideAsync: a rule whose second event is refused is errored, not fired, whatever else fails at the occurrence', async () => {
    for (const b of BACKENDS) {
      for (const storeDown of [false, true]) {
        let n = 0;
        const published: string[] = [];
        const h = harness({
          capability: CAP,
          rules: [r('X', 'warn', { on_fire: ['publish_event', 'publish_event'], on_error: 'fail_open' }), r('Y', 'nudge', { on_fire: ['increment_counter'], on_error: 'fail_open' })],
          options: () => ({
            events: { publish: (e: EventRecord) => { if (++n === 2) throw new Error('refused'); published.push(e.rule); } },
            asyncCounters: asyncMemory(undefined, { down: () => storeDown }),
          }),
        });
        const d = await h.engines[b].decideAsync({ anchor: PRE });
        expect(trace(d)).toEqual(storeDown ? ['c/X:errored', 'c/Y:errored'] : ['c/X:errored', 'c/Y:fired']);
        expect(published).toEqual(['c/X']);
        expect(d.events.map((e) => e.rule)).toEqual(['c/X']);
      }
    }
  });

  it('[OAR-FIRE-9] [OAR-OPS-4] [OAR-EVAL-12] decideAsync: a batch write that fails publishes no event of a rule it made fail, nor of a rule it left unreached', async () => {
    for (const b of BACKENDS) {
      const records: EventRecord[] = [];
      const h = harness({
        capability: CAP,
        rules: [
          r('A', 'warn', { on_fire: ['publish_event', 'increment_counter'], on_error: 'fail_closed' }),
          r('C', 'nudge', { on_fire: ['publish_event'] }),
        ],
        options: () => ({ events: sink([], records), asyncCounters: asyncMemory(undefined, { down: () => true }) }),
      });
      const d = await h.engines[b].decideAsync({ anchor: PRE });
      expect(head(d)).toEqual({ decision: 'block', code: 'A', rule: 'c/A' });
      expect(trace(d)).toEqual(['c/A:errored']);
      expect(d.applied[0]?.error?.message).toMatch(/refused the write: redis down/);
      expect(records).toEqual([]);
      expect(d.events).toEqual([]);
      expect(d.onFire).toEqual([]);
    }
  });

  it('[OAR-EVAL-12] decideAsync: an event refused after the write ends the occurrence (fail_closed) before a rule whose increment the store holds: it stays reported', async () => {
    for (const b of BACKENDS) {
      const mem = new MemoryCounterStore();
      const records: EventRecord[] = [];
      const h = harness({
        capability: CAP,
        rules: [r('B', 'warn', { on_fire: ['publish_event'], on_error: 'fail_closed' }), r('C', 'nudge', { on_fire: ['increment_counter', 'publish_event'] })],
        options: () => ({ events: sink([], records, ['c/B']), asyncCounters: asyncMemory(mem) }),
      });
      const d = await h.engines[b].decideAsync({ anchor: PRE });
      expect(head(d)).toEqual({ decision: 'block', code: 'B', rule: 'c/B' });
      expect(trace(d)).toEqual(['c/B:errored']);
      expect(records).toEqual([]); // C was not reached: its event is never published
      expect(mem.read({ rule: 'c/C', session: '' }).fire_count).toBe(1);
      expect(d.counters).toEqual({ 'c/C': { fire_count: 1, breaker_count: 0 } });
      expect(d.onFire).toEqual([{ rule: 'c/C', action: 'increment_counter' }]);
    }
  });

  it('[OAR-FIRE-9] decideAsync: a rule whose first event is refused after its increment was written keeps the increment in counters and onFire alike', async () => {
    // The pass after the refusal fails the rule at that first event, before its counter action:
    // the increment the store holds is reported from what was written.
    for (const b of BACKENDS) {
      const mem = new MemoryCounterStore();
      const h = harness({
        capability: CAP,
        rules: [r('OPEN2', 'allow', { on_fire: ['publish_event', 'increment_counter', 'publish_event'], on_error: 'fail_open' })],
        options: () => ({ events: sink([], [], ['c/OPEN2']), asyncCounters: asyncMemory(mem) }),
      });
      const d = await h.engines[b].decideAsync({ anchor: PRE });
      expect(trace(d)).toEqual(['c/OPEN2:errored']);
      expect(mem.read({ rule: 'c/OPEN2', session: '' }).fire_count).toBe(1);
      expect(d.counters).toEqual({ 'c/OPEN2': { fire_count: 1, breaker_count: 0 } });
      expect(d.onFire).toEqual([{ rule: 'c/OPEN2', action: 'increment_counter' }]);
      expect(d.events).toEqual([]);
    }
  });

  it('[OAR-FIRE-9] an event sink whose publish returns a Promise (an async sink) refuses the event: on_error, never reported published, no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      for (const publish of [async () => { throw new Error('kafka down'); }, async () => undefined]) {
        const h = harness({
          capability: CAP,
          rules: [r('SCAN', 'warn', { on_fire: ['publish_event'] }), r('LATER', 'nudge')],
          options: () => ({ events: { publish } as unknown as EventSink }),
        });
        const d = h.decide({ anchor: PRE });
        expect(head(d)).toEqual({ decision: 'block', code: 'SCAN', rule: 'c/SCAN' });
        expect(trace(d)).toEqual(['c/LATER:fired', 'c/SCAN:errored']);
        expect(d.applied.find((t) => t.rule === 'c/SCAN')?.error?.message).toMatch(/publish returned a Promise/);
        expect(d.events).toEqual([]);
        expect(d.onFire).toEqual([]);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('[OAR-FIRE-9] [OAR-OPS-4] decideAsync against a store whose read failed: a rule listing an event before its increment publishes nothing', async () => {
    for (const b of BACKENDS) {
      const records: EventRecord[] = [];
      const h = harness({
        capability: CAP,
        rules: [r('SCAN_OPEN', 'warn', { on_fire: ['publish_event', 'increment_counter'], on_error: 'fail_open' })],
        options: () => ({
          events: sink([], records),
          asyncCounters: {
            readMany: async () => {
              throw new Error('store closed');
            },
            applyMany: async () => undefined,
          },
        }),
      });
      const d = await h.engines[b].decideAsync({ anchor: PRE });
      expect(trace(d)).toEqual(['c/SCAN_OPEN:errored']);
      expect(d.events).toEqual([]);
      expect(d.onFire).toEqual([]);
      expect(records).toEqual([]);
    }
  });

  it('[OAR-FIRE-9] a host store without restore keeps what it applied before the refusal, and the decision says so', () => {
    const h = harness({
      capability: CAP,
      rules: [r('R', 'warn', { on_fire: ['increment_counter', 'publish_event'], on_error: 'fail_open' })],
      options: () => {
        const inner = new MemoryCounterStore();
        return { counters: { read: (k) => inner.read(k), apply: (ops) => inner.apply(ops) }, events: sink([], [], ['c/R']) };
      },
    });
    const d = h.decide({ anchor: PRE });
    expect(trace(d)).toEqual(['c/R:errored']);
    expect(fired(d)).toEqual(['c/R:increment_counter']);
    expect(d.counters).toEqual({ 'c/R': { fire_count: 1, breaker_count: 0 } });
  });

  it('[OAR-FIRE-9] [OAR-OPS-4] fail_open on the block that stopped the occurrence: evaluation continues after it', () => {
    // The block could not be applied, so it contributes nothing — and had it not stopped the
    // occurrence, the rules after it would have been evaluated. They must be.
    const h = harness({
      capability: CAP,
      rules: [
        r('A_INC', 'allow', { on_fire: ['increment_counter'] }),
        r('B_BLOCK', 'block', { on_fire: ['publish_event'], on_error: 'fail_open' }),
        r('C_READ', 'nudge', { when: 'fire_count_of("A_INC") == 0', on_fire: ['increment_counter'], copy: { what: 'seen {{ fire_count }}' } }),
        r('D_PASS', 'warn', { when: 'false' }),
      ],
      options: () => ({ events: sink([], [], ['c/B_BLOCK']) }),
    });
    const d = h.decide({ anchor: PRE });
    expect(trace(d)).toEqual(['c/A_INC:fired', 'c/B_BLOCK:errored', 'c/C_READ:fired', 'c/D_PASS:passed']);
    // C_READ read A_INC's counter from the occurrence's snapshot, before A_INC's increment ([OAR-FIRE-6]).
    expect(head(d)).toEqual({ decision: 'nudge', code: 'C_READ', rule: 'c/C_READ' });
    expect(d.copy).toEqual({ what: 'seen 0' });
    expect(fired(d)).toEqual(['c/A_INC:increment_counter', 'c/C_READ:increment_counter']);
    expect(d.counters).toEqual({ 'c/A_INC': { fire_count: 1, breaker_count: 0 }, 'c/C_READ': { fire_count: 1, breaker_count: 0 } });
  });

  it('[OAR-FIRE-9] [OAR-EVAL-14] a suppressor whose side-effect fails did not fire: it suppresses nothing', () => {
    const h = harness({
      capability: CAP,
      rules: [r('A_SUP', 'nudge', { overrides: ['C_T'], on_fire: ['publish_event'], on_error: 'fail_open' }), r('C_T', 'warn', { on_fire: ['increment_counter'] })],
      options: () => ({ events: sink([], [], ['c/A_SUP']) }),
    });
    const d = h.decide({ anchor: PRE });
    expect(trace(d)).toEqual(['c/A_SUP:errored', 'c/C_T:fired']);
    expect(head(d)).toEqual({ decision: 'warn', code: 'C_T', rule: 'c/C_T' });
    expect(fired(d)).toEqual(['c/C_T:increment_counter']);
  });

  it('[OAR-FIRE-9] [OAR-OPS-3] a blocking suppressor whose side-effect fails (fail_closed) blocks, suppressing nothing', () => {
    const h = harness({
      capability: CAP,
      rules: [r('T1', 'warn'), r('U', 'block', { overrides: ['T1'], on_fire: ['publish_event'] })],
      options: () => ({ events: sink([], [], ['c/U']) }),
    });
    const d = h.decide({ anchor: PRE });
    expect(head(d)).toEqual({ decision: 'block', code: 'U', rule: 'c/U' });
    expect(trace(d)).toEqual(['c/U:errored']);
  });

  it('[OAR-FACT-11] re-deciding after a late failure asks no detector twice', () => {
    const asked: Record<Backend, number> = { specialised: 0, compiled: 0, interpreter: 0 };
    const h = harness({
      capability: cap({ profiles: ['tool'], detectors: ['detector://counting'] }),
      rules: [
        r('A_WARN', 'warn', { on_fire: ['publish_event'], on_error: 'fail_open', requires: { profiles: ['tool'] } }),
        r('B_DET', 'nudge', { kind: 'detector', detector: { ref: 'detector://counting' }, requires: { profiles: ['tool'] } }),
      ],
      options: (b) => ({
        events: sink([], [], ['c/A_WARN']),
        detectors: { 'detector://counting': () => (asked[b]++, {}) },
      }),
    });
    const d = h.decide({ anchor: PRE });
    expect(trace(d)).toEqual(['c/A_WARN:errored', 'c/B_DET:fired']);
    expect(head(d)).toEqual({ decision: 'nudge', code: 'B_DET', rule: 'c/B_DET' });
    expect(asked).toEqual({ specialised: 1, compiled: 1, interpreter: 1 });
  });

  it('[OAR-FIRE-6] [OAR-COPY-1] a decision resolved again after a failed side-effect still renders the snapshot', () => {
    const h = harness({
      capability: CAP,
      rules: [
        r('A_WARN', 'warn', { on_fire: ['increment_counter'], copy: { what: 'count {{ fire_count }}' } }),
        r('B_BLOCK', 'block', { on_fire: ['publish_event'], on_error: 'fail_open' }),
      ],
      options: () => ({ events: sink([], [], ['c/B_BLOCK']) }),
    });
    const [first, second] = h.run([{ anchor: PRE }, { anchor: PRE }]);
    expect(trace(first!)).toEqual(['c/A_WARN:fired', 'c/B_BLOCK:errored']);
    expect(head(first!)).toEqual({ decision: 'warn', code: 'A_WARN', rule: 'c/A_WARN' });
    expect(first!.copy).toEqual({ what: 'count 0' });
    expect(second!.copy).toEqual({ what: 'count 1' });
  });

  it('[OAR-FIRE-9] [OAR-OPS-5] an unreachable counter store: substitution carries the substitute\'s identifiers', () => {
    const stores: Record<Backend, LoggingStore> = { specialised: new LoggingStore([]), compiled: new LoggingStore([]), interpreter: new LoggingStore([]) };
    const h = harness({
      capability: CAP,
      rules: [r('COUNTS', 'warn', { on_fire: ['increment_counter'], on_error: 'TRIPPED' }), r('TRIPPED', 'nudge', { selector: { tool: ['never'] }, copy: { what: 'counter store down' } })],
      options: (b) => ({ counters: stores[b] }),
    });
    stores.specialised.refuse = stores.compiled.refuse = stores.interpreter.refuse = true;
    const d = h.decide({ anchor: PRE });
    expect(head(d)).toEqual({ decision: 'block', code: 'TRIPPED', rule: 'c/TRIPPED' });
    expect(d.copy).toEqual({ what: 'counter store down' });
    expect(trace(d)).toEqual(['c/COUNTS:errored']);
    expect(d.onFire).toEqual([]);
    expect(d.counters).toEqual({});
    stores.specialised.refuse = stores.compiled.refuse = stores.interpreter.refuse = false;
    const ok = h.decide({ anchor: PRE });
    expect(head(ok)).toEqual({ decision: 'warn', code: 'COUNTS', rule: 'c/COUNTS' });
    expect(ok.counters).toEqual({ 'c/COUNTS': { fire_count: 1, breaker_count: 0 } });
  });
});
