/**
 * `oarc bench <rules…|bundle.mjs> --occurrence <file>`: benchmark a user's pack on the user's
 * occurrences (packbench/), and with `--baseline` gate CI on a regression.
 *
 * `oarc bench --suite [--quick] [--only=…]` runs oarc's own benchmark suite (bench/index.ts), which
 * measures oarc on packs it generates, against baselines that are devDependencies (tinybench,
 * cel-js): it runs from a clone of the repository (`npm run bench`), and the installed package
 * leaves it out, so there the command says so instead of reaching a missing module. The user's
 * bench imports nothing but the compiler and runtime.
 */
import { readFileSync } from 'node:fs';
import { bool, parse, required, str, strs } from '../args.js';
import { exported, importPart, type Absent } from '../delegate.js';
import { EXIT_OK, EXIT_REGRESSION, EXIT_USAGE, InputError, UsageError, ioReason } from '../errors.js';
import { toJson, type Io } from '../output.js';
import { PACK_OPTIONS } from '../pack.js';
import { BUNDLE_FILE, bundleBytes, hostInputProblem, importBundleFile, loadDetectorModule, loadRules, readOccurrences, requireDetectors } from '../pack-input.js';
import { createEngine, type Bundle, type Detector } from '../../runtime/index.js';
import { didYouMean } from '../../runtime/suggest.js';

type Harness = typeof import('../../bench/index.js');
type Section = import('../../bench/index.js').Section;

const OPTIONS = {
  ...PACK_OPTIONS,
  occurrence: { type: 'string' },
  detectors: { type: 'string' },
  json: { type: 'boolean' },
  baseline: { type: 'string' },
  threshold: { type: 'string' },
  floor: { type: 'string' },
  time: { type: 'string' },
  compare: { type: 'string' },
  suite: { type: 'boolean' },
  quick: { type: 'boolean' },
  only: { type: 'string' },
} as const;

const NOT_INSTALLED: Absent = {
  message:
    'oarc bench: the benchmark suite measures oarc itself on generated packs and runs from a clone of the oarc repository (npm ci && npm run bench); it is not part of the installed package',
  code: EXIT_USAGE,
};

export async function benchCommand(argv: readonly string[], io: Io): Promise<number> {
  const p = parse(argv, OPTIONS);
  if (bool(p, 'suite')) return suite(p, io);
  for (const flag of ['quick', 'only'] as const) {
    if (p.values[flag] !== undefined) throw new UsageError(`--${flag} is an option of oarc's own benchmark suite: add --suite (oarc bench --suite --${flag}…), or give a pack to benchmark`);
  }
  if (str(p, 'compare') !== undefined) return compareOnly(p, io);
  if (p.positionals.length === 0) {
    throw new UsageError("no pack given: oarc bench <rules…|bundle.mjs> --capability <file> --occurrence <file> benchmarks your pack; oarc's own benchmarks are `npm run bench` in a clone of the repository (or oarc bench --suite)");
  }
  return userBench(p, io);
}

async function suite(p: ReturnType<typeof parse>, io: Io): Promise<number> {
  if (p.positionals.length > 0) throw new UsageError('--suite runs oarc\'s own benchmarks and takes no pack; leave out --suite to benchmark yours');
  const onlyText = str(p, 'only');
  const only = onlyText?.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (onlyText !== undefined && only?.length === 0) throw new UsageError('option --only needs at least one benchmark name');
  const part = await importPart<Harness>('bench/index.js', 'the benchmark harness', io, NOT_INSTALLED);
  const runBench = exported(part, 'runBench', 'bench/index.js', io);
  const sections: readonly string[] = part.SECTIONS ?? [];
  const unknown = only?.find((s) => !sections.includes(s));
  if (unknown !== undefined) throw new UsageError(`unknown benchmark ${unknown}${didYouMean(unknown, sections)}; the benchmarks are ${sections.join(', ')}`);
  const run = await runBench({
    quick: bool(p, 'quick'),
    ...(only ? { only: only as Section[] } : {}),
    log: (line) => io.err(`${line}\n`),
  });
  io.out(bool(p, 'json') ? `${toJson(run.sections, 1)}\n` : run.markdown);
  return EXIT_OK;
}

