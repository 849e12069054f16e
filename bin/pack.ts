/**
 * The pack-loading half shared by compile, check, eval and portability: the same flags, the same
 * loader, the same diagnostics. The compiler is imported when a pack is loaded, so commands that
 * never load one (help, eval of a compiled bundle) start without it.
 */
import type { Diagnostic, LoadedPack } from '../compiler/index.js';
import { bool, required, strs, type Options, type Parsed } from './args.js';
import { UsageError } from './errors.js';

export const PACK_OPTIONS: Options = {
  capability: { type: 'string' },
  config: { type: 'string', multiple: true },
  'allow-empty': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};

export interface PackRequest {
  rules: string[];
  capability: string;
  configs: string[];
  /** The directory a bundle records rule sources relative to (default: the working directory). */
  root?: string;
  /** Accept a pack with no rules (it decides `none` everywhere); otherwise that is an error. */
  allowEmpty?: boolean;
}

/** The rule files, capability and configurations named on the command line. */
export function packRequest(p: Parsed): PackRequest {
  if (p.positionals.length === 0) throw new UsageError('no rule files given');
  return { rules: p.positionals, capability: required(p, 'capability', 'file'), configs: strs(p, 'config'), allowEmpty: bool(p, 'allow-empty') };
}

export type PackLoad = { ok: true; pack: LoadedPack; diagnostics: readonly Diagnostic[] } | { ok: false; diagnostics: readonly Diagnostic[] };

/** Load and check; never throws on bad input — a missing file or bad YAML is a diagnostic. */
export async function loadRequestedPack(req: PackRequest): Promise<PackLoad> {
  const { loadPackFiles } = await import('../compiler/index.js');
  const r = loadPackFiles({ capability: req.capability, rules: req.rules, configs: req.configs, ...(req.root === undefined ? {} : { root: req.root }) });
  if (!r.ok) return { ok: false, diagnostics: r.diagnostics };
  if (r.pack.rules.length === 0 && req.allowEmpty !== true) return { ok: false, diagnostics: [...r.pack.diagnostics, emptyPack(req.rules)] };
  return { ok: true, pack: r.pack, diagnostics: r.pack.diagnostics };
}

/**
 * A pack with no rules is valid OAR, and a bundle of it allows everything: far more often a wrong
 * path or an empty directory than what was meant, so the CLI asks for it to be said.
 */
function emptyPack(paths: readonly string[]): Diagnostic {
  return {
    severity: 'error',
    clause: 'oarc/empty-pack',
    message: `no rules: ${paths.join(', ')} ${paths.length === 1 ? 'holds' : 'hold'} no rule document, and a pack without rules allows everything; pass --allow-empty if that is meant`,
    source: { file: paths[0] ?? '<input>', line: 1, column: 1 },
  };
}
