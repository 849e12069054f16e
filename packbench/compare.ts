/**
 * `oarc bench --baseline`: is this run slower than the previous one, beyond doubt?
 *
 * The gate looks at one figure — the median ns per decision over the whole occurrence file on the
 * `specialised` back end (what a host runs) — and calls it a regression only when all three hold
 * (docs/decisions.md, "oarc bench: the regression gate"):
 *   1. relative:  new median > old median × (1 + threshold)          (default threshold 10%)
 *   2. absolute:  new median − old median > floor                     (default 25 ns)
 *   3. noise:     ln(new median / old median) > 2 × pooled sd, where the pooled sd is
 *                 √((sd_old² + sd_new²) / 2) and each sd is the robust (1.4826 · MAD) standard
 *                 deviation of the logarithms of that run's per-sample figures. Timing noise on a
 *                 shared machine is multiplicative (load stretches every decision alike), so it
 *                 is compared on a log scale: a build ten times slower stands out of the noise
 *                 however loaded the machine, a rerun under different load does not
 * Per-occurrence medians are compared too and reported, but never fail the run: with many
 * occurrences some would cross any threshold by chance.
 */
import type { Figures } from './run.js';
import { robustSd } from './stats.js';

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
  /** √((sd_old² + sd_new²) / 2) of the log samples: the noise the log change is measured against. */
  pooled_log_sd: number;
  /** ln(new median / old median). */
  log_change: number;
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
  const logSd = (xs: readonly number[]) => robustSd(xs.filter((x) => x > 0).map(Math.log));
  const pooled = Math.sqrt((logSd(a.overall.samples_ns) ** 2 + logSd(b.overall.samples_ns) ** 2) / 2);
  const logChange = oldM > 0 && newM > 0 ? Math.log(newM / oldM) : 0;
  const overThreshold = newM > oldM * (1 + opts.threshold);
  const overFloor = delta > opts.floorNs;
  const outsideNoise = logChange > 2 * pooled;
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
    pooled_log_sd: Math.round(pooled * 10000) / 10000,
    log_change: Math.round(logChange * 10000) / 10000,
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
  if (o === undefined || typeof o.median_ns !== 'number' || !Array.isArray(o.samples_ns) || !o.samples_ns.every((x) => typeof x === 'number')) return `it has no ${GATED_BACKEND} figures (backends.${GATED_BACKEND}.overall.median_ns and samples_ns)`;
  if (!Array.isArray(f.backends?.[GATED_BACKEND]?.occurrences)) return `it has no ${GATED_BACKEND} per-occurrence figures`;
  return undefined;
}
