/**
 * A real `redis-server` for the tests (nothing is mocked): started on a free loopback port with
 * its own temporary directory, an append-only file fsynced on every write (`--appendfsync always`)
 * and no RDB snapshots, so that a `kill -9` followed by `restart()` on the same port keeps every
 * write the server acknowledged.
 *
 *   const srv = await startRedis();      // srv.url, srv.port
 *   await srv.kill9(); await srv.restart();
 *   srv.pause(); srv.resume();           // SIGSTOP / SIGCONT: a server that stops answering
 *   const b = srv.backup(); …; await srv.restoreFrom(b);   // a restore of older data
 *   await srv.stop();
 *
 * `sharedRedisUrl()` is `OARC_REDIS_URL` when set (`.ci/run` starts one server for the whole run),
 * for tests that do not kill or pause the server.
 *
 * A machine without redis-server still runs the rest of the suite: a Redis test file's body is
 * `describeRedis(need, name, body)`, which skips it where `redisRuns(need)` is false, and
 * `redisNotice()` is the one line the run prints about it (test/support/notices.ts). Under `CI`
 * nothing is skipped: a missing server fails those tests, with the error `startRedis` gives.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { describe } from 'vitest';
import { rawCommand } from '../../bench/redis-topology.js';

export { rawCommand };

const isSet = (v: string | undefined): v is string => v !== undefined && v !== '';

export const REDIS_SERVER = isSet(process.env.OARC_REDIS_SERVER) ? process.env.OARC_REDIS_SERVER : 'redis-server';

/**
 * What a Redis test file needs: `binary` — a redis-server to start, kill and pause itself; `server`
 * — any server, so `OARC_REDIS_URL` will do; `topology` — redis-server and redis-cli, to build a
 * Redis Cluster and a Sentinel set (test/redis-cluster).
 */
export type RedisNeed = 'binary' | 'server' | 'topology';

const isExecutable = (file: string) => {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** An executable `name` in some directory of PATH, as the shell would find it. */
function onPath(name: string, env: NodeJS.ProcessEnv): boolean {
  return (env.PATH ?? '').split(delimiter).some((dir) => dir !== '' && isExecutable(join(dir, name)));
}

/** `CI` as CI services set it; `CI=false` or `CI=0` is a developer opting out. */
const inCI = (env: NodeJS.ProcessEnv) => isSet(env.CI) && env.CI !== 'false' && env.CI !== '0';

/**
 * Whether the Redis tests needing `need` run here: always under CI (they are mandatory there), and
 * whenever the developer named a server (`OARC_REDIS_SERVER`; `OARC_REDIS_URL` for `server`) — a
 * wrong name then fails loudly instead of skipping; otherwise when redis-server is on PATH.
 */
export function redisRuns(need: RedisNeed, env: NodeJS.ProcessEnv = process.env): boolean {
  if (inCI(env) || isSet(env.OARC_REDIS_SERVER)) return true;
  if (need === 'server' && isSet(env.OARC_REDIS_URL)) return true;
  if (need === 'topology' && !isSet(env.OARC_REDIS_CLI) && !onPath('redis-cli', env)) return false;
  return onPath('redis-server', env);
}

/** `describe` for a Redis test file's body: its tests and hooks run only where `redisRuns(need)`. */
export function describeRedis(need: RedisNeed, name: string, body: () => void): void {
  describe.runIf(redisRuns(need))(name, body);
}

const HOW =
  'install it (apt-get install redis-server) or set OARC_REDIS_SERVER=/path/to/redis-server; CI=true makes them mandatory';

/** The one line a run prints when it skips Redis tests, saying how to run them; undefined when none is skipped. */
export function redisNotice(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (!redisRuns('server', env)) return `redis tests skipped (test/redis): no redis-server on PATH; ${HOW}`;
  if (!redisRuns('binary', env)) return `redis failure tests skipped (test/redis/failure.test.ts kills its own servers, OARC_REDIS_URL cannot serve it): no redis-server on PATH; ${HOW}`;
  if (!redisRuns('topology', env)) return 'redis cluster and sentinel tests skipped (test/redis-cluster): no redis-cli on PATH; install it (apt-get install redis-tools) or set OARC_REDIS_CLI=/path/to/redis-cli; CI=true makes them mandatory';
  return undefined;
}

/**
 * The shared server (`OARC_REDIS_URL`) when there is one, else a server started for the caller;
 * `stop()` stops only a server this started.
 */
export async function sharedOrOwnRedis(): Promise<{ url: string; stop(): Promise<void> }> {
  const shared = sharedRedisUrl();
  if (shared !== undefined) return { url: shared, stop: async () => {} };
  const own = await startRedis();
  return { url: own.url, stop: () => own.stop() };
}

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  readonly dir: string;
  /** The running process (changes on restart). */
  readonly pid: number;
  /** SIGKILL, and wait until the port refuses connections. */
  kill9(): Promise<void>;
  /** Start again on the same port and directory (the append-only file is replayed). */
  restart(): Promise<void>;
  /** SIGSTOP: the server keeps its connections but answers nothing until `resume()`. */
  pause(): void;
  resume(): void;
  /**
   * Copy the data as it is now (the append-only file, fsynced on every write: everything
   * acknowledged so far), as a backup an operator would take; returns where it is.
   */
  backup(): string;
  /** kill -9, replace the data with a `backup()`, and start again: older data restored. */
  restoreFrom(backup: string): Promise<void>;
  /** Send one command over a fresh connection and return the raw RESP reply. */
  command(...args: string[]): Promise<string>;
  /** Stop the server and remove its directory (and its backups). */
  stop(): Promise<void>;
}

