/**
 * `tool_args_fingerprint` ([OAR-FACT-28]): a digest that identifies a tool call by its tool and
 * arguments, so two engines (in any language) fingerprint the same call identically. Everything
 * that could vary between JSON serialisers is fixed: whitespace, key order, string escapes, and
 * number spelling.
 *
 * The fingerprint is computed on the hot path of every decision that reads it, so it allocates
 * nothing but the hex string it returns (for ordinary arguments): the canonical JSON is never built
 * as a string but streamed as UTF-8 into a reused buffer, behind the domain prefix, and hashed there.
 */
import { formatDouble } from './format-double.js';
import { Raise } from './raise.js';
import { hexDigit, paddedLength, sha256HexOfPrefix, utf8Decode, utf8Encode, utf8EncodeInto } from './sha256.js';
import { cpCompare } from './strings.js';
import { describe } from './values.js';

/** The domain-separation prefix hashed before the canonical JSON ([OAR-FACT-28]). */
export const FINGERPRINT_DOMAIN = 'oar-tool-1.0';

/**
 * The lowercase hex SHA-256 of `oar-tool-1.0` + U+0000 + canonicalJson([tool, args]) in UTF-8
 * ([OAR-FACT-28]). The tool name is inside the digest, so identical arguments to different tools
 * differ. An absent tool call has the empty fingerprint; that is the caller's case, not this one's.
 * A value that has no canonical form throws a `provider_failure` raise ([OAR-OPS-3]).
 */
export function toolArgsFingerprint(tool: string, args: unknown): string {
  const w = acquire();
  try {
    return w.fingerprint(tool, args);
  } finally {
    w.release();
  }
}

/**
 * Canonical JSON ([OAR-FACT-28]): no insignificant whitespace; object keys sorted by Unicode code
 * point (not by UTF-16 unit, which is what `Array.prototype.sort` does: U+FF5E sorts before U+1F600
 * by code point and after it by unit); strings emitted directly except `"`, `\` and U+0000–U+001F,
 * the last as lowercase `\u00xx` — so a newline is `\u000a`, never `\n`; every number in the
 * [OAR-COPY-10] decimal form, so the integer 5 is `5.0` and int and double spellings agree; arrays
 * in order. Maps may be plain objects (own enumerable string keys) or `Map`s with string keys.
 *
 * The text is the decoding of the very bytes the fingerprint hashes, so the two cannot disagree.
 */
export function canonicalJson(value: unknown): string {
  const w = acquire();
  try {
    return w.json(value);
  } finally {
    w.release();
  }
}

const DOMAIN_BYTES = utf8Encode(FINGERPRINT_DOMAIN + '\u0000');
/** Up to this many open containers, cycles are found by scanning the path; deeper ones use a Set. */
const SCAN_DEPTH = 64;
/** Up to this many keys, an object's keys are insertion-sorted in place; more use `Array#sort`. */
const INSERTION_SORT_MAX = 16;
/** Scratch grown beyond these sizes by one large value is dropped after it, not kept for good. */
const KEEP_BYTES = 1 << 20;
const KEEP_KEYS = 4096;

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * Writes canonical JSON as UTF-8 (WTF-8, see `utf8Encode`) into a reused byte buffer. All of its
 * state is reused from call to call — the buffer, the stacks of open containers, of path segments
 * (for messages) and of object keys — and every stack slot is cleared when popped, so nothing of
 * the arguments outlives the call.
 */
class CanonicalWriter {
  busy = false;
  private bytes = new Uint8Array(1024);
  private len = 0;
  /** The containers on the current path: a cycle fails instead of overflowing the stack. */
  private readonly open: (object | null)[] = [];
  private depth = 0;
  /** The containers beyond SCAN_DEPTH on the current path, so a hostile nesting is not quadratic. */
  private deep: Set<object> | undefined;
  /** The current path, for messages: array indexes and object keys. */
  private readonly path: (string | number)[] = [];
  private pathLen = 0;
  /** The keys of the open objects, each object's above its parent's. */
  private keys: string[] = [];
  private keyTop = 0;
  /** The `[tool, args]` array of the fingerprint, reused. */
  private readonly pair: unknown[] = [undefined, undefined];

  fingerprint(tool: string, args: unknown): string {
    this.reserve(DOMAIN_BYTES.length);
    this.bytes.set(DOMAIN_BYTES);
    this.len = DOMAIN_BYTES.length;
    this.pair[0] = tool;
    this.pair[1] = args;
    this.value(this.pair);
    this.reserve(paddedLength(this.len) - this.len); // the JavaScript fallback pads in place
    return sha256HexOfPrefix(this.bytes, this.len);
  }

