/**
 * oarc's own side of the engine protocol (docs/engine-protocol.md), for `oarc adapter`: the
 * reference adapter another implementation's is checked against, and what `oarc fuzz --against
 * "oarc adapter"` runs to fuzz oarc against itself through the protocol.
 */
import { compileToBundle, loadPackTexts } from '../compiler/index.js';
import { formatDiagnostic } from '../compiler/diagnostics.js';
import { COMPILER_VERSION } from '../compiler/version.js';
import { createEngine, type Engine } from '../runtime/engine.js';
import type { Detector } from '../runtime/detectors.js';
import { HostInputError } from '../runtime/host-input.js';
import { decisionToJson, occurrenceFromJson } from '../runtime/wire.js';
import type { PackRequest, ProtocolEngine } from './protocol.js';

export function oarcProtocolEngine(detectors: Readonly<Record<string, Detector>>): ProtocolEngine {
  let engine: Engine | undefined;
  return {
    name: `oarc ${COMPILER_VERSION}`,
    load(pack: PackRequest): string | undefined {
      // The names are for messages (docs/engine-protocol.md): a diagnostic names the file it is in.
      const configs = pack.configs ?? [];
      const r = loadPackTexts({
        capability: pack.capability.text,
        rules: pack.rules.map((s) => s.text),
        configs: configs.map((s) => s.text),
        names: { capability: pack.capability.name, rules: pack.rules.map((s) => s.name), configs: configs.map((s) => s.name) },
      });
      if (!r.ok) return r.diagnostics.filter((d) => d.severity === 'error').map(formatDiagnostic).join('; ');
      try {
        engine = createEngine(compileToBundle(r.pack), { detectors });
      } catch (e) {
        return e instanceof Error ? e.message : String(e);
      }
      return undefined;
    },
    decide(occurrence: unknown) {
      try {
        return { decision: decisionToJson((engine as Engine).decide(occurrenceFromJson(occurrence))) };
      } catch (e) {
        if (e instanceof HostInputError) return { error: { kind: 'occurrence', message: e.message } };
        return { error: { kind: 'internal', message: e instanceof Error ? e.message : String(e) } };
      }
    },
  };
}
