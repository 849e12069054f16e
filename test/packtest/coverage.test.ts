/** Coverage arithmetic of `oarc test --threshold`: exact, and never rounded up to a pass. */
import { describe, expect, it } from 'vitest';
import { Coverage, meetsThreshold, parseThreshold, percentDown } from '../../packtest/index.js';
import type { Decision } from '../../runtime/index.js';

const t = (s: string) => parseThreshold(s) as NonNullable<ReturnType<typeof parseThreshold>>;

describe('--threshold', () => {
  it('99.99% is below 100, and prints as 99.99, not 100.00', () => {
    expect(meetsThreshold(9999, 10000, t('100'))).toBe(false);
    expect(percentDown(9999, 10000)).toBe('99.99');
    expect(percentDown(99999, 100000)).toBe('99.99');
    expect(meetsThreshold(10000, 10000, t('100'))).toBe(true);
  });

  it('compares the fraction exactly: 2 of 3 meets 66.66 and misses 66.67', () => {
    expect(meetsThreshold(2, 3, t('66.66'))).toBe(true);
    expect(meetsThreshold(2, 3, t('66.67'))).toBe(false);
    expect(meetsThreshold(2, 3, t('66.666666666666666666667'))).toBe(false);
    expect(percentDown(2, 3)).toBe('66.66');
  });

  it('no rule at all meets no threshold; malformed or out-of-range thresholds are refused', () => {
    expect(meetsThreshold(0, 0, t('0'))).toBe(false);
    for (const bad of ['', '-1', '100.01', '1e2', 'abc', '50%', '.5']) expect(parseThreshold(bad), bad).toBeUndefined();
    expect(parseThreshold('100.000')).toEqual({ scaled: 100000n, decimals: 3 });
  });
});

describe('Coverage', () => {
  const decision = (applied: [string, string][]): Decision => ({ applied: applied.map(([rule, outcome]) => ({ rule, outcome })) }) as unknown as Decision;

  it('counts tests, not occurrences; monitored outcomes count by what the condition did', () => {
    const c = new Coverage();
    c.addRules(['a/A', 'a/B', 'a/UNSEEN']);
    c.addTest([decision([['a/A', 'fired']]), decision([['a/A', 'fired'], ['a/B', 'monitored_passed']])]);
    c.addTest([decision([['a/A', 'passed'], ['a/B', 'monitored_errored']])]);
    const r = c.report();
    expect(r.rules).toEqual([
      { rule: 'a/A', selected: 2, fired: 1, passed: 1, errored: 0 },
      { rule: 'a/B', selected: 2, fired: 0, passed: 1, errored: 1 },
      { rule: 'a/UNSEEN', selected: 0, fired: 0, passed: 0, errored: 0 },
    ]);
    expect(r.not_fired).toEqual(['a/B', 'a/UNSEEN']);
    expect(r.not_passed).toEqual(['a/UNSEEN']);
    expect([r.covered, r.total, r.percent]).toEqual([1, 3, '33.33']);
  });
});
