/**
 * `decideAsync` against a versioned store (the interface `RedisCounterStore` implements), without a
 * network: a write turned back because the session moved is re-read and re-evaluated, a bounded
 * number of times, after which the writing rules take `on_error` ([OAR-FIRE-9]); a lazy provider
 * is still asked once ([OAR-FACT-11]) and an event published once per rule ([OAR-FIRE-7]).
 */
import { describe, expect, it } from 'vitest';
import type { SharedStep, VersionedCounterStore } from '../../runtime/async-counters.js';
import { MemoryCounterStore, type CounterKey, type CounterOp, type EventRecord } from '../../runtime/index.js';
import { BACKENDS, cap, harness, rule, trace } from './harness.js';

const PRE = 'tool.pre_invoke';
const CAP = cap({ profiles: ['tool'], window: 4, hostFacts: [{ name: 'acme.gw.s', type: 'string' }] });
const RULES = [
  rule({ id: 'COUNT', namespace: 'v', anchor: PRE, effect: 'nudge', requires: { profiles: ['tool'], facts: ['acme.gw.s'] }, when: 'acme.gw.s == "go"', on_fire: ['publish_event', 'increment_counter'], on_error: 'fail_open', copy: { what: 'n' } }),
];

/** A versioned in-memory store whose first `conflicts` conditional writes find the session moved. */
class Contended implements VersionedCounterStore {
  readonly mem = new MemoryCounterStore();
  version = 0;
  reads = 0;
  constructor(private conflicts: number) {}
  async readMany(keys: readonly CounterKey[]) {
    return keys.map((k) => ({ ...this.mem.read(k) }));
  }
  async applyMany(ops: readonly CounterOp[]) {
    this.mem.apply(ops);
  }
  async readVersioned(_session: string, keys: readonly CounterKey[]) {
    this.reads++;
    return { values: await this.readMany(keys), version: String(this.version) };
  }
  async applyIfUnchanged(_session: string, version: string, ops: readonly CounterOp[], _step?: SharedStep) {
    if (this.conflicts > 0) {
      this.conflicts--;
      this.version++; // another replica wrote meanwhile
    }
    if (version !== String(this.version)) return false;
    this.mem.apply(ops);
    this.version++;
    return true;
  }
}

describe('[OAR-FIRE-6] a write turned back by the version check', () => {
  for (const backend of BACKENDS) {
    it(`is read and evaluated again; the provider is asked once and the event published once (${backend})`, async () => {
      const store = new Contended(3);
      const events: EventRecord[] = [];
      const h = harness({ capability: CAP, rules: RULES, options: () => ({ asyncCounters: store, events: { publish: (e) => void events.push(e) } }) });
      let asked = 0;
      const d = await h.engines[backend].decideAsync({ anchor: PRE, session: 's', toolCall: { name: 'x' }, facts: { 'acme.gw.s': () => (asked++, 'go') } });
      expect(trace(d)).toEqual(['v/COUNT:fired']);
      expect(d.counters).toEqual({ 'v/COUNT': { fire_count: 1, breaker_count: 0 } });
      expect(store.reads).toBe(4); // three conflicts, then the write that held
      expect(asked).toBe(1);
      expect(events).toHaveLength(1);
    });
  }

  it('[OAR-FIRE-2] an evaluation the version check turned back published nothing: the rule that fired in it but passes in the next is never announced', async () => {
    // X fires while Y has not counted yet. Another replica makes Y count between the read and
    // the write, so the write is turned back and the occurrence read again: now X passes.
    const rules = [
      rule({ id: 'X', namespace: 'v', anchor: PRE, effect: 'warn', requires: { profiles: ['tool'] }, when: 'fire_count_of("Y") < 1', on_fire: ['publish_event'] }),
      rule({ id: 'Y', namespace: 'v', anchor: PRE, effect: 'nudge', requires: { profiles: ['tool'] }, on_fire: ['increment_counter'] }),
    ];
    for (const backend of BACKENDS) {
      const store = new Contended(0);
      let raced = false;
      const write = store.applyIfUnchanged.bind(store);
      store.applyIfUnchanged = async (session, version, ops, step) => {
        if (!raced) {
          raced = true;
          await store.applyMany([{ key: { rule: 'v/Y', session: 's' }, action: 'increment_counter' }]);
          store.version++;
        }
        return write(session, version, ops, step);
      };
      const events: EventRecord[] = [];
      const h = harness({ capability: CAP, rules, options: () => ({ asyncCounters: store, events: { publish: (e) => void events.push(e) } }) });
      const d = await h.engines[backend].decideAsync({ anchor: PRE, session: 's', toolCall: { name: 'x' } });
      expect(trace(d)).toEqual(['v/X:passed', 'v/Y:fired']);
      expect(d.counters).toEqual({ 'v/Y': { fire_count: 2, breaker_count: 0 } });
      expect(events).toEqual([]);
      expect(d.events).toEqual([]);
    }
  });

  it('[OAR-FIRE-9] once an event reached the stream the occurrence is not read afresh: a later write is unconditional, and a store that turns it back fails the writing rule at once', async () => {
    // A's event is refused, so A fails and no longer suppresses S ([OAR-EVAL-14]); S then fires
    // and writes — after an event was already given to the sink, so unconditionally.
    const rules = [
      rule({ id: 'A', namespace: 'v', anchor: PRE, effect: 'nudge', requires: { profiles: ['tool'] }, overrides: ['S'], on_fire: ['publish_event'], on_error: 'fail_open' }),
      rule({ id: 'S', namespace: 'v', anchor: PRE, effect: 'warn', requires: { profiles: ['tool'] }, on_fire: ['increment_counter'], on_error: 'fail_open' }),
    ];
    for (const backend of BACKENDS) {
      for (const honours of [true, false]) {
        const store = new Contended(0);
        const versions: string[] = [];
        const write = store.applyIfUnchanged.bind(store);
        store.applyIfUnchanged = async (session, version, ops, step) => {
          versions.push(version);
          if (version !== '') return write(session, version, ops, step);
          if (honours) store.mem.apply(ops); // '' applies unconditionally (Contended itself does not)
          return honours;
        };
        const h = harness({ capability: CAP, rules, options: () => ({ asyncCounters: store, events: { publish: () => { throw new Error('stream down'); } } }) });
        const d = await h.engines[backend].decideAsync({ anchor: PRE, session: 's', toolCall: { name: 'x' } });
        expect(versions).toEqual(['']);
        expect(store.reads).toBe(1);
        expect(trace(d)).toEqual(honours ? ['v/A:errored', 'v/S:fired'] : ['v/A:errored', 'v/S:errored']);
        if (!honours) expect(d.applied[1]?.error?.message).toMatch(/turned back an unconditional write/);
      }
    }
  });

  it('after 16 attempts the writing rule takes on_error, and nothing was applied', async () => {
    const store = new Contended(Infinity);
    const h = harness({ capability: CAP, rules: RULES, options: () => ({ asyncCounters: store }) });
    const d = await h.engines.compiled.decideAsync({ anchor: PRE, session: 's', toolCall: { name: 'x' }, facts: { 'acme.gw.s': 'go' } });
    expect(trace(d)).toEqual(['v/COUNT:errored']);
    expect(d.applied[0]?.error?.message).toMatch(/changed under each of 16 attempts/);
    expect(store.reads).toBe(16);
    expect(store.mem.read({ rule: 'v/COUNT', session: 's' }).fire_count).toBe(0);
  });
});
