/**
 * Allocation regression test for the transform hot path: `applyTransformsInto` must allocate
 * nothing but what it returns — the pieces of the output content (one slice or concatenation node
 * per piece) and the skip entries. Before the workspace rework a two-rule transform allocated
 * ~4.6 KB per call; now the internal allocation is zero, and this catches a change that brings an
 * object, array, closure or Map back onto the path.
 *
 * Method: as bench/alloc.ts — `gc()`, then many calls under `v8.GCProfiler`; bytes allocated = heap
 * growth plus every byte the collections in between freed.
 */
import { describe, expect, it } from 'vitest';
import { allocated, ensureGc } from '../bench/alloc.js';
import { applyTransforms, applyTransformsInto, type AccumulatedTransform, type SkippedSpan } from '../runtime/transform.js';

/**
 * Bytes allocated per call of `f`, the least of a few measurements (noise only ever adds). Many
 * calls per measurement: the test runner's own traffic in this worker lands in the same heap, and
 * must stay far below a byte per call.
 */
function bytesPerCall(f: () => void, calls = 100_000, repeats = 3): number {
  const { gc } = ensureGc();
  for (let i = 0; i < 20_000; i++) f(); // warm up: optimise, grow the workspace once
  let best = Infinity;
  for (let r = 0; r < repeats; r++) {
    best = Math.min(best, allocated(gc, () => {
      for (let i = 0; i < calls; i++) f();
    }).bytes / calls);
  }
  return best;
}

/**
 * The bytes the output may take: a string node (slice, concatenation, or a short piece copied flat)
 * is at most 32 bytes on a 64-bit heap (less with pointer compression), plus a little for noise
 * from the test runner. An extra array or closure (32 bytes or more) per call exceeds it.
 */
const outputBytes = (pieces: number): number => pieces * 32 + 16;

const base = 'Hello Alice, your account 4111-1111-1111-1111 was charged on 2024-05-01. Contact bob@example.com or call +1 555 0100 for details. ';
const content = (base + base).slice(0, 200);
const twoRules: AccumulatedTransform[] = [
  { rule: 'pack/pii', action: 'redact', replacement: '[REDACTED]', target: [{ start: 26, end: 45 }, { start: 86, end: 101 }] },
  { rule: 'pack/note', action: 'annotate', replacement: ' [checked]', target: 'content' },
];
const whole: AccumulatedTransform[] = [{ rule: 'pack/all', action: 'redact', replacement: '[REDACTED]', target: 'content' }];

describe('applyTransforms allocation', () => {
  it('a redact of the whole content allocates nothing (its output is the replacement itself)', () => {
    const skipped: SkippedSpan[] = [];
    let out = '';
    const bytes = bytesPerCall(() => {
      out = applyTransformsInto(content, whole, skipped);
    });
    expect(out).toBe('[REDACTED]');
    expect(bytes).toBeLessThan(outputBytes(0));
  });

  it('a redact of two spans and an annotate of the content allocate only the output pieces', () => {
    const skipped: SkippedSpan[] = [];
    let out = '';
    const bytes = bytesPerCall(() => {
      out = applyTransformsInto(content, twoRules, skipped);
    });
    expect(out).toBe(applyTransforms(content, twoRules).content);
    // Three slices of the original and five concatenations.
    expect(bytes).toBeLessThan(outputBytes(8));
    expect(skipped).toEqual([]);
  });

  it('content with surrogate pairs takes the scanning cursor, still without allocating', () => {
    const emoji = '😀 café 中文 '.repeat(12);
    const skipped: SkippedSpan[] = [];
    const ts: AccumulatedTransform[] = [{ rule: 'p/r', action: 'replace', replacement: '#', target: [{ start: 3, end: 7 }, { start: 20, end: 30 }] }];
    let out = '';
    const bytes = bytesPerCall(() => {
      out = applyTransformsInto(emoji, ts, skipped);
    });
    expect(out).toBe(applyTransforms(emoji, ts).content);
    // Three slices and four concatenations.
    expect(bytes).toBeLessThan(outputBytes(7));
  });
});
