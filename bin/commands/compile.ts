/** `oarc compile`: load, check, and write the bundle module (and, with --dts, its declarations). */
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { compile, compileDeclarations } from '../../compiler/index.js';
import { bool, parse, required, str, type Parsed } from '../args.js';
import { EXIT_INPUT, EXIT_OK, InputError, UsageError, ioReason } from '../errors.js';
import { printDiagnostics, tally, type Io } from '../output.js';
import { PACK_OPTIONS, loadRequestedPack, packRequest } from '../pack.js';
import { plural } from '../../runtime/plural.js';

const OPTIONS = {
  ...PACK_OPTIONS,
  output: { type: 'string', short: 'o' },
  runtime: { type: 'string' },
  root: { type: 'string' },
  dts: { type: 'boolean' },
} as const;

/** `gateway.bundle.mjs` → `gateway.bundle.d.mts`, `x.js` → `x.d.ts`: where TypeScript looks. */
function declarationsPath(output: string): string {
  const m = /\.(m?)js$/i.exec(output);
  if (output === '-' || m === null) throw new UsageError('--dts writes a declaration file beside the bundle, so -o must name a .mjs or .js file');
  return `${output.slice(0, m.index)}.d.${m[1] ?? ''}ts`;
}

/** --root must be an existing directory: a typo would silently record odd relative sources. */
function rootDirectory(p: Parsed): string | undefined {
  const root = str(p, 'root');
  if (root === undefined) return undefined;
  let isDirectory = false;
  try {
    isDirectory = statSync(root).isDirectory();
  } catch {
    // reported below
  }
  if (!isDirectory) throw new UsageError(`--root ${root} is not a directory`);
  return root;
}

export async function compileCommand(argv: readonly string[], io: Io): Promise<number> {
  const p = parse(argv, OPTIONS);
  const request = packRequest(p);
  const output = required(p, 'output', 'bundle.mjs');
  const runtime = str(p, 'runtime');
  if (runtime === '') throw new UsageError('option --runtime needs a module specifier');
  const dts = bool(p, 'dts') ? declarationsPath(output) : undefined;
  const root = rootDirectory(p);
  const req = root === undefined ? request : { ...request, root };

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
  write(output, text);
  if (dts !== undefined) write(dts, compileDeclarations(r.pack));
  io.err(`oarc compile: ${plural(r.pack.rules.length, 'rule')} → ${output}${dts === undefined ? '' : ` (declarations: ${dts})`}\n`);
  return EXIT_OK;
}

function write(file: string, text: string): void {
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  } catch (e) {
    throw new InputError(`oarc compile: cannot write ${file}: ${ioReason(e)}`);
  }
}
