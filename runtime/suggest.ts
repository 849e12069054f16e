/**
 * "Did you mean …": the declared name closest to a misspelled one, for messages that say what to
 * write instead. Distance is the optimal-string-alignment edit distance (insert, delete, substitute,
 * swap two neighbours), by code point, after folding case and `_`/`-`, so `toolCall`, `tool_call`
 * and `TOOL-CALL` are all close to each other.
 */

/** Fold what a typo most often gets wrong but a name never distinguishes. */
function fold(s: string): string[] {
  return Array.from(s.toLowerCase().replace(/[_-]/g, ''));
}

/** Optimal-string-alignment distance, giving up (returning `limit + 1`) once it exceeds `limit`. */
function distance(a: readonly string[], b: readonly string[], limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before = new Array<number>(b.length + 1).fill(0);
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  let cur = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    let best = cur[0];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (before[j - 2] as number) + 1);
      cur[j] = d;
      if (d < best) best = d;
    }
    if (best > limit) return limit + 1;
    [before, prev, cur] = [prev, cur, before];
  }
  return prev[b.length] as number;
}

/**
 * The candidate closest to `name`, when one is close enough to be the name meant: within a third of
 * its length in edits (at least one, at most three). Ties go to the first candidate given.
 */
export function closest(name: string, candidates: Iterable<string>): string | undefined {
  const folded = fold(name);
  const limit = Math.min(3, Math.max(1, Math.floor(folded.length / 3)));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const c of candidates) {
    if (c === name) continue;
    const d = distance(folded, fold(c), Math.min(limit, bestDistance - 1));
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

/** ` (did you mean `x`?)` for a suggestion, or the empty string for none. */
export function meantHint(suggestion: string | undefined): string {
  return suggestion === undefined ? '' : ` (did you mean \`${suggestion}\`?)`;
}

/** ` (did you mean `x`?)`, or the empty string when nothing is close. */
export function didYouMean(name: string, candidates: Iterable<string>): string {
  return meantHint(closest(name, candidates));
}
