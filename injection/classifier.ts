/**
 * The classifier: nearest neighbours in the n-gram index, turned into a probability.
 *
 * Two numbers describe a text: its best similarity to an injection record and its best similarity
 * to a benign one. A logistic model of the two (Platt scaling) maps them to
 * `prompt_injection_score`. It is fitted when the corpus loads, on leave-one-out scores — every
 * record queried against the corpus without itself — so the score is calibrated on texts the index
 * has not memorised, with the two classes weighted equally: at 0.8, a corpus-like text is four
 * times likelier to be an injection than benign, at even prior odds. A text like nothing in the
 * corpus scores σ(c), the fitted intercept: low, as it should be for text with no evidence.
 */
import type { CorpusRecord, Signal } from './corpus.js';
import { NgramIndex } from './index-ngrams.js';

/** The threshold the eval command reports precision and recall at. */
export const DEFAULT_THRESHOLD = 0.5;

/** At most this many leave-one-out queries calibrate the score. */
const CALIBRATION = 1000;

export interface Classification {
  /** Calibrated injection probability in [0, 1]. */
  score: number;
  /** The nearest record's signal and id; undefined when no record shares a gram with the text. */
  signal?: Signal;
  id?: string;
  similarity: number;
}

/** The score is σ(a · positive + b · negative + c): the best similarities to each class. */
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
    // Leave-one-out costs a query per record, and queries grow with the corpus: past CALIBRATION
    // records, calibrate on an evenly spaced sample of them, so loading stays near-linear.
    const step = Math.max(1, records.length / CALIBRATION);
    const sample: number[] = [];
    for (let i = 0; i < records.length; i += step) sample.push(Math.floor(i));
    const features = sample.map((i) => {
      const n = this.index.query(records[i]!.text, i);
      return [n.positive, n.negative] as const;
    });
    this.platt = fitPlatt(features, sample.map((i) => labels[i]!));
  }

  get size(): number {
    return this.records.length;
  }

  classify(text: string): Classification {
    const n = this.index.query(text);
    const { a, b, c } = this.platt;
    const score = sigmoid(a * n.positive + b * n.negative + c);
    if (n.nearest < 0) return { score, similarity: 0 };
    const r = this.records[n.nearest]!;
    return { score, signal: r.signal, id: r.id, similarity: n.nearestSimilarity };
  }
}

/**
 * Weighted logistic regression on (positive, negative) by Newton's method: deterministic (fixed
 * start, fixed steps), with a small ridge so a corpus the features separate perfectly still gives
 * finite weights. The two classes weigh the same in total, so the corpus's own mix of injection
 * and benign records does not become the score of a text that resembles neither.
 */
function fitPlatt(x: readonly (readonly [number, number])[], y: readonly boolean[]): Platt {
  const pos = y.filter(Boolean).length;
  const neg = y.length - pos;
  // Platt's targets: not 0 and 1 but slightly inside, by the class counts, against overconfidence.
  const hi = (pos + 1) / (pos + 2);
  const lo = 1 / (neg + 2);
  const weight = (label: boolean) => y.length / (2 * (label ? pos : neg));
  const ridge = 1e-3;
  const w = [0, 0, 0];
  for (let iter = 0; iter < 100; iter++) {
    const g = [ridge * w[0]!, ridge * w[1]!, 0];
    const h = [
      [ridge, 0, 0],
      [0, ridge, 0],
      [0, 0, 1e-9],
    ];
    x.forEach(([a, b], i) => {
      const v = [a, b, 1];
      const p = sigmoid(w[0]! * a + w[1]! * b + w[2]!);
      const cw = weight(y[i]!);
      const r = cw * (p - (y[i] ? hi : lo));
      const d = cw * p * (1 - p);
      for (let j = 0; j < 3; j++) {
        g[j]! += r * v[j]!;
        for (let k = 0; k < 3; k++) h[j]![k]! += d * v[j]! * v[k]!;
      }
    });
    const step = solve(h, g);
    for (let j = 0; j < 3; j++) w[j]! -= step[j]!;
    if (Math.abs(step[0]!) + Math.abs(step[1]!) + Math.abs(step[2]!) < 1e-12) break;
  }
  // More like an injection must never lower the score, more like a benign text never raise it; a
  // corpus too small for leave-one-out to show that (one record per class) gets no slope at all.
  if (w[0]! < 0 || w[1]! > 0) return { a: 0, b: 0, c: 0 };
  return { a: w[0]!, b: w[1]!, c: w[2]! };
}

export const sigmoid = (z: number): number => 1 / (1 + Math.exp(-z));

/** Solve m·s = v by Gaussian elimination with partial pivoting (m is small and positive definite). */
function solve(m: number[][], v: number[]): number[] {
  const n = v.length;
  const a = m.map((row, i) => [...row, v[i]!]);
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++) if (Math.abs(a[r]![col]!) > Math.abs(a[pivot]![col]!)) pivot = r;
    [a[col], a[pivot]] = [a[pivot]!, a[col]!];
    for (let r = col + 1; r < n; r++) {
      const f = a[r]![col]! / a[col]![col]!;
      for (let k = col; k <= n; k++) a[r]![k]! -= f * a[col]![k]!;
    }
  }
  const s = new Array<number>(n).fill(0);
  for (let r = n - 1; r >= 0; r--) {
    let acc = a[r]![n]!;
    for (let k = r + 1; k < n; k++) acc -= a[r]![k]! * s[k]!;
    s[r] = acc / a[r]![r]!;
  }
  return s;
}
