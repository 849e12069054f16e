/**
 * Order statistics for `oarc bench` samples. A shared machine produces outliers (a collection, a
 * context switch) in both directions, so the figures are medians and the noise figure is a robust
 * one; the plain standard deviation is reported beside it for tools that expect it.
 */

/** The q-quantile (0 ≤ q ≤ 1) of `xs` by linear interpolation between order statistics; NaN for none. */
export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const a = s[lo] as number;
  const b = s[hi] as number;
  return a + (b - a) * (pos - lo);
}

export const median = (xs: readonly number[]): number => quantile(xs, 0.5);

export function mean(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  let sum = 0;
  for (const x of xs) sum += x;
  return sum / xs.length;
}

/** The sample standard deviation (n − 1); 0 for fewer than two samples. */
export function stddev(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  let sum = 0;
  for (const x of xs) sum += (x - m) * (x - m);
  return Math.sqrt(sum / (xs.length - 1));
}

/**
 * A standard deviation estimated from the median absolute deviation (1.4826 · MAD, which equals the
 * standard deviation for normal samples): one stray sample cannot inflate it, as it can the plain one.
 */
export function robustSd(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const m = median(xs);
  return 1.4826 * median(xs.map((x) => Math.abs(x - m)));
}

/** The summary every figure carries. */
export interface Summary {
  median_ns: number;
  p50_ns: number;
  p99_ns: number;
  mean_ns: number;
  sd_ns: number;
  robust_sd_ns: number;
  decisions_per_s: number;
}

export function summarize(samples: readonly number[]): Summary {
  // Every figure from the rounded median, so decisions_per_s is exactly 1e9 / median_ns as written.
  const m = round(median(samples));
  return {
    median_ns: round(m),
    p50_ns: round(m),
    p99_ns: round(quantile(samples, 0.99)),
    mean_ns: round(mean(samples)),
    sd_ns: round(stddev(samples)),
    robust_sd_ns: round(robustSd(samples)),
    decisions_per_s: m > 0 ? Math.round(1e9 / m) : 0,
  };
}

/** Two decimals: figures in ns need no more, and the JSON stays readable. */
export const round = (x: number): number => (Number.isFinite(x) ? Math.round(x * 100) / 100 : x);
