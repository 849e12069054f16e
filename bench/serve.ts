/**
 * `oarc serve` under load: requests per second and p50 / p99 latency for `POST /v1/decide` at 1,
 * 16 and 64 connections, and decisions per second for `POST /v1/decide/batch` with 100
 * occurrences per request — beside the same load on the HTTP floor (bench/serve-floor.ts: parse
 * the body, answer a constant decision), measured in one run on loopback.
 *
 * Both servers are child processes (the built CLI, the built floor); the load generator,
 * autocannon, runs in this one. The pack is examples/gateway; the occurrence a tool call that
 * COUNT_REPEATS counts (one counter write per decision) over 64 sessions. Servers and load share
 * the machine's cores, as they do on any loopback measurement.
 *
 * Beside req/s, each row has the server's CPU time per request (user + system, from
 * /proc/<pid>/stat on Linux): on a machine shared with the load generator and other work, req/s
 * moves with the neighbours, while CPU per request mostly measures the server's own work.
 *
 * Usage: npm run bench:serve [-- --quick]
 *   --quick  one second per measurement (smoke run; bench/results/serve.json not written)
 * Markdown to stdout, progress to stderr; writes bench/results/serve.json.
 */
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../examples/root.js';

const ROOT = packageRoot();
const GW = join(ROOT, 'examples', 'gateway');
const SESSIONS = 64;
const occurrence = (i: number) => ({ anchor: 'tool.pre_invoke', session_id: `s${i % SESSIONS}`, tool_call: { name: 'read', arguments: { path: `/workspace/src/file${i}.ts` } } });

interface Row {
  target: 'oarc serve' | 'node:http floor';
  route: string;
  connections: number;
  requestsPerSecond: number;
  decisionsPerSecond: number;
  p50ms: number;
  p99ms: number;
  /** Server CPU (user + system) per request, µs; undefined where /proc is not there to read. */
  serverCpuUsPerRequest: number | undefined;
  errors: number;
}

/** A child's CPU time so far in µs (utime + stime, in clock ticks of 10 ms), or undefined off Linux. */
function cpuMicros(pid: number | undefined): number | undefined {
  const file = `/proc/${pid}/stat`;
  if (pid === undefined || !existsSync(file)) return undefined;
  // The fields after the command name (which may hold spaces) start at the state, field 3.
  const stat = readFileSync(file, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** Start a child that prints where it listens; resolve with its URL. */
function start(cmd: string[], find: RegExp, stream: 'stdout' | 'stderr'): Promise<{ url: string; proc: ChildProcess }> {
  const proc = spawn(process.execPath, cmd, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    proc[stream]?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = find.exec(out);
      if (m) resolve({ url: m[1]!.startsWith('http') ? m[1]! : `http://127.0.0.1:${m[1]}`, proc });
    });
    proc.once('exit', (code) => reject(new Error(`${cmd.join(' ')} exited ${code}: ${out}`)));
  });
}

async function load(url: string, path: string, connections: number, duration: number, bodies: string[]): Promise<autocannon.Result> {
  let n = 0;
  return autocannon({
    url: `${url}${path}`,
    connections,
    duration,
    requests: [{ method: 'POST', headers: { 'content-type': 'application/json' }, setupRequest: (req) => ({ ...req, body: bodies[n++ % bodies.length] }) }],
  });
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const duration = quick ? 1 : 8;
  const say = (s: string) => process.stderr.write(`${s}\n`);
  const oarc = await start([join(ROOT, 'dist', 'bin', 'oarc.js'), 'serve', join(GW, 'rules.yaml'), '--capability', join(GW, 'capability.yaml'), '--detectors', join(GW, 'detectors.mjs'), '--port', '0'], /listening on (http:\/\/[^\s]+)/, 'stderr');
  const sample = await (await fetch(`${oarc.url}/v1/decide`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(occurrence(0)) })).text();
  const floor = await start([join(ROOT, 'dist', 'bench', 'serve-floor.js'), sample], /^(\d+)\n/, 'stdout');
  const singles = Array.from({ length: 1024 }, (_, i) => JSON.stringify(occurrence(i)));
  const batches = Array.from({ length: 64 }, (_, b) => JSON.stringify(Array.from({ length: 100 }, (_, i) => occurrence(b * 100 + i))));
  const rows: Row[] = [];
  try {
    const plan: [string, number, string[], number][] = [['/v1/decide', 1, singles, 1], ['/v1/decide', 16, singles, 1], ['/v1/decide', 64, singles, 1], ['/v1/decide/batch', 16, batches, 100]];
    for (const [path, connections, bodies, per] of plan) {
      // Interleaved: the floor, then the service, for each load, so drift on a shared machine hits both.
      for (const [target, server] of [['node:http floor', floor], ['oarc serve', oarc]] as const) {
        say(`${target} ${path} × ${connections} connections, ${duration} s`);
        const before = cpuMicros(server.proc.pid);
        const r = await load(server.url, path, connections, duration, bodies);
        const after = cpuMicros(server.proc.pid);
        const serverCpuUsPerRequest = before === undefined || after === undefined || r.requests.total === 0 ? undefined : (after - before) / r.requests.total;
        rows.push({ target, route: path, connections, requestsPerSecond: r.requests.average, decisionsPerSecond: r.requests.average * per, p50ms: r.latency.p50, p99ms: r.latency.p99, serverCpuUsPerRequest, errors: r.errors + r.non2xx });
      }
    }
  } finally {
    oarc.proc.kill('SIGTERM');
    floor.proc.kill('SIGTERM');
  }
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  const cpu = (r: Row) => (r.serverCpuUsPerRequest === undefined ? '–' : r.serverCpuUsPerRequest.toFixed(0));
  const lines = ['| route | connections | floor req/s | oarc serve req/s | ratio | floor p50 / p99 ms | oarc serve p50 / p99 ms | server CPU µs/req floor / oarc | decisions/s |', '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |'];
  for (let i = 0; i < rows.length; i += 2) {
    const [f, o] = [rows[i]!, rows[i + 1]!];
    lines.push(`| \`${o.route}\` | ${o.connections} | ${fmt(f.requestsPerSecond)} | ${fmt(o.requestsPerSecond)} | ${Math.round((100 * o.requestsPerSecond) / f.requestsPerSecond)}% | ${f.p50ms} / ${f.p99ms} | ${o.p50ms} / ${o.p99ms} | ${cpu(f)} / ${cpu(o)} | ${fmt(o.decisionsPerSecond)} |`);
  }
  const errors = rows.reduce((a, r) => a + r.errors, 0);
  process.stdout.write(`${lines.join('\n')}\n${errors > 0 ? `\n${errors} requests failed or were not 2xx\n` : ''}`);
  if (!quick) {
    mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
    const machine = { node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model ?? '', loadavg: loadavg() };
    writeFileSync(join(ROOT, 'bench', 'results', 'serve.json'), `${JSON.stringify({ date: new Date().toISOString(), duration, machine, rows }, null, 2)}\n`);
  }
}

await main();
