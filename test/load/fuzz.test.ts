/**
 * The loader against hostile input. fast-check feeds `loadPackTexts` random and mutated documents —
 * starting from valid rule, capability and configuration documents and deleting, renaming and
 * retyping fields, putting random text in `when` and `copy`, growing huge arrays, deep nesting and
 * 1 MB strings, and serialising as JSON, YAML, random YAML-ish text, random bytes, alias bombs and
 * duplicate keys — and requires that it either loads or returns diagnostics: it never throws, never
 * takes long on one case, and every diagnostic carries a clause `OAR-AREA-n` and a message.
 *
 * The seed is fixed (override with OARC_FUZZ_SEED, and the run count with OARC_FUZZ_RUNS); a failure
 * prints the seed and the fast-check path that reproduces it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { formatDiagnostic, loadPackTexts, type Diagnostic, type PackResult } from '../../compiler/index.js';
import { capability, rule, type Doc } from './fixtures.js';

const SEED = Number(process.env.OARC_FUZZ_SEED ?? 20_240_611);
const RUNS = Math.max(1000, Number(process.env.OARC_FUZZ_RUNS ?? 1000));
/** One case, however hostile, must finish within this; a loader that "hangs" fails here. */
const CASE_BUDGET_MS = 3000;
/** A clause, or an oarc code for a check the specification does not make (`oarc/empty-pack`). */
const CLAUSE = /^(OAR-[A-Z]+-[0-9]+|oarc\/[a-z]+(-[a-z]+)*)$/;

interface Texts {
  capability: string;
  rules: string[];
  configs: string[];
}

// ---------------------------------------------------------------------------------------------
// The contract every case is held to

function checkDiagnostic(d: Diagnostic): void {
  expect(d.severity === 'error' || d.severity === 'warning', `severity ${String(d.severity)}`).toBe(true);
  expect(typeof d.clause === 'string' && CLAUSE.test(d.clause), `clause ${String(d.clause)}`).toBe(true);
  expect(typeof d.message === 'string' && d.message.trim().length > 0, `message of ${d.clause}`).toBe(true);
  if (d.token !== undefined) expect(typeof d.token).toBe('string');
  if (d.offset !== undefined) expect(Number.isInteger(d.offset) && d.offset >= 0, `offset ${d.offset}`).toBe(true);
  if (d.source?.line !== undefined) expect(Number.isInteger(d.source.line) && d.source.line >= 1).toBe(true);
  if (d.source?.column !== undefined) expect(Number.isInteger(d.source.column) && d.source.column >= 1).toBe(true);
  expect(formatDiagnostic(d)).toMatch(/^.*:\d+:\d+: [\s\S]* \[(OAR-[A-Z]+-[0-9]+|oarc\/[a-z-]+)\]$/);
}

/**
 * Loads or returns diagnostics; never throws; within the case budget — of the process's CPU time,
 * not the wall clock: on a shared 2-core machine at load 9 a 1 s load was descheduled past 4 s of
 * wall time, while a hang or a quadratic blow-up costs CPU time all the same.
 */
