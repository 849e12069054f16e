/** Order statistics for benchmark samples: medians resist the outliers a noisy machine produces. */

// One implementation of each, shared with the shipped `oarc bench`.
import { median, quantile } from '../packbench/stats.js';

export { median, quantile };

/**
 * mulberry32: small, fast and the same on every platform — the benchmark streams' generator (their
 * seeds pin the streams the README's numbers were measured on).
 */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Interquartile range relative to the median: a unitless noise figure for one sample set. */
export function relativeIqr(xs: readonly number[]): number {
  return (quantile(xs, 0.75) - quantile(xs, 0.25)) / median(xs);
}

/** Geometric mean of positive numbers — the right average for ratios. NaN for none. */
export function geomean(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  let sum = 0;
  for (const x of xs) sum += Math.log(x);
  return Math.exp(sum / xs.length);
}

export function shuffle<T>(xs: T[], rand: () => number): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [xs[i], xs[j]] = [xs[j] as T, xs[i] as T];
  }
  return xs;
}
