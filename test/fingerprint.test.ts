import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalJson, FINGERPRINT_DOMAIN, toolArgsFingerprint } from '../runtime/fingerprint.js';
import { formatDouble } from '../runtime/format-double.js';
import { isRaise } from '../runtime/raise.js';
import { paddedLength, sha256, sha256HexInPlace, sha256HexOfPrefix, sha256HexOfString, toHex, utf8Decode, utf8Encode } from '../runtime/sha256.js';
import { propertyConfig, runProperty } from './property/run.js';

const nodeSha = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest('hex');

function raiseOf(f: () => unknown): { code: string; message: string } {
  try {
    f();
  } catch (e) {
    if (isRaise(e)) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error('expected a raise');
}

/**
 * Independent WTF-8 reference: Node's encoder for every well-formed code point, and the three-byte
 * pattern ED xx xx written out by hand for a lone surrogate.
 */
function wtf8(s: string): Uint8Array {
  const parts: number[] = [];
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    if (c >= 0xd800 && c <= 0xdfff) parts.push(0xed, 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
    else parts.push(...Buffer.from(ch, 'utf8'));
  }
  return Uint8Array.from(parts);
}

const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((u) => String.fromCharCode(u));
const illFormed = fc.array(fc.oneof(anyUnit, fc.constantFrom('😀', '\uD800', '\uDFFF', 'é', 'a')), { maxLength: 40 }).map((a) => a.join(''));

describe('sha256', () => {
  it('[OAR-FACT-28] FIPS 180-4 test vectors', () => {
    const enc = (s: string) => utf8Encode(s);
    expect(toHex(sha256(enc('')))).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(toHex(sha256(enc('abc')))).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(toHex(sha256(enc('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')))).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    );
    expect(toHex(sha256(enc('a'.repeat(1_000_000))))).toBe('cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0');
  });

  it('[OAR-FACT-28] agrees with node:crypto on every length around the padding boundaries', () => {
    for (let n = 0; n <= 200; n++) {
      const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 131 + n * 7) & 0xff);
      expect(toHex(sha256(bytes))).toBe(nodeSha(bytes));
    }
  });

  it('[OAR-FACT-28] agrees with node:crypto on random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 1000 }), (bytes) => {
        expect(toHex(sha256(bytes))).toBe(nodeSha(bytes));
      }),
      { seed: 0x5a256, numRuns: 2000 },
    );
  });

  it('[OAR-FACT-28] the platform hash the fingerprint uses and the JavaScript fallback give the same digest of a buffer\'s prefix', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(64), (bytes, slack) => {
        const buf = new Uint8Array(paddedLength(bytes.length) + slack);
        buf.set(bytes);
        const native = sha256HexOfPrefix(buf, bytes.length);
        expect(sha256HexInPlace(buf, bytes.length)).toBe(native);
        expect(native).toBe(nodeSha(bytes));
      }),
      { seed: 0x5a257, numRuns: 1000 },
    );
  });
});

describe('utf8Encode', () => {
  it('[OAR-FACT-28] is standard UTF-8 (TextEncoder, Buffer) for well-formed strings incl. non-BMP', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (s) => {
        const ours = utf8Encode(s);
        expect(ours).toEqual(new TextEncoder().encode(s));
        expect(sha256HexOfString(s)).toBe(nodeSha(s));
      }),
      { seed: 0x0f8, numRuns: 2000 },
    );
  });

  it('[OAR-FACT-28] encodes a lone surrogate as its own code point (WTF-8), not U+FFFD', () => {
    expect(Array.from(utf8Encode('\uD800'))).toEqual([0xed, 0xa0, 0x80]);
    expect(Array.from(utf8Encode('a\uDFFFb'))).toEqual([0x61, 0xed, 0xbf, 0xbf, 0x62]);
    // A high surrogate followed by a low one is one code point; reversed they are two lone ones.
    expect(Array.from(utf8Encode('\uD83D\uDE00'))).toEqual([0xf0, 0x9f, 0x98, 0x80]);
    expect(Array.from(utf8Encode('\uDE00\uD83D'))).toEqual([0xed, 0xb8, 0x80, 0xed, 0xa0, 0xbd]);
    expect(sha256HexOfString('\uD800')).not.toBe(sha256HexOfString('\uFFFD'));
  });

  it('[OAR-FACT-28] utf8Decode inverts utf8Encode exactly, lone surrogates included', () => {
    fc.assert(
      fc.property(illFormed, (s) => {
        const bytes = utf8Encode(s);
        expect(utf8Decode(bytes, 0, bytes.length)).toBe(s);
      }),
      { seed: 0xdec, numRuns: 2000 },
    );
    const long = '\uD800é😀a'.repeat(5000); // more than one chunk of units
    expect(utf8Decode(utf8Encode(long), 0, utf8Encode(long).length)).toBe(long);
  });

  it('[OAR-FACT-28] matches an independent WTF-8 reference, and node:crypto over those bytes, on random UTF-16', () => {
    fc.assert(
      fc.property(illFormed, (s) => {
        const ref = wtf8(s);
        expect(utf8Encode(s)).toEqual(ref);
        expect(sha256HexOfString(s)).toBe(nodeSha(ref));
      }),
      { seed: 0xd800, numRuns: 2000 },
    );
  });
});

