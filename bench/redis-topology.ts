/**
 * Real Redis topologies for the tests (test/redis-cluster) and bench/redis-topologies.ts (nothing
 * is mocked), on loopback ports from 47000 up (the CI
 * server is on 46379), each node with its own temporary directory:
 *
 *   const c = await startCluster();    // 3 primaries + 3 replicas, `redis-cli --cluster create`
 *   const s = await startSentinel();   // 1 primary + 1 replica + 3 Sentinels (`redis-server --sentinel`)
 *   await c.kill9(port); await c.restart(port); c.pause(port); c.resume(port);
 *   await c.stop();
 *
 * Torn down however the run ends: `stop()` in the test's afterAll; a process `exit` hook that
 * SIGKILLs every server still running; and, for a test process that is itself killed, a watchdog
 * shell holding a pipe from this process — when the pipe closes it kills every pid listed in the
 * topology's directory and removes the directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const isSet = (v: string | undefined): v is string => v !== undefined && v !== '';
export const REDIS_SERVER = isSet(process.env.OARC_REDIS_SERVER) ? process.env.OARC_REDIS_SERVER : 'redis-server';
export const REDIS_CLI = process.env.OARC_REDIS_CLI !== undefined && process.env.OARC_REDIS_CLI !== '' ? process.env.OARC_REDIS_CLI : 'redis-cli';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function waitFor(what: string, ms: number, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`redis topology: timed out after ${ms} ms waiting for ${what}`);
    await sleep(50);
  }
}

/** Is nothing listening on 127.0.0.1:port (and could we listen there)? */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** The first base port from `from` (in steps of 20) where `count` ports — and, for a cluster, their bus ports (+10000) — are free. */
async function freeRange(from: number, count: number, bus: boolean): Promise<number> {
  for (let base = from; base < from + 2000; base += 20) {
    let ok = true;
    for (let i = 0; i < count && ok; i++) ok = (await portFree(base + i)) && (!bus || (await portFree(base + i + 10000)));
    if (ok) return base;
  }
  throw new Error(`redis topology: no ${count} free loopback ports from ${from}`);
}

function encode(args: readonly string[]): string {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
}

/** One command on a fresh connection: the raw RESP reply (read until it ends a line); rejects on a refused connection. */
export function rawCommand(port: number, args: readonly string[], timeoutMs = 2000): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = createConnection({ host: '127.0.0.1', port });
    let data = '';
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`redis on port ${port}: no reply to ${args[0]} within ${timeoutMs} ms`));
    }, timeoutMs);
    sock.setEncoding('utf8');
    sock.on('connect', () => sock.write(encode(args)));
    sock.on('data', (d: string) => {
      data += d;
      if (data.endsWith('\r\n')) {
        clearTimeout(timer);
        sock.end();
        resolve(data);
      }
    });
    sock.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

/** A command's reply as text (RESP simple/bulk/integer; arrays flattened, one element a line). */
export async function cmd(port: number, ...args: (string | number)[]): Promise<string> {
  const raw = await rawCommand(port, args.map(String), 2000);
  return raw
    .split('\r\n')
    .filter((l) => l !== '' && !/^[*$]-?\d+$/.test(l))
    .map((l) => l.replace(/^[+:]/, ''))
    .join('\n');
}

export interface Node {
  readonly port: number;
  readonly pid: number;
  readonly running: boolean;
}

interface Proc {
  port: number;
  args: string[];
  proc?: ChildProcess;
  log: string;
}

const everyProc = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of everyProc) {
    try {
      p.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
});

/** A set of redis-server processes sharing one temporary directory, a pid file and a watchdog. */
class Processes {
  readonly dir = mkdtempSync(join(tmpdir(), 'oarc-topology-'));
  private readonly procs = new Map<number, Proc>();
  private readonly watchdog: ChildProcess;

  constructor() {
    // Reads until this process's end of the pipe closes (this process exited, however), then kills
    // every pid in the file and removes the directory.
    this.watchdog = spawn('sh', ['-c', 'cat > /dev/null; for p in $(cat "$0/pids" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done; rm -rf "$0"', this.dir], {
      stdio: ['pipe', 'ignore', 'ignore'],
      detached: true,
    });
    this.watchdog.unref();
    (this.watchdog.stdin as unknown as { unref?: () => void }).unref?.();
  }

  private writePids(): void {
    const pids = [...this.procs.values()].flatMap((p) => (p.proc?.pid !== undefined && p.proc.exitCode === null && p.proc.signalCode === null ? [p.proc.pid] : []));
    writeFileSync(join(this.dir, 'pids'), pids.join('\n'));
  }

