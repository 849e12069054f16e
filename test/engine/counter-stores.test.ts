/**
 * A host's counter store is an untrusted input: what it reads back must be a pair of non-negative
 * safe integers, a batched read must answer exactly the keys asked, and a write must be one the
 * engine learns the outcome of. Anything else is the store failing — every rule that reads or
 * writes the counter takes its `on_error` ([OAR-FIRE-9], [OAR-OPS-3]) — never a wrong count:
 * `fire_count_of("COUNTER") >= 2` over NaN is false, and a `fail_closed` gate would allow.
 * (runtime/counters.ts `checkedCounters`, runtime/async-counters.ts `checkedAsyncCounters`.)
 */
import { describe, expect, it } from 'vitest';
import type { AsyncCounterStore, VersionedCounterStore } from '../../runtime/async-counters.js';
import { MemoryCounterStore, type CounterKey, type CounterStore, type CounterValues, type Decision } from '../../runtime/index.js';
import { BACKENDS, cap, errorOf, harness, head, rule, trace } from './harness.js';

const PRE = 'tool.pre_invoke';
const CAP = cap({ profiles: ['tool'] });
const COUNTER = rule({ id: 'COUNTER', namespace: 'c', anchor: PRE, effect: 'warn', on_fire: ['increment_counter'] });
const GATE = rule({ id: 'GATE', namespace: 'c', anchor: PRE, effect: 'block', when: 'fire_count_of("COUNTER") >= 2' });
/** COUNTER at another anchor: at PRE only GATE is selected, and only its read can fail. */
const COUNTER_ELSEWHERE = rule({ id: 'COUNTER', namespace: 'c', anchor: 'tool.post_invoke', effect: 'warn', on_fire: ['increment_counter'] });
const OCC = { anchor: PRE, toolCall: { name: 'x' } };

/** A store that reads `values` for every key and accepts every write. */
function reading(values: unknown): CounterStore {
  return { read: () => values as CounterValues, apply: () => {} };
}

const BAD_VALUES: Record<string, unknown> = {
  'NaN': { fire_count: NaN, breaker_count: 0 },
  'a negative count': { fire_count: -3, breaker_count: 0 },
  'a fraction': { fire_count: 2.5, breaker_count: 0 },
  'a string (a network reply)': { fire_count: '7', breaker_count: '0' },
  'an unsafe integer': { fire_count: 2 ** 53, breaker_count: 0 },
  'a bigint': { fire_count: 3n, breaker_count: 0n },
  'a missing member': { fire_count: 3 },
  'a Promise (an async store passed as counters)': Promise.resolve({ fire_count: 3, breaker_count: 0 }),
  'null': null,
};

describe('[OAR-FIRE-9] a host store\'s synchronous reads are checked', () => {
  for (const [name, values] of Object.entries(BAD_VALUES)) {
    it(`${name}: the rule reading the counter cannot be evaluated and fails closed`, () => {
      const h = harness({ capability: CAP, rules: [COUNTER_ELSEWHERE, GATE], options: () => ({ counters: reading(values) }) });
      const d = h.decide(OCC);
      expect(head(d)).toEqual({ decision: 'block', code: 'GATE', rule: 'c/GATE' });
      expect(trace(d)).toEqual(['c/GATE:errored']);
      expect(errorOf(d, 'c/GATE')).toBe('provider_failure');
      expect(d.applied.find((t) => t.rule === 'c/GATE')?.error?.message).toMatch(/non-negative safe integer/);
    });
  }

  it('with the writing rule selected too, its write (which reads first) fails as well: it blocks first', () => {
    const h = harness({ capability: CAP, rules: [COUNTER, GATE], options: () => ({ counters: reading(BAD_VALUES.NaN) }) });
    const d = h.decide(OCC);
    expect(head(d)).toEqual({ decision: 'block', code: 'COUNTER', rule: 'c/COUNTER' });
    expect(d.onFire).toEqual([]);
  });

  it('good values, a null-prototype object and a getter included, are read as they are', () => {
    const proto = Object.assign(Object.create(null) as CounterValues, { fire_count: 2, breaker_count: 0 });
    for (const values of [{ fire_count: 2, breaker_count: 0 }, proto, { get fire_count() { return 2; }, breaker_count: 0 }]) {
      const h = harness({ capability: CAP, rules: [COUNTER, GATE], options: () => ({ counters: reading(values) }) });
      expect(head(h.decide(OCC))).toEqual({ decision: 'block', code: 'GATE', rule: 'c/GATE' });
      expect(trace(h.decide(OCC))).toEqual(['c/COUNTER:fired', 'c/GATE:fired']);
    }
  });

  it('an apply that returns a Promise is a side-effect that cannot be applied', () => {
    const inner = new MemoryCounterStore();
    const store: CounterStore = { read: (k) => inner.read(k), apply: ((ops: Parameters<CounterStore['apply']>[0]) => Promise.resolve(inner.apply(ops))) as unknown as CounterStore['apply'] };
    const h = harness({ capability: CAP, rules: [COUNTER], options: () => ({ counters: store }) });
    const d = h.decide(OCC);
    expect(head(d)).toEqual({ decision: 'block', code: 'COUNTER', rule: 'c/COUNTER' });
    expect(trace(d)).toEqual(['c/COUNTER:errored']);
    expect(d.onFire).toEqual([]);
  });

  it('the optional members reach the host store: begin, end, forgetSession', () => {
    const calls: string[] = [];
    const inner = new MemoryCounterStore();
    const store: CounterStore = {
      read: (k) => inner.read(k),
      apply: (ops) => inner.apply(ops),
      begin: (s) => void calls.push(`begin ${s}`),
      end: () => void calls.push('end'),
      forgetSession: (s) => void calls.push(`forget ${s}`),
    };
    const h = harness({ capability: CAP, rules: [COUNTER], options: (b) => (b === 'compiled' ? { counters: store } : {}) });
    h.decide({ ...OCC, session: 's' });
    h.endSession('s');
    expect(calls).toEqual(['begin s', 'end', 'forget s']);
  });

  it('[OAR-EVAL-12] the counters a decision reports are the value before its writes stepped by them, not a read after', () => {
    // A store that reads well until it is written, then garbage: the decision was made on the
    // good read, and reporting the changed counters must not read the store again (and throw).
    const store = (): CounterStore => {
      const inner = new MemoryCounterStore();
      let written = false;
      return {
        read: (k) => (written ? (NaN as unknown as CounterValues) : inner.read(k)),
        apply: (ops) => {
          inner.apply(ops);
          written = true;
        },
      };
    };
    const h = harness({ capability: CAP, rules: [COUNTER, GATE], options: () => ({ counters: store() }) });
    const d = h.decide({ ...OCC, session: 's' });
    expect(head(d)).toEqual({ decision: 'warn', code: 'COUNTER', rule: 'c/COUNTER' });
    expect(d.counters).toEqual({ 'c/COUNTER': { fire_count: 1, breaker_count: 0 } });
  });
});

