/**
 * The service reads a request body as `oarc eval` reads the same JSON (serve/json-body.ts):
 * `JSON.parse` where the two agree, the exact parser where they would not.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJson } from '../../compiler/load/json.js';
import { BodyJsonError, readJsonBody } from '../../serve/json-body.js';

const unsigned = (v: unknown): unknown =>
  Object.is(v, -0) ? 0 : Array.isArray(v) ? v.map(unsigned) : typeof v === 'object' && v !== null ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unsigned(x)])) : v;

const exact = (text: string) => parseJson(text, { maxDepth: 1000, bigInts: true }).value;

describe('readJsonBody', () => {
  it('[OAR-FACT-23] reads integers beyond ±(2^53−1) exactly, and safe ones as numbers', () => {
    expect(readJsonBody('{"a":9223372036854775807}')).toEqual({ a: 9223372036854775807n });
    expect(readJsonBody('{"a":[-9223372036854775808]}')).toEqual({ a: [-9223372036854775808n] });
    expect(readJsonBody('{"a":9007199254740991,"b":-9007199254740991,"c":1234567890123456}')).toEqual({ a: 9007199254740991, b: -9007199254740991, c: 1234567890123456 });
    // Digits inside a string are text, whatever they look like.
    expect(readJsonBody('{"a":"9223372036854775807","b":"1e999","c":"\\"k\\":1"}')).toEqual({ a: '9223372036854775807', b: '1e999', c: '"k":1' });
  });

  it.each([
    ['a repeated name', '{"a":1,"a":2}', /duplicate key "a"/],
    ['a repeated name deeper down', '{"x":[{"b":1},{"b":1,"c":{"d":0,"d":0}}]}', /duplicate key "d"/],
    ['a repeated name spelled with an escape', '{"name":"x","n\\u0061me":"y"}', /duplicate key "name"/],
    ['a name after an escaped quote', '{"a\\"":1,"a\\"":2}', /duplicate key "a\\""/],
    ['a number beyond binary64', '{"a":1e400}', /1e400 is not a finite binary64 value/],
    ['a negative one', '[-2.5E+309]', /not a finite binary64 value/],
  ])('refuses %s', (_, text, message) => {
    expect(() => readJsonBody(text)).toThrow(BodyJsonError);
    expect(() => readJsonBody(text)).toThrow(message);
  });

  /** JSON texts whose objects often repeat a name (from a small set, some spelled with escapes) and whose integers span ±2^70. */
  const texts = fc.letrec<{ value: string }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
      fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
      fc.constantFrom('1e400', '-1E+309', '2.5e-400', '0.1', '-0', 'true', 'null', '"a\\\\"', '"\\"b\\":1"', '"9223372036854775808"'),
      fc.array(tie('value'), { maxLength: 4 }).map((xs) => `[${xs.join(',')}]`),
      fc.array(fc.tuple(fc.constantFrom('"a"', '"b"', '"\\u0061"', '"a\\""', '"__proto__"'), tie('value')), { maxLength: 4 }).map((ms) => `{${ms.map(([k, v]) => `${k}:${v}`).join(' , ')}}`),
    ),
  })).value;

  it('reads what the exact parser reads, or refuses what it refuses, on any JSON text', () => {
    fc.assert(
      fc.property(fc.oneof(texts, fc.json({ maxDepth: 4 })), (text) => {
        let want: unknown;
        try {
          JSON.parse(text);
        } catch {
          return; // not JSON: answered as such before any of this
        }
        try {
          want = exact(text);
        } catch {
          expect(() => readJsonBody(text)).toThrow(BodyJsonError);
          return;
        }
        // -0: JSON.parse keeps the sign, the exact parser reads the integer zero; no fact tells them apart.
        expect(unsigned(readJsonBody(text))).toEqual(unsigned(want));
      }),
      { numRuns: 2000 },
    );
  });

  it('reads `__proto__` as a member, never a prototype, on both paths', () => {
    for (const text of ['{"__proto__":{"x":1}}', '{"__proto__":{"x":1},"n":9223372036854775807}']) {
      const v = readJsonBody(text) as Record<string, unknown>;
      expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
      expect(Object.hasOwn(v, '__proto__')).toBe(true);
    }
  });
});
