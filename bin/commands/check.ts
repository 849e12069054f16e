/** `oarc check`: the checks of `oarc compile`, without writing anything, in the form CI wants. */
import { bool, parse, str, type Parsed } from '../args.js';
import { EXIT_INPUT, EXIT_OK, UsageError } from '../errors.js';
import { printDiagnostics, tally, type Io } from '../output.js';
import { PACK_OPTIONS, loadRequestedPack, packRequest, type PackRequest } from '../pack.js';
import { rerunOnChange } from '../../watch/index.js';
import { FORMATS, githubReport, jsonReport, sarifReport, type Format } from '../report.js';
import { didYouMean } from '../../runtime/suggest.js';
import { plural } from '../../runtime/plural.js';

const OPTIONS = {
  ...PACK_OPTIONS,
  json: { type: 'boolean' },
  format: { type: 'string' },
  'max-warnings': { type: 'string' },
  watch: { type: 'boolean' },
} as const;

function format(p: Parsed): Format {
  const f = str(p, 'format');
  if (f === undefined) return bool(p, 'json') ? 'json' : 'text';
  if (bool(p, 'json') && f !== 'json') throw new UsageError(`--json and --format ${f} say different things`);
  if (!(FORMATS as readonly string[]).includes(f)) throw new UsageError(`unknown --format ${f}; the formats are ${FORMATS.join(', ')}${didYouMean(f, FORMATS)}`);
  return f as Format;
}

function maxWarnings(p: Parsed): number | undefined {
  const v = str(p, 'max-warnings');
  if (v === undefined) return undefined;
  if (!/^(0|[1-9][0-9]{0,8})$/.test(v)) throw new UsageError(`--max-warnings takes a count (0 or more), not ${JSON.stringify(v)}`);
  return Number(v);
}

export async function checkCommand(argv: readonly string[], io: Io): Promise<number> {
  const p = parse(argv, OPTIONS);
  const fmt = format(p);
  const limit = maxWarnings(p);
  const req = packRequest(p);
  if (!bool(p, 'watch')) return check(req, fmt, limit, io);
  // Re-check on any change to the files the check read: the capability, configurations, rules.
  await rerunOnChange(
    async () => {
      await check(req, fmt, limit, io);
      return [req.capability, ...req.configs, ...req.rules];
    },
    (file) => io.err(`\n-- ${file} changed; checking again --\n`),
  );
  return EXIT_OK;
}

async function check(req: PackRequest, fmt: Format, limit: number | undefined, io: Io): Promise<number> {
  const r = await loadRequestedPack(req);
  const warnings = r.diagnostics.filter((d) => d.severity === 'warning').length;
  const tooMany = limit !== undefined && warnings > limit;
  const ok = r.ok && !tooMany;
  if (fmt === 'json') io.out(jsonReport(ok, r.diagnostics));
  else if (fmt === 'sarif') io.out(sarifReport(r.diagnostics));
  else if (fmt === 'github') io.out(githubReport(r.diagnostics));
  else printDiagnostics(io, r.diagnostics);
  if (!r.ok) {
    if (fmt === 'text') io.err(`oarc check: ${tally(r.diagnostics)}\n`);
    return EXIT_INPUT;
  }
  if (tooMany) {
    io.err(`oarc check: ${plural(warnings, 'warning')}, more than --max-warnings ${limit}\n`);
    return EXIT_INPUT;
  }
  if (fmt === 'text') {
    const n = r.pack.rules.length;
    io.out(`ok: ${plural(n, 'rule')}${warnings > 0 ? `, ${plural(warnings, 'warning')}` : ''}\n`);
  }
  return EXIT_OK;
}
