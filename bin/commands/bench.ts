/**
 * `oarc bench [--quick] [--only=…] [--json]`: the benchmark harness (bench/index.ts `runBench`).
 * The report goes to stdout (markdown, or the results as JSON), progress to stderr.
 *
 * The harness measures oarc on packs it generates itself, against baselines that are
 * devDependencies (tinybench, cel-js): it runs from a clone of the repository, and the installed
 * package leaves it out, so there the command says so instead of reaching a missing module.
 */
import { bool, parse, str } from '../args.js';
import { exported, importPart, type Absent } from '../delegate.js';
import { EXIT_OK, EXIT_USAGE, UsageError } from '../errors.js';
import { toJson, type Io } from '../output.js';

type Harness = typeof import('../../bench/index.js');
type Section = import('../../bench/index.js').Section;

const OPTIONS = {
  quick: { type: 'boolean' },
  only: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

const NOT_INSTALLED: Absent = {
  message:
    'oarc bench: the benchmark suite measures oarc itself on generated packs and runs from a clone of the oarc repository (npm ci && npm run bench); it is not part of the installed package',
  code: EXIT_USAGE,
};

export async function benchCommand(argv: readonly string[], io: Io): Promise<number> {
  const p = parse(argv, OPTIONS, false);
  const onlyText = str(p, 'only');
  const only = onlyText?.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (onlyText !== undefined && only?.length === 0) throw new UsageError('option --only needs at least one benchmark name');
  const part = await importPart<Harness>('bench/index.js', 'the benchmark harness', io, NOT_INSTALLED);
  const runBench = exported(part, 'runBench', 'bench/index.js', io);
  const sections: readonly string[] = part.SECTIONS ?? [];
  const unknown = only?.find((s) => !sections.includes(s));
  if (unknown !== undefined) throw new UsageError(`unknown benchmark ${unknown}; the benchmarks are ${sections.join(', ')}`);
  const run = await runBench({
    quick: bool(p, 'quick'),
    ...(only ? { only: only as Section[] } : {}),
    log: (line) => io.err(`${line}\n`),
  });
  io.out(bool(p, 'json') ? `${toJson(run.sections, 1)}\n` : run.markdown);
  return EXIT_OK;
}