  node(port: number): Node {
    const p = this.procs.get(port);
    if (p === undefined) throw new Error(`redis topology: no node on port ${port}`);
    return {
      port,
      get pid() {
        return p.proc?.pid ?? -1;
      },
      get running() {
        return p.proc !== undefined && p.proc.exitCode === null && p.proc.signalCode === null;
      },
    };
  }

  async start(port: number, args: string[]): Promise<void> {
    const p: Proc = this.procs.get(port) ?? { port, args, log: '' };
    this.procs.set(port, p);
    p.log = '';
    const proc = spawn(REDIS_SERVER, p.args, { stdio: ['ignore', 'pipe', 'pipe'] });
    p.proc = proc;
    everyProc.add(proc);
    proc.once('exit', () => everyProc.delete(proc));
    proc.stdout?.on('data', (d: Buffer) => void (p.log += d.toString()));
    proc.stderr?.on('data', (d: Buffer) => void (p.log += d.toString()));
    this.writePids();
    const exited = new Promise<never>((_, reject) => {
      proc.once('exit', (code) => reject(new Error(`redis-server on port ${port} exited (${code}):\n${p.log}`)));
      proc.once('error', (e) => reject(new Error(`cannot run ${REDIS_SERVER} (${e.message}): install Debian's redis-server, or set OARC_REDIS_SERVER to the binary`)));
    });
    exited.catch(() => {});
    await Promise.race([waitFor(`redis on port ${port}`, 10_000, async () => (await cmd(port, 'PING')) === 'PONG'), exited]);
  }

  async kill9(port: number): Promise<void> {
    const proc = this.procs.get(port)?.proc;
    if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) return;
    const gone = new Promise<void>((r) => proc.once('exit', () => r()));
    proc.kill('SIGCONT');
    proc.kill('SIGKILL');
    await gone;
    this.writePids();
  }

  async restart(port: number): Promise<void> {
    await this.kill9(port);
    const p = this.procs.get(port);
    if (p === undefined) throw new Error(`redis topology: no node on port ${port}`);
    await this.start(port, p.args);
  }

  pause(port: number): void {
    this.procs.get(port)?.proc?.kill('SIGSTOP');
  }

  resume(port: number): void {
    this.procs.get(port)?.proc?.kill('SIGCONT');
  }

  async stop(): Promise<void> {
    await Promise.all([...this.procs.keys()].map((port) => this.kill9(port)));
    rmSync(this.dir, { recursive: true, force: true });
    this.watchdog.stdin?.end();
  }
}

/** `redis-cli` with arguments; resolves with its output, rejects (with the output) on a non-zero exit. */
export function redisCli(args: readonly string[], timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(REDIS_CLI, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => void (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => void (out += d.toString()));
    const t = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.once('error', (e) => {
      clearTimeout(t);
      reject(new Error(`cannot run ${REDIS_CLI} (${e.message}): install Debian's redis-tools (redis-server depends on it), or set OARC_REDIS_CLI to the binary`));
    });
    p.once('exit', (code) => {
      clearTimeout(t);
      if (code === 0) resolve(out);
      else reject(new Error(`${REDIS_CLI} ${args.join(' ')} exited ${code}:\n${out}`));
    });
  });
}

/** How the data nodes persist: not at all (the tests), or an append-only file fsynced every second (the benchmark, a common production setting). */
export interface TopologyOptions {
  appendfsync?: 'everysec';
}

const common = (port: number, dir: string, o: TopologyOptions = {}) => [
  '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '',
  ...(o.appendfsync === undefined ? ['--appendonly', 'no'] : ['--appendonly', 'yes', '--appendfsync', o.appendfsync]),
  '--daemonize', 'no', '--loglevel', 'warning', '--repl-diskless-sync', 'yes', '--repl-diskless-sync-delay', '0',
];

export interface RedisStandalone {
  readonly port: number;
  readonly url: string;
  stop(): Promise<void>;
}

/** One server, on a free port from 47200 up. */
export async function startStandalone(o: TopologyOptions = {}): Promise<RedisStandalone> {
  const port = await freeRange(47200, 1, false);
  const procs = new Processes();
  try {
    mkdirSync(join(procs.dir, String(port)));
    await procs.start(port, common(port, join(procs.dir, String(port)), o));
  } catch (e) {
    await procs.stop();
    throw e;
  }
  return { port, url: `redis://127.0.0.1:${port}`, stop: () => procs.stop() };
}

/** A field of `INFO` / `CLUSTER INFO` text. */
export function infoField(text: string, field: string): string | undefined {
  return new RegExp(`^${field}:(.*)$`, 'm').exec(text)?.[1]?.trim();
}

