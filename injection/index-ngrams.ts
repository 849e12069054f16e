/**
 * The lexical index: every record becomes the set of hashed character 4-grams of its normalised
 * text, weighted by inverse document frequency, stored as an inverted index (gram bucket → the
 * records holding it) so a query touches only records that share a gram with it.
 *
 * Similarity is the weighted overlap coefficient: the IDF² mass of the grams a query and a record
 * share, over the smaller of their two masses. It is 1 when either text is contained in the other,
 * which is the shape of an indirect injection — a short directive inside a long page — where a
 * cosine would be diluted by the page around it.
 */
const N = 4;
const BITS = 18;
const SIZE = 1 << BITS;
const MASK = SIZE - 1;
/**
 * A gram in more than this share of the records (and at least STOP_MIN of them) is a stop-gram —
 * " the", "you ", "ing " — and is left out of every similarity: it says little either way, and
 * its posting list is what scoring a long text would otherwise spend its time walking.
 */
const STOP_SHARE = 0.1;
const STOP_MIN = 8;

/** Lower case, and runs of white space as one space: case and layout carry no signal here. */
export function normalise(text: string): string {
  return text.toLowerCase().replace(/\s+/gu, ' ').trim();
}

/** The bucket of the 4-gram of `s` starting at `i` (UTF-16 code units; a mixing hash, then masked). */
function bucket(s: string, i: number): number {
  let h = Math.imul(s.charCodeAt(i), 0x9e3779b1);
  h = Math.imul(h ^ s.charCodeAt(i + 1), 0x85ebca6b);
  h = Math.imul(h ^ s.charCodeAt(i + 2), 0xc2b2ae35);
  h = Math.imul(h ^ s.charCodeAt(i + 3), 0x27d4eb2f);
  return (h ^ (h >>> 15)) & MASK;
}

/** The distinct buckets of a text, in first-seen order. */
function buckets(text: string, stamp: Uint32Array, gen: number): number[] {
  const s = normalise(text);
  const out: number[] = [];
  for (let i = 0; i + N <= s.length; i++) {
    const b = bucket(s, i);
    if (stamp[b] === gen) continue;
    stamp[b] = gen;
    out.push(b);
  }
  return out;
}

export interface Neighbours {
  /** Best similarity to any record whose `positive[i]` is true / false; 0 when none shares a gram. */
  positive: number;
  negative: number;
  /** The most similar record (lowest index on a tie), or -1 when no record shares a gram. */
  nearest: number;
  nearestSimilarity: number;
}

export class NgramIndex {
  /** Bucket → its slot among the buckets some record holds, or -1; slots keep the index compact. */
  private readonly slotOf = new Int32Array(SIZE).fill(-1);
  private readonly offsets: Int32Array;
  private readonly postings: Int32Array;
  /** IDF² by slot; the weight of a bucket no record holds is `unseen`. */
  private readonly weight: Float64Array;
  private readonly unseen: number;
  private readonly mass: Float64Array;
  private readonly stamp = new Uint32Array(SIZE);
  private gen = 0;
  private readonly acc: Float64Array;
  private readonly touched: Int32Array;

  constructor(texts: readonly string[], private readonly positive: readonly boolean[]) {
    const n = texts.length;
    const { slotOf } = this;
    // Every loop here runs over grams, never over the 2^18 buckets: loading stays proportional to
    // the corpus, which is what keeps a small corpus fast to load (bench/injection.ts).
    const df: number[] = [];
    const grams = texts.map((t) => {
      const g = buckets(t, this.stamp, ++this.gen);
      for (let k = 0; k < g.length; k++) {
        const b = g[k]!;
        let slot = slotOf[b]!;
        if (slot < 0) {
          slot = slotOf[b] = df.length;
          df.push(0);
        }
        df[slot]!++;
        g[k] = slot;
      }
      return g;
    });
    const slots = df.length;
    const stop = Math.max(STOP_MIN, STOP_SHARE * n);
    const kept = (s: number) => df[s]! <= stop;
    this.offsets = new Int32Array(slots + 1);
    for (let s = 0; s < slots; s++) this.offsets[s + 1] = this.offsets[s]! + (kept(s) ? df[s]! : 0);
    this.postings = new Int32Array(this.offsets[slots]!);
    const fill = this.offsets.slice(0, slots);
    grams.forEach((g, doc) => {
      for (const s of g) if (kept(s)) this.postings[fill[s]!++] = doc;
    });
    // Smoothed IDF: a gram in every record still weighs a little, an unseen one the most.
    const idf = (d: number) => Math.log((n + 1) / (d + 1)) + 1;
    this.weight = new Float64Array(slots);
    for (let s = 0; s < slots; s++) this.weight[s] = kept(s) ? idf(df[s]!) ** 2 : 0;
    this.unseen = idf(0) ** 2;
    this.mass = new Float64Array(n);
    grams.forEach((g, doc) => {
      let m = 0;
      for (const s of g) m += this.weight[s]!;
      this.mass[doc] = m;
    });
    this.acc = new Float64Array(n);
    this.touched = new Int32Array(n);
  }

  get size(): number {
    return this.mass.length;
  }

  /** The nearest records to `text`; `exclude` leaves one record out (leave-one-out calibration). */
  query(text: string, exclude = -1): Neighbours {
    const s = normalise(text);
    const gen = this.nextGen();
    const { stamp, slotOf, offsets, postings, weight, acc, touched } = this;
    let queryMass = 0;
    let nTouched = 0;
    for (let i = 0; i + N <= s.length; i++) {
      const b = bucket(s, i);
      if (stamp[b] === gen) continue;
      stamp[b] = gen;
      const slot = slotOf[b]!;
      if (slot < 0) {
        queryMass += this.unseen;
        continue;
      }
      const w = weight[slot]!;
      if (w === 0) continue; // a stop-gram
      const end = offsets[slot + 1]!;
      let p = offsets[slot]!;
      queryMass += w;
      for (; p < end; p++) {
        const doc = postings[p]!;
        if (acc[doc] === 0) touched[nTouched++] = doc;
        acc[doc]! += w;
      }
    }
    const r: Neighbours = { positive: 0, negative: 0, nearest: -1, nearestSimilarity: 0 };
    for (let k = 0; k < nTouched; k++) {
      const doc = touched[k]!;
      const shared = acc[doc]!;
      acc[doc] = 0;
      if (doc === exclude) continue;
      const sim = shared / Math.min(queryMass, this.mass[doc]!);
      if (this.positive[doc]) r.positive = Math.max(r.positive, sim);
      else r.negative = Math.max(r.negative, sim);
      if (sim > r.nearestSimilarity || (sim === r.nearestSimilarity && doc < r.nearest)) {
        r.nearest = doc;
        r.nearestSimilarity = sim;
      }
    }
    return r;
  }

  private nextGen(): number {
    // The stamps wrap after 2³² queries; clear them rather than mistake an old gram for a new one.
    if (this.gen === 0xffffffff) {
      this.stamp.fill(0);
      this.gen = 0;
    }
    return ++this.gen;
  }
}
