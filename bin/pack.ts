/**
 * The pack-loading half shared by compile, check, eval and portability: the same flags, the same
 * loader, the same diagnostics. The compiler is imported when a pack is loaded, so commands that
 * never load one (help, eval of a compiled bundle) start without it.
 */
import type { Diagnostic, LoadedPack } from '../compiler/index.js';
import { required, strs, type Options, type Parsed } from './args.js';
import { UsageError } from './errors.js';

export const PACK_OPTIONS: Options = {
  capability: { type: 'string' },
  config: { type: 'string', multiple: true },
  help: { type: 'boolean', short: 'h' },
};

export interface PackRequest {
  rules: string[];
  capability: string;
  configs: string[];
  /** The directory a bundle records rule sources relative to (default: the working directory). */
  root?: string;
}

/** The rule files, capability and configurations named on the command line. */
export function packRequest(p: Parsed): PackRequest {
  if (p.positionals.length === 0) throw new UsageError('no rule files given');
  return { rules: p.positionals, capability: required(p, 'capability', 'file'), configs: strs(p, 'config') };
}

export type PackLoad = { ok: true; pack: LoadedPack; diagnostics: readonly Diagnostic[] } | { ok: false; diagnostics: readonly Diagnostic[] };

/** Load and check; never throws on bad input — a missing file or bad YAML is a diagnostic. */
export async function loadRequestedPack(req: PackRequest): Promise<PackLoad> {
  const { loadPackFiles } = await import('../compiler/index.js');
  const r = loadPackFiles({ capability: req.capability, rules: req.rules, configs: req.configs, ...(req.root === undefined ? {} : { root: req.root }) });
  return r.ok ? { ok: true, pack: r.pack, diagnostics: r.pack.diagnostics } : { ok: false, diagnostics: r.diagnostics };
}
