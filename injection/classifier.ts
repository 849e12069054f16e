/**
 * The classifier: nearest neighbours in the n-gram index, turned into a probability.
 *
 * Two numbers describe a text: its best similarity to an injection record and its best similarity
 * to a benign one. A logistic model of those two (Platt scaling) maps them to
 * `prompt_injection_score`. It is fitted when the corpus loads, on leave-one-out scores — every
 * record queried against the corpus without itself — so the score is calibrated on texts the index
 * has not memorised: among corpus-like texts scoring 0.8, about 80% are injections. The prior is
 * the corpus's own mix of injection and benign records.
 */
import type { CorpusRecord, Signal } from './corpus.js';
import { NgramIndex } from './index-ngrams.js';

/** The threshold the eval command reports precision and recall at. */
export const DEFAULT_THRESHOLD = 0.5;

export interface Classification {
  /** Calibrated injection probability in [0, 1]. */
  score: number;
  /** The nearest record's signal and id; undefined when no record shares a gram with the text. */
  signal?: Signal;
  id?: string;
  similarity: number;
}

interface Platt {
  a: number;
  b: number;
  c: number;
}

export class InjectionClassifier {
  private readonly index: NgramIndex;
  private readonly platt: Platt;

  constructor(private readonly records: readonly CorpusRecord[]) {
    if (records.length === 0) throw new Error('the injection corpus holds no records');
    const labels = records.map((r) => r.signal !== 'benign');
    if (!labels.includes(true) || !labels.includes(false)) throw new Error('the injection corpus needs both injection and benign records to calibrate a score');
    this.index = new NgramIndex(records.map((r) => r.text), labels);
    const features = records.map((r, i) => {
      const n = this.index.query(r.text, i);
      return [n.positive, n.negative] as const;
    });
    this.platt = fitPlatt(features, labels);
  }

  get size(): number {
    return this.records.length;
  }

  classify(text: string): Classification {
    const n = this.index.query(text);
    const { a, b, c } = this.platt;
    const score = 1 / (1 + Math.exp(-(a * n.positive + b * n.negative + c)));
    if (n.nearest < 0) return { score, similarity: 0 };
    const r = this.records[n.nearest]!;
    return { score, signal: r.signal, id: r.id, similarity: n.nearestSimilarity };
  }
}

/**
 * Logistic regression on two features by Newton's method, with a small ridge so a corpus the two
 * features separate perfectly still gives finite weights. Deterministic: fixed start, fixed steps.
 */
function fitPlatt(x: readonly (readonly [number, number])[], y: readonly boolean[]): Platt {
  // Platt's targets: not 0 and 1 but slightly inside, by the class counts, against overconfidence.
  const pos = y.filter(Boolean).length;
  const neg = y.length - pos;
  const hi = (pos + 1) / (pos + 2);
  const lo = 1 / (neg + 2);
  const w = [0, 0, 0];
  const ridge = 1e-3;
  for (let iter = 0; iter < 50; iter++) {
    const g = [ridge * w[0]!, ridge * w[1]!, 0];
    const h = [
      [ridge, 0, 0],
      [0, ridge, 0],
      [0, 0, 1e-9],
    ];
    x.forEach(([f1, f2], i) => {
      const v = [f1, f2, 1];
      const p = 1 / (1 + Math.exp(-(w[0]! * f1 + w[1]! * f2 + w[2]!)));
      const t = y[i] ? hi : lo;
      const d = p * (1 - p);
      for (let j = 0; j < 3; j++) {
        g[j]! += (p - t) * v[j]!;
        for (let k = 0; k < 3; k++) h[j]![k]! += d * v[j]! * v[k]!;
      }
    });
    const step = solve3(h, g);
    for (let j = 0; j < 3; j++) w[j]! -= step[j]!;
    if (Math.hypot(...step) < 1e-10) break;
  }
  return { a: w[0]!, b: w[1]!, c: w[2]! };
}

/** Solve the 3×3 system m·s = v by Cramer's rule (m is symmetric positive definite here). */
function solve3(m: number[][], v: number[]): number[] {
  const det = (a: number[][]) =>
    a[0]![0]! * (a[1]![1]! * a[2]![2]! - a[1]![2]! * a[2]![1]!) -
    a[0]![1]! * (a[1]![0]! * a[2]![2]! - a[1]![2]! * a[2]![0]!) +
    a[0]![2]! * (a[1]![0]! * a[2]![1]! - a[1]![1]! * a[2]![0]!);
  const d = det(m);
  return [0, 1, 2].map((col) => det(m.map((row, i) => row.map((e, j) => (j === col ? v[i]! : e)))) / d);
}
