/**
 * `oarc serve`: the decision service (serve/) from the command line — flags, the service log on
 * stderr, SIGHUP and `--watch` reloads, SIGTERM / SIGINT drain.
 */
import { readFileSync } from 'node:fs';
import { parseMaskPath, type MaskPath } from '../../serve/decision-log.js';
import { packInputs, startService, type PackSource } from '../../serve/index.js';
import { parseBuckets } from '../../serve/metrics.js';
import { watchInputs } from '../../watch/index.js';
import { bool, parse, str, strs } from '../args.js';
import { redisConfigFrom, REDIS_OPTIONS } from '../redis-options.js';
import { EXIT_INPUT, EXIT_OK, InputError, UsageError, errorCode, oneLine } from '../errors.js';
import type { Io } from '../output.js';
import { PACK_OPTIONS } from '../pack.js';
import { DEFAULT_IDLE_MS, DEFAULT_MAX_COUNTERS, DEFAULT_MAX_COUNTERS_PER_SESSION, DEFAULT_MAX_SESSIONS } from '../../runtime/session-table.js';

const OPTIONS = {
  ...PACK_OPTIONS,
  detectors: { type: 'string' },
  'injection-corpus': { type: 'string', multiple: true },
  host: { type: 'string' },
  port: { type: 'string' },
  watch: { type: 'boolean' },
  ...REDIS_OPTIONS,
  'decision-log': { type: 'string' },
  'log-mask': { type: 'string', multiple: true },
  'token-file': { type: 'string' },
  'max-body': { type: 'string' },
  'max-sessions': { type: 'string' },
  'session-idle': { type: 'string' },
  'max-counters': { type: 'string' },
  'max-counters-per-session': { type: 'string' },
  'latency-buckets': { type: 'string' },
} as const;

const BUNDLE_FILE = /\.(mjs|js)$/i;

export function packSource(positionals: string[], capability: string | undefined, configs: string[], detectors: string | undefined, corpus: string[]): PackSource {
  if (positionals.length === 0) throw new UsageError('no bundle or rule files given');
  const d = { ...(detectors === undefined ? {} : { detectors }), ...(corpus.length === 0 ? {} : { injectionCorpus: corpus }) };
  if (positionals.length === 1 && BUNDLE_FILE.test(positionals[0] as string)) {
    if (configs.length > 0) throw new UsageError('--config applies to rule documents; a compiled bundle already carries its configuration (recompile it with --config)');
    return { kind: 'bundle', file: positionals[0] as string, ...d };
  }
  if (positionals.some((f) => BUNDLE_FILE.test(f))) throw new UsageError('give either one compiled bundle (.mjs/.js) or rule documents, not both');
  if (capability === undefined) throw new UsageError('missing --capability <file> (required with rule documents)');
  return { kind: 'rules', rules: positionals, capability, configs, ...d };
}

function integer(text: string | undefined, flag: string, fallback: number, min: number, max: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < min || n > max) throw new UsageError(`--${flag} takes a whole number from ${min} to ${max}, not \`${text}\``);
  return n;
}

function readToken(file: string): string {
  let text;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (e) {
    throw new InputError(`oarc serve: cannot read --token-file ${file}: ${oneLine(e)}`);
  }
  if (text === '' || /\s/.test(text)) throw new InputError(`oarc serve: --token-file ${file} must hold one token: a single line with no spaces`);
  return text;
}

