/**
 * `oarc corpus check <files…>` and `oarc corpus eval --labeled <file>`: the injection corpus loader
 * and the detector's figures from the command line (the library is injection/).
 */
import { InjectionClassifier, DEFAULT_THRESHOLD } from '../../injection/classifier.js';
import { formatCorpusDiagnostic, loadCorpus, type CorpusDiagnostic, type CorpusSource } from '../../injection/corpus.js';
import { SEED_CORPUS } from '../../injection/detector.js';
import { evaluate, type EvalReport } from '../../injection/evaluate.js';
import { bool, parse, required, strs } from '../args.js';
import { EXIT_INPUT, EXIT_OK, ExitError, InputError, UsageError } from '../errors.js';
import { painter, toJson, type Io } from '../output.js';
import { didYouMean } from '../../runtime/suggest.js';
import { plural } from '../../runtime/plural.js';

const CHECK = { strict: { type: 'boolean' }, json: { type: 'boolean' } } as const;
const EVAL = { corpus: { type: 'string', multiple: true }, labeled: { type: 'string' }, strict: { type: 'boolean' }, json: { type: 'boolean' } } as const;

const SUBCOMMANDS = ['check', 'eval'];

export async function corpusCommand(argv: readonly string[], io: Io): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'check') return check(rest, io);
  if (sub === 'eval') return evalCorpus(rest, io);
  throw new UsageError(sub === undefined ? 'give a subcommand: check or eval' : `unknown subcommand ${sub}${didYouMean(sub, SUBCOMMANDS)}; the subcommands are ${SUBCOMMANDS.join(', ')}`);
}

const sources = (files: readonly string[]): CorpusSource[] => files.map((path) => ({ path }));

function printCorpusDiagnostics(io: Io, ds: readonly CorpusDiagnostic[]): void {
  const paint = painter(io.colour.err);
  for (const d of ds) io.err(`${paint('red', formatCorpusDiagnostic(d))}\n`);
}

function check(argv: readonly string[], io: Io): number {
  const p = parse(argv, CHECK);
  if (p.positionals.length === 0) throw new UsageError('no corpus files given');
  const r = loadCorpus(sources(p.positionals), { strict: bool(p, 'strict') });
  // A file holding no record at all (empty, or only comments) is almost surely a wrong path or a
  // failed export, not a corpus: a check that passes it would pass nothing.
  const empty = p.positionals.filter((f) => !r.diagnostics.some((d) => d.file === f) && !r.records.some((x) => x.file === f));
  for (const f of empty) r.diagnostics.push({ file: f, line: 0, message: 'no records: the file holds only blank lines and comments; an empty corpus is almost certainly a mistake (a wrong path, an unfinished export)' });
  const ok = r.diagnostics.length === 0;
  if (bool(p, 'json')) {
    io.out(`${toJson({ ok, records: r.records.length, diagnostics: r.diagnostics }, 2)}\n`);
    return ok ? EXIT_OK : EXIT_INPUT;
  }
  printCorpusDiagnostics(io, r.diagnostics);
  if (!ok) {
    io.err(`oarc corpus check: ${plural(r.diagnostics.length, 'error')}\n`);
    return EXIT_INPUT;
  }
  io.out(`ok: ${plural(r.records.length, 'record')} in ${plural(p.positionals.length, 'file')}\n`);
  return EXIT_OK;
}

/** Load files that must load cleanly, or stop with their diagnostics. `file` names one in messages. */
function loadOrStop(files: readonly string[], strict: boolean, what: string, io: Io, file?: string) {
  const r = loadCorpus(files.map((path) => ({ path, ...(file !== undefined ? { what: file } : {}) })), { strict });
  if (r.diagnostics.length === 0) return r.records;
  printCorpusDiagnostics(io, r.diagnostics);
  io.err(`oarc corpus eval: the ${what} did not load: ${plural(r.diagnostics.length, 'error')}\n`);
  throw new ExitError(EXIT_INPUT);
}

function evalCorpus(argv: readonly string[], io: Io): number {
  const p = parse(argv, EVAL, false);
  const labeledFile = required(p, 'labeled', 'file.jsonl');
  const corpusFiles = strs(p, 'corpus');
  const strict = bool(p, 'strict');
  const corpus = loadOrStop(corpusFiles.length > 0 ? corpusFiles : [SEED_CORPUS], strict, 'corpus', io);
  const labeled = loadOrStop([labeledFile], false, 'labeled set', io, 'the labeled set');
  let report: EvalReport;
  try {
    const classifier = new InjectionClassifier(corpus);
    report = evaluate(labeled, (t) => classifier.classify(t), DEFAULT_THRESHOLD);
  } catch (e) {
    throw new InputError(`oarc corpus eval: ${(e as Error).message}`);
  }
  if (bool(p, 'json')) io.out(`${toJson(report, 2)}\n`);
  else io.out(formatReport(report, corpusFiles.length > 0 ? corpusFiles.join(', ') : 'the seed corpus', labeledFile));
  return EXIT_OK;
}

function formatReport(r: EvalReport, corpus: string, labeled: string): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const lines = [
    `${labeled}: ${r.records} records (${r.positives} injections, ${r.negatives} benign), scored against ${corpus}`,
    `ROC AUC                 ${r.roc_auc.toFixed(4)}`,
    `at threshold ${r.threshold}        precision ${pct(r.precision)}, recall ${pct(r.recall)}`,
    `recall at 1% FPR        ${pct(r.recall_at_1pct_fpr)}`,
    `recall at 5% FPR        ${pct(r.recall_at_5pct_fpr)}`,
    'nearest-neighbour signal accuracy:',
    ...Object.entries(r.nearest_signal_accuracy).map(([s, b]) => `  ${s.padEnd(22)}${String(b.correct).padStart(4)} of ${String(b.records).padEnd(4)} ${pct(b.accuracy)}`),
  ];
  return `${lines.join('\n')}\n`;
}
