/**
 * fast-check arbitraries for the whole-pack cross-checks (DESIGN: "The interpreter and the
 * differential check"): random VALID rule packs over one fixed capability, an optional
 * configuration document, and a sequence of anchor occurrences to run them against.
 *
 * What a generated pack exercises: all four kinds (detector rules on `detector://fixture`,
 * `detector://noop` and `detector://error`), namespaced and bare identifiers sharing ids across
 * namespaces, a non-identity anchor map (one local spelling is even another core anchor's name),
 * a host anchor, selectors over `string` and `list<string>` facts (empty clauses included),
 * `when` conditions over the declared facts — counter reads of other rules in the pack, arithmetic
 * that can raise, guards that keep it from raising —, every effect, transforms of `content` and of
 * `list<map>` span targets with all three actions, `enforcement`, `mandatory`, an acyclic
 * `overrides` graph that never names a mandatory rule, every `on_error` form, `on_fire` drawn from
 * all five actions, `counter_scope`, `copy` with bindings and conditionals, `flow`, and the
 * decision-neutral fields (`status`, `references`, `related`, `x-` extensions).
 *
 * Occurrences carry random facts (absent, valid, wrong-typed, lazy, failing providers), content with
 * non-BMP characters and the odd lone surrogate, well-formed, overlapping, past-the-end and
 * malformed spans, tool calls, detector facts, explicit activity windows, and one of two sessions.
 *
 * Every generated document is valid by construction: a pack that does not load is a generator bug.
 * The generator also models what section 9 says the effective enforcement of every rule is, so the
 * loader's configuration handling is checked too.
 */
import fc from 'fast-check';
import { stringify as yamlStringify } from 'yaml';
import type { Occurrence, ToolCall } from '../../runtime/occurrence.js';
import { encodeString, stringValue, validValue, wrongValue } from './generators.js';
import type { FactType } from '../../runtime/types.js';

// --- the capability every generated pack loads against ------------------------------------------

/** Host facts and observation functions (all under the host's namespace, [OAR-FACT-18]). */
export const HOST_FACTS: readonly { name: string; type: string }[] = [
  { name: 'gen.flag', type: 'bool' },
  { name: 'gen.n', type: 'int' },
  { name: 'gen.x', type: 'double' },
  { name: 'gen.s', type: 'string' },
  { name: 'gen.t', type: 'string' },
  { name: 'gen.ls', type: 'list<string>' },
  { name: 'gen.spans', type: 'list<map>' },
  { name: 'gen.m', type: 'map' },
  { name: 'gen.ms', type: 'map<string,string>' },
  { name: 'gen.f', type: '(string) -> bool' },
  { name: 'gen.g', type: '(string) -> int' },
];

export const PROFILES = ['tool', 'session', 'content', 'secrets', 'pii'] as const;
export const DETECTORS = ['detector://fixture', 'detector://noop', 'detector://error'] as const;
export const ACTIVITY_WINDOW = 3;

/**
 * Rule-space anchor → host-local anchor. Not the identity: `model.output` is spelled `model.input`
 * locally, while the core anchor `model.input` is spelled `content.in` ([OAR-CONF-29]).
 */
export const ANCHOR_MAP: Readonly<Record<string, string>> = {
  'tool.pre_invoke': 'pre',
  'tool.post_invoke': 'tool.post_invoke',
  'model.input': 'content.in',
  'model.output': 'model.input',
};
export const HOST_ANCHOR = 'gen.custom';
const RULE_ANCHORS = [...Object.keys(ANCHOR_MAP), HOST_ANCHOR];
/** Local spellings an occurrence can name, plus two that resolve to nothing. */
const LOCAL_ANCHORS = [...Object.values(ANCHOR_MAP), HOST_ANCHOR];
const STRAY_ANCHORS = ['model.output', 'nowhere'];

export const CAPABILITY_DOC = {
  oar_capability_version: '1.0',
  host: 'gen',
  anchors: {
    core: ANCHOR_MAP,
    unsupported: ['tool.handler', 'agent.post_turn', 'agent.finalize', 'model.tool_result'],
    host: [HOST_ANCHOR],
  },
  profiles: [...PROFILES],
  activity_window: ACTIVITY_WINDOW,
  supports_transform: true,
  expression_nodes_max: 1024,
  host_facts: HOST_FACTS,
  detectors: [...DETECTORS],
};

export const CAPABILITY_TEXT = yamlStringify(CAPABILITY_DOC);

/** Every declared fact an occurrence may supply, with its type (core counters excluded: a host
 *  never supplies them, [OAR-CONF-32]). */
export const OCCURRENCE_FACTS: readonly { name: string; type: FactType }[] = [
  // The host facts declared above, without the observation functions (a type `(…) -> …`).
  ...HOST_FACTS.filter((f) => !f.type.startsWith('(')).map((f) => ({ name: f.name, type: f.type as FactType })),
  { name: 'tool', type: 'string' },
  { name: 'tool_args', type: 'map' },
  { name: 'tool_args_fingerprint', type: 'string' },
  { name: 'arg_validation_errors', type: 'list<string>' },
  { name: 'permission_profile', type: 'string' },
  { name: 'policy_denied', type: 'bool' },
  { name: 'principal', type: 'string' },
  { name: 'principal_roles', type: 'list<string>' },
  { name: 'session_posture', type: 'string' },
  { name: 'content_length', type: 'int' },
  { name: 'secret_matches', type: 'list<map>' },
  { name: 'pii_entities', type: 'list<map>' },
];
const FUNCTIONS: readonly { name: string; result: FactType }[] = [
  { name: 'gen.f', result: 'bool' },
  { name: 'gen.g', result: 'int' },
  { name: 'tool_arg_string', result: 'string' },
  { name: 'tool_arg_int', result: 'int' },
  { name: 'tool_arg_bool', result: 'bool' },
];

