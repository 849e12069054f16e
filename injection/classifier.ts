/**
 * The classifier: nearest neighbours in the n-gram index, turned into a probability.
 *
 * Two numbers describe a text: its best similarity to an injection record and its best similarity
 * to a benign one. Their difference, the margin, goes through a logistic curve (Platt scaling) to
 * become `prompt_injection_score`. It is fitted when the corpus loads, on leave-one-out scores — every
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

/** The score is σ(k · margin + c), the margin being best injection minus best benign similarity. */
interface Platt {
  k: number;
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
    const margins = records.map((r, i) => {
      const n = this.index.query(r.text, i);
      return n.positive - n.negative;
    });
    this.platt = fitPlatt(margins, labels);
  }

  get size(): number {
    return this.records.length;
  }

  classify(text: string): Classification {
    const n = this.index.query(text);
    const { k, c } = this.platt;
    const score = 1 / (1 + Math.exp(-(k * (n.positive - n.negative) + c)));
    if (n.nearest < 0) return { score, similarity: 0 };
    const r = this.records[n.nearest]!;
    return { score, signal: r.signal, id: r.id, similarity: n.nearestSimilarity };
  }
}

/**
 * Logistic regression of the label on the margin by Newton's method: deterministic (fixed start,
 * fixed steps), with a small ridge so a corpus the margin separates perfectly still gives a finite
 * slope. The slope is held non-negative: a score that fell as a text grew more like the injections
 * would be no score at all, and a corpus too small for leave-one-out to say anything (one record
 * per class) gets the flat prior instead.
 */
function fitPlatt(x: readonly number[], y: readonly boolean[]): Platt {
  // Platt's targets: not 0 and 1 but slightly inside, by the class counts, against overconfidence.
  const pos = y.filter(Boolean).length;
  const neg = y.length - pos;
  const hi = (pos + 1) / (pos + 2);
  const lo = 1 / (neg + 2);
  const ridge = 1e-3;
  let k = 0;
  let c = Math.log(pos / neg);
  for (let iter = 0; iter < 100; iter++) {
    let gk = ridge * k;
    let gc = 0;
    let hkk = ridge;
    let hkc = 0;
    let hcc = 1e-9;
    x.forEach((m, i) => {
      const p = 1 / (1 + Math.exp(-(k * m + c)));
      const r = p - (y[i] ? hi : lo);
      const d = p * (1 - p);
      gk += r * m;
      gc += r;
      hkk += d * m * m;
      hkc += d * m;
      hcc += d;
    });
    const det = hkk * hcc - hkc * hkc;
    const dk = (hcc * gk - hkc * gc) / det;
    const dc = (hkk * gc - hkc * gk) / det;
    k -= dk;
    c -= dc;
    if (Math.abs(dk) + Math.abs(dc) < 1e-12) break;
  }
  if (k < 0) return { k: 0, c: Math.log(pos / neg) };
  return { k, c };
}
