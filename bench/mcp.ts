/**
 * `oarc mcp` round trip: a `tools/call` of @modelcontextprotocol/server-filesystem's
 * read_text_file through the proxy (the example pack, examples/mcp: four rules at tool.pre_invoke,
 * the secret scanner and a redaction at tool.post_invoke) beside the same call on a direct
 * connection to the same server, in one run. Calls alternate between the two connections, so a
 * slow moment on the shared machine lands on both. The decision log gives the time spent deciding
 * (`latency_ms`, two decisions per call), and a bare byte relay (bench/mcp-floor.ts) what any
 * extra stdio process costs: the proxy's own forwarding is the rest.
 *
 * Usage: npm run bench:mcp [-- --quick]
 *   --quick  100 calls per connection (smoke run; bench/results/mcp.json not written)
 * Markdown to stdout; writes bench/results/mcp.json.
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { packageRoot } from '../examples/root.js';
import { median, quantile } from './stats.js';

const ROOT = packageRoot();
const EX = join(ROOT, 'examples', 'mcp');
const SERVER = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');
const quick = process.argv.includes('--quick');
const CALLS = quick ? 100 : 1000;
const WARMUP = 50;

async function connect(args: string[]): Promise<Client> {
  const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
  const client = new Client({ name: 'oarc-bench-mcp', version: '1' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args, env, stderr: 'ignore' }));
  return client;
}

const root = realpathSync(mkdtempSync(join(tmpdir(), 'oarc-bench-mcp-')));
const workspace = join(root, 'workspace');
mkdirSync(workspace);
const file = join(workspace, 'notes.txt');
writeFileSync(file, Array.from({ length: 40 }, (_, i) => `line ${i}: the quick brown fox jumps over the lazy dog`).join('\n'));
const log = join(root, 'decisions.jsonl');

const direct = await connect([SERVER, root]);
const relayed = await connect([join(ROOT, 'dist', 'bench', 'mcp-floor.js'), process.execPath, SERVER, root]);
const proxied = await connect([
  join(ROOT, 'dist', 'bin', 'oarc.js'), 'mcp', join(EX, 'rules.yaml'), '--capability', join(EX, 'capability.yaml'),
  '--detectors', join(EX, 'detectors.mjs'), '--fact', `oarc.mcp.workspace=${workspace}/`, '--decision-log', log, '--', process.execPath, SERVER, root,
]);

// Distinct arguments per call (the head line count), so no call is a repeat the pack would nudge.
const time = async (c: Client, i: number): Promise<number> => {
  const t = process.hrtime.bigint();
  const r = await c.callTool({ name: 'read_text_file', arguments: { path: file, head: 1 + (i % 40) + 40 * Math.floor(i / 40) } });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.isError) throw new Error(`the call failed: ${JSON.stringify(r.content)}`);
  return ms;
};

for (let i = 0; i < WARMUP; i++) {
  await time(direct, -1 - i);
  await time(relayed, -1 - i);
  await time(proxied, -1 - i);
}
const d: number[] = [];
const f0: number[] = [];
const p: number[] = [];
const order: [Client, number[]][] = [[direct, d], [relayed, f0], [proxied, p]];
for (let i = 0; i < CALLS; i++) {
  // Rotate which goes first, so none always follows another's garbage.
  for (let k = 0; k < 3; k++) {
    const [c, xs] = order[(i + k) % 3] as [Client, number[]];
    xs.push(await time(c, i));
  }
}
await direct.close();
await relayed.close();
await proxied.close();
await new Promise((r) => setTimeout(r, 200));
const decisions = readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { latency_ms?: number }).filter((l) => typeof l.latency_ms === 'number');
// Two decisions per call (tool.pre_invoke, tool.post_invoke); the warm-up's are left out.
const perCall = decisions.slice(2 * WARMUP).map((l) => l.latency_ms as number);
rmSync(root, { recursive: true, force: true });

const row = (name: string, xs: number[]) => ({ name, p50ms: median(xs), p90ms: quantile(xs, 0.9), p99ms: quantile(xs, 0.99) });
const rows = [row('direct', d), row('through a bare byte relay (floor)', f0), row('through oarc mcp', p)];
const decideMs = median(perCall) * 2;
const result = {
  calls: CALLS,
  node: process.version,
  cpus: cpus().length,
  loadavg: loadavg().map((x) => Math.round(x * 100) / 100),
  rows,
  addedP50ms: (rows[2]?.p50ms ?? 0) - (rows[0]?.p50ms ?? 0),
  ratioP50: (rows[2]?.p50ms ?? 0) / (rows[0]?.p50ms ?? 1),
  addedOverFloorP50ms: (rows[2]?.p50ms ?? 0) - (rows[1]?.p50ms ?? 0),
  decideP50msPerCall: decideMs,
};
const f = (x: number) => x.toFixed(3);
console.log(`| connection | p50 ms | p90 ms | p99 ms |\n| --- | ---: | ---: | ---: |`);
for (const r of rows) console.log(`| ${r.name} | ${f(r.p50ms)} | ${f(r.p90ms)} | ${f(r.p99ms)} |`);
console.log(`\n${CALLS} read_text_file calls each, alternating; Node ${process.version}, ${cpus().length} cores, load ${result.loadavg.join(' ')}.`);
console.log(`The proxy adds ${f(result.addedP50ms)} ms at the median (×${result.ratioP50.toFixed(2)}), ${f(result.addedOverFloorP50ms)} ms more than a bare relay; deciding takes ${f(decideMs)} ms of it (median of the logged latency_ms, two decisions per call).`);
if (!quick) {
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', 'results', 'mcp.json'), `${JSON.stringify(result, null, 2)}\n`);
}
