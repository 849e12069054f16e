/**
 * `oarc fmt`: the canonical layout of rule documents (format/). Prints the formatted text of one
 * file; `--check` prints a unified diff of each file not in the layout and exits 1; `--write`
 * rewrites them in place.
 */
import { writeFileSync } from 'node:fs';
import { readSourceText } from '../../compiler/load/source.js';
import { formatTargets, formatText, unifiedDiff } from '../../format/index.js';
import { bool, parse } from '../args.js';
import { EXIT_INPUT, EXIT_OK, UsageError } from '../errors.js';
import { printDiagnostics, type Io } from '../output.js';

const OPTIONS = {
  check: { type: 'boolean' },
  write: { type: 'boolean', short: 'w' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function fmtCommand(argv: readonly string[], io: Io): Promise<number> {
  const p = parse(argv, OPTIONS);
  const check = bool(p, 'check');
  const write = bool(p, 'write');
  if (check && write) throw new UsageError('give --check or --write, not both');
  const paths = p.positionals.length > 0 ? p.positionals : ['.'];
  const { files, unreadable } = formatTargets(paths);
  // Like `oarc check`, a run over no rule file at all is a mistake (a wrong directory), not a pass.
  if (files.length === 0 && unreadable.length === 0) {
    io.err(`oarc fmt: no rule files (*.json, *.yaml, *.yml) under ${paths.join(', ')}; nothing was ${check ? 'checked' : 'formatted'}\n`);
    return EXIT_INPUT;
  }
  // One path that is not there is reported as such below (cannot read it), not as a wrong count.
  const oneMissing = p.positionals.length === 1 && unreadable.length === 1;
  if (!check && !write && !oneMissing && (files.length !== 1 || unreadable.length > 0)) {
    throw new UsageError('without --check or --write, give exactly one file: its formatted text is printed on stdout');
  }
  let failed = unreadable.length > 0;
  for (const u of unreadable) io.err(`oarc fmt: cannot read ${u}: no such file or directory\n`);
  let unformatted = 0;
  for (const file of files) {
    // Read as `oarc check` reads it, refusing what it refuses (invalid UTF-8, too large, not a
    // regular file) with the same message: a lenient read would write U+FFFD over bad bytes.
    const read = readSourceText(file);
    if (read.text === undefined) {
      printDiagnostics(io, read.diagnostics);
      failed = true;
      continue;
    }
    const before = read.text;
    const r = formatText(before, file);
    if (!r.ok) {
      for (const x of r.problems) io.err(`${file}:${x.line}:${x.column}: cannot format: ${x.message}\n`);
      failed = true;
      continue;
    }
    if (!check && !write) io.out(r.text);
    else if (r.text !== before) {
      unformatted++;
      if (check) io.out(unifiedDiff(before, r.text, `${file} (as written)`, `${file} (formatted)`));
      else {
        writeFileSync(file, r.text);
        io.err(`formatted ${file}\n`);
      }
    }
  }
  if (check && unformatted > 0) io.err(`oarc fmt: ${unformatted} file${unformatted === 1 ? ' is' : 's are'} not formatted; run \`oarc fmt --write\` on ${unformatted === 1 ? 'it' : 'them'}\n`);
  return failed || (check && unformatted > 0) ? EXIT_INPUT : EXIT_OK;
}