const SPAN_TARGETS = ['gen.spans', 'secret_matches', 'pii_entities'];
const SCOPE_FACTS = ['gen.s', 'gen.t', 'tool', 'tool_args_fingerprint', 'anchor', 'principal'];
const TOOLS = ['read', 'bash', 'grep'];
/** Strings that facts, selector clauses and literals share, so comparisons and selectors hit. */
const HOT = ['', 'a', 'b', 'read', 'bash', 'grep', '😀', 'x😀y', 'model.output', 'tool.pre_invoke'];

/** `arb` with weight `present`, else absent (weight `absent`). */
function maybe<T>(arb: fc.Arbitrary<T>, present: number, absent: number): fc.Arbitrary<T | undefined> {
  return fc.oneof({ weight: present, arbitrary: arb }, { weight: absent, arbitrary: fc.constant(undefined) });
}

// --- values -------------------------------------------------------------------------------------

const hotString = fc.constantFrom(...HOT);
const anyString = fc.oneof({ weight: 4, arbitrary: hotString }, { weight: 1, arbitrary: stringValue });
const smallInt = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: -2, max: 6 }) },
  { weight: 1, arbitrary: validValue('int') },
);

/** A span member of a `list<map>` target: mostly well-formed ([OAR-OPS-19]), sometimes past the
 *  end, empty, overlapping its neighbours (it is random), or malformed. */
function span(length: number, noisy: boolean): fc.Arbitrary<unknown> {
  // Biased to the start of the content, so spans of different targets overlap and a later
  // transform's span lands on an already-rewritten range ([OAR-OPS-16]).
  const offset = fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: 0, max: Math.min(3, length) }) },
    { weight: 2, arbitrary: fc.integer({ min: 0, max: length }) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: length + 2 }) },
  );
  const wellFormed = fc
    .tuple(offset, offset, fc.boolean(), fc.boolean())
    .map(([a, b, extra, asMap]) => {
      const [start, end] = a <= b ? [a, b] : [b, a];
      if (asMap) return new Map<string, unknown>([['start', start], ['end', end]]);
      return extra ? { start, end, kind: 'secret' } : { start, end };
    });
  const malformed = fc.constantFrom<unknown>(
    { start: 0 }, { end: 1 }, { start: 2, end: 1 }, { start: -1, end: 1 }, { start: '0', end: 1 },
    { start: 0.5, end: 1 }, { start: 0n, end: 2n }, { start: 0, end: 2 ** 64 }, {}, { start: 1, end: 1 },
  );
  return noisy ? fc.oneof({ weight: 12, arbitrary: wellFormed }, { weight: 1, arbitrary: malformed }) : wellFormed;
}

function spans(length: number, noisy: boolean): fc.Arbitrary<unknown> {
  return fc.array(span(length, noisy), { maxLength: 4 });
}

/** A value for a declared fact: valid (pooled for hits), wrong-typed, or a lazy or failing provider
 *  — the last two only when the occurrence is `noisy`. */
function factValue(name: string, type: FactType, length: number, noisy: boolean): fc.Arbitrary<unknown> {
  let valid: fc.Arbitrary<unknown>;
  switch (type) {
    case 'string':
      valid = name === 'tool' ? fc.constantFrom(...TOOLS, '') : anyString;
      break;
    case 'int':
      valid = smallInt;
      break;
    case 'list<string>':
      valid = fc.array(hotString, { maxLength: 3 });
      break;
    case 'list<map>':
      valid = spans(length, noisy);
      break;
    case 'map':
      valid = fc.oneof(
        fc.constantFrom<unknown>({ path: '/etc', n: 5, ok: true }, { a: 'x' }, {}, new Map([['a', 1]])),
        validValue('map'),
      );
      break;
    case 'map<string,string>':
      valid = fc.oneof(fc.constantFrom<unknown>({ k: 'v' }, { k: 'a' }, {}, new Map([['k', 'b']])), validValue(type));
      break;
    default:
      valid = validValue(type);
  }
  if (!noisy) return fc.oneof({ weight: 6, arbitrary: valid }, { weight: 1, arbitrary: valid.map((v) => lazy(v)) });
  return fc.oneof(
    { weight: 12, arbitrary: valid },
    { weight: 2, arbitrary: wrongValue(type) },
    { weight: 1, arbitrary: valid.map((v) => lazy(v)) },
    { weight: 1, arbitrary: fc.constant(failing('provider')) },
  );
}

/** A lazy fact provider ([OAR-FACT-11]): pure, so calling it twice is harmless. */
function lazy(v: unknown): () => unknown {
  const f = () => v;
  Object.defineProperty(f, fc.toStringMethod, { value: () => `lazy(${fc.stringify(v)})` });
  return f;
}

