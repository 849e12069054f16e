/**
 * The CLI's error classes, one per exit status. A user error is a one-line message and never a
 * stack trace; anything else reaching the top level is a defect in oarc and exits 70.
 */

export const EXIT_OK = 0;
/** Errors in the input: load diagnostics, an occurrence that cannot be decided, a failed run. */
export const EXIT_INPUT = 1;
/** The command line itself is wrong: unknown flag, missing flag, wrong arguments. */
export const EXIT_USAGE = 2;
/**
 * `oarc eval --fail-on`: an occurrence was decided with a listed effect. Not 1, so a CI step can
 * tell "the pack blocked this" from "the pack or the occurrence is broken", which exits 1.
 */
export const EXIT_DECISION = 3;
/**
 * `oarc bench --baseline`: slower than the baseline beyond the threshold, the floor and the noise.
 * Not 1, so CI can tell "the pack got slower" from "the pack or the occurrences are broken".
 */
export const EXIT_REGRESSION = 4;
/** An internal error (sysexits EX_SOFTWARE): a bug in oarc, not in what the user gave it. */
export const EXIT_INTERNAL = 70;

/** A command-line mistake; the message names it, and the user is pointed at `--help`. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  /**
   * The command whose usage was wrong (for `oarc <command>: …` and its help hint); `''` for the
   * top level; `undefined` until the dispatcher fills it in.
   */
  readonly command: string | undefined;
  constructor(message: string, command?: string) {
    super(message);
    this.command = command;
  }
}

/**
 * A problem with what the user gave oarc (a missing file, a bad occurrence, a bundle that cannot
 * run). `lines` are printed as they are, one per line, on stderr.
 */
export class InputError extends Error {
  override readonly name = 'InputError';
  readonly lines: readonly string[];
  constructor(lines: string | readonly string[]) {
    const all = typeof lines === 'string' ? [lines] : lines;
    super(all.join('\n'));
    this.lines = all;
  }
}

/** Thrown after the command already printed what went wrong: only the exit status is left. */
export class ExitError extends Error {
  override readonly name = 'ExitError';
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/** `e.message` for an Error, the string form otherwise; always one line. */
export function oneLine(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  const first = text.split('\n').find((l) => l.trim() !== '') ?? text;
  return first.trim();
}

/** The `code` of a Node system error (`ENOENT`, `ERR_MODULE_NOT_FOUND`, …), if it has one. */
export function errorCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A file-system error as a reason a person can act on. */
export function ioReason(e: unknown): string {
  switch (errorCode(e)) {
    case 'ENOENT':
      return 'no such file or directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'is a directory';
    case 'ENOTDIR':
      return 'a parent of it is not a directory';
    default:
      return oneLine(e);
  }
}
