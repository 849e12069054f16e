/**
 * The capability document (section 8, [OAR-FACT-21]): what a host declares before any rule loads.
 *
 * `loadCapability` validates the document against itself — an engine refuses to start on an
 * invalid one ([OAR-FACT-24]) — reporting every problem in one pass, and from a valid one builds the
 * ONE symbol environment every rule-field check uses ([OAR-FACT-1], [OAR-FACT-27]).
 *
 * Readings this module commits to (each is recorded beside the check that enforces it):
 * - Only `anchors.core` is required. Every other member [OAR-FACT-21] lists has an obvious empty
 *   reading when absent — no profiles, no host facts, no detectors, no host anchors, activity window
 *   0, no content mutation, version 1.0, this engine's own node limit — and a conformance fixture
 *   must declare only what it needs ([OAR-CONF-36]), so a fixture written for another engine that
 *   leaves an empty member out must still load here. The anchor map itself must still name every
 *   core anchor exactly once ([OAR-PROF-2]).
 * - `oar_capability_version` follows `oar` ([OAR-DOC-3]..[OAR-DOC-5]) as `oar_config` does
 *   ([OAR-CFG-1]); this engine implements 1.0.
 * - Unknown members are rejected by name, `x-` members ignored ([OAR-DOC-26], [OAR-DOC-27]).
 * - Anchor spellings live in two spaces. Rule space holds core identifiers and host anchors; local
 *   space (occurrences, [OAR-CONF-29]) holds the `anchors.core` values and host anchors. Each space
 *   must be unambiguous, so: host anchor ≠ core identifier ([OAR-PROF-5]); local spellings distinct
 *   from each other ([OAR-PROF-2]) and from host anchors ([OAR-PROF-5]). A local spelling equal to a
 *   *different* core identifier is accepted: it is read only in local space, through the map.
 * - A host fact's namespace must be the document's `host`, an enclosing scope of it, or a scope
 *   within it ([OAR-FACT-18] "a namespace it owns"): 8.2 itself publishes `acme.tenant_tier` from
 *   host `acme.gateway`, so equality alone would reject the spec's own example.
 * - Reserved words ([OAR-EXPR-24]) collide only as whole names: a dotted identifier is one name
 *   ([OAR-EXPR-2]) and is lexed as one maximal run, so `acme.in` is not the keyword `in`.
 */
import { error, warning, type Diagnostic, type SourceLocation } from '../diagnostics.js';
import { DEFAULT_MAX_NODES, MAX_MAX_NODES } from '../expr/parser.js';
import { cpCompare } from '../../runtime/strings.js';
import {
  isFactType,
  isScalarType,
  symbolTable,
  type FactSymbol,
  type FactType,
  type FunctionSymbol,
  type ScalarType,
  type SymbolTable,
} from '../../runtime/types.js';
import {
  CORE_ANCHORS,
  CORE_FACTS,
  DETECTOR_BACKED_PROFILES,
  DETECTOR_REF_PATTERN,
  EXTENSION_MEMBER_PATTERN,
  NAMESPACE_PATTERN,
  RESERVED_DETECTORS,
  RESERVED_WORDS,
  STANDARD_PROFILES,
  STANDARD_PROFILE_NAMES,
  type Declaration,
} from './vocabulary.js';

// ---------------------------------------------------------------------------------------------
// The validated capability
// ---------------------------------------------------------------------------------------------

export interface HostFact {
  readonly name: string;
  /** The canonical spelling: a fact type, or `(param) -> result` for a function. */
  readonly type: string;
}

export interface Capability {
  version: string;
  host: string;
  /** core anchor → the host-local anchor implementing it, in 8.1 order. */
  coreAnchors: ReadonlyMap<string /*core*/, string /*host-local*/>;
  unsupportedAnchors: ReadonlySet<string>;
  hostAnchors: ReadonlySet<string>;
  /** Claimed standard profiles, in the spec's order. */
  profiles: ReadonlySet<string>;
  activityWindow: number;
  supportsTransform: boolean;
  expressionNodesMax: number;
  /** Host-tier facts and functions, sorted by name. */
  hostFacts: readonly { name: string; type: string }[];
  detectors: ReadonlySet<string>;
}

