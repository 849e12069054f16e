/**
 * [OAR-FACT-11] A detector's observations belong to the rule that invoked it at one occurrence:
 * it is asked once per detector rule per occurrence, and what it reported at one occurrence is
 * never read at the next. The engine keeps an occurrence's detector results with the occurrence
 * they belong to (runtime/procedure.ts `Detections`) rather than clearing a table per occurrence,
 * so these tests pin both halves, on every back end and through `decideAsync`.
 */
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../compiler/index.js';
import { MemoryCounterStore, type DetectorInput } from '../../runtime/index.js';
import { asyncMemory, BACKENDS, cap, harness, rule, trace } from './harness.js';

const PRE = 'tool.pre_invoke';
const CAP = cap({ profiles: ['tool'], hostFacts: [{ name: 'acme.gw.n', type: 'int' }], detectors: ['detector://count'] });
const det = (id: string, effect: string, when: string) =>
  rule({ id, namespace: 'd', kind: 'detector', anchor: PRE, effect, requires: { profiles: ['tool'], facts: ['acme.gw.n'] }, detector: { ref: 'detector://count' }, when });
const RULES = [det('WARN_3', 'warn', 'acme.gw.n == 3'), det('BLOCK_4', 'block', 'acme.gw.n == 4')];

/** The detector rules asked at an occurrence of tool `name`. */
const asked = (name: string) => (name === 't4' ? ['d/BLOCK_4'] : ['d/BLOCK_4', 'd/WARN_3']);

/** The detector reports the n the occurrence's tool name spells (`t3` → 3), and counts its calls per back end. */
function setup(extra: () => Record<string, unknown> = () => ({})) {
  const calls = new Map<Backend, string[]>();
  const h = harness({
    capability: CAP,
    rules: RULES,
    options: (b) => ({
      counters: new MemoryCounterStore(),
      ...extra(),
      detectors: {
        'detector://count': (input: DetectorInput) => {
          const list = calls.get(b) ?? [];
          list.push(input.rule);
          calls.set(b, list);
          return { 'acme.gw.n': BigInt(Number((input.occurrence.toolCall?.name ?? 't0').slice(1))) };
        },
      },
    }),
  });
  return { h, calls };
}

describe('[OAR-FACT-11] detector results per occurrence', () => {
  it('asks the detector once per detector rule at each occurrence, and never reads an earlier occurrence\'s result', () => {
    const { h, calls } = setup();
    const seq = ['t3', 't4', 't0', 't4', 't3'];
    // A block ends evaluation ([OAR-EVAL-4]): after BLOCK_4 fires, WARN_3's detector is not asked.
    const expected = [['d/BLOCK_4:passed', 'd/WARN_3:fired'], ['d/BLOCK_4:fired'], ['d/BLOCK_4:passed', 'd/WARN_3:passed'], ['d/BLOCK_4:fired'], ['d/BLOCK_4:passed', 'd/WARN_3:fired']];
    seq.forEach((name, i) => {
      const d = h.decide({ anchor: PRE, toolCall: { name } });
      expect(trace(d)).toEqual(expected[i]);
    });
    for (const b of BACKENDS) expect(calls.get(b)).toEqual(seq.flatMap(asked));
  });

  it('keeps each occurrence\'s results its own through decideAsync, calls in flight together included', async () => {
    const { h, calls } = setup(() => ({ asyncCounters: asyncMemory() }));
    const names = ['t4', 't3', 't0', 't4'];
    for (const b of BACKENDS) {
      const ds = await Promise.all(names.map((name) => h.engines[b].decideAsync({ anchor: PRE, session: `s-${name}`, toolCall: { name } })));
      expect(ds.map((d) => d.decision)).toEqual(['block', 'warn', 'none', 'block']);
      // In flight together, the calls may ask in any interleaving; each asks its own rules once.
      expect([...(calls.get(b) ?? [])].sort()).toEqual(names.flatMap(asked).sort());
    }
  });
});
