/**
 * The engine test harness: build a pack from YAML (or JSON) rule texts and a capability, compile it
 * on BOTH back ends — generated code and the tree-walking interpreter — and run every occurrence on
 * both, asserting that the two decisions are identical before handing one back to the test.
 *
 *   const h = harness({ capability: cap({ profiles: ['tool'] }), rules: [yamlText, rule({...})] });
 *   const d = h.decide({ anchor: 'tool.pre_invoke', toolCall: { name: 'read' } });
 *   expect(trace(d)).toEqual(['acme/A:fired']);
 *
 * Each back end gets its own engine and, through `options(backend)`, its own counter store, event
 * sink and detectors, so a session (several `decide` calls) runs twice, independently, and the two
 * runs must agree at every step. An occurrence may be given as a function of the back end so a test
 * can count, per back end, how often a lazy provider was asked.
 */
import { expect } from 'vitest';
import { compileToBundle, loadPackTexts, type Backend, type LoadedPack } from '../../compiler/index.js';
import { formatDiagnostic, type Diagnostic } from '../../compiler/diagnostics.js';
import { CORE_ANCHORS } from '../../compiler/load/vocabulary.js';
import { createEngine, MemoryCounterStore, type Decision, type Engine, type EngineOptions, type Occurrence } from '../../runtime/index.js';
import type { AsyncCounterStore } from '../../runtime/async-counters.js';

export const BACKENDS: readonly Backend[] = ['specialised', 'compiled', 'interpreter'];


export interface CapabilityOptions {
  host?: string;
  /** Core anchor → host-local anchor; every core anchor not named here is declared unsupported. */
  core?: Record<string, string>;
  hostAnchors?: string[];
  profiles?: string[];
  window?: number;
  transform?: boolean;
  hostFacts?: { name: string; type: string }[];
  detectors?: string[];
}

/** The identity map for every core anchor: occurrences spell anchors as the rules do. */
export const IDENTITY: Record<string, string> = Object.fromEntries(CORE_ANCHORS.map((a) => [a, a]));

/** A capability document (section 8.2) as YAML text. */
export function cap(o: CapabilityOptions = {}): string {
  const core = o.core ?? IDENTITY;
  const doc: Record<string, unknown> = {
    oar_capability_version: '1.0',
    host: o.host ?? 'acme.gw',
    anchors: {
      core,
      unsupported: CORE_ANCHORS.filter((a) => !(a in core)),
      host: o.hostAnchors ?? [],
    },
    profiles: o.profiles ?? [],
    activity_window: o.window ?? 0,
    supports_transform: o.transform ?? false,
    expression_nodes_max: 1024,
    host_facts: o.hostFacts ?? [],
    detectors: o.detectors ?? [],
  };
  return toYaml(doc);
}

/** A rule document as text, with `oar: "1.0"` and `kind: policy` unless given. */
export function rule(fields: Record<string, unknown>): string {
  return toYaml({ oar: '1.0', kind: 'policy', ...fields });
}

/** JSON is YAML; a JSON text keeps the harness independent of any YAML dumper. */
function toYaml(v: unknown): string {
  return JSON.stringify(v, null, 2);
}

export interface HarnessInput {
  capability: string;
  rules: readonly string[];
  configs?: readonly string[];
  /** Engine options for one back end; called once per back end. */
  options?: (backend: Backend) => EngineOptions;
}

/** Load a pack, failing the test with every diagnostic when it does not load. */
export function load(input: { capability: string; rules: readonly string[]; configs?: readonly string[] }): LoadedPack {
  const r = loadPackTexts({ capability: input.capability, rules: input.rules, ...(input.configs ? { configs: input.configs } : {}) });
  if (!r.ok) throw new Error(`pack did not load:\n${r.diagnostics.map(formatDiagnostic).join('\n')}`);
  return r.pack;
}