export type JsonPath = (string | number)[];
export type Locate = (path: JsonPath) => SourceLocation;

export interface CapabilityLoad {
  capability?: Capability;
  symbols?: SymbolTable;
  diagnostics: Diagnostic[];
}

/** The capability-document version this engine implements. */
export const CAPABILITY_VERSION = Object.freeze({ major: 1, minor: 0 });

/** The least parse-tree limit an engine may declare ([OAR-EXPR-17]). */
export const MIN_EXPRESSION_NODES = 256;

// ---------------------------------------------------------------------------------------------
// Anchor lookups
// ---------------------------------------------------------------------------------------------

const localIndexes = new WeakMap<Capability, ReadonlyMap<string, string>>();

function localIndex(c: Capability): ReadonlyMap<string, string> {
  let index = localIndexes.get(c);
  if (!index) {
    const m = new Map<string, string>();
    for (const [core, local] of c.coreAnchors) if (!m.has(local)) m.set(local, core);
    for (const h of c.hostAnchors) if (!m.has(h)) m.set(h, h);
    index = m;
    localIndexes.set(c, index);
  }
  return index;
}

/**
 * The rule-space anchor a host-local anchor spelling stands for: the core anchor it implements, or
 * itself when it is a host anchor ([OAR-CONF-29], [OAR-PROF-4]). `undefined` when the host
 * declares no such local anchor. This is also the value of the `anchor` core fact (5.3).
 */
export function localToCore(c: Capability, local: string): string | undefined {
  return localIndex(c).get(local);
}

/** The host-local spelling of a rule-space anchor, or `undefined` when it is unsupported/unknown. */
export function coreToLocal(c: Capability, anchor: string): string | undefined {
  return c.coreAnchors.get(anchor) ?? (c.hostAnchors.has(anchor) ? anchor : undefined);
}

/**
 * True when a capability claims nothing a conforming engine could lack ([OAR-CONF-35]): no profile,
 * no host fact, no activity window, no content mutation, no detector beyond the reserved three.
 */
export function isBaselineCapability(c: Capability): boolean {
  return (
    c.profiles.size === 0 &&
    c.hostFacts.length === 0 &&
    c.activityWindow === 0 &&
    !c.supportsTransform &&
    [...c.detectors].every((d) => RESERVED_DETECTORS.includes(d))
  );
}

// ---------------------------------------------------------------------------------------------
// Host-fact types
// ---------------------------------------------------------------------------------------------

export type ParsedType =
  | { kind: 'fact'; type: FactType }
  | { kind: 'function'; param: ScalarType; result: ScalarType };

// Whitespace around the parentheses and the arrow is insignificant, as it is in the spec's own
// tables (`(string) -> int`); the type names themselves are tokens and must be spelled exactly.
const SIGNATURE_PATTERN = /^\s*\(\s*([^()\s]*)\s*\)\s*->\s*(\S*)\s*$/;

/**
 * A host fact's declared type: one of the eight fact types ([OAR-FACT-22]) or a one-argument
 * signature over scalars ([OAR-FACT-27]). Returns the clause violated when it is neither.
 */
export function parseDeclaredType(type: string): ParsedType | { invalid: 'OAR-FACT-22' | 'OAR-FACT-27' } {
  if (isFactType(type)) return { kind: 'fact', type };
  const m = SIGNATURE_PATTERN.exec(type);
  if (m) {
    const [, param = '', result = ''] = m;
    if (isScalarType(param) && isScalarType(result)) return { kind: 'function', param, result };
    return { invalid: 'OAR-FACT-27' };
  }
  // Anything shaped like a call, an arrow or an argument list is a malformed signature.
  return { invalid: /[()]|->/.test(type) ? 'OAR-FACT-27' : 'OAR-FACT-22' };
}