/** `OARC_REDIS_URL` when set and non-empty. */
export function sharedRedisUrl(): string | undefined {
  const u = process.env.OARC_REDIS_URL;
  return isSet(u) ? u : undefined;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a !== null ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

async function waitFor(what: string, ms: number, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`redis test server: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function startRedis(): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'oarc-redis-'));
  const port = await freePort();
  let proc: ChildProcess;
  let log = '';

  const launch = async (): Promise<void> => {
    log = '';
    proc = spawn(REDIS_SERVER, [
      '--port', String(port), '--bind', '127.0.0.1', '--dir', dir,
      '--save', '', '--appendonly', 'yes', '--appendfsync', 'always',
      '--daemonize', 'no', '--loglevel', 'warning',
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    proc.stdout?.on('data', (d: Buffer) => void (log += d.toString()));
    proc.stderr?.on('data', (d: Buffer) => void (log += d.toString()));
    const exited = new Promise<never>((_, reject) => {
      proc.once('exit', (code) => reject(new Error(`redis-server exited (${code}):\n${log}`)));
      proc.once('error', (e) => reject(new Error(`cannot run ${REDIS_SERVER} (${e.message}): install Debian's redis-server, or set OARC_REDIS_SERVER to the binary`)));
    });
    exited.catch(() => {});
    await Promise.race([waitFor(`redis-server on port ${port}`, 10_000, async () => (await rawCommand(port, ['PING'], 500)).startsWith('+PONG')), exited]);
  };

  const backups: string[] = [];
  const dead = (p: ChildProcess) =>
    p.exitCode !== null || p.signalCode !== null ? Promise.resolve() : new Promise<void>((r) => p.once('exit', () => r()));

  try {
    await launch();
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  const server: RedisServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    get pid() {
      return proc.pid as number;
    },
    async kill9() {
      proc.kill('SIGCONT');
      proc.kill('SIGKILL');
      await dead(proc);
    },
    async restart() {
      await dead(proc);
      await launch();
    },
    pause() {
      proc.kill('SIGSTOP');
    },
    backup() {
      const to = mkdtempSync(join(tmpdir(), 'oarc-redis-backup-'));
      backups.push(to);
      cpSync(dir, to, { recursive: true });
      return to;
    },
    async restoreFrom(backup: string) {
      proc.kill('SIGCONT');
      proc.kill('SIGKILL');
      await dead(proc);
      for (const f of readdirSync(dir)) rmSync(join(dir, f), { recursive: true, force: true });
      cpSync(backup, dir, { recursive: true });
      await launch();
    },
    resume() {
      proc.kill('SIGCONT');
    },
    command(...args: string[]) {
      return rawCommand(port, args);
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGCONT');
        proc.kill('SIGTERM');
        const t = setTimeout(() => proc.kill('SIGKILL'), 5000);
        await dead(proc);
        clearTimeout(t);
      }
      rmSync(dir, { recursive: true, force: true });
      for (const b of backups.splice(0)) rmSync(b, { recursive: true, force: true });
    },
  };
  return server;
}
