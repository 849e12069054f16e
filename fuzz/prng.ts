/**
 * A small seeded pseudo-random generator for `oarc fuzz`: the same seed gives the same cases on
 * every machine and Node version, with nothing beyond the language (the installed package carries
 * no property-testing library). The state is a 128-bit xoshiro128** generator seeded through
 * splitmix32, which is well distributed for this purpose and trivially portable; cryptographic
 * quality is not needed.
 */

export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    let s = seed >>> 0;
    const next = (): number => {
      // splitmix32: spreads a small seed over the whole state.
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    if ((this.a | this.b | this.c | this.d) === 0) this.a = 1;
  }

  /** The next 32 random bits as an unsigned integer. */
  u32(): number {
    const result = Math.imul(rotl(Math.imul(this.b, 5) >>> 0, 7), 9) >>> 0;
    const t = (this.b << 9) >>> 0;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    this.a >>>= 0;
    this.b >>>= 0;
    this.c >>>= 0;
    return result;
  }

  /** An integer in [0, n); n ≥ 1. */
  int(n: number): number {
    if (n <= 1) return 0;
    return Math.floor((this.u32() / 0x1_0000_0000) * n);
  }

  /** An integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.u32() / 0x1_0000_0000 < p;
  }

  pick<T>(xs: readonly T[]): T {
    if (xs.length === 0) throw new Error('Prng.pick: empty list');
    return xs[this.int(xs.length)] as T;
  }

  /** One of `options`, chosen by weight. */
  weighted<T>(options: readonly (readonly [number, T])[]): T {
    const total = options.reduce((n, [w]) => n + w, 0);
    let r = this.int(total);
    for (const [w, v] of options) {
      if (r < w) return v;
      r -= w;
    }
    return (options[options.length - 1] as readonly [number, T])[1];
  }

  /** An independent generator derived from this one (so one case's draws do not shift the next's). */
  fork(): Prng {
    return new Prng(this.u32());
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/** A seed given on the command line: a decimal integer in [0, 2^32). */
export function parseSeed(text: string): number | undefined {
  if (!/^(0|[1-9][0-9]{0,9})$/.test(text)) return undefined;
  const n = Number(text);
  return n <= 0xffff_ffff ? n : undefined;
}
