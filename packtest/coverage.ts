/**
 * Rule coverage of a test run: per rule, how many tests selected it, fired it, passed it (its
 * condition evaluated false) and errored it, read from each decision's `applied` trace
 * ([OAR-OPS-9]). A monitored rule counts by what it did: `monitored_fired` is a firing,
 * `monitored_passed` a pass, `monitored_errored` an error — monitoring changes what the decision
 * enforces, not what the condition said. A rule is *covered* when some test fired it and some test
 * passed it: both sides of its condition were seen.
 */
import type { Decision, Outcome } from '../runtime/index.js';

export interface RuleCoverage {
  rule: string;
  selected: number;
  fired: number;
  passed: number;
  errored: number;
}

export interface CoverageReport {
  rules: RuleCoverage[];
  /** Rules no test fired, and rules no test passed. */
  not_fired: string[];
  not_passed: string[];
  covered: number;
  total: number;
  /** `covered / total` as a percentage, rounded down to two decimals: 99.99, never 100 early. */
  percent: string;
}

const FIRED: ReadonlySet<Outcome> = new Set(['fired', 'monitored_fired']);
const PASSED: ReadonlySet<Outcome> = new Set(['passed', 'monitored_passed']);
const ERRORED: ReadonlySet<Outcome> = new Set(['errored', 'monitored_errored']);

/** Counts per rule, one test at a time (a test that fires a rule twice counts once). */
export class Coverage {
  private readonly counts = new Map<string, RuleCoverage>();

  /** Every rule of a pack that was tested, so a rule no test selected shows as 0. */
  addRules(qids: Iterable<string>): void {
    for (const rule of qids) if (!this.counts.has(rule)) this.counts.set(rule, { rule, selected: 0, fired: 0, passed: 0, errored: 0 });
  }

  /** The decisions of one test. */
  addTest(decisions: readonly Decision[]): void {
    const seen = new Map<string, Set<Outcome>>();
    for (const d of decisions) {
      for (const t of d.applied) {
        const s = seen.get(t.rule) ?? new Set<Outcome>();
        s.add(t.outcome);
        seen.set(t.rule, s);
      }
    }
    for (const [rule, outcomes] of seen) {
      this.addRules([rule]);
      const c = this.counts.get(rule) as RuleCoverage;
      const any = (set: ReadonlySet<Outcome>) => [...outcomes].some((o) => set.has(o));
      c.selected++;
      if (any(FIRED)) c.fired++;
      if (any(PASSED)) c.passed++;
      if (any(ERRORED)) c.errored++;
    }
  }

  report(): CoverageReport {
    const rules = [...this.counts.values()].sort((a, b) => (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0));
    const covered = rules.filter((r) => r.fired > 0 && r.passed > 0).length;
    return {
      rules,
      not_fired: rules.filter((r) => r.fired === 0).map((r) => r.rule),
      not_passed: rules.filter((r) => r.passed === 0).map((r) => r.rule),
      covered,
      total: rules.length,
      percent: percentDown(covered, rules.length),
    };
  }
}

/** `n / d` as a percentage with two decimals, rounded toward zero in integer arithmetic. */
export function percentDown(n: number, d: number): string {
  if (d === 0) return '0.00';
  const hundredths = (BigInt(n) * 10000n) / BigInt(d);
  return `${hundredths / 100n}.${(hundredths % 100n).toString().padStart(2, '0')}`;
}

/** A `--threshold` value: a percentage from 0 to 100 with any number of decimals. */
export function parseThreshold(text: string): { scaled: bigint; decimals: number } | undefined {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (m === null) return undefined;
  const decimals = m[2]?.length ?? 0;
  const scaled = BigInt(`${m[1]}${m[2] ?? ''}`);
  if (scaled > 100n * 10n ** BigInt(decimals)) return undefined;
  return { scaled, decimals };
}

/**
 * Whether `covered / total` reaches the threshold, compared exactly — `covered·100·10^k ≥
 * P·10^k·total` in integers — so 9999 of 10000 rules (99.99%) is below 100 and 2 of 3 is below
 * 66.67. No rule at all never meets a threshold: there is nothing a test could have covered.
 */
export function meetsThreshold(covered: number, total: number, threshold: { scaled: bigint; decimals: number }): boolean {
  if (total === 0) return false;
  return BigInt(covered) * 100n * 10n ** BigInt(threshold.decimals) >= threshold.scaled * BigInt(total);
}
