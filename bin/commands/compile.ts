/** `oarc compile`: load, check, and write the bundle module. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { compile } from '../../compiler/index.js';
import { parse, required, str } from '../args.js';
import { EXIT_INPUT, EXIT_OK, InputError, UsageError, ioReason } from '../errors.js';
import { printDiagnostics, tally, type Io } from '../output.js';
import { PACK_OPTIONS, loadRequestedPack, packRequest } from '../pack.js';

const OPTIONS = {
  ...PACK_OPTIONS,
  output: { type: 'string', short: 'o' },
  runtime: { type: 'string' },
} as const;

export async function compileCommand(argv: readonly string[], io: Io): Promise<number> {
  const p = parse(argv, OPTIONS);
  const req = packRequest(p);
  const output = required(p, 'output', 'bundle.mjs');
  const runtime = str(p, 'runtime');
  if (runtime === '') throw new UsageError('option --runtime needs a module specifier');

  const r = await loadRequestedPack(req);
  printDiagnostics(io, r.diagnostics);
  if (!r.ok) {
    io.err(`oarc compile: ${tally(r.diagnostics)}; no bundle written\n`);
    return EXIT_INPUT;
  }
  const text = compile(r.pack, runtime);
  if (output === '-') {
    io.out(text);
    return EXIT_OK;
  }
  try {
    mkdirSync(dirname(output), { recursive: true });
    writeFileSync(output, text);
  } catch (e) {
    throw new InputError(`oarc compile: cannot write ${output}: ${ioReason(e)}`);
  }
  io.err(`oarc compile: ${r.pack.rules.length} rule${r.pack.rules.length === 1 ? '' : 's'} → ${output}\n`);
  return EXIT_OK;
}