function failing(what: string): () => never {
  const f = () => {
    throw new Error(`${what} unavailable`);
  };
  Object.defineProperty(f, fc.toStringMethod, { value: () => `failing(${what})` });
  return f;
}

function functionValue(result: FactType, noisy: boolean): fc.Arbitrary<unknown> {
  const valid = result === 'int' ? smallInt : result === 'string' ? anyString : validValue(result);
  const produced = noisy ? fc.oneof({ weight: 8, arbitrary: valid }, { weight: 1, arbitrary: wrongValue(result) }) : valid;
  return fc.oneof(
    { weight: 3, arbitrary: produced },
    {
      weight: 2,
      arbitrary: fc.tuple(produced, produced).map(([a, b]) => {
        const f = (arg: unknown) => (arg === 'a' || arg === 'path' || arg === 'ok' || arg === 'n' ? a : b);
        Object.defineProperty(f, fc.toStringMethod, { value: () => `(arg) => arg in {a,path,ok,n} ? ${fc.stringify(a)} : ${fc.stringify(b)}` });
        return f;
      }),
    },
    { weight: noisy ? 1 : 0, arbitrary: fc.constant(failing('function')) },
  );
}

const CONTENT_UNITS = ['a', 'b', ' ', '😀', 'é', '\u{10FFFF}', 'x', '\uD83D', 'z'];
const content = fc.array(fc.constantFrom(...CONTENT_UNITS), { maxLength: 14 }).map((xs) => xs.join(''));

const toolCall: fc.Arbitrary<ToolCall> = fc.record(
  {
    name: fc.constantFrom(...TOOLS),
    arguments: fc.constantFrom<Record<string, unknown>>({ path: '/etc' }, { path: '/workspace/a', n: 3 }, { command: 'rm -rf /', ok: true }, {}, { n: 2 ** 60 }),
  },
  { requiredKeys: ['name'] },
);

const ABSENT = Symbol('absent');

function occurrenceArb(anchors: readonly string[]): fc.Arbitrary<Occurrence> {
  const anchor = fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom(...anchors) },
    { weight: 2, arbitrary: fc.constantFrom(...LOCAL_ANCHORS) },
    { weight: 1, arbitrary: fc.constantFrom(...STRAY_ANCHORS) },
  );
  return fc
    .tuple(anchor, fc.option(content, { nil: undefined, freq: 3 }), fc.boolean())
    .chain(([a, text, noisy]) => {
      const length = text === undefined ? 4 : [...text].length;
      const facts = fc.tuple(
        ...OCCURRENCE_FACTS.map((f) =>
          fc.oneof(
            { weight: f.name === 'tool_args_fingerprint' || f.name === 'content_length' ? 60 : 15, arbitrary: fc.constant<unknown>(ABSENT) },
            { weight: 10, arbitrary: factValue(f.name, f.type, length, noisy) },
            { weight: 1, arbitrary: fc.constant<unknown>(undefined) },
          ),
        ),
        ...FUNCTIONS.map((f) => fc.oneof({ weight: 4, arbitrary: fc.constant<unknown>(ABSENT) }, { weight: 1, arbitrary: functionValue(f.result, noisy) })),
      ).map((values) => {
        const out: Record<string, unknown> = {};
        const names = [...OCCURRENCE_FACTS.map((f) => f.name), ...FUNCTIONS.map((f) => f.name)];
        values.forEach((v, k) => {
          if (v !== ABSENT) out[names[k] as string] = v;
        });
        return out;
      });
      // What detector://fixture reports when a rule invokes it ([OAR-CONF-25]): mostly spans and
      // scalars; occasionally a fact it has no business producing (`anchor`, `tool`).
      const detectorNames = ['gen.spans', 'secret_matches', 'pii_entities', 'gen.s', 'gen.n', 'gen.flag', 'tool', 'anchor', 'gen.f'];
      const detectorFacts = fc
        .subarray(detectorNames, { maxLength: 4 })
        .chain((names) =>
          fc.tuple(
            ...names.map((n) => {
              if (n === 'gen.f') return functionValue('bool', noisy);
              const f = OCCURRENCE_FACTS.find((x) => x.name === n);
              return f ? factValue(n, f.type, length, noisy) : fc.constantFrom('model.output', 'pre', 'x');
            }),
          ).map((vs) => Object.fromEntries(names.map((n, k) => [n, vs[k]]))),
        );
      return fc
        .record({
          session: maybe(fc.constantFrom('s1', 's1', 's2'), 4, 1),
          facts,
          toolCall: maybe(toolCall, 1, 1),
          recentActivity: maybe(fc.array(fc.constantFrom(...TOOLS), { maxLength: 4 }), 1, 4),
          detectorFacts: maybe(detectorFacts, 2, 1),
        })
        .map((o) => {
          const occ: Occurrence = { anchor: a, facts: o.facts };
          if (o.session !== undefined) occ.session = o.session;
          if (text !== undefined) occ.content = text;
          if (o.toolCall !== undefined) occ.toolCall = o.toolCall;
          if (o.recentActivity !== undefined) occ.recentActivity = o.recentActivity;
          if (o.detectorFacts !== undefined) occ.detectorFacts = o.detectorFacts;
          return occ;
        });
    });
}

