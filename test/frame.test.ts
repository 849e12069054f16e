/** The code frame under a text diagnostic (bin/frame.ts): the line, a caret under the span, inert. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SourceLines, codeFrame } from '../bin/frame.js';
import type { Diagnostic } from '../compiler/diagnostics.js';

const dir = mkdtempSync(join(tmpdir(), 'oarc-frame-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function frame(text: string, source: Diagnostic['source']): string[] {
  const file = join(dir, `f${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, text);
  return codeFrame({ severity: 'error', clause: 'OAR-FACT-3', message: 'm', source: { file, ...source } }, new SourceLines());
}

describe('code frames', () => {
  it('carets cover the span on its line; a span without an end gets one caret', () => {
    expect(frame('a: 1\nwhen: tol == 1\n', { line: 2, column: 7, endLine: 2, endColumn: 10 })).toEqual(['    2 | when: tol == 1', '      |       ^^^']);
    expect(frame('a: 1\n', { line: 1, column: 1 })).toEqual(['    1 | a: 1', '      | ^']);
  });

  it('a tab shows as one column and a control character as its escape, and the caret stays under the token', () => {
    expect(frame('\twhen: "\u001b" x\n', { line: 1, column: 9, endLine: 1, endColumn: 10 })).toEqual(['    1 |  when: "\\x1b" x', '      |         ^^^^']);
  });

  it('a long line is cut to a window around the span', () => {
    const [line, caret] = frame(`${'x'.repeat(300)}TOKEN${'y'.repeat(300)}\n`, { line: 1, column: 301, endLine: 1, endColumn: 306 });
    expect(line).toMatch(/^ {4}1 \| …x+TOKENy+…$/);
    expect(line!.length).toBeLessThan(120);
    expect(line!.indexOf('TOKEN')).toBe(caret!.indexOf('^'));
    expect(caret).toMatch(/\^{5}$/);
  });

  it('nothing for a line past the end, a file that cannot be read, or a diagnostic without a line', () => {
    expect(frame('a: 1\n', { line: 9, column: 1 })).toEqual([]);
    expect(codeFrame({ severity: 'error', clause: 'X', message: 'm', source: { file: join(dir, 'missing.yaml'), line: 1, column: 1 } }, new SourceLines())).toEqual([]);
    expect(codeFrame({ severity: 'error', clause: 'X', message: 'm', source: { file: '/dev/zero', line: 1, column: 1 } }, new SourceLines())).toEqual([]);
    expect(codeFrame({ severity: 'error', clause: 'X', message: 'm' }, new SourceLines())).toEqual([]);
  });
});