/** An async store over memory, whose reads pass through `tamper`. */
function asyncStore(tamper: (values: CounterValues[]) => unknown): AsyncCounterStore {
  const m = new MemoryCounterStore();
  return {
    readMany: async (keys: readonly CounterKey[]) => tamper(keys.map((k) => ({ ...m.read(k) }))) as CounterValues[],
    applyMany: async (ops) => m.apply(ops),
  };
}

async function decideAsync(store: () => AsyncCounterStore): Promise<Decision[]> {
  const h = harness({ capability: CAP, rules: [COUNTER, GATE], options: () => ({ asyncCounters: store() }) });
  return Promise.all(BACKENDS.map((b) => h.engines[b].decideAsync(OCC)));
}

describe('[OAR-FIRE-9] a shared store\'s batched reads are checked', () => {
  const cases: Record<string, (v: CounterValues[]) => unknown> = {
    'one value short (its counter would read as zero)': (v) => v.slice(1),
    'one value too many': (v) => [...v, { fire_count: 0, breaker_count: 0 }],
    'no list': () => ({ length: 2 }),
    'NaN from a corrupted key': (v) => v.map(() => ({ fire_count: NaN, breaker_count: 0 })),
  };
  for (const [name, tamper] of Object.entries(cases)) {
    it(`${name}: every rule reading or writing a counter takes its on_error`, async () => {
      for (const d of await decideAsync(() => asyncStore(tamper))) {
        expect(head(d).decision).toBe('block');
        expect(d.applied.some((t) => t.outcome === 'errored')).toBe(true);
        expect(d.counters).toEqual({});
      }
    });
  }

  it('an honest store decides as the in-memory one does', async () => {
    for (const d of await decideAsync(() => asyncStore((v) => v))) expect(trace(d)).toEqual(['c/COUNTER:fired', 'c/GATE:passed']);
  });

  /** A versioned store over memory, whose replies pass through `tamper`. */
  function versioned(tamper: { read?: (r: Record<string, unknown>) => unknown; applied?: unknown }): VersionedCounterStore {
    const m = new MemoryCounterStore();
    const base = asyncStore((v) => v);
    return {
      ...base,
      sharesActivity: true,
      readVersioned: async (_s, keys, activity = 0) => {
        const r: Record<string, unknown> = { values: keys.map((k) => ({ ...m.read(k) })), version: '1' };
        if (activity > 0) r.activity = [];
        return (tamper.read ? tamper.read(r) : r) as never;
      },
      applyIfUnchanged: async (_s, _v, ops) => {
        m.apply(ops);
        return (tamper.applied ?? true) as boolean;
      },
    };
  }

  it('a versioned read: short values, or a version that is no string, is a failed read', async () => {
    for (const read of [(r: Record<string, unknown>) => ({ ...r, values: [] }), (r: Record<string, unknown>) => ({ ...r, version: 1 })]) {
      for (const d of await decideAsync(() => versioned({ read }))) expect(head(d).decision).toBe('block');
    }
  });

  it('applyIfUnchanged resolving to anything but a boolean is a refused write, never an applied one', async () => {
    for (const d of await decideAsync(() => versioned({ applied: 'yes' }))) {
      expect(head(d)).toEqual({ decision: 'block', code: 'COUNTER', rule: 'c/COUNTER' });
      expect(d.onFire).toEqual([]);
    }
  });

  it('a flow rule whose shared window comes back missing cannot be evaluated ([OAR-PROF-9])', async () => {
    const capability = cap({ profiles: ['tool'], window: 4 });
    const FLOW = rule({ id: 'FLOW', namespace: 'c', anchor: PRE, effect: 'warn', flow: ['read'], requires: { profiles: ['tool'] } });
    const h = harness({ capability, rules: [FLOW], options: () => ({ asyncCounters: versioned({ read: (r) => ({ values: r.values, version: r.version }) }) }) });
    for (const b of BACKENDS) {
      const d = await h.engines[b].decideAsync(OCC);
      expect(head(d)).toEqual({ decision: 'block', code: 'FLOW', rule: 'c/FLOW' });
    }
  });
});
