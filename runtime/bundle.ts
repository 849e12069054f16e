/**
 * The compiled rule bundle: what `compile()` emits as an ES module and `createEngine()` runs.
 * Everything the engine needs is data plus each rule's specialised closures — its condition and its
 * copy renderer; the bundle imports nothing but this runtime.
 */
import type { FactReader } from './facts.js';
import type { CopyRenderer } from './copy.js';
import type { FactType, ScalarType } from './types.js';
import type { Procedure } from './procedure.js';

/**
 * Bumped whenever the bundle shape or what a bundle imports changes; the runtime refuses any other.
 * Format 3: helpers are imported from `oarc/runtime/internal`, rule sources are root-relative.
 * Format 4: conditions and copy renderers are module constants shared by the rules and the
 * per-anchor decision `procedures`.
 */
export const BUNDLE_FORMAT = 4;

export type Kind = 'schema' | 'policy' | 'invariant' | 'detector';
export type Effect = 'block' | 'warn' | 'nudge' | 'allow' | 'transform';
export type Enforcement = 'enforce' | 'monitor' | 'off';
export type SideEffect = 'increment_counter' | 'reset_counter' | 'publish_event' | 'increment_breaker' | 'reset_breaker';

export type BundleSymbol =
  | { kind: 'fact'; name: string; type: FactType; tier: string }
  | { kind: 'function'; name: string; param: ScalarType; result: ScalarType; tier: string };

export interface BundleRule {
  qid: string;
  id: string;
  kind: Kind;
  effect: Effect;
  /** Effective enforcement, after configuration documents ([OAR-CFG-2], [OAR-CFG-3]). */
  enforcement: Enforcement;
  mandatory: boolean;
  /** The host-local anchor the rule is bound to ([OAR-PROF-4], [OAR-CONF-29]). */
  anchor: string;
  /** Selector clauses: the fact's slot and the clause's list ([OAR-SEL-1], [OAR-SEL-2]). */
  selector: { slot: number; values: string[] }[];
  when?: (f: FactReader) => unknown;
  flow?: string[];
  /** `fail_closed`, `fail_open`, or the qualified id of the rule to substitute ([OAR-OPS-5]). */
  onError: 'fail_closed' | 'fail_open' | { rule: string; id: string };
  onFire: SideEffect[];
  /** Qualified identifiers this rule suppresses ([OAR-EVAL-13]). */
  overrides: string[];
  transform?: { action: 'redact' | 'replace' | 'annotate'; replacement: string; target: 'content' | number; targetName: string };
  detector?: string;
  /** Renders the rule's `copy` object ([OAR-COPY-1]); members it omits stay absent ([OAR-COPY-7]). */
  copy: CopyRenderer;
  /** Slot of the `counter_scope` fact ([OAR-FIRE-10]). */
  counterScope?: number;
  /** Does the condition or copy read this rule's own `fire_count` / `breaker_count`? */
  readsCounters: boolean;
  /** Qualified identifiers whose counters `fire_count_of` / `breaker_count_of` read ([OAR-FIRE-11]). */
  counterReads: string[];
  /** `file:line:col` of the rule document (DESIGN: code generation rule 4). */
  source: string;
}

/** The capability the bundle was compiled against, as the runtime needs it. */
export interface BundleCapability {
  host: string;
  /** Core anchor → host-local anchor. */
  coreAnchors: Record<string, string>;
  hostAnchors: string[];
  profiles: string[];
  activityWindow: number;
  supportsTransform: boolean;
  expressionNodesMax: number;
  detectors: string[];
}

export interface Bundle {
  format: number;
  /** `oarc@<version>` of the compiler that produced it. */
  compiler: string;
  capability: BundleCapability;
  symbols: BundleSymbol[];
  /** In evaluation order: kind, then qualified identifier by code point ([OAR-EVAL-1]). */
  rules: BundleRule[];
  /**
   * Per host-local anchor, the specialised decision procedure (compiler/emit/procedure.ts): absent
   * on the `compiled` and `interpreter` back ends, which decide on the generic engine alone.
   */
  procedures?: Record<string, Procedure>;
}

/** Refuse a bundle this runtime cannot run, with a message that says why. */
export function checkBundle(b: unknown): asserts b is Bundle {
  if (typeof b !== 'object' || b === null) throw new Error('oarc: not a rule bundle (expected an object)');
  const x = b as Partial<Bundle>;
  if (x.format !== BUNDLE_FORMAT) {
    throw new Error(`oarc: bundle format ${String(x.format)} from ${String(x.compiler)} cannot run on this runtime (it runs format ${BUNDLE_FORMAT}); recompile the pack with this version of oarc`);
  }
  if (!Array.isArray(x.rules) || !Array.isArray(x.symbols) || typeof x.capability !== 'object') {
    throw new Error(`oarc: bundle from ${String(x.compiler)} is malformed (rules, symbols or capability missing)`);
  }
}