function canonicalType(t: ParsedType): string {
  return t.kind === 'fact' ? t.type : `(${t.param}) -> ${t.result}`;
}

// ---------------------------------------------------------------------------------------------
// The symbol environment
// ---------------------------------------------------------------------------------------------

/** A symbol before `symbolTable()` gives it a slot (`Omit` distributed over the union). */
type Unslotted = Omit<FactSymbol, 'slot'> | Omit<FunctionSymbol, 'slot'>;

function entry(d: Declaration, tier: FactSymbol['tier']): Unslotted {
  return d.kind === 'fact'
    ? { kind: 'fact', name: d.name, type: d.type, tier }
    : { kind: 'function', name: d.name, param: d.param, result: d.result, tier };
}

/**
 * The one symbol environment of a validated capability ([OAR-FACT-1], [OAR-FACT-27]). Slots are
 * assigned in a fixed order — core facts (5.3 order), then claimed profiles in the spec's order
 * (each in table order), then host facts by name — so neither the order a document lists its
 * profiles nor its host facts can change a slot, and a bundle stays byte-identical.
 */
export function capabilitySymbols(c: Capability): SymbolTable {
  const entries: Unslotted[] = CORE_FACTS.map((d) => entry(d, { kind: 'core' }));
  for (const profile of STANDARD_PROFILE_NAMES) {
    if (!c.profiles.has(profile)) continue;
    for (const d of STANDARD_PROFILES.get(profile) ?? []) entries.push(entry(d, { kind: 'profile', profile }));
  }
  for (const f of [...c.hostFacts].sort((a, b) => cpCompare(a.name, b.name))) {
    const t = parseDeclaredType(f.type);
    if ('invalid' in t) throw new Error(`host fact ${f.name} has an invalid type ${f.type} [${t.invalid}]`);
    entries.push(
      t.kind === 'fact'
        ? { kind: 'fact', name: f.name, type: t.type, tier: { kind: 'host' } }
        : { kind: 'function', name: f.name, param: t.param, result: t.result, tier: { kind: 'host' } },
    );
  }
  return symbolTable(entries);
}

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

const TOP_LEVEL_MEMBERS = [
  'oar_capability_version',
  'host',
  'anchors',
  'profiles',
  'activity_window',
  'supports_transform',
  'expression_nodes_max',
  'host_facts',
  'detectors',
] as const;
const ANCHORS_MEMBERS = ['core', 'unsupported', 'host'] as const;
const REQUIRED_TOP_LEVEL = ['anchors'] as const;
const REQUIRED_ANCHORS = ['core'] as const;
const HOST_FACT_MEMBERS = ['name', 'type'] as const;

const VERSION_PATTERN = /^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$/;
/** A `name` of the condition grammar (A.1): what a condition can spell. */
const NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Collects diagnostics, locating each through the caller's source map. */
class Report {
  readonly diagnostics: Diagnostic[] = [];
  constructor(private readonly locate?: Locate) {}

  error(clause: string, message: string, token: string | undefined, path: JsonPath): void {
    this.diagnostics.push(error(clause, message, this.extra(token, path)));
  }

  warn(clause: string, message: string, token: string | undefined, path: JsonPath): void {
    this.diagnostics.push(warning(clause, message, this.extra(token, path)));
  }

  get failed(): boolean {
    return this.diagnostics.some((d) => d.severity === 'error');
  }

  private extra(token: string | undefined, path: JsonPath): Omit<Diagnostic, 'severity' | 'clause' | 'message'> {
    const extra: Omit<Diagnostic, 'severity' | 'clause' | 'message'> = { path: [...path] };
    if (token !== undefined) extra.token = token;
    const source = this.locate?.(path);
    if (source) extra.source = source;
    return extra;
  }
}

