/** `oarc test`: run a pack's test files (packtest/), print the report, exit 0 only when all pass. */
import { formatCoverage, formatJunit, formatText, meetsThreshold, parseThreshold, reportJson, runTests, unreadableLine, type BackendChoice, type RunResult } from '../../packtest/index.js';
import { rerunOnChange } from '../../watch/index.js';
import { bool, parse, str } from '../args.js';
import { EXIT_INPUT, EXIT_OK, UsageError } from '../errors.js';
import { painter, toJson, type Io } from '../output.js';
import { didYouMean } from '../../runtime/suggest.js';

const OPTIONS = {
  format: { type: 'string' },
  backend: { type: 'string' },
  coverage: { type: 'boolean' },
  threshold: { type: 'string' },
  watch: { type: 'boolean' },
  verbose: { type: 'boolean', short: 'v' },
  help: { type: 'boolean', short: 'h' },
} as const;

const FORMATS = ['text', 'json', 'junit'];
const BACKENDS = ['compiled', 'interpreter', 'both'];

export async function testCommand(argv: readonly string[], io: Io): Promise<number> {
  const p = parse(argv, OPTIONS);
  const format = str(p, 'format') ?? 'text';
  if (!FORMATS.includes(format)) throw new UsageError(`--format must be one of ${FORMATS.join(', ')}, not ${format}${didYouMean(format, FORMATS)}`);
  const backend = str(p, 'backend') ?? 'compiled';
  if (!BACKENDS.includes(backend)) throw new UsageError(`--backend must be one of ${BACKENDS.join(', ')}, not ${backend}${didYouMean(backend, BACKENDS)}`);
  const thresholdText = str(p, 'threshold');
  const threshold = thresholdText === undefined ? undefined : parseThreshold(thresholdText);
  if (thresholdText !== undefined && threshold === undefined) throw new UsageError(`--threshold must be a percentage from 0 to 100, such as 90 or 99.5, not ${thresholdText}`);
  const coverage = bool(p, 'coverage');
  const paths = p.positionals.length > 0 ? p.positionals : ['.'];

  const once = async (): Promise<{ code: number; inputs: string[] }> => {
    const r = await runTests(paths, { backend: backend as BackendChoice });
    const below = threshold !== undefined && !meetsThreshold(r.coverage.covered, r.coverage.total, threshold);
    print(r, format, coverage, bool(p, 'verbose'), io);
    if (below) io.err(`oarc test: coverage ${r.coverage.percent}% is below the threshold of ${thresholdText}% (${r.coverage.covered} of ${r.coverage.total} rules both fired and passed)\n`);
    const ok = r.failed === 0 && r.unreadable.length === 0 && r.files.length > 0 && !below;
    return { code: ok ? EXIT_OK : EXIT_INPUT, inputs: [...r.directories, ...paths, ...r.files.flatMap((f) => f.inputs)] };
  };
  if (!bool(p, 'watch')) return (await once()).code;
  await rerunOnChange(
    async () => (await once()).inputs,
    (file) => io.err(`\n-- ${file} changed; running the tests again --\n`),
  );
  return EXIT_OK;
}

function print(r: RunResult, format: string, coverage: boolean, verbose: boolean, io: Io): void {
  if (format === 'json') io.out(`${toJson(reportJson(r, coverage), 2)}\n`);
  else if (format === 'junit') {
    io.out(formatJunit(r));
    // The XML goes to a CI report; the coverage table, and why the run failed before any test ran,
    // to the log beside it, where someone reading why the job is red looks first.
    for (const u of r.unreadable) io.err(`oarc test: ${unreadableLine(u)}\n`);
    if (r.files.length === 0) io.err('oarc test: no test files found (*.test.yaml, *.test.yml, *.test.json); name a test file or a directory holding some\n');
    if (coverage) io.err(formatCoverage(r.coverage));
  } else {
    io.out(formatText(r, { verbose, paint: painter(io.colour.out) }));
    if (coverage) io.out(formatCoverage(r.coverage));
  }
}
