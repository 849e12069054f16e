/**
 * `oarc adapter [--detectors <module>]`: oarc as an engine behind the JSON Lines protocol of
 * docs/engine-protocol.md, on stdin and stdout — the reference adapter, and what `oarc fuzz
 * --against "oarc adapter"` fuzzes oarc against through the protocol.
 */
import { DetectorModuleError, importDetectors } from '../../packtest/detectors.js';
import { oarcProtocolEngine } from '../../fuzz/adapter.js';
import { serveProtocol } from '../../fuzz/protocol.js';
import { parse, str } from '../args.js';
import { EXIT_OK, InputError } from '../errors.js';
import type { Io } from '../output.js';

const OPTIONS = {
  detectors: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function adapterCommand(argv: readonly string[], io: Io): Promise<number> {
  const p = parse(argv, OPTIONS, false);
  const module = str(p, 'detectors');
  let detectors = {};
  if (module !== undefined) {
    try {
      detectors = await importDetectors(module);
    } catch (e) {
      if (e instanceof DetectorModuleError) throw new InputError(`oarc adapter: ${e.message}`);
      throw e;
    }
  }
  await serveProtocol(io.stdin, io.out, oarcProtocolEngine(detectors));
  return EXIT_OK;
}
