/**
 * Compile benchmark: for generated gateway packs (packs.ts) of 10, 100, 1000 and 10,000 rules —
 *
 *   compile  — `loadPackTexts` (YAML parse, schema, rule and rule-set checks) + `compile()` to ES
 *              module text (condition compiler, emitter, the self-check of DESIGN rule 5), per rule;
 *   size     — the module's bytes, raw and gzip;
 *   import   — `await import()` of that module written to a temp dir, importing its runtime from
 *              `dist/runtime/index.js` as examples/demo.ts does (a fresh URL each time, so each
 *              sample parses and evaluates the module; the runtime itself is already loaded);
 *   start-up — `createEngine(bundle)` on the imported bundle (indexing rules by anchor).
 *
 * The imported bundle must decide exactly as the in-process `compileToBundle` one on the pack's
 * stream before anything is timed. Timing is tinybench's (one iteration per sample — a 10,000-rule
 * compile takes seconds), in interleaved rounds after one warm-up round, medians over rounds, in
 * process CPU time (see decide.ts, "Clocks": a compile of seconds on a shared machine is
 * descheduled many times; the wall-clock medians are reported beside it). The linearity check is
 * compile(10,000) / compile(1,000): ≤ 12× is linear within noise.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { Bench, type Task } from 'tinybench';
import { compile, compileToBundle, loadPackTexts } from '../compiler/index.js';
import { checkBundle, createEngine, type Bundle } from '../runtime/index.js';
import { packageRoot } from '../examples/root.js';
import { checkAgreement, cpuNow, engineRunner, loadGenerated, type Clock, type Runner } from './decide.js';
import { generatePack, generateStream, packTexts, type GeneratedPack } from './packs.js';
import { median, prng, relativeIqr, shuffle } from './stats.js';

export interface CompileOptions {
  quick?: boolean;
  sizes?: readonly number[];
  rounds?: number;
  seed?: number;
  /** Default `cpu`. */
  clock?: Clock;
  log?: (line: string) => void;
}

export interface CompileSizeResult {
  size: number;
  /** Median ms of load + compile to module text; and its two parts (medians of their own). */
  compileMs: number;
  loadMs: number;
  emitMs: number;
  /** compileMs / size, in µs. */
  perRuleUs: number;
  bytes: number;
  gzipBytes: number;
  bytesPerRule: number;
  importMs: number;
  createEngineMs: number;
  /** Wall-clock median of the same compile samples. */
  compileWallMs: number;
  noise: number;
}

export interface CompileResult {
  meta: { node: string; quick: boolean; clock: Clock; rounds: number; runtime: string; seconds: number };
  sizes: CompileSizeResult[];
  linearity: { from: number; to: number; ratio: number; sizeRatio: number; target: number; met: boolean } | null;
  /** Issue 14's bound: 10,000 rules loaded and compiled in at most this many ms; null when that size is not measured. */
  tenThousand: { compileMs: number; targetMs: number; met: boolean } | null;
}

/** The compile time issue 14 asks of a 10,000-rule pack (with ≤ 400 MB, measured on the CLI: README). */
const TEN_THOUSAND_TARGET_MS = 2000;

interface Samples {
  compile: number[];
  load: number[];
  emit: number[];
  import: number[];
  engine: number[];
  wall: number[];
}

const timer = (clock: Clock) => (clock === 'cpu' ? { now: cpuNow } : { timestampProvider: 'hrtimeNow' as const });

function runOnce(clock: Clock, name: string, fn: () => unknown): number {
  const bench = new Bench({ time: 0, iterations: 1, warmup: false, throws: true, retainSamples: true, ...timer(clock) });
  bench.add(name, fn);
  const [task] = bench.runSync() as [Task];
  const r = task.result;
  if (r.state !== 'completed') throw new Error(`bench: ${name} ended ${r.state}`);
  return r.latency.mean;
}

async function runOnceAsync(clock: Clock, name: string, fn: () => Promise<unknown>): Promise<number> {
  const bench = new Bench({ time: 0, iterations: 1, warmup: false, throws: true, retainSamples: true, ...timer(clock) });
  bench.add(name, fn);
  const [task] = (await bench.run()) as [Task];
  const r = task.result;
  if (r.state !== 'completed') throw new Error(`bench: ${name} ended ${r.state}`);
  return r.latency.mean;
}

