/** Order statistics for benchmark samples: medians resist the outliers a noisy machine produces. */

// One implementation of each, shared with the shipped `oarc bench` and `oarc diff`.
import { median, quantile } from '../packbench/stats.js';
import { prng } from '../diff/generate.js';

export { median, prng, quantile };

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
