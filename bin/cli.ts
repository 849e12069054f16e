/**
 * The `oarc` command line: dispatch to a command, and turn every way a command can end into an
 * exit status. User errors print one line naming the problem — never a stack trace; anything else
 * is a defect in oarc, reported briefly with exit status 70 (set OARC_DEBUG=1 for the stack).
 */
import { inspect } from 'node:util';
import { COMPILER_VERSION } from '../compiler/version.js';
import { wantsHelp } from './args.js';
import { EXIT_INPUT, EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, ExitError, InputError, UsageError, oneLine } from './errors.js';
import { COMMANDS, TOP } from './help.js';
import type { Io } from './output.js';
import { didYouMean } from '../runtime/suggest.js';

type Command = (argv: readonly string[], io: Io) => number | Promise<number>;

/** Each command is imported when it runs: `--help` and `--version` load no compiler. */
const COMMAND: Record<string, () => Promise<Command>> = {
  compile: async () => (await import('./commands/compile.js')).compileCommand,
  check: async () => (await import('./commands/check.js')).checkCommand,
  eval: async () => (await import('./commands/eval.js')).evalCommand,
  portability: async () => (await import('./commands/portability.js')).portabilityCommand,
  conformance: async () => (await import('./commands/conformance.js')).conformanceCommand,
  bench: async () => (await import('./commands/bench.js')).benchCommand,
  test: async () => (await import('./commands/test.js')).testCommand,
  fmt: async () => (await import('./commands/fmt.js')).fmtCommand,
  corpus: async () => (await import('./commands/corpus.js')).corpusCommand,
  serve: async () => (await import('./commands/serve.js')).serveCommand,
  mcp: async () => (await import('./commands/mcp.js')).mcpCommand,
  diff: async () => (await import('./commands/diff.js')).diffCommand,
  fuzz: async () => (await import('./commands/fuzz.js')).fuzzCommand,
  adapter: async () => (await import('./commands/adapter.js')).adapterCommand,
};

/** Commands that print their own help (they delegate to a part documenting its own arguments). */
const SELF_HELP: ReadonlySet<string> = new Set(['conformance']);

export async function run(argv: readonly string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  try {
    if (name === undefined) {
      io.err(TOP);
      return EXIT_USAGE;
    }
    if (name === '--help' || name === '-h') {
      io.out(TOP);
      return EXIT_OK;
    }
    if (name === '--version' || name === '-v') {
      io.out(`oarc ${COMPILER_VERSION}\n`);
      return EXIT_OK;
    }
    if (name === 'help') return await help(rest[0], io);
    if (name.startsWith('-')) throw new UsageError(`unknown option ${name}; a command comes first`, '');
    const command = Object.hasOwn(COMMAND, name) ? COMMAND[name] : undefined;
    if (command === undefined) throw new UsageError(`unknown command ${name}${didYouMean(name, Object.keys(COMMAND))}; the commands are ${Object.keys(COMMAND).join(', ')}`, '');
    if (wantsHelp(rest) && !SELF_HELP.has(name)) {
      io.out(COMMANDS[name] as string);
      return EXIT_OK;
    }
    const f = await command();
    return await withCommand(name, () => f(rest, io));
  } catch (e) {
    return report(e, io);
  }
}

async function help(topic: string | undefined, io: Io): Promise<number> {
  if (topic === undefined) {
    io.out(TOP);
    return EXIT_OK;
  }
  const command = Object.hasOwn(COMMAND, topic) ? COMMAND[topic] : undefined;
  if (command === undefined) throw new UsageError(`unknown command ${topic}${didYouMean(topic, Object.keys(COMMAND))}; the commands are ${Object.keys(COMMAND).join(', ')}`, '');
  if (SELF_HELP.has(topic)) return (await command())(['--help'], io);
  io.out(COMMANDS[topic] as string);
  return EXIT_OK;
}

/** Usage errors raised inside a command name it in their message and help hint. */
async function withCommand(name: string, f: () => number | Promise<number>): Promise<number> {
  try {
    return await f();
  } catch (e) {
    if (e instanceof UsageError && e.command === undefined) throw new UsageError(e.message, name);
    throw e;
  }
}

function report(e: unknown, io: Io): number {
  if (e instanceof ExitError) return e.code;
  if (e instanceof UsageError) {
    const who = e.command ? `oarc ${e.command}` : 'oarc';
    io.err(`${who}: ${e.message}\n`);
    io.err(`Run '${who} --help' for usage.\n`);
    return EXIT_USAGE;
  }
  if (e instanceof InputError) {
    for (const line of e.lines) io.err(`${line}\n`);
    return EXIT_INPUT;
  }
  io.err(`oarc: internal error: ${oneLine(e)}\n`);
  if ((io.env.OARC_DEBUG ?? '') === '') io.err('This is a bug in oarc; run again with OARC_DEBUG=1 for details, and report it.\n');
  else if (e instanceof Error && e.stack) io.err(`${e.stack}\n`);
  // A thrown value that is not an Error (an engine raise escaping) has no stack: show what it is.
  else io.err(`the thrown value is not an Error and carries no stack: ${inspect(e, { depth: 3 })}\n`);
  return EXIT_INTERNAL;
}