// --- conditions ---------------------------------------------------------------------------------

/** Placeholder for a `fire_count_of` / `breaker_count_of` argument, filled per rule with a
 *  spelling of another rule in the pack. */
const REF = '\u0001';

type Ty = 'bool' | 'int' | 'double' | 'string' | 'ls' | 'lm' | 'map' | 'ms';

const par = (s: string) => `(${s})`;
const lit = (v: string) => fc.tuple(fc.constantFrom<'"' | "'">('"', "'"), fc.nat()).map(([q, seed]) => encodeString(v, q, seed));
const strLit = fc.oneof({ weight: 4, arbitrary: hotString.chain(lit) }, { weight: 1, arbitrary: stringValue.chain(lit) });

function leaves(t: Ty): fc.Arbitrary<string> {
  switch (t) {
    case 'bool':
      return fc.oneof(
        fc.constantFrom('gen.flag', 'policy_denied', 'true', 'false', 'tool_arg_bool("ok")'),
        strLit.map((s) => `gen.f(${s})`),
      );
    case 'int':
      return fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom('0', '1', '2', '3', '5', '(-1)') },
        { weight: 1, arbitrary: fc.constantFrom('9223372036854775807', '(-9223372036854775808)', '4611686018427387904', '9007199254740993') },
        { weight: 4, arbitrary: fc.constantFrom('gen.n', 'fire_count', 'breaker_count', 'content_length', 'tool_arg_int("n")', 'gen.g("a")') },
        { weight: 3, arbitrary: fc.constantFrom(`fire_count_of(${REF})`, `breaker_count_of(${REF})`) },
      );
    case 'double':
      return fc.constantFrom('0.0', '0.5', '2.5', '100.25', 'gen.x', 'gen.x', '179769313486231570000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000.0');
    case 'string':
      return fc.oneof(
        { weight: 3, arbitrary: strLit },
        { weight: 4, arbitrary: fc.constantFrom('gen.s', 'gen.t', 'tool', 'principal', 'anchor', 'permission_profile', 'tool_arg_string("path")') },
      );
    case 'ls':
      return fc.constantFrom('gen.ls', 'principal_roles', 'arg_validation_errors', '["a", "read"]');
    case 'lm':
      return fc.constantFrom(...SPAN_TARGETS);
    case 'map':
      return fc.constantFrom('gen.m', 'tool_args');
    case 'ms':
      return fc.constant('gen.ms');
  }
}

const CMP = fc.constantFrom('==', '!=', '<', '<=', '>', '>=');
const cache = new Map<string, fc.Arbitrary<string>>();

/** A well-typed expression of type `t`, nested at most `d` levels. */
export function expr(t: Ty, d: number): fc.Arbitrary<string> {
  const key = `${t}:${d}`;
  let a = cache.get(key);
  if (a === undefined) {
    a = build(t, d);
    cache.set(key, a);
  }
  return a;
}

function build(t: Ty, d: number): fc.Arbitrary<string> {
  const leaf = leaves(t);
  if (d <= 0) return leaf;
  const E = (x: Ty) => expr(x, d - 1);
  const bin = (l: fc.Arbitrary<string>, op: fc.Arbitrary<string>, r: fc.Arbitrary<string>) =>
    fc.tuple(l, op, r).map(([x, o, y]) => `${par(x)} ${o} ${par(y)}`);
  const composite: fc.Arbitrary<string>[] = [];
  switch (t) {
    case 'bool':
      composite.push(
        E('bool').map((x) => `!${par(x)}`),
        bin(E('bool'), fc.constantFrom('&&', '||'), E('bool')),
        bin(E('int'), CMP, E('int')),
        bin(E('double'), CMP, fc.oneof(E('double'), E('int'))),
        bin(E('string'), CMP, E('string')),
        bin(E('bool'), fc.constantFrom('==', '!='), E('bool')),
        bin(E('string'), fc.constant('in'), fc.oneof(E('ls'), E('map'), E('ms'))),
        fc.tuple(fc.constantFrom('starts_with', 'ends_with', 'contains'), E('string'), E('string')).map(([f, x, y]) => `${f}(${x}, ${y})`),
        fc.tuple(E('bool'), E('bool'), E('bool')).map(([x, y, z]) => `${par(x)} ? ${par(y)} : ${par(z)}`),
        // Guards: the right operand would raise, the left keeps it from being evaluated ([OAR-EXPR-5]).
        E('string').map((s) => `("k" in gen.ms) && (gen.ms["k"] == ${par(s)})`),
        E('int').map((i) => `(gen.n != 0) && (${par(i)} / gen.n > 1)`),
        E('string').map((s) => `(size(gen.ls) > 1) && (gen.ls[1] == ${par(s)})`),
        fc.constantFrom('size(gen.spans) > 0', 'size(secret_matches) > 0', 'size(pii_entities) > 0', `breaker_count_of(${REF}) > 0`, 'fire_count < 2'),
        fc.constantFrom(`fire_count_of(${REF}) >= 1`, `fire_count_of(${REF}) >= 2`, `fire_count_of(${REF}) == 0`),
      );
      break;
    case 'int':
      composite.push(
        bin(E('int'), fc.constantFrom('+', '-', '*', '/', '%'), E('int')),
        E('int').map((x) => `-${par(x)}`),
        fc.oneof(E('string'), E('ls'), E('lm'), E('map'), E('ms')).map((x) => `size(${x})`),
        fc.tuple(E('bool'), E('int'), E('int')).map(([x, y, z]) => `${par(x)} ? ${par(y)} : ${par(z)}`),
      );
      break;
    case 'double':
      composite.push(
        bin(E('double'), fc.constantFrom('+', '-', '*', '/'), E('double')),
        E('double').map((x) => `-${par(x)}`),
        fc.tuple(E('bool'), E('double'), E('double')).map(([x, y, z]) => `${par(x)} ? ${par(y)} : ${par(z)}`),
      );
      break;
    case 'string':
      composite.push(
        bin(E('string'), fc.constant('+'), E('string')),
        E('string').map((k) => `gen.ms[${k}]`),
        fc.tuple(E('ls'), E('int')).map(([l, i]) => `${par(l)}[${i}]`),
        fc.tuple(E('bool'), E('string'), E('string')).map(([x, y, z]) => `${par(x)} ? ${par(y)} : ${par(z)}`),
      );
      break;
    case 'ls':
      composite.push(fc.tuple(E('string'), E('string')).map(([x, y]) => `[${x}, ${y}]`));
      break;
    case 'lm':
      composite.push(fc.tuple(E('bool'), E('lm'), E('lm')).map(([x, y, z]) => `${par(x)} ? ${par(y)} : ${par(z)}`));
      break;
    case 'map':
      composite.push(fc.tuple(E('lm'), fc.constantFrom('0', '1', 'gen.n')).map(([l, i]) => `${par(l)}[${i}]`));
      break;
    case 'ms':
      break;
  }
  if (composite.length === 0) return leaf;
  return fc.oneof({ weight: 2, arbitrary: leaf }, { weight: 3, arbitrary: fc.oneof(...composite) });
}

