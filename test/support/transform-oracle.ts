/**
 * Test-only oracle: a frozen copy of the span algorithm of runtime/transform.ts as it stood before
 * the allocation rework (commit 05df1c6 plus the readSpans message change), kept verbatim apart
 * from the imports so the differential property test (test/transform-oracle.test.ts) can compare
 * the reworked implementation against it for byte-identical content and skip reports.
 *
 * Do not "improve" this file: its value is that it is the old behaviour. `cpLength` is copied in
 * too, so a later change to runtime/strings.ts cannot move the oracle.
 */
import type { AccumulatedTransform, SkippedSpan, Span, TransformResult } from '../../runtime/transform.js';

const HIGH_SURROGATE = /[\uD800-\uDBFF]/;

function cpLength(s: string): number {
  if (!HIGH_SURROGATE.test(s)) return s.length;
  const n = s.length;
  let count = n;
  for (let i = 0; i < n - 1; i++) {
    if (isHighSurrogate(s.charCodeAt(i)) && isLowSurrogate(s.charCodeAt(i + 1))) {
      count--;
      i++;
    }
  }
  return count;
}

function isHighSurrogate(u: number): boolean {
  return u >= 0xd800 && u <= 0xdbff;
}

// ---------------------------------------------------------------------------------------------
// The algorithm ([OAR-OPS-16])

/**
 * Apply the accumulated transforms, in accumulation order, to `content` and report the spans
 * skipped for overlap. Step 1 of [OAR-OPS-16] (stop when the decision is `block`, [OAR-OPS-17]) is
 * the caller's: a blocked occurrence never reaches here, and its skips are discarded with it
 * ([OAR-OPS-23]).
 *
 * Readings where the spec is silent or reads two ways (each cited where it is implemented):
 * - Spans that merely touch ([0,2) and [2,4)) share no code point, so they do not overlap: they are
 *   neither merged within a transform ([OAR-OPS-20]) nor skipped across transforms ([OAR-OPS-16]).
 * - A zero-width span overlaps nothing ([OAR-OPS-23]): it is never merged and never skipped.
 * - Two insertions at the same original point appear in the order they were applied.
 * - An insertion whose point lies strictly inside an already-rewritten range goes immediately after
 *   that range's replacement (and after earlier such insertions).
 * - A `redact`/`replace` of an empty span [E, E) inserts its replacement at E, exactly as a
 *   replacement of zero code points does; it consumes nothing.
 */
export function oracleApplyTransforms(content: string, transforms: readonly AccumulatedTransform[]): TransformResult {
  const skipped: SkippedSpan[] = [];
  if (transforms.length === 0) return { content, skipped };
  // Without a high surrogate there is no pair, so code points and UTF-16 units coincide (a lone
  // low surrogate is one of each, as in `cpLength`). The regex is a native scan — constant time for
  // a one-byte string — where counting code points walks the content in JS.
  const length = HIGH_SURROGATE.test(content) ? cpLength(content) : content.length;
  const edits = new Edits();
  for (const t of transforms) {
    // Step 2: `content` is the single span [0, length(C0)) ([OAR-OPS-16]). An annotate of it
    // therefore inserts at length(C0) — "at the end of the content" ([OAR-OPS-21]) — and a redact
    // of empty content inserts its replacement into the empty string, as the literal algorithm
    // replaces the (empty) whole with the replacement.
    const spans = orderSpans(t.target === 'content' ? [{ start: 0, end: length }] : t.target, length);
    for (const s of spans) {
      if (t.action === 'annotate') {
        // [OAR-OPS-21]: insert after the span's end and record a zero-width range there. A
        // zero-width range overlaps nothing, so an annotate is never skipped.
        edits.insert(s.end, t.replacement);
      } else if (s.start === s.end) {
        // Reading (c): replacing an empty span is inserting at its point. Its recorded range is
        // zero-width and overlaps nothing ([OAR-OPS-23]), so it is never skipped. It removes no
        // code point, so it consumes no earlier insertion at E: the clause "a rewrite beginning at
        // E consumes it" is read as "a rewrite whose range contains code point E", which for a
        // nonempty rewrite is exactly "begins at E or strictly contains E" ([OAR-OPS-21]), while a
        // rewrite of [E, E) also *ends* at E, which preserves. Its text then behaves like any
        // insertion at E.
        edits.insert(s.start, t.replacement);
      } else if (edits.overlapsRewrite(s.start, s.end)) {
        // Step 5: the text this span was reported against no longer exists ([OAR-OPS-16]). Skips are
        // pushed in accumulation order, then in application order ([OAR-OPS-23]).
        skipped.push({ rule: t.rule, start: s.start, end: s.end, reason: 'overlap' });
      } else {
        // `redact` and `replace` are one action once the replacement is defaulted ([OAR-OPS-21]).
        edits.rewrite(s.start, s.end, t.replacement);
      }
    }
    edits.commit();
  }
  return { content: edits.render(content, length), skipped };
}

