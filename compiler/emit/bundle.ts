/**
 * The bundle emitter: a checked pack → one ES module that imports only oarc's runtime and exports
 * the bundle (runtime/bundle.ts) as its default. Conditions and copy renderers become specialised
 * closures; the rest is data (selectors stay data: the engine indexes rules by their values). The same tree also yields a script body for the in-process path.
 *
 * Deterministic by construction (DESIGN rule 3): rules are in evaluation order, symbols in slot
 * order, object members in a fixed order, constants numbered in emission order — the same pack,
 * capability and compiler give byte-identical output. Every emitted program is verified before it
 * is returned (DESIGN rule 5).
 */
import { generate } from 'astring';
import type * as ES from 'estree';
import { BUNDLE_HELPERS } from '../../runtime/helpers.js';
import { BUNDLE_FORMAT, type BundleCapability, type BundleRule, type BundleSymbol } from '../../runtime/bundle.js';
import type { SymbolEntry } from '../../runtime/types.js';
import type { CheckedRule, Enforcement } from '../load/model.js';
import type { Capability } from '../load/capability.js';
import { COMPILER_ID } from '../version.js';
import { EmitScope, emitConditionFunction } from './condition.js';
import { emitCopyFunction } from './copy.js';
import { constDecl, id } from './estree.js';
import { emitProcedures, type ProcedureRule } from './procedure.js';
import { ProgramVerifier } from './verify.js';
import { pushAll } from '../arrays.js';

export interface PackForEmit {
  capability: Capability;
  symbols: readonly SymbolEntry[];
  rules: readonly CheckedRule[];
  /** Effective enforcement after configuration documents ([OAR-CFG-3]). */
  enforcement: ReadonlyMap<string, Enforcement>;
  /** How each rule file is recorded in the bundle (compiler/load/pack.ts `LoadedPack`). */
  sourceNames?: ReadonlyMap<string, string>;
}

/**
 * The module specifier a bundle imports its runtime helpers from: the internal entry point, never
 * the public `oarc/runtime` a host calls (runtime/internal.ts).
 */
export const RUNTIME_MODULE = 'oarc/runtime/internal';

const HELPER_NAMES: ReadonlySet<string> = new Set(Object.keys(BUNDLE_HELPERS));

/** A value in a data tree that is already code: a module constant (a condition, copy or procedure closure) by name. */
class Code {
  constructor(readonly name: string) {}
}

/**
 * JSON-like data → the text astring prints for its ESTree (string keys, JSON-escaped literals, a
 * negative number as unary minus, one object member a line, `__proto__` computed so it stays an own
 * key), written directly: the bundle's data is most of a large module, and its tree cost more to
 * build and print than the text. Rule text enters only through `JSON.stringify`, and the text is
 * checked as every statement is (verify.ts, data-statement.ts). test/bundle-data.test.ts holds it
 * to astring's output.
 */
export function dataText(v: unknown, indent = ''): string {
  const parts: string[] = [];
  writeData(v, indent, parts);
  return parts.join('');
}

function writeData(v: unknown, indent: string, out: string[]): void {
  if (v instanceof Code) out.push(v.name);
  else if (typeof v === 'number') out.push(v < 0 || Object.is(v, -0) ? `-${JSON.stringify(-v)}` : JSON.stringify(v));
  else if (v === null || typeof v === 'string' || typeof v === 'boolean') out.push(JSON.stringify(v));
  else if (typeof v === 'bigint') out.push(v < 0n ? `-${-v}n` : `${v}n`);
  else if (Array.isArray(v)) {
    out.push('[');
    v.forEach((x, i) => {
      if (i > 0) out.push(', ');
      writeData(x, indent, out);
    });
    out.push(']');
  } else if (typeof v === 'object') {
    const inner = `${indent}  `;
    let first = true;
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (x === undefined) continue;
      out.push(first ? `{\n${inner}` : `,\n${inner}`, k === '__proto__' ? '["__proto__"]: ' : `${JSON.stringify(k)}: `);
      writeData(x, inner, out);
      first = false;
    }
    out.push(first ? '{}' : `\n${indent}}`);
  } else {
    throw new Error(`cannot emit ${typeof v}`);
  }
}

