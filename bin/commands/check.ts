/** `oarc check`: the checks of `oarc compile`, without writing anything. */
import { bool, parse, type Parsed } from '../args.js';
import { EXIT_INPUT, EXIT_OK } from '../errors.js';
import { printDiagnostics, tally, toJson, type Io } from '../output.js';
import { PACK_OPTIONS, loadRequestedPack, packRequest, type PackRequest } from '../pack.js';
import { rerunOnChange } from '../../watch/index.js';

const OPTIONS = { ...PACK_OPTIONS, json: { type: 'boolean' }, watch: { type: 'boolean' } } as const;

export async function checkCommand(argv: readonly string[], io: Io): Promise<number> {
  const p = parse(argv, OPTIONS);
  const req = packRequest(p);
  if (!bool(p, 'watch')) return check(req, p, io);
  // Re-check on any change to the files the check read: the capability, configurations, rules.
  await rerunOnChange(
    async () => {
      await check(req, p, io);
      return [req.capability, ...req.configs, ...req.rules];
    },
    (file) => io.err(`\n-- ${file} changed; checking again --\n`),
  );
  return EXIT_OK;
}

async function check(req: PackRequest, p: Parsed, io: Io): Promise<number> {
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
