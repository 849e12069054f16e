/**
 * SHA-256 (FIPS 180-4) and UTF-8 encoding in plain TypeScript, for the tool-call fingerprint
 * ([OAR-FACT-28]). The runtime must load on edge runtimes and in browsers, where `node:crypto` does
 * not exist and WebCrypto's digest is asynchronous, while a decision is synchronous.
 */

/**
 * The UTF-8 bytes of `s`, read as a sequence of code points the way the rest of the runtime reads
 * strings (`cpLength`, `cpCompare`): a surrogate pair is one code point; a *lone* surrogate is the
 * code point of the same value and is encoded by the same three-byte rule as any other BMP code
 * point (ED A0 80 for U+D800) — the generalised UTF-8 known as WTF-8.
 *
 * Why not U+FFFD, as `TextEncoder` and `Buffer` do: [OAR-FACT-23] forbids silently coercing a
 * string, and replacing would make "\uD800" and "\uFFFD" (and every pair of strings differing only
 * in which lone surrogate they carry) fingerprint identically. For every well-formed string the
 * output is exactly standard UTF-8, so the two approaches differ only on ill-formed input.
 */
export function utf8Encode(s: string): Uint8Array {
  const out = new Uint8Array(s.length * 3); // every UTF-16 unit takes at most 3 bytes (a pair takes 4 for 2)
  return out.subarray(0, utf8EncodeInto(s, 0, s.length, out, 0));
}

/**
 * Encode the UTF-16 units [from, to) of `s` into `out` at `at` (which has room for 3 bytes per
 * unit) and return the offset after them. A range must not split a surrogate pair.
 */
export function utf8EncodeInto(s: string, from: number, to: number, out: Uint8Array, at: number): number {
  let o = at;
  for (let i = from; i < to; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      out[o++] = c;
      continue;
    }
    if (c < 0x800) {
      out[o++] = 0xc0 | (c >> 6);
      out[o++] = 0x80 | (c & 0x3f);
      continue;
    }
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < to) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
        out[o++] = 0xf0 | (c >> 18);
        out[o++] = 0x80 | ((c >> 12) & 0x3f);
        out[o++] = 0x80 | ((c >> 6) & 0x3f);
        out[o++] = 0x80 | (c & 0x3f);
        continue;
      }
    }
    // Any other BMP code point, including a lone surrogate (see above).
    out[o++] = 0xe0 | (c >> 12);
    out[o++] = 0x80 | ((c >> 6) & 0x3f);
    out[o++] = 0x80 | (c & 0x3f);
  }
  return o;
}

/**
 * The string whose {@link utf8EncodeInto} bytes are `bytes[from, to)`: the exact inverse, lone
 * surrogates included (`TextDecoder` would turn those into U+FFFD). Only for bytes this module
 * encoded; it does not validate.
 */
export function utf8Decode(bytes: Uint8Array, from: number, to: number): string {
  let out = '';
  const units: number[] = [];
  for (let i = from; i < to; ) {
    const b = bytes[i];
    if (b < 0x80) {
      units.push(b);
      i += 1;
    } else if (b < 0xe0) {
      units.push(((b & 0x1f) << 6) | (bytes[i + 1] & 0x3f));
      i += 2;
    } else if (b < 0xf0) {
      units.push(((b & 0x0f) << 12) | ((bytes[i + 1] & 0x3f) << 6) | (bytes[i + 2] & 0x3f));
      i += 3;
    } else {
      const c = (((b & 0x07) << 18) | ((bytes[i + 1] & 0x3f) << 12) | ((bytes[i + 2] & 0x3f) << 6) | (bytes[i + 3] & 0x3f)) - 0x10000;
      units.push(0xd800 + (c >> 10), 0xdc00 + (c & 0x3ff));
      i += 4;
    }
    if (units.length >= 4096) {
      out += String.fromCharCode(...units); // in chunks: an argument list has a length limit
      units.length = 0;
    }
  }
  return out + String.fromCharCode(...units);
}

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

const INITIAL = new Uint32Array([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
]);

