/**
 * The conformance report: the object (result.ts), a human table, and the CLI entry point
 *
 *   oarc conformance <files or directories…> [--json]
 *
 * The table lists every case with its verdict; a failed case shows each differing member, a
 * skipped one what could not be adopted, an errored one why it could not be run. Its last line is
 * exactly `N passed, N failed, N skipped`, where failed counts the errored cases too (a case that
 * could not be run is not a pass, [OAR-CONF-38]); the line above it gives the same counts and says
 * how many of the failed errored. With `--json` the report itself is printed, after
 * it has been checked against `schema/conformance-report.schema.json`.
 *
 * Exit status: 0 only when no case failed or errored (skips are reported, not failures:
 * [OAR-CONF-24]) and at least one passed or failed; 1 when one failed or errored, when no fixture
 * was found or none was run (every case skipped or errored; nor can a claim be built of skips, [OAR-CONF-35]) — a run
 * that asked nothing is not a pass — or when the report itself does not validate; 2 for a usage
 * error.
 */
import { didYouMean } from '../runtime/suggest.js';
import { RUNNER_HELP, RUNNER_USAGE as USAGE } from './help.js';
import { runFixtures } from './runner.js';
import { reportJson, reportProblems, type CaseResult, type ConformanceReport } from './result.js';
import { plural } from '../runtime/plural.js';

export { buildReport, reportJson, reportProblems, toJson, ENGINE_NAME } from './result.js';
export type { AdoptableCapabilities, CaseResult, ConformanceReport, DiffEntry, Verdict } from './result.js';



/** `N passed, N failed, N skipped` — errored cases are counted as failed. */
export function summaryLine(report: ConformanceReport): string {
  const c = report.counts;
  return `${c.passed} passed, ${c.failed + c.errored} failed, ${c.skipped} skipped`;
}

/** The human-readable report. Ends with `summaryLine` (no trailing text after it but a newline). */
export function renderTable(report: ConformanceReport): string {
  const lines: string[] = [];
  const cap = report.capabilities;
  lines.push(`${report.engine.name} ${report.engine.version} — Open Agent Rules ${report.spec} conformance`);
  lines.push(
    `adoptable capabilities: profiles ${cap.profiles.join(', ') || 'none'}; detectors ${cap.detectors.join(', ') || 'none'}; ` +
      `host anchors ${yes(cap.host_anchors)}; host facts ${yes(cap.host_facts)}; transforms ${yes(cap.supports_transform)}; ` +
      `activity window up to ${cap.activity_window_max}; expression nodes up to ${cap.expression_nodes_max}`,
  );
  const corpus = report.corpus;
  lines.push(`corpus: ${corpus.paths.join(', ')} — ${plural(corpus.fixture_files, 'fixture file')}${(corpus.manifests ?? []).map((m) => `, ${m.fixtures} listed in ${m.file}`).join('')}; sha256 ${corpus.sha256}`);
  lines.push('');
  const idWidth = Math.min(48, report.cases.reduce((w, c) => Math.max(w, c.id.length), 2));
  lines.push(`${'VERDICT'.padEnd(8)} ${'ID'.padEnd(idWidth)} FILE`);
  for (const c of report.cases) {
    lines.push(`${c.verdict.padEnd(8)} ${c.id.padEnd(idWidth)} ${c.file}`);
    lines.push(...detail(c).map((l) => `${' '.repeat(9)}${l}`));
  }
  lines.push('');
  const c = report.counts;
  // The failed count is the last line's (errored included), so the two lines never disagree.
  const errored = c.errored > 0 ? ` (${c.errored} errored: could not be run)` : '';
  lines.push(`${plural(report.total, 'fixture')}: ${c.passed} passed, ${c.failed + c.errored} failed${errored}, ${c.skipped} skipped (not adoptable)`);
  lines.push(summaryLine(report));
  return `${lines.join('\n')}\n`;
}

function detail(c: CaseResult): string[] {
  switch (c.verdict) {
    case 'passed':
      return c.reason ? c.reason.split('\n').map((l) => `note: ${l}`) : [];
    case 'skipped':
      return [`not adoptable: ${c.skipped_capability ?? '?'}`, ...(c.reason ? [c.reason] : [])];
    case 'errored':
      return (c.reason ?? 'could not be run').split('\n');
    case 'failed':
      return (c.reason ?? '').split('\n').filter((l) => l !== '').map((l) => `- ${l}`);
  }
}

const yes = (b: boolean) => (b ? 'yes' : 'no');

export interface Output {
  out(text: string): void;
  err(text: string): void;
}

const STDIO: Output = {
  out: (t) => void process.stdout.write(t),
  err: (t) => void process.stderr.write(t),
};

/**
 * The `oarc conformance` command. `argv` is what follows the subcommand: paths and `--json`.
 * Returns the exit status; never calls `process.exit`.
 */
export function main(argv: readonly string[], io: Output = STDIO): number {
  let json = false;
  const paths: string[] = [];
  let options = true;
  for (const a of argv) {
    if (options && a === '--') options = false;
    else if (options && a === '--json') json = true;
    else if (options && (a === '--help' || a === '-h')) {
      io.out(RUNNER_HELP);
      return 0;
    } else if (options && a.startsWith('-') && a !== '-') {
      // The runner reads its own arguments (the CLI hands them over untouched), so the hint the
      // CLI's option parser gives every other command is given here.
      io.err(`oarc conformance: unknown option ${a}${didYouMean(a, ['--json', '--help'])}\n${USAGE}\nRun 'oarc conformance --help' for usage.\n`);
      return 2;
    } else paths.push(a);
  }
  if (paths.length === 0) {
    io.err(`oarc conformance: no fixture files or directories given\n${USAGE}\n`);
    return 2;
  }
  const report = runFixtures(paths);
  const problems = reportProblems(report);
  io.out(json ? `${reportJson(report)}\n` : renderTable(report));
  if (problems.length > 0) {
    io.err(`oarc conformance: internal error: the report does not validate against the report schema:\n${problems.map((p) => `  ${p}`).join('\n')}\n`);
    return 1;
  }
  if (report.total === 0) {
    io.err(`oarc conformance: no fixtures found under ${paths.join(', ')}\n`);
    return 1;
  }
  // [OAR-CONF-35] a conformance claim must not be built of skips: a run that judged nothing is
  // not a pass, whatever the counts of failures say.
  if (report.counts.passed + report.counts.failed === 0) {
    io.err(nothingRun(report.counts));
    return 1;
  }
  return report.counts.failed + report.counts.errored === 0 ? 0 : 1;
}

/**
 * Why a run where no case passed or failed is not a pass. Skipped cases and errored cases fail it
 * for different reasons, and the sentence names only those the run had: an errored case is to be
 * fixed, a skipped one cannot make a claim.
 */
function nothingRun(c: ConformanceReport['counts']): string {
  const counts = [c.skipped > 0 ? `${c.skipped} skipped` : '', c.errored > 0 ? `${c.errored} errored` : ''].filter(Boolean).join(', ');
  const why: string[] = [];
  // "In the report": with --json there is no table above, but each case still carries its reason.
  if (c.errored > 0) why.push(`the report says why ${c.errored === 1 ? 'the errored case' : 'each errored case'} could not be run: fix that and run again`);
  if (c.skipped > 0) why.push('a conformance claim cannot be built of skips [OAR-CONF-35]');
  return `oarc conformance: no fixture was run: ${counts}, none passed or failed; ${why.join('; ')}\n`;
}
