/**
 * Commands implemented elsewhere in the package (the conformance runner, the benchmarks) are
 * imported when they run, not when the CLI starts: `oarc compile` does not pay for loading the
 * benchmark harness. The specifier is a URL computed at run time, so the type checker does not
 * resolve it and the CLI builds whether or not those parts are present; a build without one says
 * so in one line. Callers describe the part's shape with a type-only import, so a change to its
 * contract is still a type error here.
 */
import { fileURLToPath } from 'node:url';
import { EXIT_INTERNAL, ExitError, errorCode } from './errors.js';
import type { Io } from './output.js';

/** What to say, and the exit status, when a part is deliberately left out of the package. */
export interface Absent {
  message: string;
  code: number;
}

/**
 * Import `relative` (from dist/bin/) or report, in one line, that this build lacks it: `absent`
 * when the part is one the installed package leaves out on purpose, an internal error otherwise.
 */
export async function importPart<T>(relative: string, what: string, io: Io, absent?: Absent): Promise<Partial<T>> {
  const url = new URL(relative, new URL('../', import.meta.url));
  try {
    return (await import(url.href)) as Partial<T>;
  } catch (e) {
    const file = fileURLToPath(url);
    if (errorCode(e) === 'ERR_MODULE_NOT_FOUND' && e instanceof Error && e.message.includes(file)) {
      io.err(absent ? `${absent.message}\n` : `oarc: ${what} is not part of this build (${file} is missing); rebuild oarc with \`npm run build\`\n`);
      throw new ExitError(absent ? absent.code : EXIT_INTERNAL);
    }
    throw e;
  }
}

/** The named export of a part, which must be a function. */
export function exported<T, K extends keyof T>(part: Partial<T>, name: K, what: string, io: Io): NonNullable<T[K]> {
  const f = part[name];
  if (typeof f !== 'function') {
    io.err(`oarc: ${what} does not export ${String(name)}(); this build of oarc is inconsistent\n`);
    throw new ExitError(EXIT_INTERNAL);
  }
  return f as NonNullable<T[K]>;
}

/** A delegated command's result as an exit status: its number, or what it set on the process. */
export function exitStatus(result: unknown): number {
  if (typeof result === 'number' && Number.isInteger(result)) return result;
  if (typeof result === 'boolean') return result ? 0 : 1;
  const code = process.exitCode;
  return typeof code === 'number' ? code : typeof code === 'string' && /^\d+$/.test(code) ? Number(code) : 0;
}
