/**
 * `oarc serve` under load: requests per second and p50 / p99 latency for `POST /v1/decide` at 1,
 * 16 and 64 connections, and decisions per second for `POST /v1/decide/batch` with 100
 * occurrences per request — beside the same load on the HTTP floor (bench/serve-floor.ts: parse
 * the body, answer a constant decision), measured in one run on loopback.
 *
 * Both servers are child processes (the built CLI, the built floor); the load generator,
 * autocannon, runs in this one. The pack is examples/gateway; the traffic 1,024 tool calls over 64
 * sessions, each repeated: after the first pass COUNT_REPEATS has counted every call twice and
 * BLOCK_REPEAT blocks it, so the steady state the rows measure is a block decided after three
 * rules and a counter read. The floor answers that steady-state decision's bytes.
 *
 * How the numbers are made, on a 2-core machine whose neighbours move req/s by ±20 % from one
 * second to the next:
 * - each server is warmed first (every route, untimed), so the rows are not JIT warm-up;
 * - each row is ROUNDS rounds, floor and service measured back to back in each round (the order
 *   alternating), and the ratio is the median of the rounds' ratios — a pair shares its
 *   neighbours, so a round's ratio is steadier than either number;
 * - req/s, latencies and CPU are the medians over the rounds.
 * Beside req/s, each row has the server's CPU time per request (user + system, from
 * /proc/<pid>/stat on Linux): req/s moves with the neighbours, while CPU per request mostly
 * measures the server's own work.
 *
 * Usage: npm run bench:serve [-- --quick]
 *   --quick  one round of one second per row (smoke run; bench/results/serve.json not written)
 * Markdown to stdout, progress to stderr; writes bench/results/serve.json.
 */
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../examples/root.js';
import { median } from './stats.js';

const ROOT = packageRoot();
const GW = join(ROOT, 'examples', 'gateway');
const SESSIONS = 64;
const occurrence = (i: number) => ({ anchor: 'tool.pre_invoke', session_id: `s${i % SESSIONS}`, tool_call: { name: 'read', arguments: { path: `/workspace/src/file${i}.ts` } } });

/** One measurement: one server, one route and connection count, one round. */
interface Sample {
  requestsPerSecond: number;
  p50ms: number;
  p99ms: number;
  /** Server CPU (user + system) per request, µs; undefined where /proc is not there to read. */
  serverCpuUsPerRequest: number | undefined;
  errors: number;
}

