/**
 * `oarc mcp`: put a rule pack in front of an MCP server (mcp/). The flags before `--` are oarc's;
 * what follows is the server's command line, started as a child over stdio.
 */
import { McpStartError, startMcpProxy } from '../../mcp/index.js';
import { SdkMissingError } from '../../mcp/sdk.js';
import { parseMaskPath, type MaskPath } from '../../serve/decision-log.js';
import { bool, parse, str, strs } from '../args.js';
import { EXIT_INPUT, EXIT_OK, InputError, UsageError, oneLine } from '../errors.js';
import type { Io } from '../output.js';
import { PACK_OPTIONS } from '../pack.js';
import { packSource } from './serve.js';
import { redisConfigFrom, REDIS_OPTIONS } from '../redis-options.js';

const OPTIONS = {
  ...PACK_OPTIONS,
  detectors: { type: 'string' },
  'injection-corpus': { type: 'string', multiple: true },
  fact: { type: 'string', multiple: true },
  ...REDIS_OPTIONS,
  'decision-log': { type: 'string' },
  'log-mask': { type: 'string', multiple: true },
  verbose: { type: 'boolean' },
  'check-schemas': { type: 'boolean' },
} as const;

export async function mcpCommand(argv: readonly string[], io: Io): Promise<number> {
  const split = argv.indexOf('--');
  if (split < 0) throw new UsageError('no server command: give it after `--`, e.g. oarc mcp rules.yaml --capability cap.yaml -- npx my-mcp-server');
  const [command, ...args] = argv.slice(split + 1);
  if (command === undefined || command === '') throw new UsageError('no server command after `--`');
  const p = parse(argv.slice(0, split), OPTIONS);
  const source = packSource(p.positionals, str(p, 'capability'), strs(p, 'config'), str(p, 'detectors'), strs(p, 'injection-corpus'));
  // Option syntax, before anything starts: a usage error (exit 2), as --help says. Whether the
  // capability declares the fact is known only once the pack is loaded (exit 1).
  const facts = strs(p, 'fact');
  for (const f of facts) {
    if (f.indexOf('=') <= 0) throw new UsageError(`--fact ${f}: write it as --fact name=value${f === '' || f.startsWith('=') ? '' : `, e.g. --fact ${f}=<value>`}`);
  }
  const redis = redisConfigFrom(p);
  // As oarc serve reads it: the same paths, the same errors.
  const logMask: MaskPath[] = strs(p, 'log-mask').map((m) => {
    const r = parseMaskPath(m);
    if (typeof r === 'string') throw new UsageError(`--log-mask: ${r}`);
    return r;
  });
  if (logMask.length > 0 && str(p, 'decision-log') === undefined) throw new UsageError('--log-mask applies to the decision log: give --decision-log <file|-> too');
  const say = (line: string) => io.err(`oarc mcp: ${line}\n`);
  let running;
  try {
    running = await startMcpProxy({
      source,
      server: { command, args, env: Object.fromEntries(Object.entries(io.env).filter((e): e is [string, string] => e[1] !== undefined)) },
      facts,
      ...(redis === undefined ? {} : { redis }),
      ...(str(p, 'decision-log') === undefined ? {} : { decisionLog: str(p, 'decision-log') as string, logMask }),
      verbose: bool(p, 'verbose'),
      checkSchemas: bool(p, 'check-schemas'),
      say,
    });
  } catch (e) {
    if (e instanceof McpStartError && e.message === 'the pack did not load (see above)') return EXIT_INPUT;
    if (e instanceof SdkMissingError) throw new InputError(e.message);
    if (e instanceof McpStartError) throw new InputError(`oarc mcp: ${e.message}`);
    // A Redis that does not answer, a decision log that cannot be opened: the operator's to fix.
    throw new InputError(`oarc mcp: ${oneLine(e).replace(/^oarc: /, '')}`);
  }
  const onSignal = () => void running.close();
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  const side = await running.closed;
  await running.close();
  process.off('SIGTERM', onSignal);
  process.off('SIGINT', onSignal);
  if (side === 'server') {
    say('the server exited');
    return EXIT_INPUT;
  }
  return EXIT_OK;
}