/** One 64-byte block of `buf` at `off` into the state `h`, with `w` as the message schedule. */
function compress(buf: Uint8Array, off: number, w: Uint32Array, h: Uint32Array): void {
  for (let t = 0; t < 16; t++) {
    const q = off + t * 4;
    w[t] = ((buf[q] as number) << 24) | ((buf[q + 1] as number) << 16) | ((buf[q + 2] as number) << 8) | (buf[q + 3] as number);
  }
  for (let t = 16; t < 64; t++) {
    const x = w[t - 15] as number;
    const y = w[t - 2] as number;
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
    w[t] = (w[t - 16] as number) + s0 + (w[t - 7] as number) + s1;
  }
  let a = h[0] as number;
  let b = h[1] as number;
  let c = h[2] as number;
  let d = h[3] as number;
  let e = h[4] as number;
  let f = h[5] as number;
  let g = h[6] as number;
  let hh = h[7] as number;
  for (let t = 0; t < 64; t++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const ch = (e & f) ^ (~e & g);
    const t1 = (hh + S1 + ch + (K[t] as number) + (w[t] as number)) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const maj = (a & b) ^ (a & c) ^ (b & c);
    const t2 = (S0 + maj) | 0;
    hh = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  h[0] = (h[0] as number) + a;
  h[1] = (h[1] as number) + b;
  h[2] = (h[2] as number) + c;
  h[3] = (h[3] as number) + d;
  h[4] = (h[4] as number) + e;
  h[5] = (h[5] as number) + f;
  h[6] = (h[6] as number) + g;
  h[7] = (h[7] as number) + hh;
}

/** The length of an `n`-byte message after padding: a multiple of 64 with room for 0x80 and the length. */
export function paddedLength(n: number): number {
  return (((n + 8) >>> 6) + 1) << 6;
}

/**
 * Pad the `n`-byte message at the start of `buf` in place — 0x80, zeros, then the bit length as a
 * 64-bit big-endian integer — and return the padded length. `buf` holds at least `paddedLength(n)`.
 */
function pad(buf: Uint8Array, n: number): number {
  const total = paddedLength(n);
  buf.fill(0, n, total);
  buf[n] = 0x80;
  const bitsHi = Math.floor(n / 0x20000000); // n * 8 / 2^32, exact for any array length
  const bitsLo = (n << 3) >>> 0;
  buf[total - 8] = bitsHi >>> 24;
  buf[total - 7] = bitsHi >>> 16;
  buf[total - 6] = bitsHi >>> 8;
  buf[total - 5] = bitsHi;
  buf[total - 4] = bitsLo >>> 24;
  buf[total - 3] = bitsLo >>> 16;
  buf[total - 2] = bitsLo >>> 8;
  buf[total - 1] = bitsLo;
  return total;
}

/** The SHA-256 digest of `bytes` (32 bytes). */
export function sha256(bytes: Uint8Array): Uint8Array {
  const buf = new Uint8Array(paddedLength(bytes.length));
  buf.set(bytes);
  const total = pad(buf, bytes.length);

  const h = new Uint32Array(INITIAL);
  const w = new Uint32Array(64);
  for (let off = 0; off < total; off += 64) compress(buf, off, w, h);
  const out = new Uint8Array(32);
  for (let i = 0; i < 8; i++) {
    const v = h[i] as number;
    out[i * 4] = v >>> 24;
    out[i * 4 + 1] = v >>> 16;
    out[i * 4 + 2] = v >>> 8;
    out[i * 4 + 3] = v;
  }
  return out;
}

const HEX = '0123456789abcdef';

/** Lowercase hexadecimal, two digits per byte ([OAR-FACT-28] asks for lowercase). */
export function toHex(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] as number;
    s += HEX[b >>> 4]! + HEX[b & 15]!;
  }
  return s;
}

/** Scratch space reused by `sha256HexOfString`. */
let scratch = new Uint8Array(1024);

/**
 * The lowercase hex SHA-256 of a string's UTF-8 (WTF-8) bytes — the same digest as
 * `toHex(sha256(utf8Encode(s)))`, computed in a reused buffer.
 */
