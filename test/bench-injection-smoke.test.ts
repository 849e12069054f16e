/**
 * Smoke test for the injection detector benchmark (bench/injection.ts): the synthetic corpora are
 * the size asked and load cleanly, the content is 1 KB, and a quick run gives a row per size. No
 * timing is asserted — that is the benchmark's job, not a test's.
 */
import { describe, expect, it } from 'vitest';
import { CONTENT_1KB, runInjectionBench, syntheticCorpus } from '../bench/injection.js';
import { InjectionClassifier } from '../injection/classifier.js';

describe('injection benchmark', () => {
  it('grows the seed corpus deterministically, with unique ids and every signal kept', () => {
    const a = syntheticCorpus(600);
    expect(a).toHaveLength(600);
    expect(new Set(a.map((r) => r.id)).size).toBe(600);
    expect(syntheticCorpus(600)).toEqual(a);
    expect(new InjectionClassifier(a).size).toBe(600);
  });

  it('scores 1 KB of content with a hidden directive, and reports a row per corpus size', () => {
    expect(CONTENT_1KB).toHaveLength(1024);
    const rows = runInjectionBench({ quick: true, sizes: [50, 120] });
    expect(rows.map((r) => r.records)).toEqual([50, 120]);
    for (const r of rows) for (const v of [r.loadMs, r.coldLoadMs, r.parseMs, r.scoreUs]) expect(Number.isFinite(v) && v >= 0).toBe(true);
  });
});
