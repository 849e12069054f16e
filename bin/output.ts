/**
 * Where the CLI writes, and how: colour only for a terminal that wants it (stdout or stderr is a
 * TTY and `NO_COLOR` is unset or empty, https://no-color.org), diagnostics in the
 * `file:line:col: message [OAR-XXX-n]` form, JSON that keeps integers beyond 2^53 exact.
 */
import { writeJson } from '../compiler/load/json.js';
import { formatDiagnostic, type Diagnostic } from '../compiler/diagnostics.js';
import { SourceLines, codeFrame } from './frame.js';
import { plural } from '../runtime/plural.js';

export interface Io {
  out(text: string): void;
  err(text: string): void;
  stdin: NodeJS.ReadableStream;
  env: NodeJS.ProcessEnv;
  /** Colour on stdout / on stderr. */
  colour: { out: boolean; err: boolean };
}

export function processIo(): Io {
  const noColour = (process.env.NO_COLOR ?? '') !== '';
  return {
    out: (t) => void process.stdout.write(t),
    err: (t) => void process.stderr.write(t),
    stdin: process.stdin,
    env: process.env,
    colour: { out: !noColour && process.stdout.isTTY === true, err: !noColour && process.stderr.isTTY === true },
  };
}

export type Style = 'red' | 'green' | 'yellow' | 'magenta' | 'cyan' | 'bold' | 'dim';

const SGR: Record<Style, [number, number]> = {
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  magenta: [35, 39],
  cyan: [36, 39],
  bold: [1, 22],
  dim: [2, 22],
};

export type Paint = (style: Style, text: string) => string;

export function painter(enabled: boolean): Paint {
  return enabled ? (style, text) => `\u001b[${SGR[style][0]}m${text}\u001b[${SGR[style][1]}m` : (_style, text) => text;
}

/**
 * Print load diagnostics on stderr, errors and warnings alike, in the order given (the loader's
 * reading order), each with its code frame when its file can be read again.
 */
export function printDiagnostics(io: Io, diagnostics: readonly Diagnostic[]): void {
  const paint = painter(io.colour.err);
  const lines = new SourceLines();
  for (const d of diagnostics) {
    const line = formatDiagnostic(d);
    io.err(`${d.severity === 'error' ? paint('red', line) : paint('yellow', line)}\n`);
    const frame = codeFrame(d, lines);
    if (frame.length === 2) io.err(`${paint('dim', frame[0] as string)}\n${paint(d.severity === 'error' ? 'red' : 'yellow', frame[1] as string)}\n`);
  }
}

/** "1 error, 2 warnings" — the tally printed after a failed load. */
export function tally(diagnostics: readonly Diagnostic[]): string {
  const errors = diagnostics.filter((d) => d.severity === 'error').length;
  const warnings = diagnostics.length - errors;
  return warnings > 0 ? `${plural(errors, 'error')}, ${plural(warnings, 'warning')}` : plural(errors, 'error');
}

/** JSON text in which a bigint (an int beyond ±(2^53−1)) is written as the exact JSON integer. */
export function toJson(value: unknown, indent = 0): string {
  return writeJson(value, { indent });
}
