/** `oarc check`: the checks of `oarc compile`, without writing anything. */
import { bool, parse } from '../args.js';
import { EXIT_INPUT, EXIT_OK } from '../errors.js';
import { printDiagnostics, tally, toJson, type Io } from '../output.js';
import { PACK_OPTIONS, loadRequestedPack, packRequest } from '../pack.js';

const OPTIONS = { ...PACK_OPTIONS, json: { type: 'boolean' } } as const;

export async function checkCommand(argv: readonly string[], io: Io): Promise<number> {
  const p = parse(argv, OPTIONS);
  const req = packRequest(p);
  const r = await loadRequestedPack(req);
  if (bool(p, 'json')) {
    io.out(`${toJson({ ok: r.ok, diagnostics: r.diagnostics }, 2)}\n`);
    return r.ok ? EXIT_OK : EXIT_INPUT;
  }
  printDiagnostics(io, r.diagnostics);
  if (!r.ok) {
    io.err(`oarc check: ${tally(r.diagnostics)}\n`);
    return EXIT_INPUT;
  }
  const n = r.pack.rules.length;
  const warnings = r.diagnostics.length;
  io.out(`ok: ${n} rule${n === 1 ? '' : 's'}${warnings > 0 ? `, ${warnings} warning${warnings === 1 ? '' : 's'}` : ''}\n`);
  return EXIT_OK;
}
