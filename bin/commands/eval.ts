/**
 * `oarc eval`: decide occurrences against a compiled bundle or rule documents compiled in process,
 * and print each decision with its trace. Several occurrences are one session: one engine, one
 * counter store, activity tracked across them ([OAR-CONF-31], [OAR-PROF-9]).
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { formatCorpusDiagnostic, loadCorpus } from '../../injection/corpus.js';
import { DETECTOR_REF, corpusDetector, factNames } from '../../injection/detector.js';
import { DetectorModuleError, importDetectors, missingDetector } from '../../packtest/detectors.js';
import { HostInputError, checkBundle, createEngine, decisionToJson, occurrencePathToJson, type Bundle, type DecisionEffect, type Detector, type Engine } from '../../runtime/index.js';
import { bool, parse, required, str, strs } from '../args.js';
import { describeDecision } from '../describe.js';
import { EXIT_DECISION, EXIT_INPUT, EXIT_OK, ExitError, InputError, UsageError, errorCode, oneLine } from '../errors.js';
import { painter, printDiagnostics, tally, toJson, type Io } from '../output.js';
import { locatedError, readOccurrenceFile, readOccurrenceStream, summarize, toOccurrence, type RawOccurrence } from '../occurrence.js';
import { PACK_OPTIONS, loadRequestedPack } from '../pack.js';
import { didYouMean } from '../../runtime/suggest.js';
import { plural } from '../../runtime/plural.js';

const OPTIONS = {
  ...PACK_OPTIONS,
  occurrence: { type: 'string' },
  detectors: { type: 'string' },
  'injection-corpus': { type: 'string', multiple: true },
  session: { type: 'string' },
  json: { type: 'boolean' },
  'fail-on': { type: 'string' },
} as const;

/** The effects `--fail-on` may list: every decision but `none`. */
const GATED: readonly DecisionEffect[] = ['block', 'transform', 'nudge', 'warn'];

/** `--fail-on block,nudge` as a set of effects; anything else is a usage error naming it. */
function failOn(text: string | undefined): ReadonlySet<DecisionEffect> {
  if (text === undefined) return new Set();
  const effects = text.split(',').map((e) => e.trim());
  for (const e of effects) {
    if (!GATED.includes(e as DecisionEffect)) throw new UsageError(`--fail-on takes a comma-separated list of ${GATED.join(', ')}; \`${e}\` is not one of them${didYouMean(e, GATED)}`);
  }
  return new Set(effects as DecisionEffect[]);
}

const BUNDLE_FILE = /\.(mjs|js)$/i;

