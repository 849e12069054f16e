/**
 * Command-line parsing on `node:util` `parseArgs`, strict: an unknown flag, a flag missing its
 * value or a value given to a boolean is a `UsageError` naming the flag, never Node's own
 * multi-sentence message.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError, errorCode } from './errors.js';
import { didYouMean } from '../runtime/suggest.js';

export type Options = NonNullable<ParseArgsConfig['options']>;

export interface Parsed {
  values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  positionals: string[];
}

/** True when `--help` / `-h` appears before a `--` terminator. */
export function wantsHelp(argv: readonly string[]): boolean {
  for (const a of argv) {
    if (a === '--') return false;
    if (a === '--help' || a === '-h') return true;
  }
  return false;
}

/**
 * Parse `argv` against `options`. A single-valued flag given twice is a mistake rather than "the
 * last one wins": `-o a.mjs -o b.mjs` says two different things.
 */
export function parse(argv: readonly string[], options: Options, positionals = true): Parsed {
  let r;
  try {
    r = parseArgs({ args: negativeValuesJoined(argv, options), options, allowPositionals: positionals, strict: true, tokens: true });
  } catch (e) {
    throw new UsageError(describeParseError(e, options));
  }
  const seen = new Set<string>();
  for (const t of r.tokens) {
    if (t.kind !== 'option' || options[t.name]?.multiple === true) continue;
    if (seen.has(t.name)) throw new UsageError(`option --${t.name} given more than once`);
    seen.add(t.name);
  }
  return { values: r.values as Parsed['values'], positionals: r.positionals };
}

/**
 * `--port -1` as `--port=-1`: parseArgs takes a value that starts with `-` for an option and says
 * the flag "needs a value", where the message that helps is the range check's ("takes a whole
 * number from 0 to 65535, not `-1`"). Only a value-taking flag followed by a negative number.
 */
function negativeValuesJoined(argv: readonly string[], options: Options): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const next = argv[i + 1];
    if (a.startsWith('--') && !a.includes('=') && options[a.slice(2)]?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      out.push(`${a}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

function describeParseError(e: unknown, options: Options): string {
  const message = e instanceof Error ? e.message : String(e);
  const quoted = /'([^']+)'/.exec(message)?.[1];
  switch (errorCode(e)) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const given = quoted ?? message;
      return `unknown option ${given}${didYouMean(given, Object.keys(options).map((o) => `--${o}`))}`;
    }
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument ${quoted ?? message}`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': {
      const flag = /(--[a-z-]+)/.exec(message)?.[1] ?? quoted ?? '';
      const name = flag.replace(/^--/, '');
      return options[name]?.type === 'boolean' ? `option ${flag} takes no value` : `option ${flag} needs a value`;
    }
    default:
      return message.split('\n')[0] ?? message;
  }
}

export function str(p: Parsed, name: string): string | undefined {
  const v = p.values[name];
  return typeof v === 'string' ? v : undefined;
}

export function strs(p: Parsed, name: string): string[] {
  const v = p.values[name];
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string');
}

export function bool(p: Parsed, name: string): boolean {
  return p.values[name] === true;
}

/** The value of a flag the command cannot run without. */
export function required(p: Parsed, name: string, what: string): string {
  const v = str(p, name);
  if (v === undefined || v === '') throw new UsageError(`missing --${name} <${what}>`);
  return v;
}