  json(v: unknown): string {
    this.value(v);
    return utf8Decode(this.bytes, 0, this.len);
  }

  /** Reset after a call, whether it returned or threw. */
  release(): void {
    this.len = 0;
    this.pair[0] = this.pair[1] = undefined;
    while (this.depth > 0) this.open[--this.depth] = null;
    while (this.pathLen > 0) this.path[--this.pathLen] = 0;
    while (this.keyTop > 0) this.keys[--this.keyTop] = '';
    this.deep = undefined;
    if (this.bytes.length > KEEP_BYTES) this.bytes = new Uint8Array(1024);
    if (this.keys.length > KEEP_KEYS) this.keys = [];
    this.busy = false;
  }

  private value(v: unknown): void {
    switch (typeof v) {
      case 'string':
        return this.string(v);
      case 'boolean':
        return this.ascii(v ? 'true' : 'false');
      case 'number':
        // Numbers are finite binary64 ([OAR-FACT-28], [OAR-FACT-23]).
        if (!Number.isFinite(v)) throw this.fail(`a number must be finite, got ${describe(v)}`);
        return this.number(v);
      case 'bigint': {
        // An int beyond ±(2^53−1) must convert to binary64 without losing its integer value
        // ([OAR-FACT-28]); 2^53 + 1 does not, 2^60 does.
        const d = Number(v);
        if (!Number.isFinite(d) || BigInt(d) !== v) {
          throw this.fail(`the integer ${v} has no exact binary64 value`);
        }
        return this.number(d);
      }
      case 'object':
        if (v === null) return this.ascii('null');
        this.enter(v);
        if (Array.isArray(v)) this.array(v);
        else this.map(v);
        this.leave();
        return;
      default:
        // undefined, functions and symbols have no JSON form; dropping them silently (as
        // JSON.stringify does) would let different arguments share a fingerprint.
        throw this.fail(`${typeof v} has no canonical JSON form`);
    }
  }

  private enter(v: object): void {
    const d = this.depth;
    for (let i = 0; i < d && i < SCAN_DEPTH; i++) if (this.open[i] === v) throw this.fail('the value is cyclic');
    if (d >= SCAN_DEPTH) {
      this.deep ??= new Set();
      if (this.deep.has(v)) throw this.fail('the value is cyclic');
      this.deep.add(v);
    }
    this.open[d] = v;
    this.depth = d + 1;
  }

  private leave(): void {
    const d = --this.depth;
    if (d >= SCAN_DEPTH) this.deep!.delete(this.open[d]!);
    this.open[d] = null;
  }

  private array(a: readonly unknown[]): void {
    this.byte(0x5b); // [
    for (let i = 0; i < a.length; i++) {
      if (i > 0) this.byte(0x2c); // ,
      this.path[this.pathLen++] = i;
      this.value(a[i]);
      this.path[--this.pathLen] = 0;
    }
    this.byte(0x5d); // ]
  }

  private map(m: object): void {
    const isMap = m instanceof Map;
    const from = this.keyTop;
    if (isMap) this.mapKeys(m as Map<unknown, unknown>);
    else this.ownKeys(m);
    const to = this.keyTop;
    this.sortKeys(from, to);
    this.byte(0x7b); // {
    for (let i = from; i < to; i++) {
      const k = this.keys[i] as string;
      if (i > from) this.byte(0x2c); // ,
      this.string(k);
      this.byte(0x3a); // :
      this.path[this.pathLen++] = k;
      this.value(isMap ? (m as Map<string, unknown>).get(k) : (m as Record<string, unknown>)[k]);
      this.path[--this.pathLen] = 0;
    }
    this.byte(0x7d); // }
    while (this.keyTop > from) this.keys[--this.keyTop] = '';
  }

  /**
   * Own enumerable string keys only: maps are read by own property (values.ts), so inherited
   * members are not part of the value. `for…in` walks them without allocating an array, unlike
   * `Object.keys`.
   */
  private ownKeys(m: object): void {
    for (const k in m) if (hasOwn.call(m, k)) this.keys[this.keyTop++] = k;
  }

  private mapKeys(m: Map<unknown, unknown>): void {
    for (const k of m.keys()) {
      if (typeof k !== 'string') throw this.fail(`a map key must be a string, got ${describe(k)}`);
      this.keys[this.keyTop++] = k;
    }
  }