/**
 * Steps 3 and 4 of [OAR-OPS-16]: drop spans outside `C0`, merge overlapping ones, and order the
 * result by descending start, then descending end ([OAR-OPS-20] fixes only the start; the end
 * tie-break is the one [OAR-OPS-23] states for the skip report, and it applies a nonempty span
 * before a zero-width one at the same start, so the insertion lands in front of the replacement
 * instead of being consumed by it).
 */
function orderSpans(spans: readonly Span[], length: number): Span[] {
  if (spans.length === 1) {
    const s = spans[0] as Span;
    return within(s, length) ? [s] : [];
  }
  const nonempty: Span[] = [];
  const empty: Span[] = [];
  for (const s of spans) {
    // [OAR-OPS-19]: a span outside the content is dropped silently — not clamped, not skipped.
    if (within(s, length)) (s.start === s.end ? empty : nonempty).push(s);
  }
  // Merge nonempty spans sharing at least one code point ([OAR-OPS-20]). Spans that only touch do
  // not overlap under half-open ranges and stay separate: each is rewritten with its own replacement.
  // Zero-width spans are excluded: they overlap nothing ([OAR-OPS-23]), not even a range containing them.
  nonempty.sort((a, b) => a.start - b.start);
  const merged: Span[] = [];
  let cur: Span | undefined;
  for (const s of nonempty) {
    if (cur !== undefined && s.start < cur.end) {
      if (s.end > cur.end) cur = { start: cur.start, end: s.end };
    } else {
      if (cur !== undefined) merged.push(cur);
      cur = s;
    }
  }
  if (cur !== undefined) merged.push(cur);
  for (const s of empty) merged.push(s);
  return merged.sort((a, b) => b.start - a.start || b.end - a.end);
}

function within(s: Span, length: number): boolean {
  return s.start >= 0 && s.start <= s.end && s.end <= length;
}

// ---------------------------------------------------------------------------------------------
// Edits in original coordinates

interface Rewrite {
  readonly start: number;
  readonly end: number;
  readonly text: string;
  /** Insertions whose point lies strictly inside [start, end), made after this rewrite. */
  after: string[] | undefined;
}

/**
 * The edits made so far. Queries during a transform (overlap, "strictly inside", consumption) need
 * only the edits of *earlier* transforms — the spans of one transform are merged, so they never
 * overlap one another — plus one case handled by `pending` (see `rewrite`). So each transform's new
 * edits are collected unsorted and merged into the sorted arrays once, in `commit`: linear per
 * transform instead of a sorted insertion per span, which would be quadratic in the span count.
 */
class Edits {
  /** Committed (earlier transforms): nonempty, pairwise disjoint, ascending by start and by end. */
  private rewrites: Rewrite[] = [];
  /** Committed slot points, ascending; may name slots consumed since, until the next commit. */
  private points: number[] = [];
  /** Insertions by original point, in the order applied. Always current. */
  private readonly slots = new Map<number, string[]>();
  /** This transform's rewrites, in application order (descending start). */
  private added: Rewrite[] = [];
  /** Points whose slot this transform created, in application order. */
  private pending: number[] = [];
  private dirty = false;