// --- copy ---------------------------------------------------------------------------------------

const BINDABLE = ['gen.s', 'gen.t', 'gen.n', 'gen.x', 'gen.flag', 'gen.ls', 'tool', 'anchor', 'fire_count', 'breaker_count', 'principal', 'content_length', 'principal_roles', 'policy_denied'];
const TESTABLE = [...BINDABLE, 'gen.m', 'gen.spans', 'gen.ms', 'tool_args', 'secret_matches'];
const ws = fc.constantFrom('', ' ', '  ', '\n');
const copyLiteral = fc.constantFrom('', 'Blocked ', ' 😀 ', 'é', ' { not a binding } ', '%', '}}', 'done.');
const binding = fc.tuple(ws, fc.constantFrom(...BINDABLE), ws).map(([a, n, b]) => `{{${a}${n}${b}}}`);
const flat = fc.array(fc.oneof(copyLiteral, binding), { maxLength: 3 }).map((xs) => xs.join(''));
const conditional = (inner: fc.Arbitrary<string>) =>
  fc
    .tuple(fc.boolean(), fc.constantFrom(...TESTABLE), inner, fc.option(inner, { nil: undefined }))
    .map(([not, n, yes, no]) => `{% if ${not ? 'not ' : ''}${n} %}${yes}${no === undefined ? '' : `{%else%}${no}`}{% endif %}`);
const copyText: fc.Arbitrary<string> = fc
  .array(fc.oneof({ weight: 3, arbitrary: copyLiteral }, { weight: 3, arbitrary: binding }, { weight: 1, arbitrary: conditional(fc.oneof(flat, conditional(flat))) }), { maxLength: 3 })
  .map((xs) => xs.join(''));

const copyArb = fc.option(
  fc.record(
    { title: copyText, what: copyText, cause: copyText, why: copyText, fix: copyText, instead: copyText },
    { requiredKeys: [] },
  ),
  { nil: undefined, freq: 3 },
);

// --- packs --------------------------------------------------------------------------------------

export type Enforcement = 'enforce' | 'monitor' | 'off';

/** What the generator decided about one rule, for spelling references to it. */
interface Skeleton {
  id: string;
  namespace?: string;
  qid: string;
  mandatory: boolean;
  kind: 'schema' | 'policy' | 'invariant' | 'detector';
}

export interface GeneratedPack {
  /** The texts handed to `loadPackTexts`. */
  capability: string;
  rules: string[];
  configs: string[];
  /** Rule documents as objects, for a readable counterexample. */
  docs: Record<string, unknown>[];
  configDocs: Record<string, unknown>[];
  /** Effective enforcement per qualified identifier after the configuration documents (section 9). */
  enforcement: Record<string, Enforcement>;
  /** Rules whose `publish_event` the event stream refuses ([OAR-FIRE-9]). */
  failingEvents: string[];
}

export interface PackCase {
  pack: GeneratedPack;
  occurrences: Occurrence[];
}

const IDS = ['A', 'B', 'C', 'R_1', 'ZED'];
const NAMESPACES: (string | undefined)[] = [undefined, undefined, 'acme', 'acme.sec', 'b-2'];