/** Is the server on `port` a replica whose link to its primary (on `primary`, when given) is up? One INFO. */
export async function replicaInSync(port: number, primary?: number): Promise<boolean> {
  const info = await cmd(port, 'INFO', 'replication');
  return infoField(info, 'role') === 'slave' && infoField(info, 'master_link_status') === 'up' && (primary === undefined || infoField(info, 'master_port') === String(primary));
}

export interface ClusterNodeInfo {
  id: string;
  port: number;
  role: 'master' | 'slave';
  /** For a replica, the id of its primary. */
  master: string | undefined;
  failed: boolean;
  /** Slot ranges a primary serves, `[from, to]`. */
  slots: [number, number][];
}

/** What a test does to a topology's servers: kill and restart, pause and resume one, stop them all. */
export interface TopologyProcesses {
  kill9(port: number): Promise<void>;
  restart(port: number): Promise<void>;
  pause(port: number): void;
  resume(port: number): void;
  stop(): Promise<void>;
}

export interface RedisClusterTopology extends TopologyProcesses {
  readonly ports: readonly number[];
  /** `redis+cluster://127.0.0.1:p1,…` — every node as a seed. */
  readonly url: string;
  node(port: number): Node;
  /** CLUSTER NODES as one node sees it. */
  nodes(from?: number): Promise<ClusterNodeInfo[]>;
  /** The port of the primary serving a slot. */
  primaryOf(slot: number): Promise<number>;
  /** Every running node reports cluster_state:ok and the same view of which primary serves each slot. */
  healthy(): Promise<boolean>;
}

/**
 * 3 primaries + 3 replicas. `cluster-node-timeout` is 1000 ms, so a dead primary is failed over
 * in about 2 s; `cluster-replica-validity-factor 0` lets any replica take over however long its
 * link was down (the tests kill primaries on purpose).
 */
