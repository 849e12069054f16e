import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isRaise } from '../runtime/raise.js';
import {
  applyTransforms,
  readSpans,
  REDACT_PLACEHOLDER,
  type AccumulatedTransform,
  type SkippedSpan,
  type Span,
  type TransformAction,
} from '../runtime/transform.js';

const R = REDACT_PLACEHOLDER;

function t(
  rule: string,
  action: TransformAction,
  target: 'content' | Span[],
  replacement = action === 'redact' ? R : '',
): AccumulatedTransform {
  return { rule, action, replacement, target };
}

const sp = (start: number, end: number): Span => ({ start, end });

function apply(content: string, ...ts: AccumulatedTransform[]) {
  return applyTransforms(content, ts);
}

function raiseOf(f: () => unknown): { code: string; message: string } {
  try {
    f();
  } catch (e) {
    if (isRaise(e)) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error('expected a raise');
}

describe('readSpans', () => {
  it('[OAR-OPS-19] reads start and end, ignoring other members, from objects and Maps', () => {
    const spans = readSpans(
      [{ start: 1, end: 3, kind: 'email', score: 0.9 }, new Map<string, unknown>([['start', 0], ['end', 0]])],
      "target 'pii_spans'",
    );
    expect(spans).toEqual([sp(1, 3), sp(0, 0)]);
  });

  it('[OAR-OPS-19] accepts int64 offsets beyond 2^53 as bigints (they fall outside any content)', () => {
    expect(readSpans([{ start: 2n ** 60n, end: 2n ** 60n + 1n }], 't')).toEqual([sp(2 ** 60, 2 ** 60)]);
    // Ordered exactly, before narrowing: these two round to the same double.
    expect(raiseOf(() => readSpans([{ start: 2n ** 60n + 1n, end: 2n ** 60n }], 't')).code).toBe('provider_failure');
  });

  const malformed: [string, unknown][] = [
    ['start > end', { start: 4, end: 2 }],
    ['missing end', { start: 1 }],
    ['missing start', { end: 1 }],
    ['negative start', { start: -1, end: 2 }],
    ['negative end', { start: 0, end: -2n }],
    ['non-integer start', { start: 1.5, end: 2 }],
    ['string offset', { start: '1', end: 2 }],
    ['boolean offset', { start: 0, end: true }],
    ['NaN offset', { start: Number.NaN, end: 2 }],
    ['offset beyond int64', { start: 0, end: 1e300 }],
    ['null offset', { start: null, end: 2 }],
    ['not a map', 'start=1,end=2'],
    ['a list', [1, 2]],
    ['inherited start', Object.assign(Object.create({ start: 0 }), { end: 2 })],
  ];
  for (const [name, member] of malformed) {
    it(`[OAR-OPS-19] a span with ${name} is a fact-provider failure, not a skip`, () => {
      const r = raiseOf(() => readSpans([{ start: 0, end: 1 }, member], "target 'pii_spans'"));
      expect(r.code).toBe('provider_failure');
      expect(r.message).toContain("target 'pii_spans'[1]");
    });
  }

  it('[OAR-OPS-19] names the offending member in the message', () => {
    expect(raiseOf(() => readSpans([{ start: 1 }], 'spans')).message).toMatch(/spans\[0\].*'end'/);
    expect(raiseOf(() => readSpans([{ start: 3, end: 1 }], 'spans')).message).toMatch(/'start' \(3\) exceeds 'end' \(1\)/);
  });
});

describe('applyTransforms', () => {
  it('[OAR-OPS-13] redact without replacement substitutes exactly [REDACTED]', () => {
    expect(R).toBe('[REDACTED]');
    expect(Array.from(R)).toHaveLength(10);
    expect(apply('my key is sk-123 ok', t('p/r', 'redact', [sp(10, 16)])).content).toBe('my key is [REDACTED] ok');
  });

  it('[OAR-OPS-21] redact with a replacement and replace are identical', () => {
    const content = 'alice@example.com wrote to bob@example.com';
    const spans = [sp(0, 17), sp(27, 42)];
    const a = apply(content, t('p/a', 'redact', spans, '<email>'));
    const b = apply(content, t('p/a', 'replace', spans, '<email>'));
    expect(a).toEqual(b);
    expect(a.content).toBe('<email> wrote to <email>');
  });

  it('[OAR-OPS-16] content target rewrites the whole content', () => {
    expect(apply('secret stuff', t('p/r', 'redact', 'content')).content).toBe(R);
    expect(apply('secret stuff', t('p/r', 'replace', 'content', 'x')).content).toBe('x');
  });

  it('[OAR-OPS-21] annotate on a content target appends at the end and removes nothing', () => {
    expect(apply('hello', t('p/n', 'annotate', 'content', ' [unverified]')).content).toBe('hello [unverified]');
  });

  it('[OAR-OPS-21] annotate inserts immediately after the span end', () => {
    expect(apply('call 555-1234 now', t('p/n', 'annotate', [sp(5, 13)], '(phone)')).content).toBe('call 555-1234(phone) now');
  });

  it('[OAR-OPS-20] overlapping spans within one transform are merged and rewritten once', () => {
    const r = apply('0123456789', t('p/r', 'replace', [sp(2, 5), sp(4, 7), sp(6, 8)], '#'));
    expect(r.content).toBe('01#89');
    expect(r.skipped).toEqual([]);
  });

  it('[OAR-OPS-20] spans that only touch ([0,2) and [2,4)) do not overlap and are rewritten separately', () => {
    expect(apply('abcdef', t('p/r', 'replace', [sp(0, 2), sp(2, 4)], '#')).content).toBe('##ef');
  });

  it('[OAR-OPS-20] a span contained in another within one transform is merged into it', () => {
    expect(apply('abcdef', t('p/r', 'replace', [sp(2, 3), sp(1, 5)], '#')).content).toBe('a#f');
  });

  it('[OAR-OPS-20] spans apply from the highest start down, all in original offsets', () => {
    // Listed out of order and with replacements of different lengths: each lands on its own text.
    const r = apply('aa BB cc DD ee', t('p/r', 'replace', [sp(3, 5), sp(9, 11), sp(0, 2)], '<long>'));
    expect(r.content).toBe('<long> <long> cc <long> ee');
  });

  it('[OAR-OPS-16] later transforms are translated through earlier edits', () => {
    const r = apply(
      'name: Alice, card: 4111',
      t('p/a', 'redact', [sp(6, 11)]),
      t('p/b', 'replace', [sp(19, 23)], '****'),
    );
    expect(r.content).toBe(`name: ${R}, card: ****`);
  });

  it('[OAR-OPS-16] [OAR-OPS-23] a span overlapping an earlier rewrite is skipped and recorded', () => {
    const r = apply('0123456789', t('p/first', 'replace', [sp(2, 6)], 'A'), t('p/second', 'replace', [sp(4, 8)], 'B'));
    expect(r.content).toBe('01A6789');
    expect(r.skipped).toEqual([{ rule: 'p/second', start: 4, end: 8, reason: 'overlap' }]);
  });

  it('[OAR-OPS-16] a span touching an earlier rewrite is applied, not skipped', () => {
    const r = apply('0123456789', t('p/a', 'replace', [sp(2, 4)], 'A'), t('p/b', 'replace', [sp(4, 6), sp(0, 2)], 'B'));
    expect(r.content).toBe('BAB6789');
    expect(r.skipped).toEqual([]);
  });

  it('[OAR-OPS-16] a content-target rewrite after any rewrite is skipped as [0, length)', () => {
    const r = apply('abcdef', t('p/a', 'redact', [sp(1, 2)]), t('p/b', 'redact', 'content'));
    expect(r.content).toBe(`a${R}cdef`);
    expect(r.skipped).toEqual([{ rule: 'p/b', start: 0, end: 6, reason: 'overlap' }]);
  });

  it('[OAR-OPS-21] annotate then redact the same span keeps the annotation after the redaction', () => {
    const r = apply('pay bob now', t('p/n', 'annotate', [sp(4, 7)], '(?)'), t('p/r', 'redact', [sp(4, 7)]));
    expect(r.content).toBe(`pay ${R}(?) now`);
    expect(r.skipped).toEqual([]);
  });

  it('[OAR-OPS-21] redact then annotate the same span yields both, in that order (annotate is never skipped)', () => {
    const r = apply('pay bob now', t('p/r', 'redact', [sp(4, 7)]), t('p/n', 'annotate', [sp(4, 7)], '(?)'));
    expect(r.content).toBe(`pay ${R}(?) now`);
    expect(r.skipped).toEqual([]);
  });

  it('[OAR-OPS-21] annotate then redact of a content target keeps the annotation', () => {
    const r = apply('abc', t('p/n', 'annotate', 'content', '!'), t('p/r', 'redact', 'content'));
    expect(r.content).toBe(`${R}!`);
  });

  it('[OAR-OPS-21] a rewrite beginning at the annotation point consumes the annotation', () => {
    // Annotating [0,3) inserts at 3; text inserted at 3 belongs to the content beginning at 3.
    const r = apply('abcdef', t('p/n', 'annotate', [sp(0, 3)], '!'), t('p/r', 'replace', [sp(3, 5)], '#'));
    expect(r.content).toBe('abc#f');
  });

  it('[OAR-OPS-21] a rewrite strictly containing the annotation point consumes the annotation', () => {
    const r = apply('abcdef', t('p/n', 'annotate', [sp(0, 3)], '!'), t('p/r', 'replace', [sp(2, 5)], '#'));
    expect(r.content).toBe('ab#f');
  });

  it('[OAR-OPS-21] a rewrite ending at the annotation point preserves it', () => {
    const r = apply('abcdef', t('p/n', 'annotate', [sp(0, 3)], '!'), t('p/r', 'replace', [sp(1, 3)], '#'));
    expect(r.content).toBe('a#!def');
  });

  it('[OAR-OPS-21] (reading a) two annotations at the same original point appear in accumulation order', () => {
    const r = apply('abcdef', t('p/1', 'annotate', [sp(0, 3)], '<1>'), t('p/2', 'annotate', [sp(2, 3)], '<2>'));
    expect(r.content).toBe('abc<1><2>def');
  });

  it('[OAR-OPS-23] (reading b) an annotation strictly inside an earlier rewrite goes right after its replacement', () => {
    // Point 3 lies strictly inside the rewritten [2,5); the annotation is not skipped.
    const r = apply('abcdefg', t('p/r', 'replace', [sp(2, 5)], '#'), t('p/n', 'annotate', [sp(0, 3)], '!'));
    expect(r.content).toBe('ab#!fg');
    expect(r.skipped).toEqual([]);
  });

  it('[OAR-OPS-21] (reading b) such an annotation precedes one made at the range end, and survives a rewrite beginning there', () => {
    const r = apply(
      'abcdefg',
      t('p/r', 'replace', [sp(2, 5)], '#'),
      t('p/e', 'annotate', [sp(4, 5)], '<end>'),
      t('p/i', 'annotate', [sp(0, 3)], '<in>'),
      t('p/x', 'replace', [sp(5, 6)], 'X'),
    );
    // <end> was inserted at 5 and the rewrite beginning at 5 consumes it; <in>'s point is 3.
    expect(r.content).toBe('ab#<in>Xg');
  });

  it('[OAR-OPS-21] an annotation at a rewrite start is placed before the replacement', () => {
    const r = apply('abcdef', t('p/r', 'replace', [sp(2, 4)], '#'), t('p/n', 'annotate', [sp(0, 2)], '!'));
    expect(r.content).toBe('ab!#ef');
  });

  it('[OAR-OPS-16] (reading c) redact of an empty span inserts the placeholder and is never skipped', () => {
    const r = apply('abcdef', t('p/a', 'replace', [sp(1, 5)], '#'), t('p/b', 'redact', [sp(3, 3), sp(6, 6), sp(0, 0)]));
    expect(r.content).toBe(`${R}a#${R}f${R}`);
    expect(r.skipped).toEqual([]);
  });

  it('[OAR-OPS-21] (reading c) an empty-span rewrite at E keeps an insertion at E; a rewrite beginning at E consumes both', () => {
    const a = apply('abcd', t('p/n', 'annotate', [sp(0, 2)], '!'), t('p/z', 'replace', [sp(2, 2)], '^'));
    expect(a.content).toBe('ab!^cd');
    const b = apply(
      'abcd',
      t('p/n', 'annotate', [sp(0, 2)], '!'),
      t('p/z', 'replace', [sp(2, 2)], '^'),
      t('p/r', 'replace', [sp(2, 3)], '#'),
    );
    expect(b.content).toBe('ab#d');
  });

  it('[OAR-OPS-20] (reading c) within one transform an empty span at a rewrite start lands before the replacement', () => {
    // Ordered by start, then end, descending: [2,4) is applied before [2,2).
    expect(apply('abcdef', t('p/r', 'replace', [sp(2, 2), sp(2, 4)], '#')).content).toBe('ab##ef');
  });

  it('[OAR-OPS-20] (reading c) an empty span strictly inside a span of its own transform is applied first, then consumed', () => {
    // [3,3) has the greater start, so its insertion is made first; [2,5) strictly contains 3.
    expect(apply('abcdef', t('p/r', 'replace', [sp(2, 5), sp(3, 3)], '#')).content).toBe('ab#f');
    // An annotate rewrites nothing, so both of its insertions survive.
    expect(apply('abcdef', t('p/n', 'annotate', [sp(2, 5), sp(3, 3)], '!')).content).toBe('abc!de!f');
  });

  it('[OAR-OPS-19] a span past the end is ignored, not skipped and not clamped', () => {
    const r = apply('abc', t('p/r', 'redact', [sp(1, 4), sp(5, 5)]), t('p/n', 'annotate', [sp(2, 9)], '!'));
    expect(r).toEqual({ content: 'abc', skipped: [] });
  });

  it('[OAR-OPS-19] a span ending exactly at the end is within the content', () => {
    expect(apply('abc', t('p/r', 'redact', [sp(1, 3)])).content).toBe(`a${R}`);
  });

  it('[OAR-OPS-19] offsets are code points: non-BMP characters count as one', () => {
    const content = '😀 hi 𝄞 bob!';
    // Code points: 😀=0 ' '=1 h=2 i=3 ' '=4 𝄞=5 ' '=6 b=7 o=8 b=9 !=10
    const r = apply(content, t('p/r', 'replace', [sp(7, 10)], '<name>'), t('p/n', 'annotate', [sp(0, 1)], '*'));
    expect(r.content).toBe('😀* hi 𝄞 <name>!');
    expect(apply(content, t('p/r', 'replace', [sp(5, 6)], '#')).content).toBe('😀 hi # bob!');
    // 11 code points: a span ending at 11 is inside, at 12 is outside.
    expect(apply(content, t('p/n', 'annotate', [sp(11, 11)], '.')).content).toBe(content + '.');
    expect(apply(content, t('p/n', 'annotate', [sp(12, 12)], '.')).content).toBe(content);
  });

  it('[OAR-OPS-19] a lone surrogate counts as one code point', () => {
    expect(apply('a\uD800b😀c', t('p/r', 'replace', [sp(2, 4)], '#')).content).toBe('a\uD800#c');
  });

  it('[OAR-OPS-16] empty content: content targets still apply, spans beyond 0 are ignored', () => {
    expect(apply('', t('p/n', 'annotate', 'content', 'note')).content).toBe('note');
    // The single span [0,0) is replaced with the placeholder: the literal step 2 + step 5.
    expect(apply('', t('p/r', 'redact', 'content')).content).toBe(R);
    expect(apply('', t('p/r', 'redact', [sp(0, 1)]))).toEqual({ content: '', skipped: [] });
  });

  it('[OAR-OPS-16] no transforms, or no span in content, returns the content unchanged', () => {
    expect(apply('abc')).toEqual({ content: 'abc', skipped: [] });
    expect(apply('abc', t('p/r', 'redact', []))).toEqual({ content: 'abc', skipped: [] });
  });

  it('[OAR-OPS-23] skipped spans are in accumulation order, then descending start/end', () => {
    const r = apply(
      '0123456789abcdef',
      t('p/a', 'replace', [sp(2, 4), sp(8, 12)], '#'),
      t('p/b', 'replace', [sp(3, 5), sp(11, 13), sp(1, 3)], '%'),
      t('p/c', 'replace', [sp(9, 10), sp(2, 3), sp(9, 11)], '&'),
    );
    expect(r.skipped).toEqual<SkippedSpan[]>([
      { rule: 'p/b', start: 11, end: 13, reason: 'overlap' },
      { rule: 'p/b', start: 3, end: 5, reason: 'overlap' },
      { rule: 'p/b', start: 1, end: 3, reason: 'overlap' },
      // [9,10) and [9,11) merge into [9,11) before the overlap check.
      { rule: 'p/c', start: 9, end: 11, reason: 'overlap' },
      { rule: 'p/c', start: 2, end: 3, reason: 'overlap' },
    ]);
    expect(r.content).toBe('01#4567#cdef');
  });

  it('[OAR-OPS-23] a merged span is skipped as one entry carrying the covering range', () => {
    const r = apply('0123456789', t('p/a', 'replace', [sp(4, 5)], '#'), t('p/b', 'replace', [sp(1, 5), sp(3, 7)], '%'));
    expect(r.skipped).toEqual([{ rule: 'p/b', start: 1, end: 7, reason: 'overlap' }]);
  });

  it('[OAR-OPS-16] large content with few spans', () => {
    const big = 'x'.repeat(100_000) + '😀secret😀' + 'y'.repeat(100_000);
    const r = apply(big, t('p/r', 'redact', [sp(100_001, 100_007)]));
    expect(r.content).toBe('x'.repeat(100_000) + `😀${R}😀` + 'y'.repeat(100_000));
  });
});

// ---------------------------------------------------------------------------------------------
// A deliberately naive reference: the content is an array of cells that is mutated transform by
// transform, span by span, exactly as [OAR-OPS-16] narrates it. Every cell remembers where it came
// from, which is how original offsets are mapped "through the edits already applied".

type Cell =
  | { kind: 'orig'; at: number; text: string } // one original code point
  | { kind: 'ins'; slot: number; text: string } // inserted at an original point
  | { kind: 'rep'; a: number; b: number; text: string } // the replacement of a rewritten range
  | { kind: 'trail'; a: number; b: number; text: string }; // inserted strictly inside [a, b) after it was rewritten

function reference(content: string, transforms: readonly AccumulatedTransform[]) {
  const c0 = Array.from(content); // code points; a lone surrogate is one
  const L = c0.length;
  let cells: Cell[] = c0.map((text, at) => ({ kind: 'orig', at, text }));
  const rewritten: Span[] = [];
  const skipped: SkippedSpan[] = [];
  const overlaps = (x: Span, y: Span) => Math.max(x.start, y.start) < Math.min(x.end, y.end);

  const insert = (p: number, text: string) => {
    const host = rewritten.find((r) => r.start < p && p < r.end);
    if (host) {
      let last = -1;
      cells.forEach((c, i) => {
        if ((c.kind === 'rep' || c.kind === 'trail') && c.a === host.start && c.b === host.end) last = i;
      });
      cells.splice(last + 1, 0, { kind: 'trail', a: host.start, b: host.end, text });
      return;
    }
    let anchor = cells.findIndex((c) => (c.kind === 'orig' && c.at === p) || (c.kind === 'rep' && c.a === p));
    if (anchor === -1) anchor = cells.length;
    cells.splice(anchor, 0, { kind: 'ins', slot: p, text });
  };

  const rewrite = (s: number, e: number, text: string) => {
    const gone = (c: Cell) => (c.kind === 'orig' && s <= c.at && c.at < e) || (c.kind === 'ins' && s <= c.slot && c.slot < e);
    const first = cells.findIndex(gone);
    const last = cells.findIndex((c) => c.kind === 'orig' && c.at === e - 1);
    for (let i = first; i <= last; i++) if (!gone(cells[i] as Cell)) throw new Error('reference: not contiguous');
    cells.splice(first, last - first + 1, { kind: 'rep', a: s, b: e, text });
  };

  for (const t of transforms) {
    let spans: Span[] = t.target === 'content' ? [sp(0, L)] : t.target.filter((s) => 0 <= s.start && s.start <= s.end && s.end <= L);
    // Merge until nothing overlaps, pairwise and naively.
    let changed = true;
    while (changed) {
      changed = false;
      outer: for (let i = 0; i < spans.length; i++) {
        for (let j = i + 1; j < spans.length; j++) {
          const x = spans[i] as Span;
          const y = spans[j] as Span;
          if (overlaps(x, y)) {
            const u = sp(Math.min(x.start, y.start), Math.max(x.end, y.end));
            spans = spans.filter((_, k) => k !== i && k !== j).concat([u]);
            changed = true;
            break outer;
          }
        }
      }
    }
    spans.sort((x, y) => (x.start !== y.start ? y.start - x.start : y.end - x.end));
    for (const s of spans) {
      const range = t.action === 'annotate' ? sp(s.end, s.end) : s;
      if (rewritten.some((r) => overlaps(range, r))) {
        skipped.push({ rule: t.rule, start: s.start, end: s.end, reason: 'overlap' });
        continue;
      }
      if (range.start === range.end) insert(range.start, t.replacement);
      else rewrite(range.start, range.end, t.replacement);
      rewritten.push(range);
    }
  }
  return { content: cells.map((c) => c.text).join(''), skipped };
}

describe('applyTransforms against a naive reference', () => {
  const char = fc.constantFrom('a', 'b', 'c', ' ', 'é', '中', '😀', '𝄞', '\uD83D', '\uDE00', '\uD800');
  const runs = Math.max(2000, Number(process.env.OARC_PROPERTY_RUNS ?? 5000));

  it('[OAR-OPS-16] [OAR-OPS-20] [OAR-OPS-21] [OAR-OPS-23] agrees on content and skips for random transforms', () => {
    const arb = fc
      .array(char, { maxLength: 14 })
      .map((cs) => cs.join(''))
      .chain((content) => {
        const L = Array.from(content).length;
        const span = fc
          .tuple(fc.integer({ min: 0, max: L + 2 }), fc.integer({ min: 0, max: 4 }))
          .map(([start, len]) => sp(start, start + len));
        const transform = fc.record({
          rule: fc.constantFrom('p/a', 'p/b', 'p/c'),
          action: fc.constantFrom<TransformAction>('redact', 'replace', 'annotate'),
          replacement: fc.constantFrom(R, '', '#', '<x>', '😀', '\uDE00'),
          target: fc.oneof(
            { weight: 1, arbitrary: fc.constant<'content'>('content') },
            { weight: 5, arbitrary: fc.array(span, { maxLength: 5 }) },
          ),
        });
        return fc.tuple(fc.constant(content), fc.array(transform, { maxLength: 5 }));
      });
    fc.assert(
      fc.property(arb, ([content, transforms]) => {
        expect(applyTransforms(content, transforms)).toEqual(reference(content, transforms));
      }),
      { seed: 0x0a12, numRuns: runs },
    );
  });

  it('[OAR-OPS-20] a single redact over spans rewrites the merged ranges in place', () => {
    // An even simpler oracle for the one-transform case: mark covered code points, then collapse runs.
    fc.assert(
      fc.property(
        fc.array(char, { maxLength: 20 }).map((cs) => cs.join('')),
        fc.array(fc.tuple(fc.nat(20), fc.integer({ min: 1, max: 5 })), { maxLength: 6 }),
        (content, raw) => {
          const cps = Array.from(content);
          const spans = raw.map(([s, n]) => sp(s, s + n)).filter((s) => s.end <= cps.length);
          // Code points i-1 and i fall in one merged range exactly when some span covers both;
          // a covered code point not joined to its predecessor starts a new range.
          const covered = (i: number) => spans.some((s) => s.start <= i && i < s.end);
          const joined = (i: number) => spans.some((s) => s.start <= i - 1 && i < s.end);
          let expected = '';
          for (let i = 0; i < cps.length; i++) {
            if (!covered(i)) expected += cps[i];
            else if (!joined(i)) expected += '#';
          }
          expect(applyTransforms(content, [t('p/r', 'replace', spans, '#')]).content).toBe(expected);
        },
      ),
      { seed: 0x5e11, numRuns: 2000 },
    );
  });
});