/** `--time 3s`, `500ms` or `2` (seconds) in ms. */
export function parseTime(text: string | undefined): number {
  if (text === undefined) return 3000;
  const m = /^(\d+(?:\.\d+)?)(ms|s)?$/.exec(text.trim());
  const ms = m === null ? NaN : Number(m[1]) * (m[2] === 'ms' ? 1 : 1000);
  if (!Number.isFinite(ms) || ms < 50 || ms > 3_600_000) throw new UsageError(`--time takes a duration from 50ms to 3600s, such as 3s or 500ms; \`${text}\` is not one`);
  return ms;
}

/** `--threshold 10%` (or `10`) as 0.1. */
export function parseThreshold(text: string | undefined): number {
  if (text === undefined) return 0.1;
  const m = /^(\d+(?:\.\d+)?)%?$/.exec(text.trim());
  if (m === null) throw new UsageError(`--threshold takes a percentage such as 10%; \`${text}\` is not one`);
  return Number(m[1]) / 100;
}

function parseFloor(text: string | undefined): number {
  if (text === undefined) return 25;
  const m = /^(\d+(?:\.\d+)?)(ns)?$/.exec(text.trim());
  if (m === null) throw new UsageError(`--floor takes a time in ns per decision, such as 25ns; \`${text}\` is not one`);
  return Number(m[1]);
}

async function userBench(p: ReturnType<typeof parse>, io: Io): Promise<number> {
  const occurrenceFile = required(p, 'occurrence', 'file');
  if (occurrenceFile === '-') throw new UsageError('--occurrence needs a file: a benchmark decides it many times, and stdin can be read only once');
  const timeMs = parseTime(str(p, 'time'));
  const threshold = parseThreshold(str(p, 'threshold'));
  const floorNs = parseFloor(str(p, 'floor'));
  const baselineFile = str(p, 'baseline');
  const isBundle = p.positionals.length === 1 && BUNDLE_FILE.test(p.positionals[0] as string);
  if (!isBundle && p.positionals.some((f) => BUNDLE_FILE.test(f))) throw new UsageError('give either one compiled bundle (.mjs/.js) or rule documents, not both');
  const { compareFigures, baselineProblem } = await import('../../packbench/compare.js');
  // Read the baseline first: a typo in its path should not cost a whole benchmark run.
  const baseline = baselineFile === undefined ? undefined : readBaseline(baselineFile, baselineProblem);

  const { runBench } = await import('../../packbench/run.js');
  const { COMPILER_ID } = await import('../../compiler/version.js');
  let bundles: { name: string; bundle: Bundle }[];
  let pack;
  if (isBundle) {
    if (strs(p, 'config').length > 0) throw new UsageError('--config applies to rule documents; a compiled bundle already carries its configuration');
    const file = p.positionals[0] as string;
    const bundle = await importBundleFile('bench', file);
    bundles = [{ name: 'specialised', bundle }];
    pack = { inputs: [file], rules: bundle.rules.length, bundle_bytes: bundleBytes(file), compile_ms: null };
  } else {
    const loaded = await loadRules('bench', p.positionals, required(p, 'capability', 'file'), strs(p, 'config'), io, bool(p, 'allow-empty'));
    const { compile, compileToBundle } = await import('../../compiler/index.js');
    const t0 = performance.now();
    const text = compile(loaded.pack);
    const t1 = performance.now();
    const specialised = compileToBundle(loaded.pack);
    const t2 = performance.now();
    bundles = [{ name: 'specialised', bundle: specialised }, { name: 'interpreter', bundle: compileToBundle(loaded.pack, 'interpreter') }];
    pack = { inputs: p.positionals, rules: loaded.pack.rules.length, bundle_bytes: Buffer.byteLength(text), compile_ms: { load: r1(loaded.ms), emit: r1(t1 - t0), in_process: r1(t2 - t1) } };
  }
  const detectorsModule = str(p, 'detectors');
  const detectors = await loadDetectorModule('bench', detectorsModule);
  requireDetectors('bench', bundles[0]!.bundle, detectors, detectorsModule);
  const read = readOccurrences('bench', occurrenceFile);
  checkDecidable(read, bundles[0]!.bundle, detectors);

  const figures = runBench({
    bundles,
    detectors,
    occurrences: read.map((r) => r.occurrence),
    summaries: read.map((r) => r.summary),
    occurrenceFile,
    pack,
    compiler: COMPILER_ID,
    timeMs,
    log: (line) => io.err(`${line}\n`),
  });
  const { textReport, comparisonReport } = await import('../../packbench/report.js');
  const comparison = baseline === undefined ? undefined : compareFigures(baseline, figures, { threshold, floorNs });
  if (bool(p, 'json')) io.out(`${toJson(comparison === undefined ? figures : { ...figures, baseline: { file: baselineFile, threshold, floor_ns: floorNs, ...comparison } }, 2)}\n`);
  else io.out(textReport(figures));
  if (comparison === undefined) return EXIT_OK;
  if (baseline!.occurrences.count !== figures.occurrences.count) io.err(`oarc bench: warning: the baseline decided ${baseline!.occurrences.count} occurrences and this run ${figures.occurrences.count}; the figures may not be comparable\n`);
  (bool(p, 'json') ? io.err : io.out)(comparisonReport(comparison, threshold, floorNs));
  return comparison.regression ? EXIT_REGRESSION : EXIT_OK;
}