function survive(texts: Texts, budget = CASE_BUDGET_MS): PackResult {
  const cpu = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const t0 = cpu();
  let r: PackResult;
  try {
    r = loadPackTexts(texts);
  } catch (e) {
    throw new Error(`loadPackTexts threw: ${e instanceof Error ? `${e.name}: ${e.message}\n${e.stack}` : String(e)}`);
  }
  const ms = cpu() - t0;
  expect(ms, `one case took ${ms.toFixed(0)} ms of CPU time`).toBeLessThan(budget);
  if (r.ok) {
    expect(Array.isArray(r.pack.rules)).toBe(true);
    expect(r.pack.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    r.pack.diagnostics.forEach(checkDiagnostic);
  } else {
    expect(r.diagnostics.some((d) => d.severity === 'error'), 'a rejection carries an error').toBe(true);
    r.diagnostics.forEach(checkDiagnostic);
  }
  return r;
}

function assertProperty<T>(arb: fc.Arbitrary<T>, predicate: (t: T) => void, runs: number = RUNS): void {
  try {
    fc.assert(fc.property(arb, predicate), { seed: SEED, numRuns: runs, endOnFailure: true });
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    throw new Error(`loader fuzz failed — seed ${SEED} (rerun with OARC_FUZZ_SEED=${SEED})\n${message}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Valid starting points

const VALID_RULES: Doc[] = [
  rule({
    id: 'READ_OUTSIDE_SCOPE',
    namespace: 'acme.security',
    selector: { tool: ['read'], 'acme.tenant_tier': ['gold', 'silver'] },
    requires: { profiles: ['tool', 'filesystem'], facts: ['acme.tenant_tier', 'acme.count'] },
    when: 'path_outside_scope("read") && (acme.count > 2 || size(tool) >= 4) ? true : "x" in tool_args',
    on_error: 'fail_closed',
    on_fire: ['increment_counter', 'publish_event'],
    counter_scope: 'tool_args_fingerprint',
    copy: { title: 'Scope', what: 'The {{ tool }} call{% if acme.count %} ({{ acme.count }}){% endif %}.', fix: '{% if not policy_denied %}Read inside scope.{% else %}Ask.{% endif %}' },
    references: { owasp: ['LLM06'] },
    related: [{ id: 'OLD_SCOPE', type: 'renamed' }],
    status: 'stable',
    'x-acme-owner': 'secops',
  }),
  rule({ id: 'GENERAL', namespace: 'acme.security', effect: 'warn', enforcement: 'monitor', when: 'fire_count_of("READ_OUTSIDE_SCOPE") > 1' }),
  rule({ id: 'B', kind: 'invariant', effect: 'nudge', overrides: ['acme.security/GENERAL'], flow: ['read', 'write'], mandatory: false }),
  rule({ id: 'C', namespace: 'acme', kind: 'schema', effect: 'allow', on_error: 'FALLBACK', anchor: 'gateway.pre_render' }),
  rule({ id: 'FALLBACK', namespace: 'acme', effect: 'block', mandatory: true }),
  rule({
    id: 'REDACT',
    kind: 'detector',
    anchor: 'model.output',
    detector: { ref: 'detector://presidio' },
    effect: 'transform',
    transform: { action: 'redact', target: 'secret_matches' },
    requires: { profiles: ['secrets'] },
  }),
  rule({ id: 'NOTE', anchor: 'model.input', effect: 'transform', transform: { action: 'annotate', target: 'acme.spans', replacement: ' [seen]' }, requires: { facts: ['acme.spans'] } }),
];
const VALID_CAPABILITY: Doc = capability();
const VALID_CONFIG: Doc = { oar_config: '1.0', disable: ['B'], enforcement: { 'acme/C': 'monitor', NOTE: 'off' } };

// ---------------------------------------------------------------------------------------------
// Generators

const FIELD_NAMES = [
  'oar', 'id', 'namespace', 'kind', 'anchor', 'selector', 'when', 'flow', 'effect', 'enforcement', 'mandatory', 'on_error',
  'on_fire', 'overrides', 'requires', 'transform', 'detector', 'copy', 'references', 'status', 'related', 'counter_scope',
  'profiles', 'facts', 'action', 'target', 'replacement', 'ref', 'title', 'what', 'why', 'fix', 'instead', 'cause',
  'oar_capability_version', 'host', 'anchors', 'core', 'unsupported', 'activity_window', 'supports_transform',
  'expression_nodes_max', 'host_facts', 'detectors', 'name', 'type', 'oar_config', 'disable',
  'x-acme', 'x-', 'X-acme', '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '', ' ', 'wen', 'efect',
];

const CONDITION_TOKENS = [
  'tool', 'tool_args', 'acme.count', 'acme.tenant_tier', 'acme.lookup', 'fire_count', 'fire_count_of', 'breaker_count_of',
  'anchor', 'size', 'starts_with', 'contains', 'true', 'false', 'in', 'null', 'matches', 'x', '.', '..', '(', ')', '[', ']',
  ',', '?', ':', '!', '-', '+', '*', '/', '%', '<', '<=', '>', '>=', '==', '!=', '&&', '||', '"', "'", '"read"', "'a\\u00e9'",
  '"\\u', '\\', '0', '1', '9223372036854775808', '1.5', '1e9', '1.0', ' ', '\n', '\t', '//', '/*', '😀', '\u0000', '\ud800',
];

const COPY_TOKENS = [
  '{{', '}}', '{%', '%}', ' if ', ' not ', ' else ', ' endif ', ' for ', 'tool', 'acme.count', 'policy_denied', 'nosuch',
  'tool_args', 'secret_matches', '.', ' ', 'text', '{', '}', '%', '|', '😀', '\n', '\u0000',
];

const YAML_TOKENS = [
  'oar', ':', ' ', '\n', '  ', '- ', '"1.0"', '1.0', 'id', 'A', '{', '}', '[', ']', ',', '&a', '*a', '!!str', '!!binary',
  '!custom', '---', '...', '%YAML 1.1', '#', '?', '|', '>', "'", '"', '\t', 'true', 'null', '~', '.nan', '.inf', '0x1F',
  '<<', '@', '`', '\r\n', '\ufeff',
];

const soup = (tokens: readonly string[], maxLength: number) =>
  fc.array(fc.constantFrom(...tokens), { maxLength }).map((xs) => xs.join(''));

const conditionText = fc.oneof(
  { weight: 3, arbitrary: soup(CONDITION_TOKENS, 40) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 60 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }) },
);
const copyText = fc.oneof({ weight: 3, arbitrary: soup(COPY_TOKENS, 30) }, { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 60 }) });
const keyName = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...FIELD_NAMES) }, { weight: 1, arbitrary: fc.string({ maxLength: 12 }) });
const anyJson = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom<unknown>(null, true, 0, -1, 1.5, 2 ** 63, -(2 ** 63), '', '1.0', '01.0', [], {}, ['A'], { A: 'off' }),
);

