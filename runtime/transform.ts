/**
 * Content mutation: the normative span algorithm of [OAR-OPS-16], with the span shape of
 * [OAR-OPS-19], the in-transform ordering of [OAR-OPS-20], the actions of [OAR-OPS-13] and
 * [OAR-OPS-21], and the skip report of [OAR-OPS-23]. [OAR-CONF-34] compares the result code point
 * by code point, so every choice here is observable and each one cites its clause.
 *
 * Representation. Offsets are always in the coordinates of the original content `C0`
 * ([OAR-OPS-16]: a detector reported them against `C0`). Rather than rewriting a string once per
 * span, the algorithm records its edits in those coordinates and builds the output once:
 *
 * - a *rewrite* replaces the nonempty original range [start, end) with its text. Rewrites never
 *   overlap (a span overlapping one is skipped), so they form a sorted, disjoint list.
 * - an *insertion* at original point p (annotate, or a rewrite of an empty span) lives in *slot p*,
 *   which sits immediately before original code point p (or at the very end when p = length):
 *   "text inserted at offset E belongs to the content beginning at E" ([OAR-OPS-21]). A slot is
 *   therefore after anything ending at p and before anything beginning at p.
 *
 * "Map S's original offsets through the edits already applied" ([OAR-OPS-16]) is then implicit:
 * the rendered position of an original offset is determined by the edits recorded before it.
 *
 * Allocation. This runs for every decision whose effect is `transform`, and `decide()` allocates
 * nothing it does not return. So the edits are kept in parallel arrays of a reused, module-level
 * `Workspace` rather than in objects per edit, small sorts are insertion sorts in place, and the
 * hot path creates no closures. What remains is the output: the content's pieces and the skips.
 */
import { asInt, type Int } from './int64.js';
import { Raise } from './raise.js';
import { cpLength } from './strings.js';
import { describe, isMap, mapGet, mapHas, type OarMap } from './values.js';

export type TransformAction = 'redact' | 'replace' | 'annotate';

/** A half-open range of code-point offsets into the original content ([OAR-OPS-19]). */
export interface Span {
  readonly start: number;
  readonly end: number;
}

/** One entry of the accumulated transform list ([OAR-OPS-15]). */
export interface AccumulatedTransform {
  /** Qualified identifier of the rule that fired. */
  readonly rule: string;
  readonly action: TransformAction;
  /** Already defaulted: a `redact` without `replacement` carries {@link REDACT_PLACEHOLDER}. */
  readonly replacement: string;
  /** `content`, or the spans read from the `list<map>` target fact by {@link readSpans}. */
  readonly target: 'content' | readonly Span[];
}

/** An entry of `skipped_transforms` ([OAR-OPS-23]). */
export interface SkippedSpan {
  readonly rule: string;
  readonly start: number;
  readonly end: number;
  readonly reason: 'overlap';
}

export interface TransformResult {
  readonly content: string;
  readonly skipped: SkippedSpan[];
}

/** The fixed default of a `redact` without `replacement`: exactly ten code points ([OAR-OPS-13]). */
export const REDACT_PLACEHOLDER = '[REDACTED]';

// ---------------------------------------------------------------------------------------------
// Span shape ([OAR-OPS-19])

/**
 * Validate the members of a `list<map>` target fact as spans. Each member must carry `start` and
 * `end` (own properties) as non-negative integers with `start <= end`; other members are allowed.
 * Anything else is a fact-provider failure routed to the rule's `on_error` ([OAR-OPS-19],
 * [OAR-OPS-3]) — never a silent skip, because the rule reading it was about to redact something.
 *
 * Whether a span lies within the content is *not* checked here: that depends on the content and is
 * a silent drop, not a failure ([OAR-OPS-19]); {@link applyTransforms} does it.
 *
 * @param what names the target fact in failure messages, e.g. `target 'pii_spans'`.
 */