describe('canonicalJson', () => {
  it('[OAR-FACT-28] has no whitespace, sorts keys, and writes numbers in [OAR-COPY-10] form', () => {
    expect(canonicalJson({ b: 1, a: 'x' })).toBe('{"a":"x","b":1.0}');
    expect(canonicalJson({ list: [3, 1, 2], t: true, f: false, n: null, o: {} })).toBe(
      '{"f":false,"list":[3.0,1.0,2.0],"n":null,"o":{},"t":true}',
    );
    expect(canonicalJson([])).toBe('[]');
  });

  it('[OAR-COPY-10] numbers: integers get .0, no exponents, signed zeroes are 0.0', () => {
    expect(canonicalJson([5, -2.5, 0, -0, 0.1, 1e21, 1e-7, 123456789012345680000, 2 ** 60])).toBe(
      '[5.0,-2.5,0.0,0.0,0.1,1000000000000000000000.0,0.0000001,123456789012345680000.0,1152921504606847000.0]',
    );
  });

  it('[OAR-FACT-28] a bigint that converts to binary64 exactly is written as that double', () => {
    // [OAR-COPY-10] writes the *shortest* round-tripping significand, not the exact integer digits.
    expect(canonicalJson(2n ** 60n)).toBe('1152921504606847000.0');
    expect(canonicalJson(2n ** 60n)).toBe(canonicalJson(2 ** 60));
    expect(canonicalJson(-(2n ** 63n))).toBe('-9223372036854776000.0');
    expect(canonicalJson(5n)).toBe('5.0');
  });

  it('[OAR-FACT-28] a bigint beyond 2^53 that is not exactly representable fails', () => {
    for (const v of [2n ** 53n + 1n, 9223372036854775807n, -(2n ** 60n) - 1n, 2n ** 1024n]) {
      const r = raiseOf(() => toolArgsFingerprint('t', { n: v }));
      expect(r.code).toBe('provider_failure');
      expect(r.message).toContain('$[1].n');
    }
  });

  it('[OAR-FACT-28] NaN and infinities are failures, not null', () => {
    for (const v of [Number.NaN, Infinity, -Infinity]) {
      expect(raiseOf(() => canonicalJson({ x: [v] })).code).toBe('provider_failure');
    }
  });

  it('[OAR-FACT-28] values without a JSON form fail rather than vanish', () => {
    expect(raiseOf(() => canonicalJson({ a: undefined })).code).toBe('provider_failure');
    expect(raiseOf(() => canonicalJson([() => 1])).code).toBe('provider_failure');
    expect(raiseOf(() => canonicalJson(Symbol('s'))).code).toBe('provider_failure');
    expect(raiseOf(() => canonicalJson(new Map<unknown, unknown>([[1, 'x']]))).code).toBe('provider_failure');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(raiseOf(() => canonicalJson(cyclic)).message).toContain('cyclic');
    // Shared, acyclic references are fine.
    const shared = { k: 1 };
    expect(canonicalJson([shared, shared])).toBe('[{"k":1.0},{"k":1.0}]');
  });

  it('[OAR-FACT-28] object keys sort by code point, not UTF-16 unit (astral vs U+FF5E)', () => {
    const obj = { '😀': 1, '\uFF5E': 2, a: 3, B: 4, '': 5, aa: 6 };
    const expected = '{"":5.0,"B":4.0,"a":3.0,"aa":6.0,"～":2.0,"😀":1.0}';
    expect(canonicalJson(obj)).toBe(expected);
    // JS's default sort would order by UTF-16 unit and put U+1F600 (D83D DE00) first.
    expect(['\uFF5E', '😀'].sort()).toEqual(['😀', '\uFF5E']);
  });

  it('[OAR-FACT-28] a Map is an object, sorted the same way', () => {
    const m = new Map<string, unknown>([
      ['😀', 1],
      ['\uFF5E', [true]],
      ['a', new Map([['z', null]])],
    ]);
    expect(canonicalJson(m)).toBe('{"a":{"z":null},"～":[true],"😀":1.0}');
  });

  it('[OAR-FACT-28] only own enumerable properties are members', () => {
    const o = Object.create({ inherited: 1 }) as Record<string, unknown>;
    o.own = 2;
    expect(canonicalJson(o)).toBe('{"own":2.0}');
  });

  it('[OAR-FACT-28] escapes only quote, backslash and U+0000–U+001F (as lowercase \\u00xx)', () => {
    expect(canonicalJson('a"b\\c')).toBe('"a\\"b\\\\c"');
    expect(canonicalJson('line\nbreak\ttab\r\u0000\u001f\u001b')).toBe('"line\\u000abreak\\u0009tab\\u000d\\u0000\\u001f\\u001b"');
    // Emitted directly: DEL, slash, non-ASCII, line separators, astral, lone surrogates.
    expect(canonicalJson('\u007f/é\u2028😀\uD800')).toBe('"\u007f/é\u2028😀\uD800"');
    expect(canonicalJson({ 'k\n': 'v' })).toBe('{"k\\u000a":"v"}');
  });

  it('[OAR-FACT-28] matches JSON.stringify up to number spelling and escapes on plain data', () => {
    const data = { z: [1.5, 'q'], a: { c: null, b: false } };
    expect(JSON.parse(canonicalJson(data))).toEqual(data);
  });
});