/** Unknown members are rejected by name; `x-` members are ignored ([OAR-DOC-26], [OAR-DOC-27]). */
function checkMembers(obj: Json, known: readonly string[], required: readonly string[], path: JsonPath, what: string, r: Report): void {
  for (const key of Object.keys(obj)) {
    if (known.includes(key) || EXTENSION_MEMBER_PATTERN.test(key)) continue;
    r.error('OAR-FACT-24', `${what} carries unknown member \`${key}\``, key, [...path, key]);
  }
  for (const key of required) {
    if (!Object.prototype.hasOwnProperty.call(obj, key)) {
      r.error('OAR-FACT-21', `${what} is missing required member \`${key}\``, key, path);
    }
  }
}

/** A list of strings, or `undefined` (reported) when the value is not one. */
function stringList(v: unknown, path: JsonPath, clause: string, member: string, r: Report): string[] | undefined {
  if (v === undefined) return undefined; // reported as missing
  if (!Array.isArray(v)) {
    r.error(clause, `\`${member}\` must be a list of strings`, member, path);
    return undefined;
  }
  const out: string[] = [];
  v.forEach((item, i) => {
    if (typeof item === 'string' && item !== '') out.push(item);
    else r.error(clause, `\`${member}\` entry ${i} must be a non-empty string`, member, [...path, i]);
  });
  return out;
}

type VersionCheck = 'ok' | 'absent' | 'unsupported';

/**
 * The version is checked first, as `oar` is ([OAR-CONF-2]). A later version may add members or
 * meanings this engine cannot judge, so an unsupported one stops validation; an absent or
 * malformed one is reported and validation continues.
 */
function checkVersion(doc: Json, r: Report): VersionCheck {
  const member = 'oar_capability_version';
  const v = doc[member];
  if (v === undefined) return 'absent'; // reported by checkMembers
  if (typeof v !== 'string' || !VERSION_PATTERN.test(v)) {
    r.error('OAR-DOC-3', `\`${member}\` must be a string <major>.<minor> without leading zeros, got ${JSON.stringify(v)}`, member, [member]);
    return 'absent';
  }
  const [major, minor] = v.split('.').map(Number) as [number, number];
  const supported = `${CAPABILITY_VERSION.major}.${CAPABILITY_VERSION.minor}`;
  if (major !== CAPABILITY_VERSION.major) {
    r.error('OAR-DOC-4', `\`${member}\` ${v} has a major version this engine does not support (it implements ${supported})`, member, [member]);
    return 'unsupported';
  }
  if (minor > CAPABILITY_VERSION.minor) {
    r.error('OAR-DOC-5', `\`${member}\` ${v} has a minor version greater than this engine implements (${supported})`, member, [member]);
    return 'unsupported';
  }
  return 'ok';
}

/** `host` is the publisher scope the host's own facts live under ([OAR-DOC-7], [OAR-FACT-18]). */
function readHost(doc: Json, r: Report): string | undefined {
  const v = doc.host;
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !NAMESPACE_PATTERN.test(v)) {
    const token = typeof v === 'string' ? v : 'host';
    r.error('OAR-FACT-18', `\`host\` must match the namespace grammar of [OAR-DOC-7], got \`${token}\``, token, ['host']);
    return undefined;
  }
  return v;
}

interface Anchors {
  core: Map<string, string>;
  unsupported: Set<string>;
  host: Set<string>;
}