export function sha256HexOfString(s: string): string {
  const need = paddedLength(s.length * 3); // at most 3 bytes per UTF-16 unit
  if (scratch.length < need) scratch = new Uint8Array(need);
  return sha256HexInPlace(scratch, utf8EncodeInto(s, 0, s.length, scratch, 0));
}

const W = new Uint32Array(64);
const H = new Uint32Array(8);
/** The 64 hex digits of the digest, as character codes. */
const DIGITS = new Uint8Array(64);

type NativeHash = (algorithm: 'sha256', data: Uint8Array, encoding: 'hex') => string;

/**
 * The platform's one-shot SHA-256 (`crypto.hash`, Node ≥ 20.12), found without importing a Node
 * module — the runtime stays loadable anywhere, and falls back to the code below elsewhere. On
 * Node it is about four times faster than this file's JavaScript for a tool call's few blocks.
 */
function nativeHash(): NativeHash | undefined {
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  try {
    const crypto = proc?.getBuiltinModule?.('node:crypto') as { hash?: unknown } | undefined;
    return typeof crypto?.hash === 'function' ? (crypto.hash as NativeHash) : undefined;
  } catch {
    return undefined;
  }
}

const NATIVE = nativeHash();

/**
 * Views of the first n bytes of one buffer (the fingerprinter reuses its buffer), by n: a view is
 * an allocation, and the fingerprint allocates nothing but its result. Short prefixes only.
 */
let viewed: Uint8Array | null = null;
const views: (Uint8Array | undefined)[] = [];
const VIEWS_MAX = 2048;

/** The lowercase hex SHA-256 of the first `n` bytes of `buf`: the platform's, else `sha256HexInPlace`. */
export function sha256HexOfPrefix(buf: Uint8Array, n: number): string {
  if (NATIVE === undefined) return sha256HexInPlace(buf, n);
  if (n > VIEWS_MAX) return NATIVE('sha256', buf.subarray(0, n), 'hex');
  if (buf !== viewed) {
    viewed = buf;
    views.length = 0;
  }
  let view = views[n];
  if (view === undefined) views[n] = view = buf.subarray(0, n);
  return NATIVE('sha256', view, 'hex');
}

/**
 * The lowercase hex SHA-256 of the first `n` bytes of `buf`, which is padded in place and so must
 * hold `paddedLength(n)` bytes. Nothing is allocated but the returned string: this is the end of
 * the tool-call fingerprint, computed on the hot path of every decision ([OAR-FACT-28]).
 */
export function sha256HexInPlace(buf: Uint8Array, n: number): string {
  const total = pad(buf, n);
  H.set(INITIAL);
  for (let off = 0; off < total; off += 64) compress(buf, off, W, H);
  for (let i = 0; i < 8; i++) {
    const v = H[i] as number;
    for (let j = 0; j < 8; j++) {
      DIGITS[i * 8 + j] = hexDigit((v >>> (28 - 4 * j)) & 15);
    }
  }
  return hexString(DIGITS);
}

/** The character code of the lowercase hex digit of `n` (0–15). */
export function hexDigit(n: number): number {
  return n < 10 ? 0x30 + n : 0x57 + n; // 0-9, a-f
}

/**
 * The string of 64 character codes `c`, built in one step: explicit arguments, because a spread or
 * `apply` would first allocate an array, and concatenation would allocate intermediate strings.
 */
function hexString(c: Uint8Array): string {
  return String.fromCharCode(
    c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11], c[12], c[13], c[14], c[15],
    c[16], c[17], c[18], c[19], c[20], c[21], c[22], c[23], c[24], c[25], c[26], c[27], c[28], c[29], c[30], c[31],
    c[32], c[33], c[34], c[35], c[36], c[37], c[38], c[39], c[40], c[41], c[42], c[43], c[44], c[45], c[46], c[47],
    c[48], c[49], c[50], c[51], c[52], c[53], c[54], c[55], c[56], c[57], c[58], c[59], c[60], c[61], c[62], c[63],
  );
}