  /** Sort `keys[from, to)` by code point: in place when few, by `Array#sort` when many (no quadratic case). */
  private sortKeys(from: number, to: number): void {
    const keys = this.keys;
    if (to - from > INSERTION_SORT_MAX) {
      const sorted = keys.slice(from, to).sort(cpCompare);
      for (let i = from; i < to; i++) keys[i] = sorted[i - from] as string;
      return;
    }
    for (let i = from + 1; i < to; i++) {
      const k = keys[i] as string;
      let j = i - 1;
      for (; j >= from && cpCompare(keys[j] as string, k) > 0; j--) keys[j + 1] = keys[j] as string;
      keys[j + 1] = k;
    }
  }

  /**
   * `"`, `\` and U+0000–U+001F escaped (the last only as lowercase `\u00xx`); the rest as UTF-8.
   * Printable ASCII — nearly every argument — is copied in one pass; the first other unit hands
   * the rest of the string to `stringFrom`.
   */
  private string(s: string): void {
    const n = s.length;
    this.reserve(3 * n + 2); // 3 bytes per UTF-16 unit at most, escapes aside, and the quotes
    const b = this.bytes;
    let o = this.len;
    b[o++] = 0x22; // "
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80 || c < 0x20 || c === 0x22 || c === 0x5c) break;
      b[o++] = c;
    }
    this.len = o;
    if (i < n) this.stringFrom(s, i);
    this.byte(0x22);
  }

  /** The units of `s` from `start` on, escaped and encoded as `string` says (no quotes). */
  private stringFrom(s: string, start: number): void {
    let from = start;
    for (let i = start; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x20 && c !== 0x22 && c !== 0x5c) continue;
      this.len = utf8EncodeInto(s, from, i, this.bytes, this.len); // cut at ASCII: never inside a pair
      this.reserve(3 * (s.length - i) + 4); // this escape's 6 bytes, then the rest as above
      this.escape(c);
      from = i + 1;
    }
    this.len = utf8EncodeInto(s, from, s.length, this.bytes, this.len);
  }

  private escape(c: number): void {
    this.byte(0x5c); // \
    if (c === 0x22 || c === 0x5c) return this.byte(c);
    // Control characters always in the \u form — no \n, \t.
    this.ascii('u00');
    this.byte(hexDigit(c >> 4));
    this.byte(hexDigit(c & 15));
  }

  /**
   * The [OAR-COPY-10] spelling (`formatDouble`). A safe integer's is its exact decimal digits and
   * `.0` (ECMAScript writes a safe integer exactly, and zero of either sign is `0.0`), written
   * here digit by digit instead of through a string.
   */
  private number(v: number): void {
    if (!Number.isSafeInteger(v)) return this.ascii(formatDouble(v));
    this.reserve(20); // sign, at most 16 digits, ".0"
    if (v < 0) {
      this.byte(0x2d); // -
      v = -v;
    }
    let end = this.len + 1;
    for (let p = 10; p <= v; p *= 10) end++; // the number of digits
    this.len = end;
    do {
      const digit = v % 10;
      this.bytes[--end] = 0x30 + digit;
      v = (v - digit) / 10;
    } while (v > 0);
    this.ascii('.0');
  }

  /** Write an ASCII string. */
  private ascii(s: string): void {
    this.reserve(s.length);
    for (let i = 0; i < s.length; i++) this.bytes[this.len++] = s.charCodeAt(i);
  }

  /** Write one byte. (A typed array drops a write past its end silently: room is always made.) */
  private byte(b: number): void {
    if (this.len === this.bytes.length) this.reserve(1);
    this.bytes[this.len++] = b;
  }

  /** Make room for `n` more bytes, doubling the buffer as needed. */
  private reserve(n: number): void {
    const need = this.len + n;
    if (need <= this.bytes.length) return;
    let size = this.bytes.length * 2;
    while (size < need) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.bytes.subarray(0, this.len));
    this.bytes = grown;
  }

  private fail(why: string): Raise {
    let at = '$';
    for (let i = 0; i < this.pathLen; i++) {
      const p = this.path[i] as string | number;
      at += typeof p === 'number' ? `[${p}]` : `.${p}`;
    }
    return new Raise('provider_failure', `tool_args_fingerprint: ${at}: ${why}`);
  }
}

/**
 * The shared writer — or, if it is busy because a getter in the value being written asked for
 * another fingerprint, a fresh one, so the outer call's buffer is not overwritten.
 */
const shared = new CanonicalWriter();

function acquire(): CanonicalWriter {
  const w = shared.busy ? new CanonicalWriter() : shared;
  w.busy = true;
  return w;
}