/** The anchor profile map ([OAR-PROF-2]) and the host anchor catalogue ([OAR-PROF-5]). */
function readAnchors(v: unknown, r: Report): Anchors | undefined {
  if (v === undefined) return undefined;
  const at: JsonPath = ['anchors'];
  if (!isObject(v)) {
    r.error('OAR-FACT-21', '`anchors` must be an object with `core`, `unsupported` and `host`', 'anchors', at);
    return undefined;
  }
  checkMembers(v, ANCHORS_MEMBERS, REQUIRED_ANCHORS, at, '`anchors`', r);
  const before = r.diagnostics.length;

  const core = new Map<string, string>();
  const localOwner = new Map<string, string>(); // local spelling → the core anchor claiming it
  if (v.core !== undefined && !isObject(v.core)) {
    r.error('OAR-PROF-2', '`core` must map each core anchor to its host-local anchor', 'core', [...at, 'core']);
  } else if (v.core !== undefined) {
    for (const [key, local] of Object.entries(v.core)) {
      const path = [...at, 'core', key];
      if (!CORE_ANCHORS.includes(key)) {
        r.error('OAR-PROF-2', `\`anchors.core\` names \`${key}\`, which is not a core anchor`, key, path);
        continue;
      }
      if (typeof local !== 'string' || local === '') {
        r.error('OAR-PROF-2', `core anchor \`${key}\` must map to a non-empty host-local anchor`, key, path);
        continue;
      }
      core.set(key, local);
      // Two core anchors behind one local anchor would make an occurrence two moments at once,
      // and the `anchor` fact (5.3) could not say which.
      const owner = localOwner.get(local);
      if (owner !== undefined) {
        r.error('OAR-PROF-2', `host-local anchor \`${local}\` implements both \`${owner}\` and \`${key}\``, local, path);
      } else {
        localOwner.set(local, key);
      }
    }
  }

  const unsupported = new Set<string>();
  const unsupportedList = stringList(v.unsupported, [...at, 'unsupported'], 'OAR-PROF-2', 'unsupported', r) ?? [];
  unsupportedList.forEach((name, i) => {
    const path = [...at, 'unsupported', i];
    if (!CORE_ANCHORS.includes(name)) {
      r.error('OAR-PROF-2', `\`anchors.unsupported\` names \`${name}\`, which is not a core anchor`, name, path);
    } else if (core.has(name) || unsupported.has(name)) {
      r.error('OAR-PROF-2', `core anchor \`${name}\` is declared more than once in the anchor profile map`, name, path);
    } else {
      unsupported.add(name);
    }
  });
  if (isObject(v.core) && (v.unsupported === undefined || Array.isArray(v.unsupported))) {
    for (const name of CORE_ANCHORS) {
      if (!core.has(name) && !unsupported.has(name)) {
        r.error('OAR-PROF-2', `the anchor profile map omits core anchor \`${name}\``, name, at);
      }
    }
  }

  const host = new Set<string>();
  const hostList = stringList(v.host, [...at, 'host'], 'OAR-PROF-5', 'host', r) ?? [];
  hostList.forEach((name, i) => {
    const path = [...at, 'host', i];
    if (CORE_ANCHORS.includes(name)) {
      r.error('OAR-PROF-5', `host anchor \`${name}\` collides with a core anchor identifier`, name, path);
    } else if (host.has(name)) {
      r.error('OAR-PROF-5', `host anchor \`${name}\` is declared more than once`, name, path);
    } else if (localOwner.has(name)) {
      // An occurrence at this spelling would be both a core and a host-native moment.
      r.error('OAR-PROF-5', `host anchor \`${name}\` is also the host-local anchor of \`${localOwner.get(name)}\``, name, path);
    } else {
      host.add(name);
    }
  });

  if (r.diagnostics.length !== before) return undefined;
  return {
    core: new Map(CORE_ANCHORS.filter((a) => core.has(a)).map((a) => [a, core.get(a) as string])),
    unsupported: new Set(CORE_ANCHORS.filter((a) => unsupported.has(a))),
    host: new Set([...host].sort(cpCompare)),
  };
}

