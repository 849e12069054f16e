/**
 * `oarc fuzz <rules…|bundle> --capability … [--config …] [--detectors m] [--seed S] [--runs N |
 * --time T] [--out dir] [--against <command>] [--json]`: differential fuzzing of a user's pack
 * (fuzz/run.ts). Every generated session is decided by each of oarc's back ends — and by an
 * external engine over the protocol of docs/engine-protocol.md with `--against` — and on the
 * first difference the shrunk case is written as a conformance fixture. Exit 0: no difference;
 * 1: a difference (or an engine that broke the protocol, or a pack that does not load); 2: usage.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { readSources } from '../../compiler/load/source.js';
import type { LoadedPack } from '../../compiler/index.js';
import { DetectorModuleError, importDetectors, missingDetector } from '../../packtest/detectors.js';
import { checkBundle, type Bundle, type Detector } from '../../runtime/index.js';
import { inProcess, type Answer, type Backend } from '../../fuzz/backends.js';
import { buildFixture, type PackDocs } from '../../fuzz/fixture.js';
import { toJsonText } from '../../fuzz/json.js';
import { buildModel } from '../../fuzz/model.js';
import { parseSeed } from '../../fuzz/prng.js';
import { ENGINE_TIMEOUT_MS, EngineClient, ProtocolError, type PackRequest } from '../../fuzz/protocol.js';
import { fuzz, type Finding, type FuzzResult } from '../../fuzz/run.js';
import { bool, parse, required, str, strs } from '../args.js';
import { EXIT_INPUT, EXIT_OK, ExitError, InputError, UsageError, oneLine } from '../errors.js';
import { printDiagnostics, tally, type Io } from '../output.js';
import { PACK_OPTIONS, loadRequestedPack } from '../pack.js';

const OPTIONS = {
  ...PACK_OPTIONS,
  detectors: { type: 'string' },
  seed: { type: 'string' },
  runs: { type: 'string' },
  time: { type: 'string' },
  out: { type: 'string' },
  against: { type: 'string' },
  json: { type: 'boolean' },
} as const;

const BUNDLE_FILE = /\.(mjs|js)$/i;

/** `--time 30s`, `2m`, `500ms`, or a bare number of seconds. */
export function parseDuration(text: string): number | undefined {
  const m = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m)?$/.exec(text.trim());
  if (m === null) return undefined;
  const n = Number(m[1]);
  const ms = m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
  return ms > 0 ? ms : undefined;
}