function tierName(s: SymbolEntry): string {
  return s.tier.kind === 'profile' ? s.tier.profile : s.tier.kind;
}

function bundleSymbols(symbols: readonly SymbolEntry[]): BundleSymbol[] {
  return symbols.map((s) =>
    s.kind === 'fact'
      ? { kind: 'fact', name: s.name, type: s.type, tier: tierName(s) }
      : { kind: 'function', name: s.name, param: s.param, result: s.result, tier: tierName(s) },
  );
}

function bundleCapability(c: Capability): BundleCapability {
  return {
    host: c.host,
    coreAnchors: Object.fromEntries(c.coreAnchors),
    hostAnchors: [...c.hostAnchors],
    profiles: [...c.profiles],
    activityWindow: c.activityWindow,
    supportsTransform: c.supportsTransform,
    expressionNodesMax: c.expressionNodesMax,
    detectors: [...c.detectors],
  };
}

function sourceOf(r: CheckedRule, names: ReadonlyMap<string, string> | undefined): string {
  const s = r.source;
  const file = s.file === undefined ? '<input>' : (names?.get(s.file) ?? s.file);
  return `${file}:${s.line ?? 1}:${s.column ?? 1}`;
}

/** What the caller makes of a rule's condition and copy: emitted code, or interpreter closures. */
export interface BundleCode {
  /** `k` is the rule's index in the bundle (its place in evaluation order). */
  when(c: NonNullable<CheckedRule['when']>, k: number): unknown;
  copy(c: CheckedRule['copy'], k: number): unknown;
}

/** One rule as bundle data, its condition and copy made by `code`. Member order is fixed. */
function ruleData(r: CheckedRule, k: number, enforcement: Enforcement, code: BundleCode, names: ReadonlyMap<string, string> | undefined): Record<string, unknown> {
  const t = r.transform;
  const b: { [K in keyof BundleRule]: unknown } = {
    qid: r.qid,
    id: r.id,
    kind: r.kind,
    effect: r.effect,
    enforcement,
    mandatory: r.mandatory,
    anchor: r.localAnchor,
    selector: r.selector.map((c) => ({ slot: c.fact.slot, values: [...c.values] })),
    when: r.when ? code.when(r.when, k) : undefined,
    flow: r.flow ? [...r.flow] : undefined,
    onError: r.onError.mode === 'substitute' ? { rule: r.onError.rule, id: r.onError.id } : r.onError.mode,
    onFire: [...r.onFire],
    overrides: [...r.overrides],
    transform: t
      ? { action: t.action, replacement: t.replacement, target: t.target === 'content' ? 'content' : t.target.slot, targetName: t.target === 'content' ? 'content' : t.target.name }
      : undefined,
    detector: r.detector,
    copy: code.copy(r.copy, k),
    counterScope: r.counterScope?.slot,
    readsCounters: r.references.some((s) => s.tier.kind === 'core' && (s.name === 'fire_count' || s.name === 'breaker_count')),
    counterReads: [...r.counterReads],
    source: sourceOf(r, names),
  };
  return b;
}

/** The bundle as data, with each condition and copy renderer made by `code`. */
export function bundleData(pack: PackForEmit, code: BundleCode): Record<string, unknown> {
  return {
    format: BUNDLE_FORMAT,
    compiler: COMPILER_ID,
    capability: bundleCapability(pack.capability),
    symbols: bundleSymbols(pack.symbols),
    rules: pack.rules.map((r, k) => ruleData(r, k, pack.enforcement.get(r.qid) ?? r.enforcement, code, pack.sourceNames)),
  };
}