describe('toolArgsFingerprint', () => {
  it('[OAR-FACT-28] is sha256 of the domain, U+0000 and the canonical [tool, args] (known vector)', () => {
    const expected = 'd9e6aa39144640b943604e24bf73b61c8084469b46dd0a5fc39b52c0fb0494bf';
    expect(nodeSha('oar-tool-1.0\u0000["read",{"a":"x","b":1.0}]')).toBe(expected);
    expect(toolArgsFingerprint('read', { b: 1, a: 'x' })).toBe(expected);
    expect(FINGERPRINT_DOMAIN).toBe('oar-tool-1.0');
  });

  it('[OAR-FACT-28] known vectors for nested arguments and null', () => {
    expect(
      toolArgsFingerprint('http.get', { url: 'https://example.com/?q=1', retries: 3, headers: { accept: '*/*' } }),
    ).toBe('89cec6a0643dabf2c8c81e037ace045b79a7ef12f0efe89a2f200b521812cafc');
    expect(toolArgsFingerprint('noop', null)).toBe('cb36df118d20c6a87a43ed99af7724f2f5670939094fcc59411e0e764d0fe1bd');
  });

  it('[OAR-FACT-28] different tools with identical arguments have different fingerprints', () => {
    const args = { b: 1, a: 'x' };
    expect(toolArgsFingerprint('write', args)).toBe('b0454a2c1d5807e1afc773f6e5a088de5920b4ce2184492a2ad125aa89ccf1b2');
    expect(toolArgsFingerprint('write', args)).not.toBe(toolArgsFingerprint('read', args));
  });

  it('[OAR-FACT-28] is lowercase hex, independent of key insertion order and of object vs Map', () => {
    const a = toolArgsFingerprint('t', { x: 1, y: [{ q: 'é', p: 2 }] });
    const b = toolArgsFingerprint('t', new Map<string, unknown>([['y', [{ p: 2, q: 'é' }]], ['x', 1]]));
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(a).toBe(b);
    // An int and the double of the same value are the same number ([OAR-COPY-10] form).
    expect(toolArgsFingerprint('t', { n: 5n })).toBe(toolArgsFingerprint('t', { n: 5 }));
    expect(toolArgsFingerprint('t', { n: '5' })).not.toBe(toolArgsFingerprint('t', { n: 5 }));
  });

  it('[OAR-FACT-28] agrees with node:crypto over the canonical string for random JSON', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 12 }), fc.jsonValue({ maxDepth: 3 }), (tool, args) => {
        const canon = canonicalJson([tool, args]);
        expect(toolArgsFingerprint(tool, args)).toBe(nodeSha(`${FINGERPRINT_DOMAIN}\u0000${canon}`));
        // The canonical form is JSON and denotes the same value (fast-check's -0 aside).
        expect(JSON.parse(canon)).toEqual(JSON.parse(JSON.stringify([tool, args])));
      }),
      { seed: 0xf28, numRuns: 2000 },
    );
  });
});