/** The diagnostics of a pack expected NOT to load. */
export function loadErrors(input: { capability: string; rules: readonly string[]; configs?: readonly string[] }): Diagnostic[] {
  const r = loadPackTexts({ capability: input.capability, rules: input.rules, ...(input.configs ? { configs: input.configs } : {}) });
  if (r.ok) throw new Error('pack loaded, but the test expected it to be rejected');
  return r.diagnostics.filter((d) => d.severity === 'error');
}

export type OccurrenceInput = Occurrence | ((backend: Backend) => Occurrence);

export interface Harness {
  readonly pack: LoadedPack;
  readonly engines: Readonly<Record<Backend, Engine>>;
  /** Decide on both back ends, assert the decisions are identical, return one. */
  decide(occ: OccurrenceInput): Decision;
  /** Decide a sequence of occurrences (one session per engine), returning every decision. */
  run(occs: readonly OccurrenceInput[]): Decision[];
  /** The recent activity of a session, asserted identical on both back ends. */
  activity(session?: string): readonly string[];
  /** End a session on both back ends. */
  endSession(session: string): void;
}

export function harness(input: HarnessInput): Harness {
  const pack = load(input);
  const engines = {} as Record<Backend, Engine>;
  for (const b of BACKENDS) engines[b] = createEngine(compileToBundle(pack, b), input.options?.(b) ?? {});
  const h: Harness = {
    pack,
    engines,
    decide(occ) {
      const out = BACKENDS.map((b) => engines[b].decide(typeof occ === 'function' ? occ(b) : occ));
      BACKENDS.forEach((b, i) => {
        if (i > 0) expect(comparable(out[i] as Decision), `the ${b} back end disagrees with the ${BACKENDS[0]} one`).toEqual(comparable(out[0] as Decision));
      });
      return out[0] as Decision;
    },
    run(occs) {
      return occs.map((o) => h.decide(o));
    },
    activity(session = '') {
      const [a, ...rest] = BACKENDS.map((k) => engines[k].activity(session));
      for (const b of rest) expect(b).toEqual(a);
      return a as readonly string[];
    },
    endSession(session) {
      for (const b of BACKENDS) engines[b].endSession(session);
    },
  };
  return h;
}

/**
 * A decision as the back ends must agree on it: everything, including each trace entry's error
 * code and clause. Only an error's message text is dropped — it is prose for an operator, and the
 * two back ends word a raise differently — so its presence is compared, not its wording.
 */
function comparable(d: Decision): unknown {
  return {
    ...d,
    applied: d.applied.map((t) => (t.error ? { ...t, error: { code: t.error.code, clause: t.error.clause, message: typeof t.error.message } } : t)),
  };
}

/** The trace as `<qualified id>:<outcome>` entries, in order ([OAR-CONF-21]). */
/**
 * An in-memory store behind the async interface, so `decideAsync` runs the same values: each op of
 * a batch written is logged into `written` as `rule:action`, and every write is refused while
 * `down()` says so.
 */
export function asyncMemory(mem = new MemoryCounterStore(), o: { written?: string[]; down?: () => boolean } = {}): AsyncCounterStore {
  return {
    readMany: async (keys) => keys.map((k) => ({ ...mem.read(k) })),
    applyMany: async (ops) => {
      if (o.down?.() === true) throw new Error('redis down');
      for (const op of ops) o.written?.push(`${op.key.rule}:${op.action}`);
      mem.apply(ops);
    },
  };
}

export function trace(d: Decision): string[] {
  return d.applied.map((t) => `${t.rule}:${t.outcome}`);
}

/** The decision's headline: effect, bare id and qualified identifier. */
export function head(d: Decision): { decision: string; code: string | null; rule: string | null } {
  return { decision: d.decision, code: d.code, rule: d.rule };
}

/** The applied side-effects as `<qid>:<action>`, in application order. */
export function fired(d: Decision): string[] {
  return d.onFire.map((s) => `${s.rule}:${s.action}`);
}

/** The error code a trace entry recorded for `rule`. */
export function errorOf(d: Decision, rule: string): string | undefined {
  return d.applied.find((t) => t.rule === rule)?.error?.code;
}