export async function serveCommand(argv: readonly string[], io: Io): Promise<number> {
  const p = parse(argv, OPTIONS);
  const source = packSource(p.positionals, str(p, 'capability'), strs(p, 'config'), str(p, 'detectors'), strs(p, 'injection-corpus'));
  const masks: MaskPath[] = strs(p, 'log-mask').map((m) => {
    const r = parseMaskPath(m);
    if (typeof r === 'string') throw new UsageError(`--log-mask: ${r}`);
    return r;
  });
  if (masks.length > 0 && str(p, 'decision-log') === undefined) throw new UsageError('--log-mask applies to the decision log: give --decision-log <file|-> too');
  const bucketsText = str(p, 'latency-buckets');
  const buckets = bucketsText === undefined ? undefined : parseBuckets(bucketsText);
  if (typeof buckets === 'string') throw new UsageError(`--latency-buckets: ${buckets}`);
  const tokenFile = str(p, 'token-file');
  const redis = redisConfigFrom(p);
  const say = (line: string) => io.err(`oarc serve: ${line}\n`);
  const port = integer(str(p, 'port'), 'port', 8181, 0, 65535);
  const maxBodyBytes = integer(str(p, 'max-body'), 'max-body', 1024 * 1024, 1, 2 ** 31);
  const sessions = {
    maxSessions: integer(str(p, 'max-sessions'), 'max-sessions', DEFAULT_MAX_SESSIONS, 1, 2 ** 31),
    idleMs: integer(str(p, 'session-idle'), 'session-idle', DEFAULT_IDLE_MS / 1000, 1, 10 * 365 * 86_400) * 1000,
    maxCounters: integer(str(p, 'max-counters'), 'max-counters', DEFAULT_MAX_COUNTERS, 1, 2 ** 31),
    maxCountersPerSession: integer(str(p, 'max-counters-per-session'), 'max-counters-per-session', DEFAULT_MAX_COUNTERS_PER_SESSION, 1, 2 ** 31),
  };
  const token = tokenFile === undefined ? undefined : readToken(tokenFile);

  let service;
  try {
    service = await startService({
      source,
      host: str(p, 'host') ?? '127.0.0.1',
      port,
      maxBodyBytes,
      sessions,
      say,
      ...(redis === undefined ? {} : { redis }),
      ...(str(p, 'decision-log') === undefined ? {} : { decisionLog: { target: str(p, 'decision-log') as string, mask: masks } }),
      ...(token === undefined ? {} : { token }),
      ...(buckets === undefined ? {} : { latencyBuckets: buckets }),
    });
  } catch (e) {
    // A port in use, a Redis that does not answer: the operator's to fix, said in one line.
    throw new InputError(`oarc serve: ${oneLine(e).replace(/^oarc: /, '')}${startHint(e)}`);
  }
  const watching = bool(p, 'watch');
  if (!service.firstLoad.ok && !watching) {
    await service.drain();
    return EXIT_INPUT;
  }

  // --watch: reload after a change to any input; changes within 100 ms of each other are one
  // reload. The inputs stay watched while a reload reads them: a file saved again meanwhile gets
  // one more reload after it, never a service left serving what is no longer on disk.
  let stopWatch = () => undefined as void;
  if (watching) {
    let settling: NodeJS.Timeout | undefined;
    let reloading = false;
    let again: string | undefined;
    const reload = (file: string) => {
      if (reloading) {
        again = file;
        return;
      }
      reloading = true;
      say(`${file} changed; reloading`);
      void service.reload().then(() => {
        reloading = false;
        const next = again;
        again = undefined;
        if (next !== undefined) reload(next);
      });
    };
    stopWatch = watchInputs(packInputs(source), (file) => {
      clearTimeout(settling);
      settling = setTimeout(() => reload(file), 100);
    });
    const stopInputs = stopWatch;
    stopWatch = () => {
      clearTimeout(settling);
      stopInputs();
    };
  }
  const onHup = () => {
    say('SIGHUP: reloading');
    void service.reload();
  };
  process.on('SIGHUP', onHup);
  // [OAR-FIRE-9] a data loss the Redis store detected keeps every counting rule failing closed
  // until an operator says so: SIGUSR2 is that, after looking at GET /v1/health.
  const onUsr2 = () => {
    void service.acknowledgeDataLoss().then((done) => {
      if (!done) say('SIGUSR2: no data loss to acknowledge');
    });
  };
  process.on('SIGUSR2', onUsr2);
  const stopped = new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  // Said only once every handler is in place: a supervisor that signals on seeing this line gets
  // a reload or a drain, never the default action (which would end the process mid-request).
  say(`listening on ${service.url}${service.firstLoad.ok ? '' : ' (not ready: the pack did not load; waiting for a change)'}`);
  const signal = await stopped;
  // A SIGHUP while draining is ignored, not left to its default action (ending the process, the
  // requests in flight reset): a handler stays installed until the process exits. The new one is
  // added before the old one goes: with none left for a moment node closes its SIGHUP watcher, and
  // a signal that had arrived but was not yet dispatched would be lost with it. The line is said
  // after, so a supervisor that signals on seeing it meets the new handler.
  const draining = () => say('SIGHUP while draining: ignored');
  process.on('SIGHUP', draining);
  process.off('SIGHUP', onHup);
  say(`${signal}: draining`);
  stopWatch();
  await service.drain();
  say('stopped');
  return EXIT_OK;
}

/** What to do about a start failure Node words only as what happened (`listen EADDRINUSE: …`). */
function startHint(e: unknown): string {
  return errorCode(e) === 'EADDRINUSE' ? ' — pick another --port, or stop what listens there' : '';
}
