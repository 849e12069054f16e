/**
 * A unified diff of two texts by line (Myers' O(ND) algorithm), in the form `diff -u` and
 * `git diff` print: `--- a`, `+++ b`, then hunks `@@ -l,n +l,n @@` with `context` lines around
 * each change.
 */

type Op = { kind: ' ' | '-' | '+'; line: string };

/** Lines with their line feed kept, so a last line without one differs from the same line with one. */
function lines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

function printed(o: Op): string {
  const body = `${o.kind}${o.line}`;
  return body.endsWith('\n') ? body.slice(0, -1) : `${body}\n\\ No newline at end of file`;
}

/** The shortest edit script turning `a` into `b`. */
function edits(a: readonly string[], b: readonly string[]): Op[] {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const v = new Map<number, number>([[1, 0]]);
  const trace: Map<number, number>[] = [];
  outer: for (let d = 0; d <= max; d++) {
    trace.push(new Map(v));
    for (let k = -d; k <= d; k += 2) {
      const down = k === -d || (k !== d && (v.get(k - 1) ?? -1) < (v.get(k + 1) ?? -1));
      let x = down ? (v.get(k + 1) ?? 0) : (v.get(k - 1) ?? 0) + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v.set(k, x);
      if (x >= n && y >= m) break outer;
    }
  }
  // Walk the trace back from (n, m) to (0, 0).
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0; d--) {
    const vd = trace[d] as Map<number, number>;
    const k = x - y;
    const down = k === -d || (k !== d && (vd.get(k - 1) ?? -1) < (vd.get(k + 1) ?? -1));
    const prevK = down ? k + 1 : k - 1;
    const prevX = vd.get(prevK) ?? 0;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      x--;
      y--;
      ops.push({ kind: ' ', line: a[x] as string });
    }
    if (d > 0) {
      if (down) ops.push({ kind: '+', line: b[--y] as string });
      else ops.push({ kind: '-', line: a[--x] as string });
    }
  }
  return ops.reverse();
}

/** `diff -u` output turning `before` into `after`; empty when they are equal. */
export function unifiedDiff(before: string, after: string, from: string, to: string, context = 3): string {
  if (before === after) return '';
  const ops = edits(lines(before), lines(after));
  const out = [`--- ${from}`, `+++ ${to}`];
  let i = 0;
  while (i < ops.length) {
    while (i < ops.length && (ops[i] as Op).kind === ' ') i++;
    if (i >= ops.length) break;
    // A hunk: from `context` lines before this change to `context` lines after the last change
    // that is within 2·context lines of the one before it.
    const start = Math.max(0, i - context);
    let end = i;
    let j = i;
    while (j < ops.length) {
      if ((ops[j] as Op).kind !== ' ') {
        end = j;
        j++;
        continue;
      }
      let run = 0;
      while (j + run < ops.length && (ops[j + run] as Op).kind === ' ') run++;
      if (j + run >= ops.length || run > 2 * context) break;
      j += run;
    }
    const stop = Math.min(ops.length, end + context + 1);
    let aLine = 1;
    let bLine = 1;
    for (let p = 0; p < start; p++) {
      if ((ops[p] as Op).kind !== '+') aLine++;
      if ((ops[p] as Op).kind !== '-') bLine++;
    }
    const hunk = ops.slice(start, stop);
    const aCount = hunk.filter((o) => o.kind !== '+').length;
    const bCount = hunk.filter((o) => o.kind !== '-').length;
    out.push(`@@ -${aCount === 0 ? aLine - 1 : aLine},${aCount} +${bCount === 0 ? bLine - 1 : bLine},${bCount} @@`);
    for (const o of hunk) out.push(printed(o));
    i = stop;
  }
  return `${out.join('\n')}\n`;
}
