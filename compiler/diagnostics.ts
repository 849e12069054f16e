/**
 * Load-time diagnostics are values, not strings: every check reports what it found with the clause
 * it enforces, where it was found, and the token the spec says must be named. Loading reports every
 * diagnostic in one pass; the CLI prints them as `file:line:col: message [OAR-XXX-n]`.
 */

export type Severity = 'error' | 'warning';

export interface SourceLocation {
  /** The file (or a label such as `<input>`) the document came from. */
  file?: string;
  /** 1-based line and column, for YAML and JSON alike (columns in UTF-16 units, as editors count). */
  line?: number;
  column?: number;
  /** Where the offending text ends (exclusive), when it is known: a token inside a condition. */
  endLine?: number;
  endColumn?: number;
}

export interface Diagnostic {
  severity: Severity;
  /**
   * The clause this check enforces, e.g. `OAR-DOC-27`; for a check the spec does not make (an
   * empty pack, a rule-author warning about valid OAR) an oarc code such as `oarc/empty-pack`.
   */
  clause: string;
  /** The human message; it contains `token` verbatim when there is one. */
  message: string;
  /** The machine token the spec requires to be named: a field, identifier, anchor, rule, profile. */
  token?: string;
  /** The qualified identifier of the rule the diagnostic is about, when there is one. */
  rule?: string;
  /** What to write instead, when one name is close enough to be the one meant. */
  suggestion?: string;
  source?: SourceLocation;
  /** The JSON path of the offending field within its document. */
  path?: (string | number)[];
  /** A code-point offset inside a condition or copy template, when the error is inside one. */
  offset?: number;
}

export function error(
  clause: string,
  message: string,
  extra: Omit<Diagnostic, 'severity' | 'clause' | 'message'> = {},
): Diagnostic {
  return { severity: 'error', clause, message, ...extra };
}

export function warning(
  clause: string,
  message: string,
  extra: Omit<Diagnostic, 'severity' | 'clause' | 'message'> = {},
): Diagnostic {
  return { severity: 'warning', clause, message, ...extra };
}

/**
 * Control characters, the bidirectional overrides that reorder what a terminal shows, and the
 * invisible zero-width characters, as escapes: rule text printed in a diagnostic can neither move the cursor, clear the screen, nor
 * start a new line that forges `ok: 1 rule`.
 */
export function inert(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g, (c) => {
    switch (c) {
      case '\n':
        return '\\n';
      case '\r':
        return '\\r';
      case '\t':
        return '\\t';
      default: {
        const code = c.charCodeAt(0);
        return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
      }
    }
  });
}

/** `file:line:col: message [OAR-XXX-n]` — the printed form of a diagnostic, always one line. */
export function formatDiagnostic(d: Diagnostic): string {
  const s = d.source ?? {};
  const where = [s.file ?? '<input>', s.line ?? 1, s.column ?? 1].join(':');
  const sev = d.severity === 'warning' ? 'warning: ' : '';
  // Every diagnostic about a rule names it; most messages already do, in their own words.
  const rule = d.rule !== undefined && !d.message.includes(d.rule) ? `rule ${d.rule}: ` : '';
  return inert(`${where}: ${sev}${rule}${d.message} [${d.clause}]`);
}

export function hasErrors(ds: readonly Diagnostic[]): boolean {
  return ds.some((d) => d.severity === 'error');
}

/**
 * Diagnostics in reading order: by file — in `files` order, then any other file by name — then by
 * line and column; diagnostics at one place keep the order they were found in.
 */
export function sortDiagnostics(ds: readonly Diagnostic[], files: readonly string[] = []): Diagnostic[] {
  const rank = new Map<string, number>();
  for (const f of files) if (!rank.has(f)) rank.set(f, rank.size);
  const fileKey = (d: Diagnostic) => d.source?.file ?? '';
  return ds
    .map((d, i) => ({ d, i }))
    .sort((a, b) => {
      const fa = fileKey(a.d);
      const fb = fileKey(b.d);
      if (fa !== fb) {
        const ra = rank.get(fa) ?? Number.MAX_SAFE_INTEGER;
        const rb = rank.get(fb) ?? Number.MAX_SAFE_INTEGER;
        if (ra !== rb) return ra - rb;
        return fa < fb ? -1 : 1;
      }
      const line = (a.d.source?.line ?? 0) - (b.d.source?.line ?? 0);
      if (line !== 0) return line;
      const column = (a.d.source?.column ?? 0) - (b.d.source?.column ?? 0);
      return column !== 0 ? column : a.i - b.i;
    })
    .map((x) => x.d);
}

/** Thrown by APIs that return a value or fail as a whole; carries every diagnostic found. */
export class LoadError extends Error {
  constructor(readonly diagnostics: readonly Diagnostic[]) {
    super(diagnostics.filter((d) => d.severity === 'error').map(formatDiagnostic).join('\n'));
    this.name = 'LoadError';
  }
}
