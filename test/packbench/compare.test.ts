/**
 * The `oarc bench --baseline` gate (packbench/compare.ts): a regression only when the median is
 * slower by more than the threshold, more than the floor, and more than two pooled robust standard
 * deviations — each condition shown to matter on its own, with figures made up to isolate it.
 */
import { describe, expect, it } from 'vitest';
import { baselineProblem, compareFigures, DEFAULT_FLOOR_NS, DEFAULT_THRESHOLD } from '../../packbench/compare.js';
import type { Figures } from '../../packbench/run.js';
import { robustSd, summarize } from '../../packbench/stats.js';

/** Figures whose specialised samples are `samples` (the summary computed from them, as runBench does). */
function figures(samples: number[]): Figures {
  const s = summarize(samples);
  return {
    oarc_bench: 1,
    oarc: 'oarc@test',
    node: process.version,
    pack: { inputs: ['p.yaml'], rules: 1, bundle_bytes: 1, compile_ms: null },
    occurrences: { file: 'o.json', count: 1, sessions: 1 },
    method: { time_s: 1, samples: samples.length, passes_per_sample: 1, decisions_per_sample: 1, timer_ns: 1, warmup_ms: 1, reset: '', gc: 'exposed' },
    backends: { specialised: { overall: { ...s, alloc_bytes_per_decision: null, samples_ns: samples }, occurrences: [{ index: 1, anchor: 'a', summary: '', ...s }] } },
    compiled_over_interpreter: null,
    backends_agree: true,
  };
}

/** n samples around `m`, spread ±`spread` evenly: a known median and robust sd. */
const around = (m: number, spread: number, n = 41) => Array.from({ length: n }, (_, i) => m + spread * ((2 * i) / (n - 1) - 1));
const gate = { threshold: DEFAULT_THRESHOLD, floorNs: DEFAULT_FLOOR_NS };

describe('the regression gate', () => {
  it('fails a run clearly slower than its baseline', () => {
    const c = compareFigures(figures(around(1000, 20)), figures(around(1500, 20)), gate);
    expect(c).toMatchObject({ over_threshold: true, over_floor: true, outside_noise: true, regression: true, old_median_ns: 1000, new_median_ns: 1500, change: 0.5 });
  });

  it('passes a run slower by less than the threshold, however tight the samples', () => {
    const c = compareFigures(figures(around(1000, 1)), figures(around(1080, 1)), gate);
    expect(c.over_threshold).toBe(false);
    expect(c.outside_noise).toBe(true);
    expect(c.regression).toBe(false);
  });

  it('passes a large relative change that is below the absolute floor', () => {
    // 50 ns → 70 ns is 40% slower, and 20 ns: below the default 25 ns floor.
    const c = compareFigures(figures(around(50, 0.5)), figures(around(70, 0.5)), gate);
    expect(c).toMatchObject({ over_threshold: true, over_floor: false, regression: false });
    expect(compareFigures(figures(around(50, 0.5)), figures(around(70, 0.5)), { threshold: 0.1, floorNs: 10 }).regression).toBe(true);
  });

  it('passes a change inside the noise of the two runs, measured on a log scale', () => {
    // 30% slower, but the samples spread from a tenth to nearly twice the median: the log change
    // (ln 1.3 ≈ 0.26) is far inside twice the pooled sd of the log samples.
    const old = around(1000, 900);
    const now = around(1300, 1170);
    const c = compareFigures(figures(old), figures(now), gate);
    const logSd = (xs: number[]) => robustSd(xs.map(Math.log));
    expect(c.pooled_log_sd).toBeCloseTo(Math.sqrt((logSd(old) ** 2 + logSd(now) ** 2) / 2), 3);
    expect(c.log_change).toBeCloseTo(Math.log(1.3), 3);
    expect(c).toMatchObject({ over_threshold: true, over_floor: true, outside_noise: false, regression: false });
  });

  it('a build ten times slower is outside the noise however noisy both runs are, since noise scales with time', () => {
    const old = around(1000, 900);
    const now = old.map((x) => x * 10);
    expect(compareFigures(figures(old), figures(now), gate)).toMatchObject({ outside_noise: true, regression: true });
  });

  it('a faster run is never a regression', () => {
    expect(compareFigures(figures(around(1000, 5)), figures(around(500, 5)), gate).regression).toBe(false);
  });

  it('the threshold is a parameter', () => {
    const old = figures(around(1000, 1));
    const now = figures(around(1200, 1));
    expect(compareFigures(old, now, { threshold: 0.1, floorNs: 25 }).regression).toBe(true);
    expect(compareFigures(old, now, { threshold: 0.25, floorNs: 25 }).regression).toBe(false);
  });
});

describe('baseline files', () => {
  it('names what makes a baseline unusable', () => {
    expect(baselineProblem([])).toBe('not an `oarc bench --json` document (no oarc_bench member)');
    expect(baselineProblem({ oarc_bench: 2 })).toMatch(/figures version 2/);
    expect(baselineProblem({ oarc_bench: 1, backends: {} })).toMatch(/no specialised figures/);
    expect(baselineProblem(figures(around(1, 0)))).toBeUndefined();
  });
});

describe('the statistics', () => {
  it('robustSd ignores one wild sample; the plain sd does not', () => {
    const xs = [...around(1000, 10), 1e7];
    expect(robustSd(xs)).toBeLessThan(15);
    expect(summarize(xs).sd_ns).toBeGreaterThan(1e5);
    expect(summarize(xs).median_ns).toBeCloseTo(1000, 0);
    expect(summarize(xs).p50_ns).toBe(summarize(xs).median_ns);
  });
});