/** A row of the table: the medians of its rounds, for the floor and for the service. */
interface Row {
  route: string;
  connections: number;
  /** Occurrences per request. */
  per: number;
  floor: Sample[];
  oarc: Sample[];
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

const ROUNDS = 7;

type Server = Awaited<ReturnType<typeof start>>;

async function measure(server: Server, path: string, connections: number, duration: number, bodies: string[]): Promise<Sample> {
  const before = cpuMicros(server.proc.pid);
  const r = await load(server.url, path, connections, duration, bodies);
  const after = cpuMicros(server.proc.pid);
  const serverCpuUsPerRequest = before === undefined || after === undefined || r.requests.total === 0 ? undefined : (after - before) / r.requests.total;
  return { requestsPerSecond: r.requests.average, p50ms: r.latency.p50, p99ms: r.latency.p99, serverCpuUsPerRequest, errors: r.errors + r.non2xx };
}

const med = (xs: Sample[], f: (s: Sample) => number | undefined): number | undefined => {
  const v = xs.map(f).filter((x): x is number => x !== undefined);
  return v.length === 0 ? undefined : median(v);
};

/** The median over the rounds of each round's service / floor req/s. */
const ratio = (row: Row) => median(row.oarc.map((o, i) => o.requestsPerSecond / (row.floor[i] as Sample).requestsPerSecond));

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const duration = quick ? 1 : 3;
  const rounds = quick ? 1 : ROUNDS;
  const say = (s: string) => process.stderr.write(`${s}\n`);
  const oarc = await start([join(ROOT, 'dist', 'bin', 'oarc.js'), 'serve', join(GW, 'rules.yaml'), '--capability', join(GW, 'capability.yaml'), '--detectors', join(GW, 'detectors.mjs'), '--port', '0'], /listening on (http:\/\/[^\s]+)/, 'stderr');
  const singles = Array.from({ length: 1024 }, (_, i) => JSON.stringify(occurrence(i)));
  const batches = Array.from({ length: 64 }, (_, b) => JSON.stringify(Array.from({ length: 100 }, (_, i) => occurrence(b * 100 + i))));
  const plan: [string, number, string[], number][] = [['/v1/decide', 1, singles, 1], ['/v1/decide', 16, singles, 1], ['/v1/decide', 64, singles, 1], ['/v1/decide/batch', 16, batches, 100]];
  let floor: Server | undefined;
  const rows: Row[] = [];
  try {
    // Warm the service on both routes measured (which also brings every call of the traffic to
    // its steady state, the repeat block), then take the decision the floor answers from it.
    say(`warming oarc serve, ${quick ? 1 : 3} s a route`);
    for (const [path, , bodies] of [plan[1], plan[3]] as const) await load(oarc.url, path, 16, quick ? 1 : 3, bodies);
    const sample = await (await fetch(`${oarc.url}/v1/decide`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: singles[0] })).text();
    floor = await start([join(ROOT, 'dist', 'bench', 'serve-floor.js'), sample], /^(\d+)\n/, 'stdout');
    say(`warming the floor, ${quick ? 1 : 3} s a route`);
    for (const [path, , bodies] of [plan[1], plan[3]] as const) await load(floor.url, path, 16, quick ? 1 : 3, bodies);
    const targets = { floor, oarc };
    for (const [path, connections, bodies, per] of plan) {
      const row: Row = { route: path, connections, per, floor: [], oarc: [] };
      for (let round = 0; round < rounds; round++) {
        // Back to back, the order alternating, so drift on a shared machine hits both alike.
        for (const which of round % 2 === 0 ? (['floor', 'oarc'] as const) : (['oarc', 'floor'] as const)) {
          say(`${which === 'oarc' ? 'oarc serve' : 'node:http floor'} ${path} × ${connections} connections, round ${round + 1}/${rounds}, ${duration} s`);
          row[which].push(await measure(targets[which], path, connections, duration, bodies));
        }
      }
      rows.push(row);
    }
  } finally {
    oarc.proc.kill('SIGTERM');
    floor?.proc.kill('SIGTERM');
  }
  const fmt = (n: number | undefined) => (n === undefined ? '–' : Math.round(n).toLocaleString('en-US'));
  const ms = (n: number | undefined) => (n === undefined ? '–' : String(n));
  const lines = [
    '| route | connections | floor req/s | oarc serve req/s | ratio (median of rounds) | floor p50 / p99 ms | oarc serve p50 / p99 ms | server CPU µs/req floor / oarc | decisions/s |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const row of rows) {
    const [f, o] = [row.floor, row.oarc];
    const rps = (xs: Sample[]) => med(xs, (s) => s.requestsPerSecond);
    lines.push(
      `| \`${row.route}\` | ${row.connections} | ${fmt(rps(f))} | ${fmt(rps(o))} | ${Math.round(100 * ratio(row))}% | ${ms(med(f, (s) => s.p50ms))} / ${ms(med(f, (s) => s.p99ms))} | ${ms(med(o, (s) => s.p50ms))} / ${ms(med(o, (s) => s.p99ms))} | ${fmt(med(f, (s) => s.serverCpuUsPerRequest))} / ${fmt(med(o, (s) => s.serverCpuUsPerRequest))} | ${fmt((rps(o) ?? 0) * row.per)} |`,
    );
  }
  const errors = rows.reduce((a, r) => a + [...r.floor, ...r.oarc].reduce((b, s) => b + s.errors, 0), 0);
  process.stdout.write(`${lines.join('\n')}\n\n${rounds} rounds of ${duration} s per row.${errors > 0 ? `\n\n${errors} requests failed or were not 2xx` : ''}\n`);
  if (!quick) {
    mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
    const machine = { node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model ?? '', loadavg: loadavg() };
    const summary = rows.map((r) => ({ route: r.route, connections: r.connections, ratio: ratio(r), floor: r.floor, oarc: r.oarc }));
    writeFileSync(join(ROOT, 'bench', 'results', 'serve.json'), `${JSON.stringify({ date: new Date().toISOString(), rounds, duration, machine, rows: summary }, null, 2)}\n`);
  }
  if (errors > 0) process.exitCode = 1;
}

await main();