const skeletons = fc
  .uniqueArray(
    fc.record({
      id: fc.constantFrom(...IDS),
      namespace: fc.constantFrom(...NAMESPACES),
      kind: fc.constantFrom<Skeleton['kind']>('schema', 'policy', 'invariant', 'detector'),
    }),
    { minLength: 1, maxLength: 6, selector: (s) => `${s.namespace ?? ''}/${s.id}` },
  )
  .chain((xs) => fc.array(fc.nat({ max: 9 }), { minLength: xs.length, maxLength: xs.length }).map((ms) =>
    xs.map((s, k): Skeleton => {
      const sk: Skeleton = { id: s.id, qid: s.namespace === undefined ? s.id : `${s.namespace}/${s.id}`, mandatory: (ms[k] as number) === 0, kind: s.kind };
      if (s.namespace !== undefined) sk.namespace = s.namespace;
      return sk;
    }),
  ));

/** The ways rule `from` can spell a reference to rule `to` ([OAR-EVAL-13], [OAR-OPS-5], [OAR-FIRE-11]). */
function spellings(from: Skeleton, to: Skeleton): string[] {
  const out: string[] = [];
  if (from.namespace === to.namespace) out.push(to.id);
  if (to.namespace !== undefined) out.push(to.qid);
  return out;
}

/** How a configuration document can name a rule ([OAR-CFG-8]). */
function configSpellings(all: readonly Skeleton[], to: Skeleton): string[] {
  const out = [to.qid];
  if (to.namespace !== undefined && !all.some((r) => r.qid === to.id) && all.filter((r) => r.id === to.id).length === 1) out.push(to.id);
  return out;
}

const SIDE_EFFECTS = ['increment_counter', 'reset_counter', 'publish_event', 'increment_breaker', 'reset_breaker'] as const;
const EFFECTS = ['block', 'warn', 'nudge', 'allow', 'transform'] as const;

/**
 * One rule document. In a `counting` pack the first rule counts every occurrence it sees — no
 * condition, `increment_counter` — and the others mostly read its count, so thresholds crossed
 * over a sequence are exercised ([OAR-FIRE-11], the escalation pattern).
 */