export function readSpans(members: readonly unknown[], what: string): Span[] {
  const spans = new Array<Span>(members.length);
  for (let i = 0; i < members.length; i++) {
    const m = members[i];
    // The member's name in a message (`what[i]`) is built only on failure: spans are read on the
    // hot path of every transform that fires.
    if (!isMap(m)) {
      throw new Raise('provider_failure', `${what}[${i}]: a span must be a map carrying 'start' and 'end', got ${describe(m)}`);
    }
    const start = readOffset(m, 'start', what, i);
    const end = readOffset(m, 'end', what, i);
    // Compared exactly (number or bigint) before narrowing, so two huge offsets that round to the
    // same double are still ordered correctly.
    if (start > end) {
      throw new Raise('provider_failure', `${what}[${i}]: span 'start' (${start}) exceeds 'end' (${end})`);
    }
    // Offsets beyond 2^53 are necessarily outside any content, so narrowing them to a double (which
    // is monotonic) cannot change whether the span falls within the content.
    spans[i] = { start: Number(start), end: Number(end) };
  }
  return spans;
}

function readOffset(m: OarMap, key: 'start' | 'end', what: string, index: number): Int {
  if (!mapHas(m, key)) throw new Raise('provider_failure', `${what}[${index}]: span is missing '${key}'`);
  const v = mapGet(m, key);
  // An OAR integer is an int64 ([OAR-FACT-23]): a fractional double, a string "1", or a double too
  // large for int64 is not one, and [OAR-FACT-23] forbids coercing it.
  const i = asInt(v);
  if (i === undefined) {
    throw new Raise('provider_failure', `${what}[${index}]: span '${key}' must be a non-negative integer, got ${describe(v)}`);
  }
  if (i < 0) throw new Raise('provider_failure', `${what}[${index}]: span '${key}' must be non-negative, got ${i}`);
  return i;
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
export function applyTransforms(content: string, transforms: readonly AccumulatedTransform[]): TransformResult {
  const skipped: SkippedSpan[] = [];
  return { content: applyTransformsInto(content, transforms, skipped), skipped };
}

/**
 * {@link applyTransforms} without the result object, for a caller that already holds the array the
 * skips belong in (a decision's `skippedTransforms`): returns the content and appends the skipped
 * spans to `skipped`, in the order of [OAR-OPS-23].
 *
 * Besides what it returns — the content (a concatenation of slices of `content` and replacements)
 * and the skip entries — it allocates nothing for transforms of ordinary size: the edits are kept
 * in a module-level {@link Workspace}, reset at the start of each call. Sharing it is safe because
 * a call runs synchronously to completion and calls nothing that could call back in; a getter on a
 * caller's span that re-entered anyway would get a workspace of its own (`acquire`).
 */
export function applyTransformsInto(content: string, transforms: readonly AccumulatedTransform[], skipped: SkippedSpan[], cpLengthOfContent?: number): string {
  if (transforms.length === 0) return content;
  // `cpLength` is a native scan for a high surrogate, then a walk only when there is one. A caller
  // that already counted the content's code points (the engine, for `content_length`) passes it.
  const length = cpLengthOfContent ?? cpLength(content);
  const w = acquire();
  try {
    return w.run(content, length, transforms, skipped);
  } finally {
    release(w);
  }
}

/**
 * Inputs up to this size are sorted in place by insertion sort, which allocates nothing and beats
 * the built-in sort on a handful of elements (V8's copies into a work array and calls a comparator).
 * Larger ones — a detector can report 100k spans — take the built-in sort, so they stay
 * O(n log n), and pay an allocation proportional to their size.
 */
const SMALL_SORT = 16;

/**
 * A workspace whose arrays grew past this many entries is dropped after the call rather than kept,
 * so one huge transform does not pin its high-water memory for the life of the process.
 */
const KEEP_LIMIT = 4096;

// ---------------------------------------------------------------------------------------------
// Edits in original coordinates

/**
 * The state of one `applyTransformsInto` call: the ordered spans of the current transform and the
 * edits made so far. Every list is a set of parallel arrays with an explicit count; `reset` zeroes
 * the counts and keeps the arrays, whose entries past the count are stale and never read. (Setting
 * `length = 0` instead would let V8 drop the backing store, and refilling would allocate again.)
 * Arrays only ever grow by writing at index `count`, so they stay packed.
 *
 * Queries during a transform (overlap, "strictly inside", consumption) need only the edits of
 * *earlier* transforms — the spans of one transform are merged, so they never overlap one another —
 * plus one case handled by the pending tail (see `rewrite`). So each transform's new edits are
 * collected unsorted and merged into the sorted, committed lists once, in `commit`: linear per
 * transform instead of a sorted insertion per span, which would be quadratic in the span count.
 */
class Workspace {
  /** Set while a call is using this workspace (`acquire`). */
  busy = false;

  // The current transform's spans, after steps 3 and 4 ([OAR-OPS-16]), in application order.
  private readonly spanStart: number[] = [];
  private readonly spanEnd: number[] = [];
  private spanCount = 0;
  // Scratch for `orderSpans`: the nonempty spans (merged in place) and the zero-width spans' points.
  private readonly wideStart: number[] = [];
  private readonly wideEnd: number[] = [];
  private readonly emptyAt: number[] = [];

  // Rewrites, by id (creation order). A *rewrite* replaces the nonempty original range
  // [start, end) with its text; rewrites never overlap (a span overlapping one is skipped).
  private readonly rwStart: number[] = [];
  private readonly rwEnd: number[] = [];
  private readonly rwText: string[] = [];
  /** Insertions whose point lies strictly inside the rewrite, in application order: a list in `after*`. */
  private readonly rwAfterFirst: number[] = [];
  private readonly rwAfterLast: number[] = [];
  private rwCount = 0;
  /** Ids of the committed rewrites (earlier transforms), ascending by start and by end. */
  private committed: number[] = [];
  private committedCount = 0;
  /** The other buffer `commit` merges into; the two swap. */
  private committedSpare: number[] = [];
  /** Ids from here to `rwCount` are this transform's, in application order (descending start). */
  private addedFrom = 0;

  // The linked lists of text bound after a rewrite: node i is text `afterText[i]`, then `afterNext[i]`.
  private readonly afterText: string[] = [];
  private readonly afterNext: number[] = [];
  private afterCount = 0;

  // Committed insertions, ascending by point and, at one point, in the order applied. An insertion
  // at original point p sits immediately before original code point p (or at the very end when
  // p = length): "text inserted at offset E belongs to the content beginning at E" ([OAR-OPS-21]).
  // It is therefore after anything ending at p and before anything beginning at p. `slotLive` is
  // cleared when a rewrite consumes it; consumed entries are dropped at the next commit.
  private slotAt: number[] = [];
  private slotText: string[] = [];
  private slotLive: boolean[] = [];
  private slotCount = 0;
  private slotAtSpare: number[] = [];
  private slotTextSpare: string[] = [];
  private slotLiveSpare: boolean[] = [];
  /** This transform's insertions, in application order. */
  private readonly pendingAt: number[] = [];
  private readonly pendingText: string[] = [];
  private pendingCount = 0;

  // The render cursor: a code-point offset into the content and the same position in UTF-16 units.
  private cp = 0;
  private unit = 0;

  /** The algorithm proper: steps 2 to 5 of [OAR-OPS-16] for each transform, then the output. */
  run(content: string, length: number, transforms: readonly AccumulatedTransform[], skipped: SkippedSpan[]): string {
    this.reset();
    for (let i = 0; i < transforms.length; i++) {
      const t = transforms[i] as AccumulatedTransform;
      this.orderSpans(t.target, length);
      const text = t.replacement;
      for (let k = 0; k < this.spanCount; k++) {
        const start = this.spanStart[k] as number;
        const end = this.spanEnd[k] as number;
        if (t.action === 'annotate') {
          // [OAR-OPS-21]: insert after the span's end and record a zero-width range there. A
          // zero-width range overlaps nothing, so an annotate is never skipped.
          this.insert(end, text);
        } else if (start === end) {
          // Reading (c): replacing an empty span is inserting at its point. Its recorded range is
          // zero-width and overlaps nothing ([OAR-OPS-23]), so it is never skipped. It removes no
          // code point, so it consumes no earlier insertion at E: the clause "a rewrite beginning at
          // E consumes it" is read as "a rewrite whose range contains code point E", which for a
          // nonempty rewrite is exactly "begins at E or strictly contains E" ([OAR-OPS-21]), while a
          // rewrite of [E, E) also *ends* at E, which preserves. Its text then behaves like any
          // insertion at E.
          this.insert(start, text);
        } else if (this.overlapsRewrite(start, end)) {
          // Step 5: the text this span was reported against no longer exists ([OAR-OPS-16]). Skips are
          // pushed in accumulation order, then in application order ([OAR-OPS-23]).
          skipped.push({ rule: t.rule, start, end, reason: 'overlap' });
        } else {
          // `redact` and `replace` are one action once the replacement is defaulted ([OAR-OPS-21]).
          this.rewrite(start, end, text);
        }
      }
      this.commit();
    }
    return this.render(content, length);
  }

  /** Empty every list. Done at the start of a call, so a call that threw leaves nothing behind. */
  private reset(): void {
    this.spanCount = 0;
    this.rwCount = 0;
    this.committedCount = 0;
    this.addedFrom = 0;
    this.afterCount = 0;
    this.slotCount = 0;
    this.pendingCount = 0;
  }

  /** Did some array grow past {@link KEEP_LIMIT}? (Arrays grow only by appending, so length is the high-water mark.) */
  oversized(): boolean {
    return (
      this.spanStart.length > KEEP_LIMIT ||
      this.wideStart.length > KEEP_LIMIT ||
      this.emptyAt.length > KEEP_LIMIT ||
      this.rwStart.length > KEEP_LIMIT ||
      this.afterText.length > KEEP_LIMIT ||
      this.slotAt.length > KEEP_LIMIT ||
      this.slotAtSpare.length > KEEP_LIMIT ||
      this.pendingAt.length > KEEP_LIMIT
    );
  }

  /**
   * Steps 2 to 4 of [OAR-OPS-16] into `spanStart`/`spanEnd`: resolve the target, drop spans outside
   * `C0`, merge overlapping ones, and order the result by descending start, then descending end
   * ([OAR-OPS-20] fixes only the start; the end tie-break is the one [OAR-OPS-23] states for the
   * skip report, and it applies a nonempty span before a zero-width one at the same start, so the
   * insertion lands in front of the replacement instead of being consumed by it).
   */
  private orderSpans(target: 'content' | readonly Span[], length: number): void {
    if (target === 'content') {
      // Step 2: `content` is the single span [0, length(C0)) ([OAR-OPS-16]). An annotate of it
      // therefore inserts at length(C0) — "at the end of the content" ([OAR-OPS-21]) — and a redact
      // of empty content inserts its replacement into the empty string, as the literal algorithm
      // replaces the (empty) whole with the replacement.
      this.spanStart[0] = 0;
      this.spanEnd[0] = length;
      this.spanCount = 1;
      return;
    }
    const { wideStart, wideEnd, emptyAt } = this;
    let wide = 0;
    let empty = 0;
    for (let i = 0; i < target.length; i++) {
      const s = target[i] as Span;
      const start = s.start;
      const end = s.end;
      // [OAR-OPS-19]: a span outside the content (0 <= start <= end <= length fails) is dropped
      // silently — not clamped, not skipped.
      if (!(start >= 0 && start <= end && end <= length)) continue;
      if (start === end) {
        emptyAt[empty++] = start;
      } else {
        wideStart[wide] = start;
        wideEnd[wide] = end;
        wide++;
      }
    }
    // Merge nonempty spans sharing at least one code point ([OAR-OPS-20]), in place. Spans that only
    // touch do not overlap under half-open ranges and stay separate: each is rewritten with its own
    // replacement. Zero-width spans are excluded: they overlap nothing ([OAR-OPS-23]), not even a
    // range containing them.
    sortByKey(wideStart, wideEnd, wide, 1);
    let merged = 0;
    for (let k = 0; k < wide; k++) {
      const start = wideStart[k] as number;
      const end = wideEnd[k] as number;
      if (merged > 0 && start < (wideEnd[merged - 1] as number)) {
        if (end > (wideEnd[merged - 1] as number)) wideEnd[merged - 1] = end;
      } else {
        wideStart[merged] = start;
        wideEnd[merged] = end;
        merged++;
      }
    }
    // Interleave the merged spans (ascending, disjoint, so distinct starts: walked backwards) with
    // the zero-width ones (sorted descending) by descending start, the nonempty one first on a tie
    // (its end is the greater). Equal zero-width spans are indistinguishable, so their order is moot.
    sortByKey(emptyAt, emptyAt, empty, -1);
    const { spanStart, spanEnd } = this;
    let n = 0;
    let a = merged - 1;
    let b = 0;
    while (a >= 0 || b < empty) {
      if (a >= 0 && (b >= empty || (wideStart[a] as number) >= (emptyAt[b] as number))) {
        spanStart[n] = wideStart[a] as number;
        spanEnd[n] = wideEnd[a] as number;
        a--;
      } else {
        spanStart[n] = spanEnd[n] = emptyAt[b] as number;
        b++;
      }
      n++;
    }
    this.spanCount = n;
  }

  /** Index into `committed` of the first rewrite whose end is greater than `at`. */
  private firstEndingAfter(at: number): number {
    const { committed, rwEnd } = this;
    let lo = 0;
    let hi = this.committedCount;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((rwEnd[committed[mid] as number] as number) > at) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** Does the nonempty range [start, end) share a code point with a rewrite of an earlier transform? */
  private overlapsRewrite(start: number, end: number): boolean {
    const k = this.firstEndingAfter(start);
    return k < this.committedCount && (this.rwStart[this.committed[k] as number] as number) < end;
  }

  /** Rewrite the nonempty range [start, end), which overlaps no earlier rewrite. */
  private rewrite(start: number, end: number, text: string): void {
    const id = this.rwCount++;
    this.rwStart[id] = start;
    this.rwEnd[id] = end;
    this.rwText[id] = text;
    this.rwAfterFirst[id] = -1;
    this.rwAfterLast[id] = -1;
    // [OAR-OPS-21]: a rewrite beginning at E or strictly containing E consumes the text inserted at
    // E; one ending at E preserves it. So insertions at start .. end-1 go, those at `end` stay.
    const { slotAt, slotLive } = this;
    for (let k = lowerBound(slotAt, this.slotCount, start); k < this.slotCount && (slotAt[k] as number) < end; k++) {
      slotLive[k] = false;
    }
    // Insertions this transform made: in a rewriting transform they come from empty spans [p, p),
    // applied by descending start, so they were made in non-increasing order of point and those
    // inside [start, end) are the most recent. (An empty span at `start` itself is applied after
    // this one, by the end-descending tie-break, so it is never among them.)
    while (this.pendingCount > 0) {
      const p = this.pendingAt[this.pendingCount - 1] as number;
      if (p < start || p >= end) break;
      this.pendingCount--;
    }
  }

  /** Insert `text` at original point `at` (a zero-width rewritten range, [OAR-OPS-21]). */
  private insert(at: number, text: string): void {
    // Only committed rewrites can strictly contain `at`: an empty span strictly inside a span of its
    // own transform has the greater start, so it is applied first (and consumed by `rewrite`).
    const k = this.firstEndingAfter(at);
    if (k < this.committedCount) {
      const id = this.committed[k] as number;
      if ((this.rwStart[id] as number) < at) {
        // Reading (b): the point lies strictly inside a rewritten range, so the code points around
        // it no longer exist. The zero-width range overlaps nothing, so it is not skipped
        // ([OAR-OPS-23], [OAR-OPS-21]); it is placed right after that range's replacement, the
        // first position the original point maps to that is not inside replaced text. Bound to
        // that rewrite, it can never be consumed later: a rewrite reaching it would overlap the
        // rewritten range and be skipped.
        const node = this.afterCount++;
        this.afterText[node] = text;
        this.afterNext[node] = -1;
        const last = this.rwAfterLast[id] as number;
        if (last < 0) this.rwAfterFirst[id] = node;
        else this.afterNext[last] = node;
        this.rwAfterLast[id] = node;
        return;
      }
    }
    // Reading (a): insertions at one original point keep the order they were applied in — for
    // separate transforms, accumulation order ([OAR-OPS-16]). `commit` sorts stably by point.
    this.pendingAt[this.pendingCount] = at;
    this.pendingText[this.pendingCount] = text;
    this.pendingCount++;
  }

  /** Merge this transform's edits into the committed lists, dropping consumed insertions. */
  private commit(): void {
    const rewrote = this.rwCount > this.addedFrom;
    if (rewrote) {
      // This transform's rewrites are in descending start order: walk them backwards. Starts are
      // distinct — both lists are nonempty ranges and no new one overlaps a committed one.
      const { committed, rwStart } = this;
      const out = this.committedSpare;
      let i = 0;
      let j = this.rwCount - 1;
      let n = 0;
      while (i < this.committedCount && j >= this.addedFrom) {
        const c = committed[i] as number;
        if ((rwStart[c] as number) < (rwStart[j] as number)) {
          out[n++] = c;
          i++;
        } else {
          out[n++] = j--;
        }
      }
      while (i < this.committedCount) out[n++] = committed[i++] as number;
      while (j >= this.addedFrom) out[n++] = j--;
      this.committedSpare = committed;
      this.committed = out;
      this.committedCount = n;
      this.addedFrom = this.rwCount;
    }
    // Consumption happens only in `rewrite`, so without a rewrite or a new insertion nothing changed.
    if (!rewrote && this.pendingCount === 0) return;
    const { pendingAt, pendingText, slotAt, slotText, slotLive } = this;
    const pending = this.pendingCount;
    sortByKey(pendingAt, pendingText, pending, 1);
    const outAt = this.slotAtSpare;
    const outText = this.slotTextSpare;
    const outLive = this.slotLiveSpare;
    let i = 0;
    let j = 0;
    let n = 0;
    for (; i < this.slotCount; i++) {
      if (!slotLive[i]) continue; // consumed
      const p = slotAt[i] as number;
      // At one point the committed insertions were applied first, so they come first.
      while (j < pending && (pendingAt[j] as number) < p) {
        outAt[n] = pendingAt[j] as number;
        outText[n] = pendingText[j] as string;
        outLive[n++] = true;
        j++;
      }
      outAt[n] = p;
      outText[n] = slotText[i] as string;
      outLive[n++] = true;
    }
    for (; j < pending; j++) {
      outAt[n] = pendingAt[j] as number;
      outText[n] = pendingText[j] as string;
      outLive[n++] = true;
    }
    this.slotAtSpare = slotAt;
    this.slotTextSpare = slotText;
    this.slotLiveSpare = slotLive;
    this.slotAt = outAt;
    this.slotText = outText;
    this.slotLive = outLive;
    this.slotCount = n;
    this.pendingCount = 0;
  }

  /** Build the output once: original text between edits, replacements and insertions in order. */
  private render(content: string, length: number): string {
    const { committed, rwStart, rwEnd, rwText, rwAfterFirst, afterText, afterNext, slotAt, slotText } = this;
    const rewrites = this.committedCount;
    const slots = this.slotCount;
    if (rewrites === 0 && slots === 0) return content;
    // Without surrogate pairs a code-point offset is a UTF-16 offset (a lone surrogate is one
    // of each, as in `cpLength`), so the cursor needs no scanning — the common case.
    const pairs = length !== content.length;
    this.cp = 0;
    this.unit = 0;
    // Concatenation, not Array.join: V8 builds a rope in O(pieces) and flattens it once if ever
    // read, while join copies every piece eagerly — measurable on megabyte content.
    let out = '';
    let i = 0;
    let j = 0;
    while (i < rewrites || j < slots) {
      const id = i < rewrites ? (committed[i] as number) : -1;
      // An insertion at a rewrite's start precedes it: it belongs to the content beginning there,
      // which is now the replacement ([OAR-OPS-21]). One at a rewrite's end follows it and its
      // bound insertions.
      if (j < slots && (id < 0 || (slotAt[j] as number) <= (rwStart[id] as number))) {
        const from = this.unit;
        const to = this.seek(content, pairs, slotAt[j] as number);
        if (to > from) out += content.slice(from, to);
        out += slotText[j] as string;
        j++;
      } else {
        const from = this.unit;
        const to = this.seek(content, pairs, rwStart[id] as number);
        if (to > from) out += content.slice(from, to);
        out += rwText[id] as string;
        for (let node = rwAfterFirst[id] as number; node >= 0; node = afterNext[node] as number) out += afterText[node] as string;
        this.seek(content, pairs, rwEnd[id] as number); // the rewritten original text is not copied
        i++;
      }
    }
    if (this.unit < content.length) out += content.slice(this.unit);
    return out;
  }

  /** Move the render cursor to code point `to` (never backwards) and return its UTF-16 offset. */
  private seek(content: string, pairs: boolean, to: number): number {
    let u = to;
    if (pairs) {
      u = this.unit;
      for (let c = this.cp; c < to; c++) {
        const x = content.charCodeAt(u);
        u += x >= 0xd800 && x <= 0xdbff && isLowSurrogate(content.charCodeAt(u + 1)) ? 2 : 1;
      }
    }
    this.cp = to;
    this.unit = u;
    return u;
  }
}

let shared = new Workspace();

/**
 * The shared workspace, or a fresh one while it is in use. A call never re-enters on its own (it
 * is synchronous and calls no code of its callers'), but a getter on a caller's span or transform
 * could; the inner call must not reset the outer call's edits.
 */
function acquire(): Workspace {
  if (shared.busy) return new Workspace();
  shared.busy = true;
  return shared;
}

function release(w: Workspace): void {
  if (w !== shared) return;
  w.busy = false;
  if (w.oversized()) shared = new Workspace();
}

function isLowSurrogate(u: number): boolean {
  return u >= 0xdc00 && u <= 0xdfff;
}

/**
 * Sort the first `n` entries of `keys` by `sign * key` ascending (`sign` 1 or -1), stably, and
 * permute `values` alongside (`values` may be `keys` itself). The numbers are code-point offsets
 * within the content, so differences are exact.
 */
function sortByKey<V>(keys: number[], values: V[], n: number, sign: 1 | -1): void {
  if (n < 2) return;
  if (n <= SMALL_SORT) {
    for (let i = 1; i < n; i++) {
      const key = keys[i] as number;
      const value = values[i] as V;
      let j = i - 1;
      // Strictly greater: equal keys keep their order (stable, like the built-in sort).
      while (j >= 0 && sign * ((keys[j] as number) - key) > 0) {
        keys[j + 1] = keys[j] as number;
        values[j + 1] = values[j] as V;
        j--;
      }
      keys[j + 1] = key;
      values[j + 1] = value;
    }
    return;
  }
  // Large input: the built-in sort, O(n log n), allocating O(n) as only inputs this large do. Each
  // entry is sorted as the pair (sign * key, position), which is a total order, so the result is
  // the stable one whichever sort runs.
  const k0 = keys.slice(0, n);
  const v0 = values === (keys as unknown[]) ? (k0 as unknown as V[]) : values.slice(0, n);
  let packable = n <= PACK_SPAN;
  for (let i = 0; packable && i < n; i++) packable = (k0[i] as number) === ((k0[i] as number) | 0);
  if (packable) {
    // Offsets are integers below 2^31 and positions below 2^21, so sign * key * 2^21 + position
    // is exact in a double and orders exactly as the pair does; a typed array sorts numbers
    // natively, several times faster than any comparator.
    const packed = new Float64Array(n);
    for (let i = 0; i < n; i++) packed[i] = sign * (k0[i] as number) * PACK_SPAN + i;
    packed.sort();
    for (let i = 0; i < n; i++) {
      const x = packed[i] as number;
      const from = x - Math.floor(x / PACK_SPAN) * PACK_SPAN;
      keys[i] = k0[from] as number;
      values[i] = v0[from] as V;
    }
    return;
  }
  const order = new Array<number>(n);
  for (let i = 0; i < n; i++) order[i] = i;
  order.sort((x, y) => sign * ((k0[x] as number) - (k0[y] as number)) || x - y);
  for (let i = 0; i < n; i++) {
    const from = order[i] as number;
    keys[i] = k0[from] as number;
    values[i] = v0[from] as V;
  }
}

/** 2^21: the position multiplier of the packed sort keys in `sortByKey`. */
const PACK_SPAN = 0x200000;

/** First index among the first `n` entries of ascending `xs` whose value is >= `x`. */
function lowerBound(xs: readonly number[], n: number, x: number): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((xs[mid] as number) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