type Op =
  | { op: 'delete'; at: number }
  | { op: 'rename'; at: number; name: string }
  | { op: 'retype'; at: number; value: unknown }
  | { op: 'when'; at: number; text: string }
  | { op: 'copy'; at: number; member: string; text: string }
  | { op: 'huge'; at: number; n: number }
  | { op: 'deep'; at: number; depth: number; shape: 'array' | 'object' | 'mixed' }
  | { op: 'big'; at: number; unit: string }
  | { op: 'add'; at: number; name: string; value: unknown };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant('delete' as const), at: fc.nat() }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('rename' as const), at: fc.nat(), name: keyName }) },
  { weight: 6, arbitrary: fc.record({ op: fc.constant('retype' as const), at: fc.nat(), value: anyJson }) },
  { weight: 6, arbitrary: fc.record({ op: fc.constant('when' as const), at: fc.nat(), text: conditionText }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('copy' as const), at: fc.nat(), member: fc.constantFrom('title', 'what', 'cause', 'why', 'fix', 'instead'), text: copyText }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('add' as const), at: fc.nat(), name: keyName, value: anyJson }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('huge' as const), at: fc.nat(), n: fc.integer({ min: 1000, max: 3000 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('deep' as const), at: fc.nat(), depth: fc.integer({ min: 10, max: 400 }), shape: fc.constantFrom('array' as const, 'object' as const, 'mixed' as const) }),
  },
);

/**
 * A 1 MB string in place of a value. Parsing a megabyte costs most of a second on the shared CI
 * cores, so this mutation runs in its own, shorter property rather than in the 1,000-run one.
 */
const bigOp: fc.Arbitrary<Op> = fc.record({ op: fc.constant('big' as const), at: fc.nat(), unit: fc.constantFrom('a', '(', 'é', '😀', '{{', '{% if tool %}', ' ', '\\', '"') });

/** Every (container, key) slot of a JSON tree, the root's members first. */
function slots(root: unknown): { parent: Record<string, unknown> | unknown[]; key: string | number }[] {
  const out: { parent: Record<string, unknown> | unknown[]; key: string | number }[] = [];
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.shift();
    if (Array.isArray(node)) node.forEach((v, i) => (out.push({ parent: node, key: i }), stack.push(v)));
    else if (node !== null && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        out.push({ parent: node as Record<string, unknown>, key: k });
        stack.push(v);
      }
    }
  }
  return out;
}