/**
 * A deliberately naive reference for the streaming fingerprint: builds the canonical JSON as a
 * string (entries sorted by comparing arrays of code points), encodes it with the WTF-8 reference
 * above and hashes it with node:crypto. Numbers use `formatDouble`, the [OAR-COPY-10] definition.
 */
function refCanonical(v: unknown): string {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'boolean':
      return String(v);
    case 'number':
      return formatDouble(v);
    case 'bigint':
      return formatDouble(Number(v));
    case 'string':
      return refQuote(v);
  }
  if (Array.isArray(v)) return '[' + v.map(refCanonical).join(',') + ']';
  const entries: [string, unknown][] = v instanceof Map ? [...v] : Object.entries(v as object);
  entries.sort(([a], [b]) => codePointOrder(a, b));
  return '{' + entries.map(([k, x]) => refQuote(k) + ':' + refCanonical(x)).join(',') + '}';
}

function refQuote(s: string): string {
  const escaped = s.replace(/["\\\u0000-\u001f]/g, (c) =>
    c === '"' ? '\\"' : c === '\\' ? '\\\\' : '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'),
  );
  return '"' + escaped + '"';
}

function codePointOrder(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0) as number);
  const y = Array.from(b, (c) => c.codePointAt(0) as number);
  for (let i = 0; i < x.length && i < y.length; i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  return x.length - y.length;
}

const refFingerprint = (tool: string, args: unknown) => nodeSha(wtf8(`${FINGERPRINT_DOMAIN}\u0000${refCanonical([tool, args])}`));

// Keys from characters whose code-point order differs from their UTF-16 order (U+FF5E vs astral),
// lone surrogates, escapes and digits (integer-like keys are stored apart by the engine).
const keyChar = fc.constantFrom('a', 'b', 'B', '0', '7', '~', '\uFF5E', '\uFFFF', '😀', '\u{10FFFF}', '\uD800', '\uDFFF', '\n', '"', '\\', 'é', '\u0000', '\u001f');
const key = fc.array(keyChar, { maxLength: 4 }).map((a) => a.join(''));
const text = fc.oneof(illFormed, key, fc.string({ unit: 'binary', maxLength: 20 }));
const num = fc.oneof(
  fc.integer(),
  fc.maxSafeInteger(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(-0, 0, 2 ** 53, -(2 ** 53), 2 ** 60, 1e21, 1e-7, 5e-324, 0.1, Number.MAX_VALUE),
);
const exactBigint = fc.constantFrom(0n, 5n, -7n, 2n ** 53n, 2n ** 60n, -(2n ** 63n), 9007199254740991n);
const leaf = fc.oneof(text, num, exactBigint, fc.boolean(), fc.constant(null));
const { value: anyValue } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, leaf, tie('array'), tie('object'), tie('map'), tie('wide')),
  array: fc.array(tie('value'), { maxLength: 5 }),
  object: fc.dictionary(key, tie('value'), { maxKeys: 8 }),
  map: fc.dictionary(key, tie('value'), { maxKeys: 8 }).map((o) => new Map(Object.entries(o))),
  // More keys than the in-place insertion sort handles.
  wide: fc.dictionary(key, leaf, { minKeys: 17, maxKeys: 40 }),
}));

