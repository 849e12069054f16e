/**
 * How well a classifier separates a labeled set: `benign` is the negative class, every other
 * signal positive. The figures `oarc corpus eval` prints.
 */
import { SIGNALS, type CorpusRecord } from './corpus.js';
import type { Classification } from './classifier.js';

export interface EvalReport {
  records: number;
  positives: number;
  negatives: number;
  roc_auc: number;
  threshold: number;
  precision: number;
  recall: number;
  /** Recall with the threshold set so at most 1% / 5% of benign records score above it. */
  recall_at_1pct_fpr: number;
  recall_at_5pct_fpr: number;
  /** Per labeled bucket: how often the nearest record's signal is the record's own. */
  nearest_signal_accuracy: Record<string, { records: number; correct: number; accuracy: number }>;
}

export function evaluate(labeled: readonly CorpusRecord[], classify: (text: string) => Classification, threshold: number): EvalReport {
  const scored = labeled.map((r) => ({ r, c: classify(r.text), positive: r.signal !== 'benign' }));
  const pos = scored.filter((s) => s.positive).map((s) => s.c.score);
  const neg = scored.filter((s) => !s.positive).map((s) => s.c.score);
  if (pos.length === 0 || neg.length === 0) throw new Error('the labeled set needs both benign and non-benign records');
  const tp = pos.filter((s) => s >= threshold).length;
  const fp = neg.filter((s) => s >= threshold).length;
  const buckets: EvalReport['nearest_signal_accuracy'] = {};
  for (const signal of SIGNALS) {
    const here = scored.filter((s) => s.r.signal === signal);
    if (here.length === 0) continue;
    const correct = here.filter((s) => s.c.signal === signal).length;
    buckets[signal] = { records: here.length, correct, accuracy: round(correct / here.length) };
  }
  return {
    records: labeled.length,
    positives: pos.length,
    negatives: neg.length,
    roc_auc: round(rocAuc(pos, neg)),
    threshold,
    precision: round(tp + fp === 0 ? 0 : tp / (tp + fp)),
    recall: round(tp / pos.length),
    recall_at_1pct_fpr: round(recallAtFpr(pos, neg, 0.01)),
    recall_at_5pct_fpr: round(recallAtFpr(pos, neg, 0.05)),
    nearest_signal_accuracy: buckets,
  };
}

const round = (x: number) => Math.round(x * 1e4) / 1e4;

/** The probability that a random positive outscores a random negative, ties counting half. */
export function rocAuc(pos: readonly number[], neg: readonly number[]): number {
  let wins = 0;
  for (const p of pos) for (const n of neg) wins += p > n ? 1 : p === n ? 0.5 : 0;
  return wins / (pos.length * neg.length);
}

/**
 * The recall of the strictest threshold that lets at most `fpr` of the negatives through: a
 * positive counts only when it scores strictly above the highest negative left out of the budget.
 */
export function recallAtFpr(pos: readonly number[], neg: readonly number[], fpr: number): number {
  const sorted = [...neg].sort((a, b) => b - a);
  const allowed = Math.floor(fpr * sorted.length);
  const bar = sorted[allowed] ?? -Infinity;
  return pos.filter((p) => p > bar).length / pos.length;
}
