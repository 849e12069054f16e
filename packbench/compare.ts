/**
 * `oarc bench --baseline`: is this run slower than the previous one, beyond doubt?
 *
 * The gate looks at one figure — the median ns per decision over the whole occurrence file on the
 * `specialised` back end (what a host runs) — and calls it a regression only when all three hold
 * (docs/decisions.md, "oarc bench: the regression gate"):
 *   1. relative:  new median > old median × (1 + threshold)          (default threshold 10%)
 *   2. absolute:  new median − old median > floor                     (default 25 ns)
 *   3. noise:     new median − old median > 2 × pooled robust sd, where the pooled sd is
 *                 √((sd_old² + sd_new²) / 2) of the two runs' per-sample figures, each sd the
 *                 MAD-based estimate (1.4826 · MAD)
 * Per-occurrence medians are compared too and reported, but never fail the run: with many
 * occurrences some would cross any threshold by chance.
 */
import type { Figures } from './run.js';

export interface GateOptions {
  /** Relative threshold, 0.1 for 10%. */
  threshold: number;
  /** Absolute floor in ns per decision. */
  floorNs: number;
}

export const DEFAULT_THRESHOLD = 0.1;
export const DEFAULT_FLOOR_NS = 25;
export const GATED_BACKEND = 'specialised';

export interface Comparison {
  backend: string;
  old_median_ns: number;
  new_median_ns: number;
  /** new / old − 1: 0.25 is 25% slower. */
  change: number;
  delta_ns: number;
  pooled_sd_ns: number;
  /** The three conditions, each true when it says "slower". */
  over_threshold: boolean;
  over_floor: boolean;
  outside_noise: boolean;
  regression: boolean;
  occurrences: { index: number; old_median_ns: number; new_median_ns: number; change: number }[];
}

export function compareFigures(old: Figures, now: Figures, opts: GateOptions): Comparison {
  const a = old.backends[GATED_BACKEND];
  const b = now.backends[GATED_BACKEND];
  if (a === undefined || b === undefined) throw new Error(`both runs need the ${GATED_BACKEND} back end`);
  const oldM = a.overall.median_ns;
  const newM = b.overall.median_ns;
  const delta = newM - oldM;
  const pooled = Math.sqrt((a.overall.robust_sd_ns ** 2 + b.overall.robust_sd_ns ** 2) / 2);
  const overThreshold = newM > oldM * (1 + opts.threshold);
  const overFloor = delta > opts.floorNs;
  const outsideNoise = delta > 2 * pooled;
  const occurrences = b.occurrences.flatMap((o) => {
    const p = a.occurrences.find((x) => x.index === o.index);
    return p === undefined ? [] : [{ index: o.index, old_median_ns: p.median_ns, new_median_ns: o.median_ns, change: ratio(o.median_ns, p.median_ns) }];
  });
  return {
    backend: GATED_BACKEND,
    old_median_ns: oldM,
    new_median_ns: newM,
    change: ratio(newM, oldM),
    delta_ns: Math.round(delta * 100) / 100,
    pooled_sd_ns: Math.round(pooled * 100) / 100,
    over_threshold: overThreshold,
    over_floor: overFloor,
    outside_noise: outsideNoise,
    regression: overThreshold && overFloor && outsideNoise,
    occurrences,
  };
}

const ratio = (x: number, y: number) => (y > 0 ? Math.round((x / y - 1) * 10000) / 10000 : 0);

/** What makes a baseline file unusable, or undefined when it can be compared. */
export function baselineProblem(v: unknown): string | undefined {
  if (typeof v !== 'object' || v === null) return 'not a JSON object';
  const f = v as Partial<Figures>;
  if (f.oarc_bench === undefined) return 'not an `oarc bench --json` document (no oarc_bench member)';
  if (f.oarc_bench !== 1) return `written by a different oarc bench (figures version ${String(f.oarc_bench)}, this one reads 1)`;
  const o = f.backends?.[GATED_BACKEND]?.overall;
  if (o === undefined || typeof o.median_ns !== 'number' || typeof o.robust_sd_ns !== 'number') return `it has no ${GATED_BACKEND} figures (backends.${GATED_BACKEND}.overall.median_ns)`;
  if (!Array.isArray(f.backends?.[GATED_BACKEND]?.occurrences)) return `it has no ${GATED_BACKEND} per-occurrence figures`;
  return undefined;
}