describe('streaming fingerprint vs a string-building reference', () => {
  const config = propertyConfig(0xf28d, 3000);
  const replay = (name: string) => `npx vitest run test/fingerprint.test.ts -t "${name}"`;

  it('[OAR-FACT-28] the streamed fingerprint and canonicalJson equal the reference on random nested values', () => {
    const name = '[OAR-FACT-28] the streamed fingerprint and canonicalJson equal the reference on random nested values';
    runProperty(config, name, fc.tuple(text, anyValue), ([tool, args]) => {
      expect(toolArgsFingerprint(tool, args)).toBe(refFingerprint(tool, args));
      expect(canonicalJson(args)).toBe(refCanonical(args));
    }, config.runs, replay(name), true);
  });

  it('[OAR-FACT-28] an object of 100,000 keys is sorted by code point without going quadratic', () => {
    const big: Record<string, number> = {};
    for (let i = 0; i < 100_000; i++) big[(i * 7919) % 100_003 + (i % 3 === 0 ? '😀' : '\uFF5E')] = i;
    expect(toolArgsFingerprint('t', big)).toBe(refFingerprint('t', big));
    expect(toolArgsFingerprint('t', { a: 1 })).toBe(refFingerprint('t', { a: 1 }));
  });

  it('[OAR-FACT-28] exact failure messages, and every failure leaves the writer clean for the next call', () => {
    const cyclic: { a: unknown[] } = { a: [1, { b: null }] };
    (cyclic.a[1] as { b: unknown }).b = cyclic;
    const cases: [() => unknown, string][] = [
      [() => toolArgsFingerprint('t', { n: 2n ** 53n + 1n }), '$[1].n: the integer 9007199254740993 has no exact binary64 value'],
      [() => toolArgsFingerprint('t', { x: [1, { y: NaN }] }), '$[1].x[1].y: a number must be finite, got NaN'],
      [() => toolArgsFingerprint('t', { 'k"\n': [undefined] }), '$[1].k"\n[0]: undefined has no canonical JSON form'],
      [() => toolArgsFingerprint('t', new Map([['a', new Map([[1, 'x']])]])), '$[1].a: a map key must be a string, got integer number'],
      [() => toolArgsFingerprint('t', cyclic), '$[1].a[1].b: the value is cyclic'],
      [() => toolArgsFingerprint('t', [Symbol('s')]), '$[1][0]: symbol has no canonical JSON form'],
      [() => toolArgsFingerprint('t', () => 1), '$[1]: function has no canonical JSON form'],
      [() => toolArgsFingerprint(undefined as unknown as string, {}), '$[0]: undefined has no canonical JSON form'],
      [() => canonicalJson({ a: { b: -Infinity } }), '$.a.b: a number must be finite, got infinity'],
      [() => canonicalJson(undefined), '$: undefined has no canonical JSON form'],
    ];
    for (const [f, message] of cases) {
      expect(raiseOf(f)).toEqual({ code: 'provider_failure', message: `tool_args_fingerprint: ${message}` });
      expect(toolArgsFingerprint('read', { b: 1, a: 'x' })).toBe('d9e6aa39144640b943604e24bf73b61c8084469b46dd0a5fc39b52c0fb0494bf');
      expect(canonicalJson({ z: [1], a: 'é' })).toBe('{"a":"é","z":[1.0]}');
    }
  });

  it('[OAR-FACT-28] cycles are found at any depth, past the scanned part of the path too', () => {
    const chain = (n: number) => {
      const levels: Record<string, unknown>[] = [{}];
      for (let i = 0; i < n; i++) levels.push((levels[i]!.n = {}) as Record<string, unknown>);
      return levels;
    };
    for (const target of [3, 80]) {
      const levels = chain(90);
      levels[90]!.back = levels[target];
      expect(raiseOf(() => toolArgsFingerprint('t', levels[0])).message).toBe(
        `tool_args_fingerprint: $[1]${'.n'.repeat(90)}.back: the value is cyclic`,
      );
      // The same containers, now shared but acyclic, deep in the path: not a cycle.
      delete levels[90]!.back;
      levels[90]!.shared = levels[70]!.x = { k: [1] };
      expect(toolArgsFingerprint('t', [levels[0], levels[75]])).toBe(refFingerprint('t', [levels[0], levels[75]]));
    }
  });

  it('[OAR-FACT-28] a getter that fingerprints while being fingerprinted does not corrupt the outer call', () => {
    const args = {
      a: 'x',
      get b() {
        return toolArgsFingerprint('inner', { q: [1, 2] });
      },
    };
    const plain = { a: 'x', b: toolArgsFingerprint('inner', { q: [1, 2] }) };
    expect(toolArgsFingerprint('outer', args)).toBe(toolArgsFingerprint('outer', plain));
    expect(canonicalJson(args)).toBe(canonicalJson(plain));
  });

  it('[OAR-FACT-28] structure alone can outgrow the scratch buffer: every bracket, comma and colon is kept', () => {
    // Brackets, commas and colons are written one byte at a time, with no string to reserve room
    // for them: 3,000 nested arrays and a wide object of empty arrays are kilobytes of structure.
    let nested: unknown = [];
    for (let i = 0; i < 3000; i++) nested = [nested, {}];
    const wide = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [String.fromCharCode(97 + (i % 26)).repeat(1 + Math.floor(i / 26)), []]));
    for (const v of [nested, wide]) {
      expect(canonicalJson(v)).toBe(refCanonical(v));
      expect(toolArgsFingerprint('t', v)).toBe(refFingerprint('t', v));
    }
  });

  it('[OAR-FACT-28] a call larger than the kept scratch space, then ordinary calls', () => {
    const huge = { s: 'é\n'.repeat(200_000), keys: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i])) };
    expect(toolArgsFingerprint('t', huge)).toBe(refFingerprint('t', huge));
    expect(toolArgsFingerprint('read', { b: 1, a: 'x' })).toBe('d9e6aa39144640b943604e24bf73b61c8084469b46dd0a5fc39b52c0fb0494bf');
  });
});
