/**
 * `oarc conformance …`: the conformance runner's own command line (conformance/report.ts `main`),
 * given the arguments unchanged and the CLI's output streams.
 */
import { wantsHelp } from '../args.js';
import { exitStatus, exported, importPart } from '../delegate.js';
import { COMMANDS } from '../help.js';
import type { Io } from '../output.js';

type Report = typeof import('../../conformance/report.js');

export async function conformanceCommand(argv: readonly string[], io: Io): Promise<number> {
  // The runner documents its own arguments; the CLI says what the command is for first.
  if (wantsHelp(argv)) io.out(COMMANDS.conformance as string);
  const part = await importPart<Report>('conformance/report.js', 'the conformance runner', io);
  const main = exported(part, 'main', 'conformance/report.js', io);
  return exitStatus(main([...argv], { out: io.out, err: io.err }));
}
