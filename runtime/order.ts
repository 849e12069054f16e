/**
 * Selection indexing and evaluation order, shared by the engine (at run time, for selections it
 * cannot know in advance) and the compiler (ahead of time, for the per-anchor procedures).
 *
 * [OAR-EVAL-18]: "while any selected rule remains unevaluated, evaluate the rule that comes first
 * under [OAR-EVAL-1]'s order among those none of whose remaining suppressors is still
 * unevaluated". That is Kahn's topological sort taking the smallest available position each time:
 * each rule counts its selected suppressors, a rule whose count is zero waits in a min-heap of
 * positions, and placing a rule decrements its targets — O((n + e) log n) rather than a scan of
 * the remaining rules per placement (quadratic for a chain of overrides).
 */
import type { BundleSymbol } from './bundle.js';

/** A rule as the ordering sees it: its targets and per-ordering scratch. */
export interface OrderNode {
  /** The rules of its anchor that its `overrides` names (itself excluded, no duplicates). */
  readonly targets: readonly OrderNode[];
  /** Scratch: selected and not yet placed. */
  pending: boolean;
  /** Scratch: the position in the [OAR-EVAL-1] order of the selection. */
  pos: number;
  /** Scratch: selected suppressors not yet placed. */
  indeg: number;
}

/** Orders selections; reuses its heap, so ordering allocates nothing once warmed up. */
export class AmendedOrder<T extends OrderNode> {
  private readonly heap: T[] = [];
  private size = 0;

  /**
   * Write the [OAR-EVAL-18] order of `selected[0..count)` (given in [OAR-EVAL-1] order) into `out`
   * from index 0; returns the number written (always `count`).
   */
  order(selected: readonly T[], count: number, out: T[]): number {
    for (let i = 0; i < count; i++) {
      const s = selected[i] as T;
      s.pending = true;
      s.pos = i;
      s.indeg = 0;
    }
    for (let i = 0; i < count; i++) for (const t of (selected[i] as T).targets) if (t.pending) t.indeg++;
    this.size = 0;
    // Pushed in ascending position: an ascending array is already a valid min-heap.
    for (let i = 0; i < count; i++) if ((selected[i] as T).indeg === 0) this.heap[this.size++] = selected[i] as T;
    let n = 0;
    while (this.size > 0) {
      const s = this.pop();
      s.pending = false;
      out[n++] = s;
      for (const t of s.targets) if (t.pending && --t.indeg === 0) this.push(t as T);
    }
    // A suppression cycle is rejected at load ([OAR-EVAL-16]); should one reach here anyway, the
    // rules left keep their [OAR-EVAL-1] order rather than vanish.
    for (let i = 0; n < count && i < count; i++) {
      const s = selected[i] as T;
      if (!s.pending) continue;
      s.pending = false;
      out[n++] = s;
    }
    return n;
  }

  private push(x: T): void {
    const h = this.heap;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = h[parent] as T;
      if (p.pos <= x.pos) break;
      h[i] = p;
      i = parent;
    }
    h[i] = x;
  }

  private pop(): T {
    const h = this.heap;
    const top = h[0] as T;
    const last = h[--this.size] as T;
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= this.size) break;
      if (c + 1 < this.size && (h[c + 1] as T).pos < (h[c] as T).pos) c++;
      if ((h[c] as T).pos >= last.pos) break;
      h[i] = h[c] as T;
      i = c;
    }
    if (this.size > 0) h[i] = last;
    return top;
  }
}

/**
 * The slot an anchor's rules are indexed by: the string fact most of their selector clauses name,
 * the lower slot on a tie; -1 when no string fact is named by at least two clauses.
 */
export function indexSlot(rules: readonly { readonly selector: readonly { readonly slot: number }[] }[], symbols: readonly BundleSymbol[]): number {
  const uses = new Map<number, number>();
  for (const r of rules) {
    for (const c of r.selector) {
      const s = symbols[c.slot];
      if (s?.kind === 'fact' && s.type === 'string') uses.set(c.slot, (uses.get(c.slot) ?? 0) + 1);
    }
  }
  let slot = -1;
  let best = 1;
  for (const [s, n] of uses) if (n > best || (n === best && slot >= 0 && s < slot)) [slot, best] = [s, n];
  return slot;
}