function deep(depth: number, shape: 'array' | 'object' | 'mixed'): unknown {
  let v: unknown = 'leaf';
  for (let i = 0; i < depth; i++) v = shape === 'array' || (shape === 'mixed' && i % 2 === 0) ? [v] : { k: v };
  return v;
}

function set(parent: Record<string, unknown> | unknown[], key: string | number, value: unknown): void {
  if (Array.isArray(parent)) parent[Number(key)] = value;
  else Object.defineProperty(parent, key, { value, enumerable: true, configurable: true, writable: true });
}

/** Applies one mutation in place (to a structuredClone of a valid document). */
function mutate(doc: Record<string, unknown>, m: Op): void {
  const all = slots(doc);
  const slot = all.length > 0 ? all[m.at % all.length]! : undefined;
  switch (m.op) {
    case 'delete':
      if (!slot) return;
      if (Array.isArray(slot.parent)) slot.parent.splice(Number(slot.key), 1);
      else delete slot.parent[slot.key as string];
      return;
    case 'rename': {
      if (!slot || Array.isArray(slot.parent)) return;
      const value = slot.parent[slot.key as string];
      delete slot.parent[slot.key as string];
      set(slot.parent, m.name, value);
      return;
    }
    case 'retype':
      if (slot) set(slot.parent, slot.key, m.value);
      return;
    case 'add': {
      const objects = [doc, ...all.map((s) => (Array.isArray(s.parent) ? s.parent[Number(s.key)] : s.parent[s.key as string]))].filter(
        (v): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v),
      );
      set(objects[m.at % objects.length]!, m.name, m.value);
      return;
    }
    case 'when':
      doc.when = m.text;
      return;
    case 'copy': {
      const copy = doc.copy !== null && typeof doc.copy === 'object' && !Array.isArray(doc.copy) ? (doc.copy as Record<string, unknown>) : {};
      copy[m.member] = m.text;
      doc.copy = copy;
      return;
    }
    case 'huge':
      if (slot) set(slot.parent, slot.key, Array.from({ length: m.n }, (_, i) => (i % 2 === 0 ? 'read' : `S${i}`)));
      return;
    case 'deep':
      if (slot) set(slot.parent, slot.key, deep(m.depth, m.shape));
      else doc.selector = deep(m.depth, m.shape);
      return;
    case 'big': {
      const value = m.unit.repeat(Math.ceil((1024 * 1024) / m.unit.length));
      if (slot) set(slot.parent, slot.key, value);
      return;
    }
  }
}

type Format = 'json' | 'json-compact' | 'yaml';
const format = fc.constantFrom<Format>('json', 'json-compact', 'yaml');

function serialise(value: unknown, f: Format): string {
  if (f === 'yaml') {
    try {
      return stringify(value, { aliasDuplicateObjects: false, lineWidth: 0 });
    } catch {
      return JSON.stringify(value);
    }
  }
  return f === 'json' ? JSON.stringify(value, null, 2) : JSON.stringify(value);
}

/** A text edit: the serialised document with characters inserted, deleted or replaced. */
const textEdits = fc.array(fc.record({ at: fc.nat(), del: fc.nat({ max: 8 }), ins: fc.oneof(fc.constantFrom(...YAML_TOKENS), fc.string({ maxLength: 4 })) }), {
  minLength: 1,
  maxLength: 5,
});

function editText(text: string, edits: readonly { at: number; del: number; ins: string }[]): string {
  let t = text;
  for (const e of edits) {
    const at = t.length === 0 ? 0 : e.at % (t.length + 1);
    t = t.slice(0, at) + e.ins + t.slice(at + e.del);
  }
  return t;
}

/** Billion laughs: `width` aliases per level, `depth` levels. */
function aliasBomb(depth: number, width: number, inRule: boolean): string {
  const lines = ['l0: &l0 ["lol"]'];
  for (let i = 1; i <= depth; i++) lines.push(`l${i}: &l${i} [${Array(width).fill(`*l${i - 1}`).join(', ')}]`);
  if (inRule) lines.push('oar: "1.0"', 'id: A', 'kind: policy', 'anchor: tool.pre_invoke', 'effect: block', `flow: *l${depth}`);
  return `${lines.join('\n')}\n`;
}