/** The imported bundle decides exactly as the in-process one, on a stream of the pack. */
function checkImported(pack: GeneratedPack, imported: Bundle): void {
  const compiled = compileToBundle(loadGenerated(pack), 'compiled');
  const runners = new Map<string, Runner>([['compiled', engineRunner(compiled)], ['imported module', engineRunner(imported)]]);
  checkAgreement({ size: pack.size, pack, stream: generateStream(pack, { length: 300 }) }, runners);
}

export async function runCompileBench(opts: CompileOptions = {}): Promise<CompileResult> {
  const started = Date.now();
  const quick = opts.quick ?? false;
  const sizes = opts.sizes ?? (quick ? [10, 100] : [10, 100, 1000, 10_000]);
  const rounds = opts.rounds ?? (quick ? 1 : 4);
  const log = opts.log ?? (() => {});
  const clock = opts.clock ?? 'cpu';
  const runtimeFile = join(packageRoot(), 'dist', 'runtime', 'internal.js');
  if (!existsSync(runtimeFile)) throw new Error(`bench: ${runtimeFile} is missing; the import benchmark needs a built runtime (npm run build)`);
  const runtime = pathToFileURL(runtimeFile).href;
  const dir = mkdtempSync(join(tmpdir(), 'oarc-bench-'));
  try {
    const packs = new Map<number, GeneratedPack>();
    const files = new Map<number, string>();
    const texts = new Map<number, string>();
    const samples = new Map<number, Samples>();
    let importCounter = 0;
    for (const size of sizes) {
      const pack = generatePack(size, opts.seed);
      packs.set(size, pack);
      const r = loadPackTexts(packTexts(pack));
      if (!r.ok) throw new Error(`bench: the generated ${size}-rule pack does not load`);
      const text = compile(r.pack, runtime);
      texts.set(size, text);
      const file = join(dir, `bundle-${size}.mjs`);
      writeFileSync(file, text);
      files.set(size, pathToFileURL(file).href);
      const imported = (await import(`${pathToFileURL(file).href}?check`)).default as unknown;
      checkBundle(imported);
      // The agreement check runs the baseline too; skip the largest packs, whose streams would
      // only repeat what the 1000-rule decide benchmark already checked.
      if (size <= 1000) checkImported(pack, imported);
      samples.set(size, { compile: [], load: [], emit: [], import: [], engine: [], wall: [] });
      log(`compile: ${size} rules: ${text.length} bytes${size <= 1000 ? '; the imported module decides exactly as the in-process bundle' : ''}`);
    }

    type Job = { size: number; what: 'compile' | 'import' | 'engine' };
    const jobs: Job[] = sizes.flatMap((size) => (['compile', 'import', 'engine'] as const).map((what) => ({ size, what })));
    const rand = prng(opts.seed ?? 0x0a7c);
    for (let round = 0; round <= rounds; round++) {
      for (const job of shuffle(jobs, rand)) {
        const pack = packs.get(job.size) as GeneratedPack;
        const s = samples.get(job.size) as Samples;
        const record = round > 0;
        if (job.what === 'compile') {
          let load = 0;
          let emit = 0;
          let wall = 0;
          const now = clock === 'cpu' ? cpuNow : () => performance.now();
          const ms = runOnce(clock, `compile:${job.size}`, () => {
            const w0 = performance.now();
            const t0 = now();
            const r = loadPackTexts(packTexts(pack));
            const t1 = now();
            if (!r.ok) throw new Error('bench: pack does not load');
            const text = compile(r.pack, runtime);
            load = t1 - t0;
            emit = now() - t1;
            wall = performance.now() - w0;
            if (text.length !== (texts.get(job.size) as string).length) throw new Error('bench: compile is not deterministic');
          });
          if (record) {
            s.compile.push(ms);
            s.load.push(load);
            s.emit.push(emit);
            s.wall.push(wall);
          }
        } else if (job.what === 'import') {
          const url = `${files.get(job.size) as string}?i=${importCounter++}`;
          let bundle: unknown;
          const ms = await runOnceAsync(clock, `import:${job.size}`, async () => {
            bundle = ((await import(url)) as { default: unknown }).default;
          });
          checkBundle(bundle);
          if (record) s.import.push(ms);
        } else {
          const bundle = ((await import(`${files.get(job.size) as string}?check`)) as { default: Bundle }).default;
          const ms = runOnce(clock, `engine:${job.size}`, () => createEngine(bundle));
          if (record) s.engine.push(ms);
        }
      }
      if (round > 0) log(`  compile: round ${round}/${rounds} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
    }

    const results: CompileSizeResult[] = sizes.map((size) => {
      const s = samples.get(size) as Samples;
      const text = texts.get(size) as string;
      const bytes = Buffer.byteLength(text);
      const compileMs = median(s.compile);
      return {
        size,
        compileMs,
        loadMs: median(s.load),
        emitMs: median(s.emit),
        perRuleUs: (compileMs * 1000) / size,
        bytes,
        gzipBytes: gzipSync(text).length,
        bytesPerRule: bytes / size,
        importMs: median(s.import),
        createEngineMs: median(s.engine),
        compileWallMs: median(s.wall),
        noise: relativeIqr(s.compile),
      };
    });
    const big = results[results.length - 1];
    const prev = results[results.length - 2];
    const linearity = big && prev
      ? (() => {
          const sizeRatio = big.size / prev.size;
          const ratio = big.compileMs / prev.compileMs;
          const target = sizeRatio * 1.2;
          return { from: prev.size, to: big.size, ratio, sizeRatio, target, met: ratio <= target };
        })()
      : null;
    const at10k = results.find((x) => x.size === 10_000);
    const tenThousand = at10k ? { compileMs: at10k.compileMs, targetMs: TEN_THOUSAND_TARGET_MS, met: at10k.compileMs <= TEN_THOUSAND_TARGET_MS } : null;
    return { meta: { node: process.version, quick, clock, rounds, runtime, seconds: Math.round((Date.now() - started) / 100) / 10 }, sizes: results, linearity, tenThousand };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const f1 = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const kb = (x: number) => (x >= 1e6 ? `${(x / 1e6).toFixed(2)} MB` : `${(x / 1e3).toFixed(1)} kB`);

export function renderCompile(r: CompileResult): string {
  const out: string[] = [];
  out.push(`## Compile, bundle size, import${r.meta.quick ? ' (--quick: smoke counts, numbers are not meaningful)' : ''}`);
  out.push('');
  out.push(
    `${r.meta.node}; medians of ${r.meta.rounds} interleaved rounds (after a warm-up round), one tinybench iteration per sample, ` +
      `${r.meta.clock === 'cpu' ? 'process CPU time' : 'wall clock'} (compile wall = the wall-clock median of the same samples); ` +
      `compile = loadPackTexts + compile() to module text; import = \`await import()\` of the written module (fresh URL); ` +
      `start-up = createEngine(imported bundle); ${r.meta.seconds} s.`,
  );
  out.push('');
  out.push('| rules | compile ms | load ms | emit ms | µs per rule | compile wall ms | bundle | gzip | bytes per rule | import ms | createEngine ms | noise |');
  out.push('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const s of r.sizes) {
    out.push(
      `| ${s.size} | ${f1(s.compileMs)} | ${f1(s.loadMs)} | ${f1(s.emitMs)} | ${f1(s.perRuleUs)} | ${f1(s.compileWallMs)} | ${kb(s.bytes)} | ${kb(s.gzipBytes)} | ` +
        `${s.bytesPerRule.toFixed(0)} | ${f1(s.importMs)} | ${f1(s.createEngineMs)} | ${Math.round(s.noise * 100)}% |`,
    );
  }
  out.push('');
  const l = r.linearity;
  if (l) {
    out.push(
      `Linearity: compile(${l.to}) / compile(${l.from}) = ${l.ratio.toFixed(2)}× for ${l.sizeRatio}× the rules ` +
        `(target ≤ ${l.target.toFixed(0)}×) — ${l.met ? 'met' : 'NOT met ✗'}.`,
    );
  }
  const t = r.tenThousand;
  if (t) out.push(`10,000 rules: ${t.compileMs.toFixed(0)} ms (target ≤ ${t.targetMs} ms) — ${t.met ? 'met' : 'NOT met ✗'}.`);
  return out.join('\n');
}

export function compileJson(r: CompileResult): string {
  return `${JSON.stringify({ benchmark: 'compile', ...r }, (_k, v: unknown) => (typeof v === 'number' && !Number.isInteger(v) ? Math.round(v * 1000) / 1000 : v), 1)}\n`;
}
