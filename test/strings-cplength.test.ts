/**
 * `cpLength` ([OAR-EXPR-16] `size` of a string, `content_length`, the span algorithm's length):
 * a code point per surrogate pair, one per lone surrogate — exactly what `Array.from` counts — now
 * that it finds high surrogates by a native scan instead of walking every unit.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cpLength } from '../runtime/strings.js';

const UNITS = [0x41, 0xe9, 0x6771, 0xd83d, 0xde00, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0x20];

describe('[OAR-EXPR-16] cpLength', () => {
  it('counts code points as Array.from does, lone and paired surrogates anywhere', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...UNITS), { maxLength: 40 }), (units) => {
        const s = String.fromCharCode(...units);
        expect(cpLength(s)).toBe(Array.from(s).length);
      }),
      { numRuns: 5000, seed: 14 },
    );
  });

  it('edge cases: empty, a pair at either end, a high surrogate last, two highs before a low', () => {
    for (const s of ['', '😀', 'a😀', '😀a', 'a\uD83D', '\uD83D\uD83D\uDE00', '\uDE00\uD83D', 'é東😀\uD800x']) {
      expect(cpLength(s), JSON.stringify(s)).toBe(Array.from(s).length);
    }
    // Repeated calls do not carry the scan's position over.
    expect([cpLength('😀😀'), cpLength('😀'), cpLength('ab')]).toEqual([2, 1, 2]);
  });
});
