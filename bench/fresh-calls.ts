/**
 * What a decision costs when the calls are new, as they mostly are at a real gateway, beside the
 * same traffic repeated, as the decide section's stream and the service benchmark repeat theirs.
 *
 * examples/gateway counts calls by `tool_args_fingerprint` ([OAR-FIRE-10]), so every new call
 * brings a new counter: a new scope value, a new store key, a new name in the decision's
 * `counters`. Work done once per counter — building and hashing its key strings, a store entry, a
 * property of a name never seen before — is paid at every decision of new calls, and never in a
 * stream that repeats. Both traffics: `read` calls inside the workspace over 64 sessions; *new*
 * gives every call a path not used before, *repeated* cycles through 1,024 of them (after the
 * first pass every call is a repeat, and the steady state is the repeat block).
 *
 * One engine per traffic, the specialised procedures, interleaved rounds of process CPU time.
 * Usage: npm run bench:fresh-calls [-- --quick]; markdown on stdout.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileToBundle, loadPackTexts } from '../compiler/index.js';
import { createEngine, type Detector, type Engine, type Occurrence } from '../runtime/index.js';
import { packageRoot } from '../examples/root.js';
import { median } from './stats.js';

const GW = join(packageRoot(), 'examples', 'gateway');
const SESSIONS = 64;

async function engine(): Promise<Engine> {
  const r = loadPackTexts({ capability: readFileSync(join(GW, 'capability.yaml'), 'utf8'), rules: [readFileSync(join(GW, 'rules.yaml'), 'utf8')] });
  if (!r.ok) throw new Error('bench: examples/gateway does not load');
  const detectors = (await import(join(GW, 'detectors.mjs'))) as { default: Record<string, Detector> };
  return createEngine(compileToBundle(r.pack), { detectors: detectors.default });
}

const call = (i: number, path: number): Occurrence => ({ anchor: 'tool.pre_invoke', session: `s${i % SESSIONS}`, toolCall: { name: 'read', arguments: { path: `/workspace/src/file${path}.ts` } } });

/** ns of process CPU time per decision over `n` decisions. */
function timed(e: Engine, n: number, next: () => Occurrence): number {
  const t = process.cpuUsage();
  for (let k = 0; k < n; k++) e.decide(next());
  const u = process.cpuUsage(t);
  return ((u.user + u.system) * 1000) / n;
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const [rounds, perRound] = quick ? [2, 5_000] : [9, 100_000];
  const fresh = await engine();
  const repeat = await engine();
  let f = 0;
  let r = 0;
  const nextFresh = () => call(f, f++);
  const nextRepeat = () => call(r, r++ % 1024);
  // Warm-up: the JIT, and the repeated traffic in its steady state.
  timed(fresh, perRound / 2, nextFresh);
  timed(repeat, perRound / 2, nextRepeat);
  const samples = { fresh: [] as number[], repeat: [] as number[] };
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? (['fresh', 'repeat'] as const) : (['repeat', 'fresh'] as const);
    for (const which of order) samples[which].push(which === 'fresh' ? timed(fresh, perRound, nextFresh) : timed(repeat, perRound, nextRepeat));
  }
  const m = { fresh: median(samples.fresh), repeat: median(samples.repeat) };
  process.stdout.write(
    [
      `| traffic (examples/gateway, ${SESSIONS} sessions) | ns/decision (median of ${rounds} rounds of ${perRound.toLocaleString('en-US')}) |`,
      '| --- | ---: |',
      `| every call new | ${Math.round(m.fresh)} |`,
      `| 1,024 calls repeated | ${Math.round(m.repeat)} |`,
      '',
      `new / repeated: ${(m.fresh / m.repeat).toFixed(2)}× (${f.toLocaleString('en-US')} new calls decided, ${SESSIONS} sessions holding their counters)`,
      '',
    ].join('\n'),
  );
}

await main();