/** The bundle's module constants, each printed and verified as it is made, and its data. */
interface EmittedBundle {
  /** Top-level statements in program order, each as astring printed it. */
  constants: string[];
  helpers: string[];
  /** The statement of the bundle's data (`last` of the data), printed, not yet verified. */
  last: string;
}

/**
 * Conditions and copy renderers become module constants (`w<i>`, `c<i>` for rule `i`), referenced
 * by the rules' data and by the per-anchor decision procedures alike. Each constant is printed and
 * checked the moment it is made and only its text is kept (DESIGN rule 5, statement by statement:
 * verify.ts `ProgramVerifier`) — a 10,000-rule pack's trees, held until one program was printed and
 * parsed back whole, were most of its compile's memory and collection time.
 */
function emitBundle(pack: PackForEmit, verifier: ProgramVerifier, last: 'export default ' | 'return '): EmittedBundle {
  const print = (node: ES.Statement): string => {
    const text = generate(node);
    verifier.statement(text);
    return text;
  };
  const scope = new EmitScope();
  const closures: string[] = [];
  const hoist = (name: string, node: ES.Expression) => {
    closures.push(print(constDecl(name, node)));
    return new Code(name);
  };
  const rules: ProcedureRule[] = [];
  const data0 = bundleData(pack, {
    when: (c, k) => hoist(`w${k}`, emitConditionFunction(c.typed, scope)),
    copy: (c, k) => hoist(`c${k}`, emitCopyFunction(c, scope)),
  });
  (data0.rules as Record<string, unknown>[]).forEach((r, k) => {
    const { when, copy: _copy, ...rest } = r;
    rules.push({ i: k, b: rest as unknown as ProcedureRule['b'], hasWhen: when !== undefined, when: `w${k}`, copy: `c${k}` });
  });
  const procedures: string[] = [];
  const byAnchor = emitProcedures(rules, data0.symbols as BundleSymbol[], (d) => procedures.push(print(d)));
  data0.procedures = Object.fromEntries([...byAnchor].map(([anchor, name]) => [anchor, new Code(name)]));
  const text = `${last}${dataText(data0)};`;
  return { constants: [...scope.constants.map(print), ...closures, ...procedures], helpers: [...scope.helpers].sort(), last: text };
}

/** Statements as astring prints a program of them: each on its own line. */
const program = (statements: readonly string[]): string => statements.map((t) => `${t}\n`).join('');

/** The bundle as ES module text: `import {…} from "oarc/runtime/internal"; … export default {…};`. */
export function emitBundleModule(pack: PackForEmit, runtimeModule = RUNTIME_MODULE): string {
  const verifier = new ProgramVerifier(new Set(), { from: runtimeModule, names: HELPER_NAMES });
  const e = emitBundle(pack, verifier, 'export default ');
  const statements: string[] = [];
  if (e.helpers.length > 0) {
    const imports = generate({
      type: 'ImportDeclaration',
      specifiers: e.helpers.map((h) => ({ type: 'ImportSpecifier', imported: id(h), local: id(h) })),
      source: { type: 'Literal', value: runtimeModule },
      attributes: [],
    } as ES.ImportDeclaration);
    verifier.statement(imports);
    statements.push(imports);
  }
  verifier.statement(e.last);
  pushAll(statements, e.constants);
  statements.push(e.last);
  verifier.finish();
  const header = `// Generated by ${COMPILER_ID}. Do not edit: recompile the rule pack instead.`;
  verifier.comment(header);
  return `${header}\n${program(statements)}`;
}

/** The bundle as a script body for the in-process path: its free names are the helpers it uses. */
export function emitBundleScript(pack: PackForEmit): { code: string; helpers: string[] } {
  const helpers = new Set<string>();
  const verifier = new ProgramVerifier(helpers);
  const e = emitBundle(pack, verifier, 'return ');
  for (const h of e.helpers) helpers.add(h);
  verifier.statement(e.last);
  verifier.finish();
  return { code: program([...e.constants, e.last]), helpers: e.helpers };
}
