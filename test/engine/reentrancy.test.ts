/**
 * Re-entrancy: a lazy provider, a detector or an event sink that calls back into the engine that
 * is deciding. A nested `decide()` is refused with a clear error before it touches anything — the
 * outer decision sees its provider (detector, sink) fail with it and takes that rule's `on_error`
 * ([OAR-OPS-3]), exactly as with any failing provider; a nested `decideAsync()` waits its turn and
 * decides with its own state. Either way the outer decision is the one it would have been.
 */
import { describe, expect, it } from 'vitest';
import { MemoryCounterStore, type Engine, type Occurrence } from '../../runtime/index.js';
import type { AsyncCounterStore } from '../../runtime/async-counters.js';
import { BACKENDS, cap, harness, rule, trace } from './harness.js';

const PRE = 'tool.pre_invoke';
const CAP = cap({ profiles: ['tool'], window: 4, hostFacts: [{ name: 'acme.gw.s', type: 'string' }], detectors: ['detector://nested'] });

function r(id: string, effect: string, extra: Record<string, unknown>): string {
  return rule({ id, namespace: 'n', anchor: PRE, effect, requires: { profiles: ['tool'], facts: ['acme.gw.s'] }, ...extra });
}

const RULES = [
  r('A_COUNT', 'nudge', { selector: { tool: ['count'] }, on_fire: ['increment_counter'], copy: { what: 'counted' } }),
  r('B_OPEN', 'warn', { selector: { tool: ['read'] }, when: 'acme.gw.s == "x"', on_error: 'fail_open', copy: { what: 's is {{ acme.gw.s }}' } }),
  r('C_BLOCK', 'block', { selector: { tool: ['rm'] }, when: 'fire_count_of("A_COUNT") >= 1' }),
  r('D_DETECT', 'warn', { selector: { tool: ['scan'] }, kind: 'detector', detector: { ref: 'detector://nested' }, on_error: 'fail_open' }),
];

const NOOP = { 'detector://nested': () => ({}) };

function asyncMemory(): AsyncCounterStore {
  const m = new MemoryCounterStore();
  return { readMany: async (keys) => keys.map((k) => ({ ...m.read(k) })), applyMany: async (ops) => m.apply(ops) };
}

const tool = (name: string, session = 's', facts?: Record<string, unknown>): Occurrence => ({ anchor: PRE, session, toolCall: { name }, ...(facts ? { facts } : {}) });

describe('a nested decide() is refused, and the outer decision is unaffected', () => {
  it('a lazy provider calling decide(): its rule takes on_error with the error, on every back end', () => {
    const engines: Partial<Record<string, Engine>> = {};
    const h = harness({ capability: CAP, rules: RULES, options: () => ({ detectors: NOOP }) });
    for (const b of BACKENDS) engines[b] = h.engines[b];
    // Give the session a count first: a nested block decision would be visible if it leaked.
    h.decide(tool('count'));
    const nested: unknown[] = [];
    const d = h.decide((b) => tool('read', 's', {
      'acme.gw.s': () => {
        try {
          (engines[b] as Engine).decide(tool('rm'));
        } catch (e) {
          nested.push(e);
          throw e;
        }
        return 'x';
      },
    }));
    expect(trace(d)).toEqual(['n/B_OPEN:errored']);
    expect(d.decision).toBe('none');
    expect(d.applied[0]?.error?.code).toBe('provider_failure');
    expect(d.applied[0]?.error?.message).toMatch(/decide\(\) was called while this engine is evaluating another occurrence/);
    expect(nested).toHaveLength(BACKENDS.length); // once per back end, each refused
    // The engine is intact: the session's count and window are what the outer decisions left.
    expect(h.decide(tool('rm')).decision).toBe('block');
    expect(h.activity('s')).toEqual(['count', 'read']);
  });

  it('a provider that swallows the refusal decides its own fact; the outer decision stands', () => {
    const h = harness({ capability: CAP, rules: RULES, options: () => ({ detectors: NOOP }) });
    const d = h.decide((b) => tool('read', 's', {
      'acme.gw.s': () => {
        try {
          h.engines[b].decide(tool('count', 'other'));
        } catch {
          // refused: nothing was decided for 'other'
        }
        return 'x';
      },
    }));
    expect(trace(d)).toEqual(['n/B_OPEN:fired']);
    expect(d.copy).toEqual({ what: 's is x' });
    expect(h.decide(tool('rm', 'other')).decision).toBe('none'); // the refused count never happened
  });

  it('a detector calling decide() fails its own rule only', () => {
    let target: Engine[] = [];
    const h = harness({
      capability: CAP,
      rules: RULES,
      options: () => ({ detectors: { 'detector://nested': () => { (target.shift() as Engine).decide(tool('count')); return {}; } } }),
    });
    target = BACKENDS.map((b) => h.engines[b]);
    const d = h.decide(tool('scan'));
    expect(trace(d)).toEqual(['n/D_DETECT:errored']);
    expect(d.applied[0]?.error?.message).toMatch(/decisions cannot nest/);
    expect(h.decide(tool('rm')).decision).toBe('none'); // the nested count was never applied
  });
});

describe('a nested decideAsync() decides after the outer decision, with its own state', () => {
  for (const backend of BACKENDS) {
    it(`a provider calling decideAsync for the same and another session (${backend})`, async () => {
      const h = harness({ capability: CAP, rules: RULES, options: () => ({ asyncCounters: asyncMemory(), detectors: NOOP }) });
      const engine = h.engines[backend];
      await engine.decideAsync(tool('count'));
      const inner: Promise<unknown>[] = [];
      const outer = await engine.decideAsync(tool('read', 's', {
        'acme.gw.s': () => {
          inner.push(engine.decideAsync(tool('count', 's')), engine.decideAsync(tool('rm', 'other')));
          return 'x';
        },
      }));
      expect(trace(outer)).toEqual(['n/B_OPEN:fired']);
      expect(outer.copy).toEqual({ what: 's is x' });
      const [same, other] = (await Promise.all(inner)) as Awaited<ReturnType<Engine['decideAsync']>>[];
      expect(same?.counters).toEqual({ 'n/A_COUNT': { fire_count: 2, breaker_count: 0 } });
      expect(other?.decision).toBe('none');
      expect(engine.activity('s')).toEqual(['count', 'read', 'count']);
    });
  }
});
