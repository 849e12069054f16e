/**
 * `oarc portability`: the [OAR-PROF-8] report. A non-portable rule is legal, so a pack that loads
 * always gets its report; only a pack that does not load at all fails.
 */
import { portabilityReport } from '../../compiler/index.js';
import { bool, parse } from '../args.js';
import { EXIT_INPUT, EXIT_OK } from '../errors.js';
import { painter, printDiagnostics, tally, toJson, type Io } from '../output.js';
import { PACK_OPTIONS, loadRequestedPack, packRequest } from '../pack.js';
import { plural } from '../../runtime/plural.js';

const OPTIONS = { ...PACK_OPTIONS, json: { type: 'boolean' }, strict: { type: 'boolean' } } as const;

export async function portabilityCommand(argv: readonly string[], io: Io): Promise<number> {
  const p = parse(argv, OPTIONS);
  const req = packRequest(p);
  const json = bool(p, 'json');
  const r = await loadRequestedPack(req);
  if (!r.ok) {
    if (json) io.out(`${toJson({ ok: false, diagnostics: r.diagnostics }, 2)}\n`);
    else {
      printDiagnostics(io, r.diagnostics);
      io.err(`oarc portability: the pack does not load (${tally(r.diagnostics)}), so there is nothing to report on\n`);
    }
    return EXIT_INPUT;
  }
  const report = portabilityReport(r.pack.rules);
  const portable = report.every((e) => e.portable);
  const strict = bool(p, 'strict');
  // Exit 1 under --strict says why, on stderr and in the JSON: `ok` is whether the command passed.
  const notPortable = report.filter((e) => !e.portable).map((e) => e.rule);
  const failure = strict && !portable ? `--strict: ${notPortable.length} of ${report.length} rules ${notPortable.length === 1 ? 'is' : 'are'} not portable: ${notPortable.join(', ')}` : undefined;
  const status = failure === undefined ? EXIT_OK : EXIT_INPUT;
  if (json) {
    io.out(`${toJson({ ok: failure === undefined, portable, ...(strict ? { strict } : {}), ...(failure !== undefined ? { error: failure } : {}), rules: report, diagnostics: r.diagnostics }, 2)}\n`);
    if (failure !== undefined) io.err(`oarc portability: ${failure}\n`);
    return status;
  }
  printDiagnostics(io, r.diagnostics);
  const paint = painter(io.colour.out);
  for (const e of report) {
    io.out(`${e.rule}: ${e.portable ? paint('green', 'portable') : paint('yellow', 'not portable')}\n`);
    for (const reason of e.reasons) io.out(`  - ${reason}\n`);
    for (const note of e.notes) io.out(`  note: ${note}\n`);
  }
  const nonPortable = report.filter((e) => !e.portable).length;
  const n = report.length;
  io.out(`${plural(n, 'rule')}: ${n - nonPortable} portable, ${nonPortable} not portable (host ${r.pack.capability.host})\n`);
  if (failure !== undefined) io.err(`oarc portability: ${failure}\n`);
  return status;
}