/** Claimed profiles: only whole standard profiles can be named ([OAR-FACT-16]). */
function readProfiles(v: unknown, r: Report): { claimed: Set<string>; positions: Map<string, number> } | undefined {
  const list = stringList(v, ['profiles'], 'OAR-FACT-16', 'profiles', r);
  if (!list) return undefined;
  const claimed = new Set<string>();
  const positions = new Map<string, number>();
  (v as unknown[]).forEach((name, i) => {
    if (typeof name !== 'string' || name === '') return; // reported by stringList
    if (!STANDARD_PROFILES.has(name)) {
      r.error('OAR-FACT-16', `\`${name}\` is not a standard profile; a capability can claim only whole standard profiles`, name, ['profiles', i]);
    } else if (claimed.has(name)) {
      r.error('OAR-FACT-24', `profile \`${name}\` is claimed more than once`, name, ['profiles', i]);
    } else {
      claimed.add(name);
      positions.set(name, i);
    }
  });
  return { claimed, positions };
}

/** Detector references the host resolves ([OAR-OPS-12]). */
function readDetectors(v: unknown, r: Report): Set<string> | undefined {
  const list = stringList(v, ['detectors'], 'OAR-OPS-12', 'detectors', r);
  if (!list) return undefined;
  const detectors = new Set<string>();
  (v as unknown[]).forEach((ref, i) => {
    if (typeof ref !== 'string' || ref === '') return; // reported by stringList
    if (!DETECTOR_REF_PATTERN.test(ref)) {
      r.error('OAR-OPS-12', `detector reference \`${ref}\` is not of the form detector://<name>`, ref, ['detectors', i]);
    } else if (detectors.has(ref)) {
      r.error('OAR-OPS-12', `detector reference \`${ref}\` is declared more than once`, ref, ['detectors', i]);
    } else {
      detectors.add(ref);
    }
  });
  return detectors;
}

/** Declarations a host fact must not take over, by name: core and every standard profile. */
const RESERVED_FACT_OWNERS: ReadonlyMap<string, string | null> = new Map<string, string | null>([
  ...CORE_FACTS.map((d) => [d.name, null] as const),
  ...[...STANDARD_PROFILES].flatMap(([profile, ds]) => ds.map((d) => [d.name, profile] as const)),
]);

/** Is `ns` the host's own scope, a scope enclosing it, or one within it ([OAR-FACT-18])? */
function ownsNamespace(host: string, ns: string): boolean {
  return ns === host || host.startsWith(`${ns}.`) || ns.startsWith(`${host}.`);
}

/** Host-tier facts and functions ([OAR-FACT-18], [OAR-FACT-22], [OAR-FACT-27]). */
function readHostFacts(v: unknown, host: string | undefined, profiles: ReadonlySet<string>, r: Report): HostFact[] | undefined {
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) {
    r.error('OAR-FACT-21', '`host_facts` must be a list of `{ name, type }` objects', 'host_facts', ['host_facts']);
    return undefined;
  }
  const facts: HostFact[] = [];
  const seen = new Set<string>();
  v.forEach((item, i) => {
    const at: JsonPath = ['host_facts', i];
    if (!isObject(item)) {
      r.error('OAR-FACT-21', `\`host_facts\` entry ${i} must be an object with \`name\` and \`type\``, 'host_facts', at);
      return;
    }
    checkMembers(item, HOST_FACT_MEMBERS, HOST_FACT_MEMBERS, at, `\`host_facts\` entry ${i}`, r);
    const name = checkHostFactName(item.name, host, profiles, [...at, 'name'], r);
    const type = checkHostFactType(item.type, typeof item.name === 'string' ? item.name : `entry ${i}`, [...at, 'type'], r);
    if (name === undefined) return;
    // Facts and functions share one namespace, one entry per name ([OAR-FACT-2], [OAR-FACT-27]).
    if (seen.has(name)) {
      r.error('OAR-FACT-2', `host fact \`${name}\` is declared more than once`, name, [...at, 'name']);
      return;
    }
    seen.add(name);
    if (type !== undefined) facts.push({ name, type: canonicalType(type) });
  });
  return facts.sort((a, b) => cpCompare(a.name, b.name));
}