/** A valid document's text with one top-level line repeated: a duplicate key. */
function duplicateKey(value: Doc, f: Format, which: number): string {
  const text = serialise(value, f === 'yaml' ? 'yaml' : 'json');
  const lines = text.split('\n');
  const candidates = lines.map((l, i) => ({ l, i })).filter(({ l }) => (f === 'yaml' ? /^[a-z_]+:/.test(l) : /^ {2}"[a-z_]+":/.test(l)));
  if (candidates.length === 0) return text;
  const { l, i } = candidates[which % candidates.length]!;
  const dup = f === 'yaml' ? l : l.endsWith(',') ? l : `${l},`;
  lines.splice(i, 0, dup);
  return lines.join('\n');
}

type Target = 'rule' | 'capability' | 'config';

/** One document's text: mutated-and-serialised, edited, or one of the hostile forms. */
function documentText(base: Doc, ops: fc.Arbitrary<Op[]> = fc.array(op, { minLength: 1, maxLength: 4 })) {
  return fc.oneof(
    { weight: 8, arbitrary: fc.tuple(ops, format).map(([ops, f]) => {
      const doc = structuredClone(base);
      for (const m of ops) mutate(doc, m);
      return serialise(doc, f);
    }) },
    { weight: 2, arbitrary: fc.tuple(format, textEdits).map(([f, edits]) => editText(serialise(base, f), edits)) },
    { weight: 1, arbitrary: fc.tuple(format, fc.nat()).map(([f, n]) => duplicateKey(base, f, n)) },
    { weight: 1, arbitrary: soup(YAML_TOKENS, 60) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b).toString('latin1')) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b).toString('utf8')) },
    { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 2, max: 12 }), fc.integer({ min: 2, max: 12 }), fc.boolean()).map(([d, w, r]) => aliasBomb(d, w, r)) },
  );
}

const validRuleTexts = VALID_RULES.map((d) => JSON.stringify(d));

/** A whole pack: mostly valid, with one or more documents replaced by hostile text. */
const pack: fc.Arbitrary<Texts> = fc
  .tuple(
    fc.constantFrom<Target>('rule', 'rule', 'rule', 'capability', 'config'),
    fc.nat({ max: VALID_RULES.length - 1 }),
    fc.integer({ min: 0, max: VALID_RULES.length }),
    fc.boolean(),
  )
  .chain(([target, which, keep, asArray]) =>
    fc.tuple(documentText(target === 'rule' ? VALID_RULES[which]! : target === 'capability' ? VALID_CAPABILITY : VALID_CONFIG), fc.option(documentText(VALID_RULES[(which + 1) % VALID_RULES.length]!), { freq: 4 })).map(
      ([hostile, second]): Texts => {
        const others = validRuleTexts.filter((_, i) => i !== which).slice(0, keep);
        const rules = target === 'rule' ? [hostile, ...others] : [...validRuleTexts];
        if (second !== null) rules.push(second);
        return {
          capability: target === 'capability' ? hostile : JSON.stringify(VALID_CAPABILITY),
          rules: asArray && target !== 'rule' ? [`[${validRuleTexts.join(',')}]`] : rules,
          configs: target === 'config' ? [hostile] : asArray ? [] : [JSON.stringify(VALID_CONFIG)],
        };
      },
    ),
  );

// ---------------------------------------------------------------------------------------------