function ruleDoc(all: readonly Skeleton[], k: number, packAnchor: string, transformHeavy: boolean, counting: boolean): fc.Arbitrary<Record<string, unknown>> {
  const me = all[k] as Skeleton;
  const others = all.filter((_, j) => j !== k);
  const counter = spellings(me, all[0] as Skeleton);
  const refs = [...all.flatMap((r) => spellings(me, r)), ...(counting ? [...counter, ...counter, ...counter] : [])];
  // Acyclic by construction: a rule only overrides rules after it in generation order, which is
  // unrelated to evaluation order. Never a mandatory rule ([OAR-EVAL-17]).
  const overridable = all.slice(k + 1).filter((r) => !r.mandatory).flatMap((r) => {
    const s = spellings(me, r);
    return s.length > 0 ? [s] : [];
  });
  const substitutes = all.flatMap((r) => spellings(me, r));
  const condition = fc
    .tuple(fc.constantFrom(1, 2, 2, 3), fc.array(fc.nat(), { minLength: 8, maxLength: 8 }))
    .chain(([depth, picks]) => expr('bool', depth).map((src) => ({ src, picks })))
    .filter(({ src }) => refs.length > 0 || !src.includes(REF))
    .map(({ src, picks }) => {
      let n = 0;
      // A JSON string literal is a valid OAR string literal for these spellings.
      return src.replace(/\u0001/g, () => JSON.stringify(refs[(picks[n++ % picks.length] as number) % refs.length]));
    });
  // The escalation pattern: warn at one, refuse at two ([OAR-FIRE-11]).
  const threshold = counter.length > 0
    ? fc.tuple(fc.constantFrom(...counter), fc.constantFrom('fire_count_of', 'fire_count_of', 'breaker_count_of'), fc.constantFrom('>= 1', '>= 2', '== 1', '> 2'))
        .map(([ref, fn, cmp]) => `${fn}(${JSON.stringify(ref)}) ${cmp}`)
    : undefined;
  const when = counting && k > 0 && threshold !== undefined
    ? fc.oneof(condition, threshold, fc.tuple(threshold, condition).map(([t, c]) => `(${t}) && (${c})`))
    : condition;
  const transform = fc
    .record({
      action: fc.constantFrom('redact', 'replace', 'replace', 'annotate'),
      target: fc.constantFrom('content', ...SPAN_TARGETS),
      replacement: fc.constantFrom('***', '', '[😀]', 'é!'),
      withReplacement: fc.boolean(),
    })
    .map(({ action, target, replacement, withReplacement }) =>
      action === 'redact' && !withReplacement ? { action, target } : { action, target, replacement },
    );
  // Clauses that often match: an absent string fact is '' ([OAR-FACT-25]); and sometimes the empty
  // list, which matches nothing ([OAR-SEL-6]).
  const clauseValues = fc.oneof(
    { weight: 8, arbitrary: fc.array(fc.constantFrom('', '', ...HOT, 'model.output', 'tool.post_invoke', 'gen.custom'), { minLength: 1, maxLength: 4 }) },
    { weight: 1, arbitrary: fc.constant([] as string[]) },
  );
  const selector = fc.dictionary(
    fc.constantFrom('tool', 'gen.s', 'anchor', 'principal', 'gen.ls', 'principal_roles'),
    clauseValues,
    { minKeys: 1, maxKeys: 2 },
  );
  return fc
    .record({
      // A transform-heavy pack accumulates several transforms at one occurrence, so their spans
      // overlap and get skipped ([OAR-OPS-16]).
      effect: transformHeavy
        ? fc.oneof({ weight: 6, arbitrary: fc.constant('transform' as const) }, { weight: 2, arbitrary: fc.constantFrom(...EFFECTS) })
        : fc.constantFrom(...EFFECTS),
      anchor: fc.oneof({ weight: 5, arbitrary: fc.constant(packAnchor) }, { weight: 1, arbitrary: fc.constantFrom(...RULE_ANCHORS) }),
      selector: maybe(selector, 1, transformHeavy ? 6 : 3),
      when: maybe(when, transformHeavy ? 1 : 4, 1),
      flow: maybe(fc.array(fc.constantFrom(...TOOLS), { minLength: 1, maxLength: ACTIVITY_WINDOW }), 1, transformHeavy ? 12 : 4),
      enforcement: maybe(fc.constantFrom<Enforcement>('enforce', 'enforce', 'monitor', 'off'), 1, transformHeavy ? 3 : 1),
      on_error: maybe(
        fc.oneof(
          fc.constantFrom('fail_closed', 'fail_open', 'fail_open'),
          substitutes.length > 0 ? fc.constantFrom(...substitutes) : fc.constant('fail_open'),
        ),
        2,
        1,
      ),
      // Mostly counting, so that later occurrences read counters that moved.
      on_fire: fc.array(fc.constantFrom(...SIDE_EFFECTS, 'increment_counter', 'increment_counter', 'increment_breaker', 'publish_event'), { minLength: 1, maxLength: 3 }),
      overrides: overridable.length > 0
        ? fc.subarray(overridable, { minLength: 1 }).chain((xs) => fc.tuple(...xs.map((s) => fc.constantFrom(...s))))
        : fc.constant([] as string[]),
      counter_scope: maybe(fc.constantFrom(...SCOPE_FACTS), 1, 2),
      copy: copyArb,
      transform,
      detector: fc.constantFrom(...DETECTORS),
      status: maybe(fc.constantFrom('experimental', 'test', 'stable', 'deprecated'), 1, 3),
      extras: fc.boolean(),
      requiresOrder: fc.boolean(),
    })
    .map((r) => (counting && k === 0 ? { ...r, anchor: packAnchor, selector: undefined, when: undefined, flow: undefined, enforcement: undefined, on_fire: ['increment_counter' as const], effect: 'allow' as const } : r))
    .chain((r) =>
      fc.tuple(fc.boolean(), fc.boolean()).map(([withOnFire0, withOverrides]) => {
        const withOnFire = withOnFire0 || (counting && k === 0);
        const doc: Record<string, unknown> = { oar: '1.0', id: me.id };
        if (me.namespace !== undefined) doc.namespace = me.namespace;
        doc.kind = me.kind;
        doc.anchor = r.anchor;
        if (r.selector !== undefined && Object.keys(r.selector).length > 0) doc.selector = r.selector;
        const facts = HOST_FACTS.map((f) => f.name);
        doc.requires = { profiles: r.requiresOrder ? [...PROFILES] : [...PROFILES].reverse(), facts };
        if (r.when !== undefined) doc.when = r.when;
        if (r.flow !== undefined) doc.flow = r.flow;
        doc.effect = r.effect;
        if (r.effect === 'transform') doc.transform = r.transform;
        if (me.kind === 'detector') doc.detector = { ref: r.detector };
        if (r.enforcement !== undefined) doc.enforcement = r.enforcement;
        if (me.mandatory) doc.mandatory = true;
        if (r.on_error !== undefined) doc.on_error = r.on_error;
        if (withOnFire) doc.on_fire = r.on_fire;
        if (withOverrides && r.overrides.length > 0) doc.overrides = r.overrides;
        if (r.counter_scope !== undefined) doc.counter_scope = r.counter_scope;
        if (r.copy !== undefined) doc.copy = r.copy;
        if (r.status !== undefined) doc.status = r.status;
        if (r.extras) {
          // Decision-neutral ([OAR-DOC-25], [OAR-DOC-26], [OAR-DOC-30]).
          doc['x-note'] = { anything: [1, 'two'] };
          doc.references = { mitre: ['T1059'] };
          const target = others[0];
          if (target !== undefined) doc.related = [{ id: target.qid.includes('/') ? target.qid : target.id, type: 'similar' }];
        }
        return doc;
      }),
    );
}