  /** Index of the first committed rewrite whose end is greater than `at`. */
  private firstEndingAfter(at: number): number {
    const rw = this.rewrites;
    let lo = 0;
    let hi = rw.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((rw[mid] as Rewrite).end > at) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** Does the nonempty range [start, end) share a code point with a rewrite of an earlier transform? */
  overlapsRewrite(start: number, end: number): boolean {
    const r = this.rewrites[this.firstEndingAfter(start)];
    return r !== undefined && r.start < end;
  }

  /** Rewrite the nonempty range [start, end), which overlaps no earlier rewrite. */
  rewrite(start: number, end: number, text: string): void {
    this.added.push({ start, end, text, after: undefined });
    this.dirty = true;
    // [OAR-OPS-21]: a rewrite beginning at E or strictly containing E consumes the text inserted at
    // E; one ending at E preserves it. So slots start .. end-1 go, slot `end` stays.
    const pts = this.points;
    for (let k = lowerBound(pts, start); k < pts.length && (pts[k] as number) < end; k++) {
      this.slots.delete(pts[k] as number);
    }
    // Slots this transform made: in a rewriting transform they come from empty spans [p, p),
    // applied by descending start, so they were pushed in non-increasing order and those inside
    // [start, end) are the most recent. (An empty span at `start` itself is applied after this one,
    // by the end-descending tie-break, so it is never among them.)
    const pend = this.pending;
    while (pend.length > 0) {
      const p = pend[pend.length - 1] as number;
      if (p < start || p >= end) break;
      this.slots.delete(p);
      pend.pop();
    }
  }

  /** Insert `text` at original point `at` (a zero-width rewritten range, [OAR-OPS-21]). */
  insert(at: number, text: string): void {
    // Only committed rewrites can strictly contain `at`: an empty span strictly inside a span of its
    // own transform has the greater start, so it is applied first (and consumed by `rewrite`).
    const r = this.rewrites[this.firstEndingAfter(at)];
    if (r !== undefined && r.start < at) {
      // Reading (b): the point lies strictly inside a rewritten range, so the code points around it
      // no longer exist. The zero-width range overlaps nothing, so it is not skipped ([OAR-OPS-23],
      // [OAR-OPS-21]); it is placed right after that range's replacement, the first position the
      // original point maps to that is not inside replaced text. Bound to that rewrite, it can never
      // be consumed later: a rewrite reaching it would overlap the rewritten range and be skipped.
      (r.after ??= []).push(text);
      return;
    }
    let slot = this.slots.get(at);
    if (slot === undefined) {
      slot = [];
      this.slots.set(at, slot);
      this.pending.push(at);
      this.dirty = true;
    }
    // Reading (a): insertions at one original point keep the order they were applied in — for
    // separate transforms, accumulation order ([OAR-OPS-16]).
    slot.push(text);
  }

  /** Merge this transform's edits into the sorted, committed arrays. */
  commit(): void {
    if (!this.dirty) return;
    this.dirty = false;
    if (this.added.length > 0) {
      this.rewrites = mergeAscending(this.rewrites, this.added.reverse());
      this.added = [];
    }
    const slots = this.slots;
    const fresh = this.pending.filter((p) => slots.has(p)).sort((x, y) => x - y);
    this.pending = [];
    const merged: number[] = [];
    let j = 0;
    for (const p of this.points) {
      if (!slots.has(p)) continue; // consumed
      while (j < fresh.length && (fresh[j] as number) < p) pushUnique(merged, fresh[j++] as number);
      pushUnique(merged, p);
    }
    while (j < fresh.length) pushUnique(merged, fresh[j++] as number);
    this.points = merged;
  }

  /** Build the output once: original text between edits, replacements and slots in order. */
  render(content: string, length: number): string {
    const { rewrites, points, slots } = this;
    if (rewrites.length === 0 && points.length === 0) return content;
    // Without surrogate pairs a code-point offset is a UTF-16 offset (a lone surrogate is one
    // of each, as in `cpLength`), so the cursor needs no scanning — the common case.
    const pairs = length !== content.length;
    // Concatenation, not Array.join: V8 builds a rope in O(pieces) and flattens it once if ever
    // read, while join copies every piece eagerly — measurable on megabyte content.
    let out = '';
    let cp = 0; // cursor: code-point offset into content
    let unit = 0; // the same position in UTF-16 units
    // Move the cursor to code point `to`, appending the original text passed over when `copy`.
    const moveTo = (to: number, copy: boolean): void => {
      let u = to;
      if (pairs) {
        u = unit;
        for (let c = cp; c < to; c++) {
          const x = content.charCodeAt(u);
          u += x >= 0xd800 && x <= 0xdbff && isLowSurrogate(content.charCodeAt(u + 1)) ? 2 : 1;
        }
      }
      if (copy && u > unit) out += content.slice(unit, u);
      cp = to;
      unit = u;
    };
    let i = 0;
    let j = 0;
    while (i < rewrites.length || j < points.length) {
      const r = rewrites[i];
      const p = points[j];
      // A slot at a rewrite's start precedes it: it belongs to the content beginning there, which
      // is now the replacement ([OAR-OPS-21]). A slot at a rewrite's end follows it and its `after`.
      if (p !== undefined && (r === undefined || p <= r.start)) {
        moveTo(p, true);
        for (const text of slots.get(p) as string[]) out += text;
        j++;
      } else {
        const rw = r as Rewrite;
        moveTo(rw.start, true);
        out += rw.text;
        if (rw.after !== undefined) for (const text of rw.after) out += text;
        moveTo(rw.end, false); // the rewritten original text is not copied
        i++;
      }
    }
    if (unit < content.length) out += content.slice(unit);
    return out;
  }
}

function isLowSurrogate(u: number): boolean {
  return u >= 0xdc00 && u <= 0xdfff;
}

/** Merge two ascending lists of disjoint rewrites. */
function mergeAscending(a: Rewrite[], b: Rewrite[]): Rewrite[] {
  if (a.length === 0) return b;
  const out: Rewrite[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    out.push((a[i] as Rewrite).start < (b[j] as Rewrite).start ? (a[i++] as Rewrite) : (b[j++] as Rewrite));
  }
  while (i < a.length) out.push(a[i++] as Rewrite);
  while (j < b.length) out.push(b[j++] as Rewrite);
  return out;
}

/** Append `x` to ascending `xs` unless it is already the last element. */
function pushUnique(xs: number[], x: number): void {
  if (xs.length === 0 || xs[xs.length - 1] !== x) xs.push(x);
}

/** First index in ascending `xs` whose value is >= `x`. */
function lowerBound(xs: readonly number[], x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((xs[mid] as number) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