describe('loader fuzz: random and mutated documents', () => {
  it('the starting documents load', () => {
    const r = survive({ capability: JSON.stringify(VALID_CAPABILITY), rules: validRuleTexts, configs: [JSON.stringify(VALID_CONFIG)] });
    if (!r.ok) expect.fail(r.diagnostics.map(formatDiagnostic).join('\n'));
    expect(r.pack.rules).toHaveLength(VALID_RULES.length);
    // ... from YAML too, and as one array.
    expect(survive({ capability: stringify(VALID_CAPABILITY), rules: VALID_RULES.map((d) => stringify(d)), configs: [stringify(VALID_CONFIG)] }).ok).toBe(true);
    expect(survive({ capability: JSON.stringify(VALID_CAPABILITY), rules: [JSON.stringify(VALID_RULES)], configs: [] }).ok).toBe(true);
  });

  it(`never throws or hangs, and every diagnostic is well formed (seed ${SEED}, ${RUNS} runs)`, () => {
    let loaded = 0;
    let rejected = 0;
    assertProperty(pack, (texts) => {
      const r = survive(texts);
      if (r.ok) loaded++;
      else rejected++;
    });
    // The generator must exercise both outcomes, or it is testing nothing.
    expect(loaded).toBeGreaterThan(0);
    expect(rejected).toBeGreaterThan(RUNS / 2);
  });

  it(`1 MB strings anywhere in a rule, a capability or a configuration (seed ${SEED})`, () => {
    const target = fc.constantFrom(...VALID_RULES, VALID_CAPABILITY, VALID_CONFIG);
    assertProperty(
      fc.tuple(target, fc.array(bigOp, { minLength: 1, maxLength: 1 }), format).map(([base, ops, f]) => {
        const doc = structuredClone(base);
        for (const m of ops) mutate(doc, m);
        const text = serialise(doc, f);
        return 'oar_capability_version' in base
          ? { capability: text, rules: validRuleTexts, configs: [] }
          : 'oar_config' in base
            ? { capability: JSON.stringify(VALID_CAPABILITY), rules: validRuleTexts, configs: [text] }
            : { capability: JSON.stringify(VALID_CAPABILITY), rules: [text], configs: [] };
      }),
      (texts) => void survive(texts, 5000),
      16,
    );
  });

  it(`random conditions and copy through the full loader (seed ${SEED})`, () => {
    assertProperty(fc.tuple(conditionText, copyText, fc.boolean()), ([when, what, yaml]) => {
      const doc = rule({ when, copy: { what }, requires: { profiles: ['tool'], facts: ['acme.count', 'acme.tenant_tier', 'acme.lookup'] } });
      survive({ capability: JSON.stringify(VALID_CAPABILITY), rules: [yaml ? stringify(doc) : JSON.stringify(doc)], configs: [] });
    });
  });
});