export async function fuzzCommand(argv: readonly string[], io: Io): Promise<number> {
  const p = parse(argv, OPTIONS);
  if (p.positionals.length === 0) throw new UsageError('no bundle or rule files given');
  const seedText = str(p, 'seed');
  const seed = seedText === undefined ? Math.floor(Math.random() * 0x1_0000_0000) : parseSeed(seedText);
  if (seed === undefined) throw new UsageError(`--seed takes an integer from 0 to 4294967295, not \`${seedText}\``);
  const runsText = str(p, 'runs');
  const timeText = str(p, 'time');
  if (runsText !== undefined && timeText !== undefined) throw new UsageError('give --runs or --time, not both');
  const runs = runsText === undefined ? undefined : /^[1-9][0-9]{0,8}$/.test(runsText) ? Number(runsText) : undefined;
  if (runsText !== undefined && runs === undefined) throw new UsageError(`--runs takes a positive number of cases, not \`${runsText}\``);
  const timeMs = timeText === undefined ? undefined : parseDuration(timeText);
  if (timeText !== undefined && timeMs === undefined) throw new UsageError(`--time takes a duration such as 30s, 2m or 500ms, not \`${timeText}\``);
  const against = str(p, 'against');
  if (against !== undefined && against.trim() === '') throw new UsageError('--against needs the command that starts the engine');
  const out = str(p, 'out') ?? 'oarc-fuzz';
  const json = bool(p, 'json');

  const isBundle = p.positionals.length === 1 && BUNDLE_FILE.test(p.positionals[0] as string);
  if (!isBundle && p.positionals.some((f) => BUNDLE_FILE.test(f))) throw new UsageError('give either one compiled bundle (.mjs/.js) or rule documents, not both');
  if (isBundle && against !== undefined) throw new UsageError('--against sends the engine the rule documents: give the rule files rather than a compiled bundle');
  if (isBundle && strs(p, 'config').length > 0) throw new UsageError('--config applies to rule documents; a compiled bundle already carries its configuration');

  const detectorsModule = str(p, 'detectors');
  const detectors = detectorsModule === undefined ? {} : await loadDetectors(detectorsModule);

  let pack: LoadedPack | undefined;
  let backends: Backend[];
  let specialised: Bundle;
  if (isBundle) {
    specialised = await importBundle(p.positionals[0] as string);
    backends = [inProcess('specialised', specialised, detectors, true), inProcess('generic', specialised, detectors, false)];
  } else {
    const r = await loadRequestedPack({ rules: p.positionals, capability: required(p, 'capability', 'file'), configs: strs(p, 'config') });
    printDiagnostics(io, r.diagnostics);
    if (!r.ok) {
      io.err(`oarc fuzz: ${tally(r.diagnostics)}\n`);
      throw new ExitError(EXIT_INPUT);
    }
    pack = r.pack;
    const { compileToBundle } = await import('../../compiler/index.js');
    specialised = compileToBundle(pack);
    backends = [
      inProcess('specialised', specialised, detectors, true),
      inProcess('generic', specialised, detectors, false),
      inProcess('interpreter', compileToBundle(pack, 'interpreter'), detectors, false),
    ];
  }
  const missing = missingDetector(specialised, detectors);
  if (missing !== undefined) {
    if (detectorsModule === undefined) throw new UsageError(`rule ${missing.rule} invokes ${missing.ref}: give --detectors <module> with an implementation of it`);
    throw new InputError(`oarc fuzz: rule ${missing.rule} invokes ${missing.ref}, which ${detectorsModule} does not implement`);
  }

  const external: EngineClient[] = [];
  try {
    if (against !== undefined) {
      const client = new EngineClient(against, engineTimeoutMs(io.env));
      external.push(client);
      await client.load(packRequest(p.positionals, str(p, 'capability') as string, strs(p, 'config')));
    }
    const names = [...backends, ...external].map((b) => b.name);
    io.err(`oarc fuzz: seed ${seed}; back ends: ${names.join(', ')}; ${timeMs !== undefined ? `for ${timeText}` : `${runs ?? 1000} cases`}\n`);
    const result = await fuzz({
      model: buildModel(specialised, pack),
      backends,
      external,
      seed,
      ...(timeMs !== undefined ? { timeMs } : { runs: runs ?? 1000 }),
      progress: (pr) => {
        if (pr.done) return;
        const rate = pr.cases / (pr.elapsedMs / 1000);
        io.err(`oarc fuzz: ${pr.cases} cases (${pr.occurrences} occurrences), ${rate.toFixed(0)} cases/s, ${(pr.elapsedMs / 1000).toFixed(1)} s, ${pr.found} found\n`);
      },
    });
    return report(result, names, isBundle ? undefined : packDocs(p.positionals, str(p, 'capability') as string, strs(p, 'config')), out, json, io);
  } catch (e) {
    if (e instanceof ProtocolError) throw new InputError(`oarc fuzz: ${e.message}`);
    throw e;
  } finally {
    for (const c of external) await c.close();
  }
}

/**
 * The protocol's 30 s answer timeout. `OARC_TEST_ENGINE_TIMEOUT_MS` shortens it for oarc's own
 * tests of a silent engine; it is not a user setting (docs/engine-protocol.md fixes 30 s).
 */
function engineTimeoutMs(env: NodeJS.ProcessEnv): number {
  const ms = Number(env.OARC_TEST_ENGINE_TIMEOUT_MS ?? '');
  return Number.isInteger(ms) && ms > 0 ? ms : ENGINE_TIMEOUT_MS;
}

