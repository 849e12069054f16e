/**
 * Load-time diagnostics are values, not strings: every check reports what it found with the clause
 * it enforces, where it was found, and the token the spec says must be named. Loading reports every
 * diagnostic in one pass; the CLI prints them as `file:line:col: message [OAR-XXX-n]`.
 */

export type Severity = 'error' | 'warning';

export interface SourceLocation {
  /** The file (or a label such as `<input>`) the document came from. */
  file?: string;
  /** 1-based line and column, for YAML and JSON alike. */
  line?: number;
  column?: number;
}

export interface Diagnostic {
  severity: Severity;
  /** The clause this check enforces, e.g. `OAR-DOC-27`. */
  clause: string;
  /** The human message; it contains `token` verbatim when there is one. */
  message: string;
  /** The machine token the spec requires to be named: a field, identifier, anchor, rule, profile. */
  token?: string;
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

/** `file:line:col: message [OAR-XXX-n]` — the printed form of a diagnostic. */
export function formatDiagnostic(d: Diagnostic): string {
  const s = d.source ?? {};
  const where = [s.file ?? '<input>', s.line ?? 1, s.column ?? 1].join(':');
  const sev = d.severity === 'warning' ? 'warning: ' : '';
  return `${where}: ${sev}${d.message} [${d.clause}]`;
}

export function hasErrors(ds: readonly Diagnostic[]): boolean {
  return ds.some((d) => d.severity === 'error');
}

/** Thrown by APIs that return a value or fail as a whole; carries every diagnostic found. */
export class LoadError extends Error {
  constructor(readonly diagnostics: readonly Diagnostic[]) {
    super(diagnostics.filter((d) => d.severity === 'error').map(formatDiagnostic).join('\n'));
    this.name = 'LoadError';
  }
}
