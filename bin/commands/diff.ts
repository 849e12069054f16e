/**
 * `oarc diff <old> <new>`: what a pack change does to decisions, for pull-request review (diff/).
 * Both packs are loaded against the same capability and configuration; the rules are compared by
 * identifier on their checked form, and the decisions on the occurrence file given and on
 * generated occurrences. Exit status 0 when no occurrence was decided differently, 1 when one was.
 */
import { bool, parse, required, str, strs } from '../args.js';
import { EXIT_INPUT, EXIT_OK, UsageError } from '../errors.js';
import { toJson, type Io } from '../output.js';
import { PACK_OPTIONS } from '../pack.js';
import { hostInputProblem, loadDetectorModule, loadRules, readOccurrences, requireDetectors } from '../pack-input.js';
import { createEngine, occurrenceToJson } from '../../runtime/index.js';
import { parseSeed } from '../../fuzz/prng.js';
import { didYouMean } from '../../runtime/suggest.js';
import { plural } from '../../runtime/plural.js';

const OPTIONS = {
  ...PACK_OPTIONS,
  old: { type: 'string', multiple: true },
  new: { type: 'string', multiple: true },
  occurrence: { type: 'string' },
  detectors: { type: 'string' },
  runs: { type: 'string' },
  seed: { type: 'string' },
  format: { type: 'string' },
  json: { type: 'boolean' },
} as const;

const FORMATS = ['text', 'markdown', 'json'] as const;
export const DEFAULT_RUNS = 1000;

function count(text: string | undefined, flag: string, fallback: number, min: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > 10_000_000) throw new UsageError(`--${flag} takes a whole number from ${min} to 10000000; \`${text}\` is not one`);
  return Number(text);
}

export async function diffCommand(argv: readonly string[], io: Io): Promise<number> {
  const p = parse(argv, OPTIONS);
  const listed = strs(p, 'old').length > 0 || strs(p, 'new').length > 0;
  let oldFiles: string[];
  let newFiles: string[];
  if (listed) {
    if (p.positionals.length > 0) throw new UsageError('give the packs as <old> <new> or as --old … --new …, not both');
    oldFiles = strs(p, 'old');
    newFiles = strs(p, 'new');
    if (oldFiles.length === 0 || newFiles.length === 0) throw new UsageError(`missing --${oldFiles.length === 0 ? 'old' : 'new'} <rules>: give both --old and --new`);
  } else {
    if (p.positionals.length !== 2) throw new UsageError(`give two packs, <old> <new> (each a rule file or a directory), or --old <files…> --new <files…>; got ${plural(p.positionals.length, 'argument')}`);
    oldFiles = [p.positionals[0] as string];
    newFiles = [p.positionals[1] as string];
  }
  const format = bool(p, 'json') ? 'json' : (str(p, 'format') ?? 'text');
  if (bool(p, 'json') && str(p, 'format') !== undefined && str(p, 'format') !== 'json') throw new UsageError('--json is --format json; give one of them');
  if (!(FORMATS as readonly string[]).includes(format)) throw new UsageError(`--format takes ${FORMATS.join(', ')}; \`${format}\` is not one of them${didYouMean(format, FORMATS)}`);
  const runs = count(str(p, 'runs'), 'runs', DEFAULT_RUNS, 0);
  // The generator is oarc fuzz's (fuzz/prng.ts), so the seeds are its seeds.
  const seedText = str(p, 'seed');
  const parsedSeed = seedText === undefined ? 1 : parseSeed(seedText);
  if (parsedSeed === undefined) throw new UsageError(`--seed takes an integer from 0 to 4294967295, not \`${seedText}\``);
  const seed: number = parsedSeed;
  const capability = required(p, 'capability', 'file');
  const configs = strs(p, 'config');
  const occurrenceFile = str(p, 'occurrence');
  if (occurrenceFile === '-') throw new UsageError('--occurrence needs a file (stdin is not read by oarc diff)');

  // As for every command that loads a pack: no rules is far more often a wrong path than a pack
  // written from or down to nothing, which --allow-empty says.
  const allowEmpty = bool(p, 'allow-empty');
  const old = await loadRules('diff', oldFiles, capability, configs, io, allowEmpty);
  const now = await loadRules('diff', newFiles, capability, configs, io, allowEmpty);
  const { compileToBundle } = await import('../../compiler/index.js');
  const oldBundle = compileToBundle(old.pack);
  const newBundle = compileToBundle(now.pack);
  const detectorsModule = str(p, 'detectors');
  const detectors = await loadDetectorModule('diff', detectorsModule);
  requireDetectors('diff', oldBundle, detectors, detectorsModule);
  requireDetectors('diff', newBundle, detectors, detectorsModule);

  const given = occurrenceFile === undefined ? [] : readOccurrences('diff', occurrenceFile);
  if (given.length > 0) {
    // Refused occurrences (an unknown anchor or fact) are the file's mistake: say where, before diffing.
    const engine = createEngine(oldBundle, { detectors });
    for (const g of given) {
      try {
        engine.decide({ ...g.occurrence, session: `${g.occurrence.session ?? ''}\u0000check` });
      } catch (e) {
        const problem = hostInputProblem('diff', g.at, e);
        if (problem !== undefined) throw problem;
        throw e;
      }
    }
  }

  const { diffRules } = await import('../../diff/rules.js');
  const { generatedCases } = await import('../../diff/cases.js');
  const { runDiff } = await import('../../diff/run.js');
  const rules = diffRules(old.pack, now.pack);
  const hasAnchors = old.pack.rules.length + now.pack.rules.length > 0;
  function* cases() {
    if (given.length > 0) yield { origin: 'given' as const, occurrences: given.map((g) => occurrenceToJson(g.occurrence)) };
    if (hasAnchors) yield* generatedCases([{ bundle: oldBundle, pack: old.pack }, { bundle: newBundle, pack: now.pack }], seed, runs);
  }
  const run = runDiff({ old: oldBundle, new: newBundle, detectors, cases: cases() });
  const report = {
    same: run.changed === 0,
    old: oldFiles,
    new: newFiles,
    seed,
    runs,
    occurrence_file: occurrenceFile ?? null,
    cases: run.cases,
    decided: run.decided,
    changed: run.changed,
    rules,
    changes: run.groups,
  };
  const { markdownReport, textReport } = await import('../../diff/report.js');
  io.out(format === 'json' ? `${toJson(report, 2)}\n` : format === 'markdown' ? markdownReport(report) : textReport(report));
  return run.changed === 0 ? EXIT_OK : EXIT_CHANGED;
}

/** Some occurrence was decided differently (the same number as an input error, as the issue asks; see --help). */
export const EXIT_CHANGED = EXIT_INPUT;
