/**
 * Smoke test for the condition benchmark (bench/conditions.ts): every variant agrees on every case,
 * and a quick run produces a complete, renderable result. No timing is asserted — that is the
 * benchmark's job, not a test's.
 */
import { describe, expect, it } from 'vitest';
import {
  CASES, VARIANTS, checkAgreement, renderReport, renderTable, resultJson, runConditionBench,
} from '../bench/conditions.js';
import { SCENARIOS } from '../bench/conditions-env.js';

describe('condition benchmark', () => {
  it('has at least 20 cases with unique ids', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(20);
    expect(new Set(CASES.map((c) => c.id)).size).toBe(CASES.length);
  });

  it('compiled, interpreter, cel-js, hand-written and cel-js plain agree on every case and scenario', () => {
    const a = checkAgreement();
    expect(Object.keys(a.values)).toEqual(CASES.map((c) => c.id));
    for (const c of CASES) {
      expect(Object.keys(a.values[c.id] ?? {})).toEqual(Object.keys(SCENARIOS));
    }
    // The scenarios exercise both answers overall, and the timed occurrence of most cases is true.
    const all = CASES.flatMap((c) => Object.values(a.values[c.id] ?? {}));
    expect(all).toContain(true);
    expect(all).toContain(false);
  });

  it('a quick run covers every case, variant and reader mode and renders', () => {
    const r = runConditionBench({ quick: true, samples: 2, warmup: 0, minBatch: 10 });
    expect(r.modes.map((m) => m.reader)).toEqual(['reused', 'fresh']);
    for (const m of r.modes) {
      expect(m.cases.map((c) => c.id)).toEqual(CASES.map((c) => c.id));
      for (const c of m.cases) {
        for (const v of VARIANTS) {
          const expressible = v === 'cel' || v === 'celPlain' ? CASES.find((x) => x.id === c.id)?.cel !== null : true;
          if (expressible) expect(c.ns[v]).toBeGreaterThan(0);
        }
        expect(Number.isFinite(c.ratios.compiledVsHand)).toBe(true);
      }
      const table = renderTable(m);
      expect(table.split('\n')).toHaveLength(CASES.length + 3); // header, rule, rows, geomean
      expect(table).toContain('| **geomean** |');
    }
    const report = renderReport(r);
    expect(report).toContain('## Reader: reused');
    expect(report).toContain('## Reader: fresh');
    const json = JSON.parse(resultJson(r)) as { modes: { cases: Record<string, unknown> }[] };
    expect(Object.keys(json.modes[0]?.cases ?? {})).toHaveLength(CASES.length);
  });
});
