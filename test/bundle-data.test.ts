/**
 * The bundle's data text (compiler/emit/bundle.ts `dataText`) is what astring prints for the same
 * data as ESTree — the tree the emitter built before it wrote the text directly — so a bundle's
 * bytes did not change with it, and its strings are escaped by the printer the codegen-safety tests
 * attack. Random data: hostile strings, `__proto__` keys, negative numbers and -0, bigints, empty and
 * nested collections, undefined members (left out).
 */
import { generate } from 'astring';
import type * as ES from 'estree';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dataText } from '../compiler/emit/bundle.js';
import { lit } from '../compiler/emit/estree.js';

const RUNS = Number(process.env.OARC_PROPERTY_RUNS ?? 1000);

/** The ESTree the emitter used to build for data. */
function estree(v: unknown): ES.Expression {
  if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return lit(v);
  if (Array.isArray(v)) return { type: 'ArrayExpression', elements: v.map(estree) };
  return {
    type: 'ObjectExpression',
    properties: Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .map(([k, x]) => ({ type: 'Property', key: lit(k), value: estree(x), kind: 'init', method: false, shorthand: false, computed: k === '__proto__' })),
  };
}

const KEYS = ['a', '__proto__', '"', '\\', '\n', '\u2028', '', 'constructor', '1', 'é'];

const value: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom(null, true, false, 0, -0, -1, 2.5, -1e-7, 1e21, -1e300, 12345678901234567890n, -3n),
    fc.string({ maxLength: 6 }),
    fc.constantFrom(...KEYS, '</script>', '${x}', '😀', '\ud800'),
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.constantFrom(...KEYS), fc.string({ maxLength: 3 })), fc.oneof(tie('v'), fc.constant(undefined)), { maxKeys: 4 }),
  ),
})).v;

describe('bundle data text', () => {
  it('is what astring prints for the same data as ESTree', () => {
    fc.assert(
      fc.property(value, (v) => {
        expect(`export default ${dataText(v)};`).toBe(generate({ type: 'ExportDefaultDeclaration', declaration: estree(v) } as ES.ExportDefaultDeclaration));
      }),
      { numRuns: RUNS },
    );
  });

  it('keeps `__proto__` an own key, computed', () => {
    expect(dataText({ __proto__: 1, a: [{}, []] } as unknown)).toBe('{\n  "a": [{}, []]\n}');
    const o = Object.defineProperty({}, '__proto__', { value: 1, enumerable: true });
    expect(dataText(o)).toBe('{\n  ["__proto__"]: 1\n}');
  });
});