function report(r: FuzzResult, backends: string[], docs: PackDocs | undefined, out: string, json: boolean, io: Io): number {
  const secs = (r.elapsedMs / 1000).toFixed(1);
  const summary: Record<string, unknown> = { seed: r.seed, cases: r.cases, occurrences: r.occurrences, backends, decisions: r.decisions, differences: r.finding ? 1 : 0 };
  if (r.finding === undefined) {
    io.err(`oarc fuzz: ${r.cases} cases in ${secs} s, ${(r.cases / Math.max(r.elapsedMs / 1000, 1e-3)).toFixed(0)} cases/s, 0 found\n`);
    if (json) io.out(`${toJsonText(summary)}\n`);
    else io.out(`oarc fuzz: no difference in ${r.cases} cases (${r.occurrences} occurrences) between ${backends.join(', ')} (seed ${r.seed})\n`);
    return EXIT_OK;
  }
  const f = r.finding;
  const id = `fuzz-${r.seed}-${f.caseIndex}`;
  mkdirSync(out, { recursive: true });
  const casePath = join(out, `${id}.jsonl`);
  writeFileSync(casePath, f.shrunk.occurrences.map((o) => toJsonText(o)).join('\n') + '\n');
  const fixturePath = docs === undefined ? undefined : writeFixture(id, r.seed, f, docs, out);
  const d = f.difference;
  const describe = (a: Answer) => ('error' in a ? `refused (${a.error.kind}: ${a.error.message})` : `${a.decision.decision}${a.decision.rule ? ` by ${a.decision.rule}` : ''}`);
  summary.difference = {
    case: f.caseIndex,
    occurrence: d.index,
    occurrences: f.shrunk.occurrences.length,
    shrunk_from: f.original.occurrences.length,
    shrink_runs: f.shrinkRuns,
    members: d.members,
    answers: { [d.left.backend]: d.left.answer, [d.right.backend]: d.right.answer },
  };
  summary.fixture = fixturePath ?? null;
  summary.case_file = casePath;
  io.err(`oarc fuzz: ${r.cases} cases in ${secs} s, 1 found\n`);
  if (json) {
    io.out(`${toJsonText(summary)}\n`);
    return EXIT_INPUT;
  }
  io.out(
    [
      `oarc fuzz: difference at case ${f.caseIndex} (seed ${r.seed}), occurrence ${d.index + 1} of ${f.shrunk.occurrences.length} after shrinking (from ${f.original.occurrences.length}; ${f.shrinkRuns} shrink runs)`,
      `  ${d.left.backend}: ${describe(d.left.answer)}`,
      `  ${d.right.backend}: ${describe(d.right.answer)}`,
      `  differs in: ${d.members.join(', ')}`,
      fixturePath !== undefined
        ? `fixture: ${fixturePath} (replay: oarc conformance ${out})`
        : 'fixture: none (a compiled bundle carries no rule documents, or the difference is a refused occurrence)',
      `case:    ${casePath} (replay: oarc eval … --occurrence ${casePath})`,
      `seed:    ${r.seed} (rerun: the same command with --seed ${r.seed})`,
      '',
    ].join('\n'),
  );
  return EXIT_INPUT;
}

/** The fixture records the interpreter's answers when oarc's back ends disagree, oarc's otherwise. */
function writeFixture(id: string, seed: number, f: Finding, docs: PackDocs, out: string): string | undefined {
  const internal = f.answers.filter((a) => ['specialised', 'generic', 'interpreter'].includes(a.backend));
  const disagree = new Set(internal.map((a) => toJsonText(a.answers, true))).size > 1;
  const reference = (disagree ? internal.find((a) => a.backend === 'interpreter') : internal[0]) ?? internal[0];
  if (reference === undefined) return undefined;
  // A fixture asserts decisions: a difference at an occurrence the reference refused has no
  // place in one (the .jsonl keeps the case).
  const at = reference.answers[f.difference.index];
  if (at === undefined || 'error' in at) return undefined;
  const title = `oarc fuzz --seed ${seed}, case ${f.caseIndex} (shrunk): ${f.difference.left.backend} and ${f.difference.right.backend} differ at occurrence ${f.difference.index + 1}; expected is ${reference.backend}'s answer`;
  const fixture = buildFixture(id, title, docs, f.shrunk, reference.answers);
  if (fixture === undefined) return undefined;
  const path = join(out, `${id}.json`);
  writeFileSync(path, `${toJsonText(fixture)}\n`);
  return path;
}

/** Parsed rule, capability and configuration documents, for the fixture. */
function packDocs(rules: readonly string[], capability: string, configs: readonly string[]): PackDocs {
  const values = (paths: readonly string[], expand: boolean) => readSources(paths, { bigInts: true, expandSequences: expand }).docs.map((d) => d.value);
  return { capability: values([capability], false)[0], rules: values(rules, true), configs: values(configs, false) };
}

/** The pack request of the protocol: every rule file's text, as the loader would read it. */
function packRequest(rules: readonly string[], capability: string, configs: readonly string[]): PackRequest {
  const text = (f: string) => ({ name: f, text: readFileSync(f, 'utf8') });
  const files = [...new Set(readSources(rules).files ?? [])];
  return { type: 'pack', capability: text(capability), rules: files.map(text), configs: configs.map(text) };
}

async function loadDetectors(file: string): Promise<Record<string, Detector>> {
  try {
    return await importDetectors(file);
  } catch (e) {
    if (e instanceof DetectorModuleError) throw new InputError(`oarc fuzz: ${e.message}`);
    throw e;
  }
}

async function importBundle(file: string): Promise<Bundle> {
  const abs = resolve(file);
  if (!existsSync(abs)) throw new InputError(`oarc fuzz: cannot read bundle ${file}: no such file or directory`);
  let m: { default?: unknown };
  try {
    m = (await import(pathToFileURL(abs).href)) as { default?: unknown };
  } catch (e) {
    throw new InputError(`oarc fuzz: cannot import bundle ${file}: ${oneLine(e)}`);
  }
  try {
    checkBundle(m.default);
  } catch (e) {
    throw new InputError(`oarc fuzz: ${file}: ${oneLine(e).replace(/^oarc: /, '')}`);
  }
  return m.default;
}