function configArb(all: readonly Skeleton[]): fc.Arbitrary<Record<string, unknown>[]> {
  const one = fc
    .subarray(all.map((_, k) => k), { maxLength: Math.min(3, all.length) })
    .chain((ks) =>
      fc.tuple(
        ...ks.map((k) => {
          const r = all[k] as Skeleton;
          // [OAR-CFG-5]: a mandatory rule is never disabled or downgraded.
          const values: Enforcement[] = r.mandatory ? ['enforce'] : ['enforce', 'monitor', 'off'];
          return fc.record({
            ref: fc.constantFrom(...configSpellings(all, r)),
            value: fc.constantFrom(...values),
            asDisable: fc.boolean(),
          });
        }),
      ),
    )
    .map((stmts) => {
      const doc: Record<string, unknown> = { oar_config: '1.0' };
      const disable: string[] = [];
      const enforcement: Record<string, string> = {};
      for (const s of stmts) {
        if (s.value === 'off' && s.asDisable) disable.push(s.ref);
        else enforcement[s.ref] = s.value;
      }
      if (disable.length > 0) doc.disable = disable;
      if (Object.keys(enforcement).length > 0) doc.enforcement = enforcement;
      return doc;
    });
  return fc.oneof({ weight: 3, arbitrary: fc.constant<Record<string, unknown>[]>([]) }, { weight: 2, arbitrary: fc.array(one, { minLength: 1, maxLength: 2 }) });
}

/** Resolve a configuration reference the way [OAR-CFG-8] says (exact qualified id, else unique id). */
function resolveConfigRef(all: readonly Skeleton[], ref: string): Skeleton {
  const exact = all.find((r) => r.qid === ref);
  if (exact) return exact;
  const byId = all.filter((r) => r.id === ref);
  if (byId.length !== 1) throw new Error(`generator bug: config reference ${ref} is not unique`);
  return byId[0] as Skeleton;
}

type Serialisation = 'yaml-each' | 'json-each' | 'yaml-stream' | 'json-array';

function serialise(docs: Record<string, unknown>[], how: Serialisation): string[] {
  switch (how) {
    case 'yaml-each':
      return docs.map((d) => yamlStringify(d));
    case 'json-each':
      return docs.map((d) => JSON.stringify(d, null, 1));
    case 'yaml-stream':
      return [docs.map((d) => `---\n${yamlStringify(d)}`).join('')];
    case 'json-array':
      return [JSON.stringify(docs)];
  }
}

export const packArb: fc.Arbitrary<GeneratedPack> = fc
  .tuple(skeletons, fc.constantFrom(...RULE_ANCHORS), fc.nat({ max: 2 }))
  .chain(([all, packAnchor, theme]) =>
    fc.record({
      all: fc.constant(all),
      docs: fc.tuple(...all.map((_, k) => ruleDoc(all, k, theme === 0 ? 'model.output' : packAnchor, theme === 0, theme === 1))),
      configs: configArb(all),
      how: fc.constantFrom<Serialisation>('yaml-each', 'json-each', 'yaml-stream', 'json-array'),
      shuffle: fc.array(fc.nat(), { minLength: all.length, maxLength: all.length }),
      failingEvents: fc.subarray(all.map((r) => r.qid), { maxLength: 1 }),
    }),
  )
  .map(({ all, docs, configs, how, shuffle, failingEvents }) => {
    // Document order is not evaluation order ([OAR-DOC-31]): shuffle it.
    const order = docs.map((d, k) => ({ d, key: shuffle[k] as number, k })).sort((a, b) => a.key - b.key || a.k - b.k).map((x) => x.d);
    const enforcement: Record<string, Enforcement> = {};
    all.forEach((r, k) => {
      enforcement[r.qid] = ((docs[k] as Record<string, unknown>).enforcement as Enforcement | undefined) ?? 'enforce';
    });
    for (const c of configs) {
      // Within one document each rule is named once, so the order of `disable` and `enforcement`
      // inside it cannot matter; across documents the last statement wins ([OAR-CFG-7]).
      for (const ref of (c.disable as string[] | undefined) ?? []) enforcement[resolveConfigRef(all, ref).qid] = 'off';
      for (const [ref, v] of Object.entries((c.enforcement as Record<string, Enforcement> | undefined) ?? {})) enforcement[resolveConfigRef(all, ref).qid] = v;
    }
    return {
      capability: CAPABILITY_TEXT,
      rules: serialise(order, how),
      configs: configs.map((c, k) => (k % 2 === 0 ? yamlStringify(c) : JSON.stringify(c))),
      docs: order,
      configDocs: configs,
      enforcement,
      failingEvents,
    };
  });

/** The local anchors the pack's rules bind to, so most occurrences select something. */
function anchorsOf(pack: GeneratedPack): string[] {
  const out = new Set<string>();
  for (const d of pack.docs) {
    const a = d.anchor as string;
    out.add(ANCHOR_MAP[a] ?? a);
  }
  return [...out];
}

export const packCaseArb: fc.Arbitrary<PackCase> = packArb.chain((pack) =>
  fc.array(occurrenceArb(anchorsOf(pack)), { minLength: 1, maxLength: 8 }).map((occurrences) => ({ pack, occurrences })),
);

/** A pack as the YAML a person would read in a counterexample. */
export function showPack(pack: GeneratedPack): string {
  return [
    '# rules',
    ...pack.docs.map((d) => `---\n${yamlStringify(d)}`),
    ...pack.configDocs.map((c) => `# config\n${yamlStringify(c)}`),
    pack.failingEvents.length > 0 ? `# event stream refuses publish_event of: ${pack.failingEvents.join(', ')}` : '',
  ].join('\n');
}