export async function evalCommand(argv: readonly string[], io: Io): Promise<number> {
  const p = parse(argv, OPTIONS);
  if (p.positionals.length === 0) throw new UsageError('no bundle or rule files given');
  const occurrences = required(p, 'occurrence', 'file|-');
  const gate = failOn(str(p, 'fail-on'));
  const isBundle = p.positionals.length === 1 && BUNDLE_FILE.test(p.positionals[0] as string);
  if (!isBundle && p.positionals.some((f) => BUNDLE_FILE.test(f))) {
    throw new UsageError('give either one compiled bundle (.mjs/.js) or rule documents, not both');
  }

  const bundle = isBundle
    ? await bundleFromModule(p.positionals[0] as string, str(p, 'capability'), strs(p, 'config'), io)
    : await bundleFromRules(p.positionals, required(p, 'capability', 'file'), strs(p, 'config'), io);
  const detectorsModule = str(p, 'detectors');
  const detectors = detectorsModule === undefined ? {} : await loadDetectors(detectorsModule);
  const corpus = strs(p, 'injection-corpus');
  if (corpus.length > 0) {
    if (DETECTOR_REF in detectors) throw new UsageError(`${detectorsModule} already implements ${DETECTOR_REF}; give --injection-corpus or that module's, not both`);
    detectors[DETECTOR_REF] = corpusDetector(corpus.map((path) => ({ path })), factNames(bundle.capability.host));
    warnIfUnloadable(corpus, io);
  }
  checkDetectors(bundle, detectors, detectorsModule);
  let engine: Engine;
  try {
    engine = createEngine(bundle, { detectors });
  } catch (e) {
    throw new InputError(`oarc eval: ${oneLine(e).replace(/^oarc: /, '')}`);
  }

  const session = str(p, 'session');
  const json = bool(p, 'json');
  const paint = painter(io.colour.out);
  let n = 0;
  const gated: string[] = [];
  const decideOne = (raw: RawOccurrence): void => {
    const occ = toOccurrence(raw, session);
    n++;
    let decision;
    try {
      decision = engine.decide(occ);
    } catch (e) {
      // An unknown anchor or fact name: the engine's own check, pointed at in the file.
      if (e instanceof HostInputError) throw locatedError(raw, e, occurrencePathToJson(e.path));
      const at = raw.locate([]);
      throw new InputError(`${at.file}:${at.line}:${at.column}: the occurrence could not be decided: ${oneLine(e)}`);
    }
    if (gate.has(decision.decision)) gated.push(`#${n} ${decision.decision}${decision.rule ? ` by ${decision.rule}` : ''}`);
    if (json) io.out(`${toJson(decisionToJson(decision))}\n`);
    else {
      const what = summarize(occ);
      io.out(`${n > 1 ? '\n' : ''}${paint('cyan', `#${n} ${occ.anchor}`)}${what ? ` ${what}` : ''}\n${describeDecision(decision, paint)}`);
    }
  };
  if (occurrences === '-') {
    for await (const raw of readOccurrenceStream(io.stdin)) decideOne(raw);
  } else {
    for (const raw of readOccurrenceFile(occurrences)) decideOne(raw);
  }
  if (gated.length === 0) return EXIT_OK;
  // Every occurrence is still decided and printed; the status says a listed effect came up.
  io.err(`oarc eval: --fail-on ${[...gate].join(',')}: ${gated.length} of ${plural(n, 'occurrence')} decided so (${gated.join(', ')})\n`);
  return EXIT_DECISION;
}

async function bundleFromRules(rules: string[], capability: string, configs: string[], io: Io): Promise<Bundle> {
  const r = await loadRequestedPack({ rules, capability, configs });
  printDiagnostics(io, r.diagnostics);
  if (!r.ok) {
    io.err(`oarc eval: ${tally(r.diagnostics)}\n`);
    throw new ExitError(EXIT_INPUT);
  }
  const { compileToBundle } = await import('../../compiler/index.js');
  return compileToBundle(r.pack);
}

async function bundleFromModule(file: string, capability: string | undefined, configs: string[], io: Io): Promise<Bundle> {
  if (configs.length > 0) throw new UsageError('--config applies to rule documents; a compiled bundle already carries its configuration (recompile it with --config)');
  const bundle = (await importBundle(file)).default;
  try {
    checkBundle(bundle);
  } catch (e) {
    throw new InputError(`oarc eval: ${file}: ${oneLine(e).replace(/^oarc: /, '')}`);
  }
  if (capability !== undefined) await sameHost(bundle, file, capability, io);
  return bundle;
}

/** Import a bundle module by path; every failure is the user's. */
async function importBundle(file: string): Promise<{ default?: unknown }> {
  const abs = resolve(file);
  if (!existsSync(abs)) throw new InputError(`oarc eval: cannot read bundle ${file}: no such file or directory`);
  try {
    return (await import(pathToFileURL(abs).href)) as { default?: unknown };
  } catch (e) {
    const why = oneLine(e);
    if (errorCode(e) === 'ERR_MODULE_NOT_FOUND') {
      throw new InputError(
        `oarc eval: cannot import bundle ${file}: ${why}. A bundle imports its runtime helpers (oarc/runtime/internal unless compiled with --runtime): install oarc where the bundle is, or recompile it with --runtime <specifier>`,
      );
    }
    if (e instanceof SyntaxError && /does not provide an export named/.test(why)) {
      // A bundle from another oarc release names helpers this runtime does not have.
      throw new InputError(`oarc eval: cannot import bundle ${file}: ${why}. The bundle was compiled by a different version of oarc: recompile the pack with this one`);
    }
    throw new InputError(`oarc eval: cannot import bundle ${file}: ${e instanceof SyntaxError ? `not a valid JavaScript module: ${why}` : why}`);
  }
}

/** A bundle carries the capability it was compiled against; a --capability must agree with it. */
async function sameHost(bundle: Bundle, file: string, capability: string, io: Io): Promise<void> {
  const r = await loadRequestedPack({ rules: [], capability, configs: [], allowEmpty: true });
  if (!r.ok) {
    printDiagnostics(io, r.diagnostics);
    io.err(`oarc eval: ${tally(r.diagnostics)}\n`);
    throw new ExitError(EXIT_INPUT);
  }
  const cap = r.pack.capability;
  const b = bundle.capability;
  const anchors = (m: Iterable<[string, string]>) => [...m].map(([k, v]) => `${k}=${v}`).sort().join(',');
  const differs =
    cap.host !== b.host ? `was compiled for host ${b.host}, and ${capability} declares host ${cap.host}`
    : anchors(cap.coreAnchors) !== anchors(Object.entries(b.coreAnchors)) ? `was compiled for a different anchor profile map than ${capability} declares`
    : [...cap.hostAnchors].sort().join(',') !== [...b.hostAnchors].sort().join(',') ? `was compiled for a different host anchor catalogue than ${capability} declares`
    : undefined;
  if (differs !== undefined) throw new InputError(`oarc eval: ${file} ${differs}; recompile it, or leave out --capability`);
}

async function loadDetectors(file: string): Promise<Record<string, Detector>> {
  try {
    return await importDetectors(file);
  } catch (e) {
    if (e instanceof DetectorModuleError) throw new InputError(`oarc eval: ${e.message}`);
    throw e;
  }
}

/**
 * The corpus is loaded when a rule first invokes the detector, and a corpus that does not load is
 * that rule's detector failing — its on_error decides ([OAR-OPS-3]), as in a host. Say so up front
 * rather than leave a mistyped path to show only as on_error decisions.
 */
function warnIfUnloadable(files: readonly string[], io: Io): void {
  const { diagnostics } = loadCorpus(files.map((path) => ({ path })));
  if (diagnostics.length === 0) return;
  for (const d of diagnostics) io.err(`${formatCorpusDiagnostic(d)}\n`);
  io.err(`oarc eval: warning: the --injection-corpus does not load; every rule invoking ${DETECTOR_REF} fails to its on_error\n`);
}

/** Every detector a rule invokes must be implemented before the first occurrence, not during it. */
function checkDetectors(bundle: Bundle, detectors: Record<string, Detector>, module: string | undefined): void {
  const missing = missingDetector(bundle, detectors);
  if (missing === undefined) return;
  if (module === undefined) throw new UsageError(`rule ${missing.rule} invokes ${missing.ref}: give --detectors <module> with an implementation of it`);
  throw new InputError(`oarc eval: rule ${missing.rule} invokes ${missing.ref}, which ${module} does not implement`);
}
