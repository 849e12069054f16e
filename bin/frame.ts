/**
 * The code frame under a text diagnostic: the offending source line, and a caret under the span the
 * diagnostic names (a whole token inside a condition, one column elsewhere).
 *
 *      7 |   contains(tol, "x")
 *        |            ^^^
 *
 * The line is shown inert — control characters escaped, tabs as one space — and the caret is placed
 * under what is shown, so a hostile line can neither move the cursor nor misplace the caret. A long
 * line is cut to a window around the span.
 */
import { readFileSync, statSync } from 'node:fs';
import { inert, type Diagnostic } from '../compiler/diagnostics.js';

const WINDOW = 100;
/** A file the loader read is at most 16 MiB; one larger (it changed since) is not shown. */
const MAX_SHOWN = 16 * 1024 * 1024;

/** Each file's lines, read once; undefined for what cannot be shown (not a regular file, too large). */
export class SourceLines {
  private readonly files = new Map<string, string[] | undefined>();

  line(file: string, line: number): string | undefined {
    if (!this.files.has(file)) this.files.set(file, read(file));
    return this.files.get(file)?.[line - 1];
  }
}

function read(file: string): string[] | undefined {
  try {
    const st = statSync(file);
    if (!st.isFile() || st.size > MAX_SHOWN) return undefined;
    const text = readFileSync(file, 'utf8');
    return (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).split(/\r?\n/);
  } catch {
    return undefined;
  }
}

/** Shown form of one character: a tab as a space (one column, as the caret counts), others inert. */
const shown = (c: string) => (c === '\t' ? ' ' : inert(c));

/** The frame's two lines, or nothing when the diagnostic has no line in a readable file. */
export function codeFrame(d: Diagnostic, lines: SourceLines): string[] {
  const s = d.source;
  if (s?.file === undefined || s.line === undefined) return [];
  const text = lines.line(s.file, s.line);
  if (text === undefined) return [];
  const col = Math.min(Math.max((s.column ?? 1) - 1, 0), text.length);
  const endCol = s.endLine === s.line && s.endColumn !== undefined ? Math.max(s.endColumn - 1, col + 1) : col + 1;
  const from = Math.max(0, Math.min(col - WINDOW / 2, text.length - WINDOW));
  const to = Math.min(text.length, from + WINDOW);
  const cut = (a: number, b: number) => Array.from(text.slice(a, b), shown).join('');
  const before = (from > 0 ? '…' : '') + cut(from, col);
  const marked = cut(col, Math.min(endCol, to)) || ' ';
  const shownLine = before + marked + cut(Math.min(endCol, to), to) + (to < text.length ? '…' : '');
  const gutter = String(s.line);
  return [`${gutter.padStart(5)} | ${shownLine}`, `${' '.repeat(Math.max(5, gutter.length))} | ${' '.repeat(before.length)}${'^'.repeat(marked.length)}`];
}