function checkHostFactName(
  v: unknown,
  host: string | undefined,
  profiles: ReadonlySet<string>,
  path: JsonPath,
  r: Report,
): string | undefined {
  if (v === undefined) return undefined; // reported as missing
  if (typeof v !== 'string' || v === '') {
    r.error('OAR-FACT-18', 'a host fact `name` must be a non-empty string `<host>.<fact>`', 'name', path);
    return undefined;
  }
  if (RESERVED_WORDS.includes(v)) {
    r.error('OAR-EXPR-24', `\`${v}\` is a reserved word and cannot name a fact or function`, v, path);
    return undefined;
  }
  if (RESERVED_FACT_OWNERS.has(v)) {
    const profile = RESERVED_FACT_OWNERS.get(v);
    const why =
      profile == null
        ? 'redefines a core fact'
        : profiles.has(profile)
          ? `redefines a fact of the claimed profile \`${profile}\``
          : `belongs to profile \`${profile}\`, which this capability does not claim (a profile is provided whole)`;
    r.error('OAR-FACT-17', `host fact \`${v}\` ${why}`, v, path);
    return undefined;
  }
  const dot = v.lastIndexOf('.');
  const ns = v.slice(0, Math.max(dot, 0));
  const leaf = v.slice(dot + 1);
  if (dot < 0 || !NAMESPACE_PATTERN.test(ns) || !NAME_PATTERN.test(leaf)) {
    r.error('OAR-FACT-18', `host fact \`${v}\` must be named \`<host>.<fact>\`: a namespace per [OAR-DOC-7], a dot, and a condition-language name`, v, path);
    return undefined;
  }
  if (host !== undefined && !ownsNamespace(host, ns)) {
    r.error('OAR-FACT-18', `host fact \`${v}\` is published under \`${ns}\`, a namespace host \`${host}\` does not own`, v, path);
    return undefined;
  }
  // [OAR-DOC-7] admits `-` and leading digits that the condition grammar (A.1) cannot lex, so such
  // a fact is legal but reachable only from selectors, `counter_scope` and `requires`.
  if (!ns.split('.').every((segment) => NAME_PATTERN.test(segment))) {
    r.warn('OAR-EXPR-2', `host fact \`${v}\` cannot be spelled in a condition or copy binding: its namespace is not a condition-language identifier`, v, path);
  }
  return v;
}

/** `fact` names the host fact in messages. */
function checkHostFactType(v: unknown, fact: string, path: JsonPath, r: Report): ParsedType | undefined {
  if (v === undefined) return undefined; // reported as missing
  if (typeof v !== 'string') {
    r.error('OAR-FACT-22', `host fact ${fact}: a host fact \`type\` must be a fact type or a signature \`(scalar) -> scalar\``, 'type', path);
    return undefined;
  }
  const t = parseDeclaredType(v);
  if (!('invalid' in t)) return t;
  const message =
    t.invalid === 'OAR-FACT-22'
      ? `host fact ${fact}: \`${v}\` is not a fact type (one of bool, int, double, string, list<string>, map<string,string>, list<map>, map)`
      : `host fact ${fact}: \`${v}\` is not a function signature \`(argument) -> result\` over bool, int, double or string`;
  r.error(t.invalid, message, v, path);
  return undefined;
}

function readInteger(doc: Json, member: string, min: number, clause: string, r: Report): number | undefined {
  const v = doc[member];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) {
    r.error(clause, `\`${member}\` must be an integer of at least ${min}, got ${JSON.stringify(v)}`, member, [member]);
    return undefined;
  }
  return v;
}

/**
 * Validates a capability document and builds its symbol environment. The document is checked before
 * any rule ([OAR-FACT-24]); every problem is reported, and an invalid document yields neither a
 * capability nor symbols, so an engine cannot start on it. Warnings do not prevent loading.
 */