const r1 = (x: number) => Math.round(x * 10) / 10;

/**
 * `--baseline old.json --compare new.json`: the gate on two saved runs, measuring nothing — for CI
 * that measures in one job and gates in another, and for checking the rule on figures as they are.
 */
async function compareOnly(p: ReturnType<typeof parse>, io: Io): Promise<number> {
  if (p.positionals.length > 0) throw new UsageError('--compare compares two saved runs and takes no pack; leave out --compare to measure one');
  const baselineFile = str(p, 'baseline');
  if (baselineFile === undefined) throw new UsageError('--compare <new.json> needs --baseline <old.json>');
  const threshold = parseThreshold(str(p, 'threshold'));
  const floorNs = parseFloor(str(p, 'floor'));
  const { compareFigures, baselineProblem } = await import('../../packbench/compare.js');
  const { comparisonReport } = await import('../../packbench/report.js');
  const old = readBaseline(baselineFile, baselineProblem);
  const now = readBaseline(str(p, 'compare') as string, baselineProblem);
  const c = compareFigures(old, now, { threshold, floorNs });
  io.out(bool(p, 'json') ? `${toJson({ file: baselineFile, threshold, floor_ns: floorNs, ...c }, 2)}\n` : comparisonReport(c, threshold, floorNs));
  return c.regression ? EXIT_REGRESSION : EXIT_OK;
}

function readBaseline(file: string, problem: (v: unknown) => string | undefined): import('../../packbench/run.js').Figures {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new InputError(`oarc bench: cannot read figures ${file}: ${ioReason(e)}`);
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new InputError(`oarc bench: ${file} is not JSON: ${e instanceof Error ? e.message : String(e)}; write it with oarc bench … --json > ${file}`);
  }
  const why = problem(v);
  if (why !== undefined) throw new InputError(`oarc bench: ${file}: ${why}; write it with oarc bench … --json > ${file}`);
  return v as import('../../packbench/run.js').Figures;
}

/** Decide each occurrence once on a scratch engine: one the engine refuses is an input error, located, before any timing. */
function checkDecidable(read: ReturnType<typeof readOccurrences>, bundle: Bundle, detectors: Record<string, Detector>): void {
  const engine = createEngine(bundle, { detectors });
  for (const r of read) {
    try {
      engine.decide(r.occurrence);
    } catch (e) {
      const problem = hostInputProblem('bench', r.at, e);
      if (problem !== undefined) throw problem;
      throw new InputError(`${r.at}: oarc bench: the occurrence could not be decided: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}
