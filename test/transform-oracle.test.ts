/**
 * Differential test: `applyTransforms` against the frozen copy of its previous implementation in
 * test/support/transform-oracle.ts. The rework that introduced the reused workspace
 * (runtime/transform.ts) promised byte-identical content and an identical skip report, in order, for
 * every input; this checks that promise over random content and transform lists, including inputs
 * the engine never produces (malformed or fractional offsets) and calls of very different sizes in
 * sequence, which is what exercises the workspace reset.
 *
 * Replay a failure with the command printed in its message (seed, path).
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { applyTransforms, REDACT_PLACEHOLDER, type AccumulatedTransform, type Span, type TransformAction } from '../runtime/transform.js';
import { oracleApplyTransforms } from './support/transform-oracle.js';
import { propertyConfig, runProperty } from './property/run.js';

const config = propertyConfig(0x7a11_0c, 6000);
const replay = 'npx vitest run test/transform-oracle.test.ts';

/** ASCII, BMP non-ASCII, pairs, and lone surrogates of both halves (which count as one code point). */
const char = fc.constantFrom('a', 'b', ' ', 'é', '中', '😀', '𝄞', '\uD83D', '\uDE00', '\uD800', '\uDBFF', '\uDFFF');

/** The code-point length `applyTransforms` computes ([OAR-OPS-19]): a lone surrogate counts as one. */
function cpLen(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const u = s.charCodeAt(i);
    if (u >= 0xd800 && u <= 0xdbff && i + 1 < s.length) {
      const v = s.charCodeAt(i + 1);
      if (v >= 0xdc00 && v <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

function spanArb(length: number, zeroWidthHeavy = false): fc.Arbitrary<Span> {
  const point = fc.integer({ min: 0, max: length + 2 });
  // Many zero-width spans in one transform (more than the small-sort limit) next to nonempty ones
  // containing them: the case where the order of application decides what is consumed.
  // (A fractional point, never produced by readSpans, sends the large sorts down their comparator path.)
  if (zeroWidthHeavy) {
    return fc.oneof(
      { weight: 15, arbitrary: fc.tuple(point, fc.constantFrom(0, 0, 0, 1, 2, 6)).map(([s, n]) => ({ start: s, end: s + n })) },
      { weight: 1, arbitrary: point.map((p) => ({ start: p + 0.5, end: p + 0.5 })) },
    );
  }
  return fc.oneof(
    // Mostly in range: short spans (overlapping, touching, duplicated by the small range) and
    // zero-width ones.
    { weight: 12, arbitrary: fc.tuple(point, fc.integer({ min: 0, max: 5 })).map(([s, n]) => ({ start: s, end: s + n })) },
    // Long spans that swallow others.
    { weight: 2, arbitrary: fc.tuple(point, point).map(([a, b]) => ({ start: Math.min(a, b), end: Math.max(a, b) })) },
    // Outside the content: dropped ([OAR-OPS-19]).
    { weight: 1, arbitrary: fc.constantFrom({ start: 0, end: 2 ** 40 }, { start: 2 ** 60, end: 2 ** 60 }, { start: length + 1, end: length + 1 }) },
    // Never produced by readSpans (which raises), but accepted by the type: must still match.
    { weight: 1, arbitrary: fc.constantFrom({ start: 3, end: 1 }, { start: -1, end: 1 }, { start: Number.NaN, end: 1 }, { start: 0.5, end: 1.5 }, { start: -0, end: 0 }) },
  );
}

function transformArb(length: number, maxSpans: number, zeroWidthHeavy: boolean): fc.Arbitrary<AccumulatedTransform> {
  return fc.record({
    rule: fc.constantFrom('p/a', 'p/b', 'q/c'),
    action: fc.constantFrom<TransformAction>('redact', 'replace', 'annotate'),
    replacement: fc.constantFrom(REDACT_PLACEHOLDER, '', '#', '<x>', '😀', '\uDE00', '\uD83D'),
    target: fc.oneof(
      { weight: 1, arbitrary: fc.constant<'content'>('content') },
      { weight: 5, arbitrary: fc.array(spanArb(length, zeroWidthHeavy), { maxLength: maxSpans, size: 'max' }) },
    ),
  });
}

function caseArb(maxChars: number, maxSpans: number, maxTransforms: number, zeroWidthHeavy = false): fc.Arbitrary<[string, AccumulatedTransform[]]> {
  return fc
    // `size: 'max'`: without it fast-check stops near ten elements whatever `maxLength` says.
    .array(char, { maxLength: maxChars, size: 'max' })
    .map((cs) => cs.join(''))
    .chain((content) => fc.tuple(fc.constant(content), fc.array(transformArb(cpLen(content), maxSpans, zeroWidthHeavy), { maxLength: maxTransforms })));
}

function agree([content, transforms]: [string, AccumulatedTransform[]]): void {
  const actual = applyTransforms(content, transforms);
  const expected = oracleApplyTransforms(content, transforms);
  // `toBe` on strings is code-unit equality: byte-identical, lone surrogates included.
  expect(actual.content).toBe(expected.content);
  expect(actual.skipped).toStrictEqual(expected.skipped);
}

describe('applyTransforms against its previous implementation', () => {
  it('[OAR-OPS-16] [OAR-OPS-19] [OAR-OPS-20] [OAR-OPS-21] [OAR-OPS-23] identical content and skips, small inputs', () => {
    runProperty(config, 'small', caseArb(16, 6, 6), agree, config.runs, replay);
  });

  it('identical content and skips when a transform carries more spans than the small-sort limit', () => {
    // More than 16 spans per transform takes the built-in-sort fallback in every sort.
    runProperty(config, 'many spans', caseArb(60, 48, 4), agree, Math.max(500, config.runs >> 1), replay);
  });

  it('identical content and skips for transforms with many zero-width spans', () => {
    runProperty(config, 'many zero-width spans', caseArb(30, 48, 4, true), agree, Math.max(500, config.runs >> 1), replay);
  });

  it('identical content and skips for large and small calls interleaved (the workspace is reset)', () => {
    // One property run = several calls in a row, so state left by a big call meets a small one.
    runProperty(config, 'interleaved', fc.array(fc.oneof(caseArb(8, 3, 3), caseArb(60, 40, 6)), { minLength: 2, maxLength: 5 }), (cases) => cases.forEach(agree), Math.max(500, config.runs >> 1), replay);
  });

  it('a call made while another is in progress (from a span getter) does not disturb either', () => {
    // Engines never do this, but the workspace is module state, so re-entry must fall back to a
    // private workspace rather than corrupt the outer call.
    const inner = (): number => {
      const r = applyTransforms('abcdef', [{ rule: 'p/i', action: 'redact', replacement: '#', target: [{ start: 1, end: 3 }, { start: 2, end: 5 }] }]);
      expect(r.content).toBe('a#f');
      return 2;
    };
    const reentrant = (): AccumulatedTransform[] => [
      { rule: 'p/a', action: 'annotate', replacement: '!', target: [{ start: 4, end: 4 }, { start: 1, end: 1 }] },
      { rule: 'p/b', action: 'redact', replacement: '[R]', target: [{ get start() { return inner(); }, end: 6 }, { start: 0, end: 3 }] },
    ];
    expect(applyTransforms('0123456789', reentrant())).toStrictEqual(oracleApplyTransforms('0123456789', reentrant()));
  });

  it('a call that throws leaves the workspace usable', () => {
    // A getter that throws mid-call; the next call must not see its half-made edits.
    const bad: AccumulatedTransform = { rule: 'p/x', action: 'redact', replacement: '#', target: [{ start: 0, end: 1 }, { get start(): number { throw new Error('boom'); }, end: 2 }] };
    const first: AccumulatedTransform = { rule: 'p/a', action: 'annotate', replacement: '!', target: [{ start: 1, end: 2 }] };
    expect(() => applyTransforms('abc', [first, bad])).toThrow('boom');
    const ok: AccumulatedTransform[] = [{ rule: 'p/b', action: 'replace', replacement: '-', target: [{ start: 1, end: 2 }] }];
    expect(applyTransforms('abc', ok)).toStrictEqual(oracleApplyTransforms('abc', ok));
  });
});
