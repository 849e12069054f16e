/**
 * `oarc serve` as a library: start the decision service on a host and port, reload its pack,
 * drain it. The command (bin/commands/serve.ts) adds flags, signals and `--watch` around this.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SessionBound } from '../runtime/session-table.js';
import { DecisionLog, type MaskPath } from './decision-log.js';
import { serveOn } from './http.js';
import { DEFAULT_BUCKETS, Metrics } from './metrics.js';
import type { PackSource } from './pack.js';
import { Service, type ReloadReport } from './service.js';
import { connectRedis, dataLossLine, unresolvedWrites, type RedisConnect, type SharedStore } from './store.js';

export { packInputs, type PackSource } from './pack.js';

export interface ServeOptions {
  source: PackSource;
  host?: string;
  port?: number;
  /** The shared store: a URL (any form `parseRedisTarget` reads) or a parsed target, with its options. */
  redis?: RedisConnect;
  decisionLog?: { target: string; mask?: readonly MaskPath[]; bufferBytes?: number };
  token?: string;
  maxBodyBytes?: number;
  /** The in-memory session bound (counters and activity windows): `--max-sessions`, `--session-idle`. */
  sessions?: SessionBound;
  latencyBuckets?: readonly number[];
  say: (line: string) => void;
}

export interface RunningService {
  readonly url: string;
  readonly port: number;
  /** The first load's report: a service whose first load failed is running, and not ready. */
  readonly firstLoad: ReloadReport;
  reload(): Promise<ReloadReport>;
  /**
   * An operator has seen the data loss the Redis store detected (`GET /v1/health` shows it):
   * counting resumes from what Redis holds. False when there is no store, or no loss.
   */
  acknowledgeDataLoss(): Promise<boolean>;
  /** Stop accepting, finish the requests in flight, flush the decision log, close the store. */
  drain(timeoutMs?: number): Promise<void>;
}

export async function startService(o: ServeOptions): Promise<RunningService> {
  const metrics = new Metrics(o.latencyBuckets ?? DEFAULT_BUCKETS);
  let shared: SharedStore | undefined;
  // A session idle for --session-idle is forgotten in memory and in Redis alike.
  const ttl = o.sessions?.idleMs === undefined ? {} : { ttlSeconds: Math.ceil(o.sessions.idleMs / 1000) };
  // A failed store call is counted; the first one that shows a data loss is said, once per loss.
  let lossSaid = false;
  const storeFailed = () => {
    metrics.storeError();
    const loss = shared?.dataLoss();
    if (loss === undefined || lossSaid) return;
    lossSaid = true;
    o.say(dataLossLine(loss, 'SIGUSR2, or RunningService.acknowledgeDataLoss()'));
  };
  if (o.redis) shared = await connectRedis({ ...o.redis, ...ttl }, undefined, storeFailed);
  let log: DecisionLog | undefined;
  // A log that cannot be opened, a port in use: what was opened for the service is closed, so the
  // process can exit with the message.
  const giveUp = async (e: unknown): Promise<never> => {
    await log?.close();
    await shared?.close();
    throw e;
  };
  if (o.decisionLog) {
    log = await DecisionLog.open({ target: o.decisionLog.target, onDrop: () => metrics.logLineDropped(), say: o.say, ...(o.decisionLog.bufferBytes ? { bufferBytes: o.decisionLog.bufferBytes } : {}) }).catch(giveUp);
  }
  const service = new Service({
    source: o.source,
    metrics,
    say: o.say,
    ...(o.sessions ? { sessions: o.sessions } : {}),
    ...(shared ? { store: shared.store } : {}),
    ...(log ? { log } : {}),
    ...(o.decisionLog?.mask ? { mask: o.decisionLog.mask } : {}),
  });
  const firstLoad = await service.load();

  let inFlight = 0;
  let draining = false;
  let idle: (() => void) | undefined;
  const routes = {
    service,
    metrics,
    maxBodyBytes: o.maxBodyBytes ?? 1024 * 1024,
    say: o.say,
    ...(o.token !== undefined ? { token: o.token } : {}),
    ...(shared !== undefined ? { dataLoss: (shared as SharedStore).dataLoss } : {}),
  };
  // One listener for every response ('close' comes once per response), not a closure per request.
  const closed = () => {
    if (--inFlight === 0) idle?.();
  };
  const server: Server = createServer();
  serveOn(server, routes, (_req, res) => {
    inFlight++;
    // While draining, each response closes its connection, so keep-alive clients move elsewhere.
    if (draining) res.setHeader('connection', 'close');
    res.on('close', closed);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 8181, o.host ?? '127.0.0.1', () => resolve());
  }).catch(giveUp);
  const { port, address, family } = server.address() as AddressInfo;
  const url = `http://${family === 'IPv6' ? `[${address}]` : address}:${port}`;

  return {
    url,
    port,
    firstLoad,
    reload: () => service.load(),
    async acknowledgeDataLoss() {
      if (shared === undefined || !(await shared.acknowledgeDataLoss())) return false;
      lossSaid = false;
      o.say('data loss acknowledged: counting resumes from what Redis holds now');
      return true;
    },
    async drain(timeoutMs = 10_000) {
      draining = true;
      const stopped = new Promise<void>((r) => server.close(() => r()));
      server.closeIdleConnections();
      if (inFlight > 0) {
        const finished = new Promise<void>((r) => (idle = r));
        const late = new Promise<void>((r) => setTimeout(r, timeoutMs).unref());
        await Promise.race([finished, late]);
        if (inFlight > 0) o.say(`drain: ${inFlight} requests still open after ${timeoutMs} ms; closing them`);
      }
      server.closeAllConnections();
      await stopped;
      await log?.close();
      const left = (await shared?.close()) ?? 0;
      if (left > 0) o.say(`drain: ${unresolvedWrites(left)}`);
    },
  };
}