export async function startCluster(o: TopologyOptions = {}): Promise<RedisClusterTopology> {
  const base = await freeRange(47000, 6, true);
  const ports = Array.from({ length: 6 }, (_, i) => base + i);
  const procs = new Processes();
  try {
    await Promise.all(
      ports.map((port) => {
        const dir = join(procs.dir, String(port));
        mkdirSync(dir);
        return procs.start(port, [
          ...common(port, dir, o),
          '--cluster-enabled', 'yes',
          '--cluster-config-file', join(dir, 'nodes.conf'),
          '--cluster-node-timeout', '1000',
          '--cluster-replica-validity-factor', '0',
          '--cluster-require-full-coverage', 'no',
        ]);
      }),
    );
    await redisCli(['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '1', '--cluster-yes']);
  } catch (e) {
    await procs.stop();
    throw e;
  }

  const nodes = async (from = ports[0] as number): Promise<ClusterNodeInfo[]> => {
    const text = await cmd(from, 'CLUSTER', 'NODES');
    return text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => {
        const f = l.split(' ');
        const flags = (f[2] as string).split(',');
        const slots: [number, number][] = [];
        for (const s of f.slice(8)) {
          if (s.startsWith('[')) continue; // a slot being migrated
          const [a, b] = s.split('-');
          slots.push([Number(a), Number(b ?? a)]);
        }
        return {
          id: f[0] as string,
          port: Number((f[1] as string).split(':')[1]?.split('@')[0]),
          role: flags.includes('master') ? 'master' : 'slave',
          master: f[3] === '-' ? undefined : f[3],
          failed: flags.includes('fail') || flags.includes('fail?'),
          slots,
        } satisfies ClusterNodeInfo;
      });
  };

  const topology: RedisClusterTopology = {
    ports,
    url: `redis+cluster://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`,
    node: (port) => procs.node(port),
    nodes,
    async primaryOf(slot) {
      const running = ports.find((p) => procs.node(p).running) as number;
      for (const n of await nodes(running)) if (n.role === 'master' && !n.failed && n.slots.some(([a, b]) => slot >= a && slot <= b)) return n.port;
      throw new Error(`redis topology: no primary serves slot ${slot}`);
    },
    async healthy() {
      const running = ports.filter((p) => procs.node(p).running);
      const views = new Set<string>();
      for (const p of running) {
        if (infoField(await cmd(p, 'CLUSTER', 'INFO'), 'cluster_state') !== 'ok') return false;
        const ns = await nodes(p);
        if (ns.some((n) => n.failed && procs.node(n.port).running)) return false;
        views.add(JSON.stringify(ns.filter((n) => n.role === 'master' && n.slots.length > 0).map((n) => [n.port, n.slots]).sort()));
      }
      return views.size === 1;
    },
    kill9: (port) => procs.kill9(port),
    restart: (port) => procs.restart(port),
    pause: (port) => procs.pause(port),
    resume: (port) => procs.resume(port),
    stop: () => procs.stop(),
  };
  try {
    await waitFor('the cluster to agree on its slots', 30_000, () => topology.healthy());
    // Every replica synchronised with its primary, so a failover has a replica to promote.
    await waitFor('every replica to be in sync', 30_000, async () => {
      for (const n of await nodes()) if (n.role === 'slave' && !(await replicaInSync(n.port))) return false;
      return true;
    });
  } catch (e) {
    await procs.stop();
    throw e;
  }
  return topology;
}

export interface RedisSentinelTopology extends TopologyProcesses {
  readonly name: string;
  /** [primary, replica] data ports at the start. */
  readonly dataPorts: readonly number[];
  readonly sentinelPorts: readonly number[];
  /** `redis+sentinel://127.0.0.1:s1,…/<name>`. */
  readonly url: string;
  node(port: number): Node;
  /** The primary's port, as the Sentinels report it. */
  primary(): Promise<number>;
  /**
   * Every running Sentinel names the same primary, which says it is one, and the other data node
   * replicates it with its link up: what a failover test starts from (the one before it may have
   * left a Sentinel still reconfiguring).
   */
  settled(): Promise<boolean>;
}

/**
 * A primary, one replica and three Sentinels (quorum 2), `down-after-milliseconds` 500 and
 * `failover-timeout` 2000, so a primary that dies or stops answering is replaced in 1–2 s.
 */
export async function startSentinel(o: TopologyOptions = {}): Promise<RedisSentinelTopology> {
  const base = await freeRange(47100, 5, false);
  const [primary, replica, ...sentinels] = Array.from({ length: 5 }, (_, i) => base + i) as [number, number, number, number, number];
  const name = 'oarcmaster';
  const procs = new Processes();
  try {
    for (const port of [primary, replica]) mkdirSync(join(procs.dir, String(port)));
    await procs.start(primary, common(primary, join(procs.dir, String(primary)), o));
    // A restarted node comes back as a replica of the first primary; Sentinel reconfigures it to follow whichever is primary then.
    await procs.start(replica, [...common(replica, join(procs.dir, String(replica)), o), '--replicaof', '127.0.0.1', String(primary)]);
    await waitFor('the replica to sync', 15_000, async () => infoField(await cmd(replica, 'INFO', 'replication'), 'master_link_status') === 'up');
    await Promise.all(
      sentinels.map((port) => {
        const dir = join(procs.dir, String(port));
        mkdirSync(dir);
        const conf = join(dir, 'sentinel.conf');
        writeFileSync(
          conf,
          [
            `port ${port}`,
            'bind 127.0.0.1',
            `dir ${dir}`,
            `sentinel monitor ${name} 127.0.0.1 ${primary} 2`,
            `sentinel down-after-milliseconds ${name} 500`,
            `sentinel failover-timeout ${name} 2000`,
            `sentinel parallel-syncs ${name} 1`,
            '',
          ].join('\n'),
        );
        return procs.start(port, [conf, '--sentinel', '--daemonize', 'no', '--loglevel', 'warning']);
      }),
    );
    // Every Sentinel knows the replica and the other Sentinels before any test fails the primary over.
    await waitFor('the Sentinels to discover each other and the replica', 20_000, async () => {
      for (const s of sentinels) {
        const info = await cmd(s, 'SENTINEL', 'MASTER', name);
        const lines = info.split('\n');
        const field = (k: string) => lines[lines.indexOf(k) + 1];
        if (field('num-slaves') !== '1' || field('num-other-sentinels') !== '2') return false;
      }
      return true;
    });
  } catch (e) {
    await procs.stop();
    throw e;
  }
  return {
    name,
    dataPorts: [primary, replica],
    sentinelPorts: sentinels,
    url: `redis+sentinel://${sentinels.map((p) => `127.0.0.1:${p}`).join(',')}/${name}`,
    node: (port) => procs.node(port),
    async primary() {
      for (const s of sentinels) {
        if (!procs.node(s).running) continue;
        const [, port] = (await cmd(s, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)).split('\n');
        return Number(port);
      }
      throw new Error('redis topology: no Sentinel running');
    },
    async settled() {
      const named = new Set<string>();
      for (const s of sentinels) {
        if (procs.node(s).running) named.add((await cmd(s, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)).split('\n')[1] as string);
      }
      if (named.size !== 1) return false;
      const p = Number([...named][0]);
      if (infoField(await cmd(p, 'INFO', 'replication'), 'role') !== 'master') return false;
      const other = [primary, replica].find((x) => x !== p) as number;
      return replicaInSync(other, p);
    },
    kill9: (port) => procs.kill9(port),
    restart: (port) => procs.restart(port),
    pause: (port) => procs.pause(port),
    resume: (port) => procs.resume(port),
    stop: () => procs.stop(),
  };
}

/** For tests that need a raw socket: resolves when a TCP connection to the port is refused. */
export function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });
}
