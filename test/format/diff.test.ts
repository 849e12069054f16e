/** The unified diff `oarc fmt --check` prints: checked against what it must mean, not its own output. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { unifiedDiff } from '../../format/index.js';

/** Apply a unified diff to `before` (the way `patch` would), to prove the diff is the change. */
function apply(before: string, diff: string): string {
  const a = before.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  const out: string[] = [];
  let at = 0;
  const lines = diff.split('\n').slice(2);
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i] as string;
    const h = /^@@ -(\d+),(\d+) \+\d+,\d+ @@$/.exec(l);
    if (h) {
      const start = Number(h[2]) === 0 ? Number(h[1]) : Number(h[1]) - 1;
      while (at < start) out.push(a[at++] as string);
      continue;
    }
    if (l === '' && i === lines.length - 1) break;
    const noNewline = lines[i + 1] === '\\ No newline at end of file';
    const text = l.slice(1) + (noNewline ? '' : '\n');
    if (noNewline) i++;
    if (l[0] === ' ') {
      out.push(text);
      at++;
    } else if (l[0] === '-') at++;
    else if (l[0] === '+') out.push(text);
  }
  while (at < a.length) out.push(a[at++] as string);
  return out.join('');
}

describe('unifiedDiff', () => {
  it('prints hunks with three lines of context, as diff -u does', () => {
    const before = 'a\nb\nc\nd\ne\nf\ng\nh\n';
    const after = 'a\nb\nc\nd\nE\nf\ng\nh\n';
    expect(unifiedDiff(before, after, 'x', 'y')).toBe('--- x\n+++ y\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n');
    expect(unifiedDiff(before, before, 'x', 'y')).toBe('');
  });

  it('marks a missing final newline', () => {
    expect(unifiedDiff('a', 'a\n', 'x', 'y')).toBe('--- x\n+++ y\n@@ -1,1 +1,1 @@\n-a\n\\ No newline at end of file\n+a\n');
  });

  it('applied to the old text, gives the new one (random texts)', () => {
    const text = fc.array(fc.constantFrom('a', 'b', 'c', 'd', ''), { maxLength: 30 }).chain((ls) => fc.constantFrom(ls.join('\n'), `${ls.join('\n')}\n`));
    fc.assert(fc.property(text, text, (before, after) => {
      expect(apply(before, unifiedDiff(before, after, 'x', 'y'))).toBe(after);
    }), { seed: 16, numRuns: 500 });
  });
});