describe('loader fuzz: the extremes, each ending in an error quickly', () => {
  const cap = JSON.stringify(VALID_CAPABILITY);
  const MB = 1024 * 1024;

  it('a 50 MB text as a rule, a capability and a configuration', () => {
    const huge = `oar: "1.0"\nid: A\nkind: policy\nanchor: tool.pre_invoke\neffect: block\nwhen: "${'a'.repeat(50 * MB)}"\n`;
    for (const texts of [
      { capability: cap, rules: [huge], configs: [] },
      { capability: huge, rules: [JSON.stringify(rule())], configs: [] },
      { capability: cap, rules: [JSON.stringify(rule())], configs: [huge] },
    ]) {
      const r = survive(texts, 2000);
      expect(r.ok).toBe(false);
    }
  });

  it('a 50 MB JSON rule whose size is only visible in UTF-8 bytes', () => {
    // 25 Mi code units of 'é' are 50 MiB of UTF-8: fewer UTF-16 units than bytes.
    const text = JSON.stringify(rule({ when: `"${'é'.repeat(25 * MB)}" == ""` }));
    const r = survive({ capability: cap, rules: [text], configs: [] }, 3000);
    expect(r.ok).toBe(false);
  });

  const DEPTH = 100_000;
  const conditions: [string, string][] = [
    ['parentheses', `${'('.repeat(DEPTH)}true${')'.repeat(DEPTH)}`],
    ['negations', `${'!('.repeat(DEPTH)}true${')'.repeat(DEPTH)}`],
    ['unbalanced parentheses', '('.repeat(DEPTH)],
    ['right-nested ternaries', `${'true ? true : '.repeat(DEPTH)}true`],
    ['nested list literals', `"a" in ${'['.repeat(DEPTH)}"a"${']'.repeat(DEPTH)}`],
    ['nested calls', `${'size('.repeat(DEPTH)}"a"${')'.repeat(DEPTH)} > 0`],
    ['nested indexing', `tool${'['.repeat(DEPTH)}0${']'.repeat(DEPTH)} == "a"`],
    ['a long && chain', Array(DEPTH).fill('true').join(' && ')],
    ['a long + chain', `${Array(DEPTH).fill('1').join(' + ')} > 0`],
  ];
  for (const [what, when] of conditions) {
    for (const f of ['json', 'yaml'] as const) {
      it(`a 100,000-deep condition (${what}, ${f}) ends in an error quickly`, () => {
        const doc = rule({ when, requires: { profiles: ['tool'] } });
        const r = survive({ capability: cap, rules: [f === 'json' ? JSON.stringify(doc) : stringify(doc, { lineWidth: 0 })], configs: [] }, 2000);
        expect(r.ok).toBe(false);
        const aboutWhen = r.ok ? [] : r.diagnostics.filter((d) => d.path?.[0] === 'when');
        expect(aboutWhen.length).toBeGreaterThan(0);
      });
    }
  }

  it('100,000-deep documents (flow and block collections) end in an error quickly', () => {
    const flowArray = `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`;
    const flowMap = `${'{"a":'.repeat(DEPTH)}1${'}'.repeat(DEPTH)}`;
    const block = Array.from({ length: 5000 }, (_, i) => `${' '.repeat(i)}- `).join('\n');
    for (const text of [flowArray, flowMap, block, `selector: ${flowArray}`]) {
      for (const texts of [
        { capability: cap, rules: [text], configs: [] },
        { capability: text, rules: [], configs: [] },
        { capability: cap, rules: [JSON.stringify(rule())], configs: [text] },
      ]) {
        expect(survive(texts, 2000).ok).toBe(false);
      }
    }
  });

  it('100,000-deep copy conditionals end in an error (or load) quickly', () => {
    for (const what of [
      `${'{% if tool %}'.repeat(DEPTH)}x${'{% endif %}'.repeat(DEPTH)}`,
      '{% if tool %}'.repeat(DEPTH),
      '{{'.repeat(DEPTH),
      `${'{% if tool %}a{% else %}'.repeat(DEPTH)}b${'{% endif %}'.repeat(DEPTH)}`,
    ]) {
      survive({ capability: cap, rules: [JSON.stringify(rule({ copy: { what }, requires: { profiles: ['tool'] } }))], configs: [] }, 2000);
    }
  });

  it('an alias bomb ends in an error quickly', () => {
    for (const [d, w] of [[9, 9], [20, 10], [40, 2]] as const) {
      expect(survive({ capability: cap, rules: [aliasBomb(d, w, true)], configs: [] }, 2000).ok).toBe(false);
      expect(survive({ capability: aliasBomb(d, w, false), rules: [], configs: [] }, 2000).ok).toBe(false);
    }
  });

  // Parsing, not checking, dominates here (the YAML composer reads JSON at a few hundred KB/s), so
  // the size is kept to what the shared CI cores parse in a few seconds.
  const CHAIN = 5000;
  it(`a ${CHAIN}-rule overrides chain loads without exhausting the stack`, () => {
    const docs = Array.from({ length: CHAIN }, (_, i) => rule({ id: `R${i}`, overrides: i > 0 ? [`R${i - 1}`] : undefined }));
    const r = survive({ capability: cap, rules: [JSON.stringify(docs)], configs: [] }, 15_000);
    expect(r.ok).toBe(true);
  });

  it(`a ${CHAIN}-rule suppression cycle is reported once, without exhausting the stack`, () => {
    const docs = Array.from({ length: CHAIN }, (_, i) => rule({ id: `R${i}`, overrides: [`R${(i + 1) % CHAIN}`] }));
    const r = survive({ capability: cap, rules: [JSON.stringify(docs)], configs: [] }, 15_000);
    expect(r.ok).toBe(false);
    expect((r.ok ? [] : r.diagnostics).map((d) => d.clause)).toEqual(['OAR-EVAL-16']);
  });
});