export interface CapabilityOptions {
  /**
   * The largest condition limit the engine can honour; default this engine's. A conformance runner
   * deciding whether it can adopt a fixture's capability reads the document with no ceiling.
   */
  engineMaxNodes?: number;
}

export function loadCapability(value: unknown, locate?: Locate, opts: CapabilityOptions = {}): CapabilityLoad {
  const engineMaxNodes = opts.engineMaxNodes ?? MAX_MAX_NODES;
  const r = new Report(locate);
  if (!isObject(value)) {
    r.error('OAR-FACT-21', 'a capability document must be a JSON object', undefined, []);
    return { diagnostics: r.diagnostics };
  }
  if (checkVersion(value, r) === 'unsupported') return { diagnostics: r.diagnostics };
  checkMembers(value, TOP_LEVEL_MEMBERS, REQUIRED_TOP_LEVEL, [], 'the capability document', r);

  const host = readHost(value, r);
  const anchors = readAnchors(value.anchors, r);
  const profiles = readProfiles(value.profiles, r);
  const detectors = readDetectors(value.detectors, r);
  // Detector-backed facts with no detector behind them are placebos ([OAR-OPS-22]).
  if (profiles && (value.detectors === undefined || (Array.isArray(value.detectors) && value.detectors.length === 0))) {
    for (const profile of DETECTOR_BACKED_PROFILES) {
      const i = profiles.positions.get(profile);
      if (i === undefined) continue;
      r.error('OAR-OPS-22', `profile \`${profile}\` is claimed but \`detectors\` registers no detector to produce its facts`, profile, ['profiles', i]);
    }
  }
  // A host that tracks no activity declares zero ([OAR-PROF-3]).
  const activityWindow = readInteger(value, 'activity_window', 0, 'OAR-PROF-3', r);
  const expressionNodesMax = readInteger(value, 'expression_nodes_max', MIN_EXPRESSION_NODES, 'OAR-EXPR-17', r);
  // [OAR-EXPR-17], [OAR-FACT-24]: the declared limit is the one the engine enforces, so it cannot
  // exceed what this engine can compile; a larger claim is an invalid capability, not a silent clamp.
  if (expressionNodesMax !== undefined && expressionNodesMax > engineMaxNodes) {
    r.error('OAR-EXPR-17', `\`expression_nodes_max\` ${expressionNodesMax} exceeds this engine's largest condition limit, ${engineMaxNodes}`, 'expression_nodes_max', ['expression_nodes_max']);
  }
  const supportsTransform = value.supports_transform;
  if (supportsTransform !== undefined && typeof supportsTransform !== 'boolean') {
    r.error('OAR-FACT-21', '`supports_transform` must be a boolean', 'supports_transform', ['supports_transform']);
  }
  const hostFacts = readHostFacts(value.host_facts, host, profiles?.claimed ?? new Set(), r);

  if (r.failed) return { diagnostics: r.diagnostics };
  const capability: Capability = {
    version: (value.oar_capability_version as string | undefined) ?? `${CAPABILITY_VERSION.major}.${CAPABILITY_VERSION.minor}`,
    host: host ?? '',
    coreAnchors: (anchors as Anchors).core,
    unsupportedAnchors: (anchors as Anchors).unsupported,
    hostAnchors: (anchors as Anchors).host,
    profiles: new Set(STANDARD_PROFILE_NAMES.filter((p) => profiles?.claimed.has(p))),
    activityWindow: activityWindow ?? 0,
    supportsTransform: (supportsTransform as boolean | undefined) ?? false,
    expressionNodesMax: expressionNodesMax ?? DEFAULT_MAX_NODES,
    hostFacts: hostFacts ?? [],
    detectors: new Set([...(detectors ?? [])].sort(cpCompare)),
  };
  return { capability, symbols: capabilitySymbols(capability), diagnostics: r.diagnostics };
}
