import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it, vi } from 'vitest';
import type { Diagnostic } from '../compiler/diagnostics.js';
import {
  CAPABILITY_CLAUSES,
  CONFIG_CLAUSES,
  FIXTURE_CLAUSES,
  RULE_CLAUSES,
  validateCapabilityDocument,
  validateConfigDocument,
  validateFixtureDocument,
  validateReport,
  validateRuleDocument,
} from '../compiler/load/schema.js';
import { parseSource, type SourceDoc } from '../compiler/load/source.js';

// ---------------------------------------------------------------------------------------------
// Helpers

type Obj = Record<string, unknown>;

const BASE: Obj = { oar: '1.0', id: 'READ_OUTSIDE_SCOPE', kind: 'policy', anchor: 'tool.pre_invoke', effect: 'block' };

/** A rule document as `parseSource` would hand it over, with positions. */
function sourceOf(value: unknown, file = 'rule.json'): SourceDoc {
  const text = file.endsWith('.json') ? JSON.stringify(value, null, 2) : stringify(value);
  const { docs, diagnostics } = parseSource(text, file, { expandSequences: false });
  expect(diagnostics).toEqual([]);
  return docs[0]!;
}

function check(changes: Obj, without: string[] = []): Diagnostic[] {
  const doc: Obj = { ...BASE, ...changes };
  for (const k of without) delete doc[k];
  return validateRuleDocument(sourceOf(doc));
}

function accepts(changes: Obj, without: string[] = []): void {
  expect(check(changes, without)).toEqual([]);
}

/** Exactly one error, under `clause`, naming `token` in its message. */
function rejects(changes: Obj, clause: string, token: string, without: string[] = []): Diagnostic {
  const ds = check(changes, without);
  expect(ds, JSON.stringify(ds.map((d) => d.message))).toHaveLength(1);
  return expectNamed(ds[0]!, clause, token);
}

function expectNamed(d: Diagnostic, clause: string, token: string): Diagnostic {
  expect(d.severity).toBe('error');
  expect(d.clause).toBe(clause);
  expect(d.token).toBe(token);
  expect(d.message).toContain(token);
  expect(d.source?.line).toBeGreaterThanOrEqual(1);
  expect(d.source?.column).toBeGreaterThanOrEqual(1);
  return d;
}

const clauseId = /^OAR-[A-Z]+-[1-9][0-9]*$/;

function wellFormed(d: Diagnostic): void {
  expect(d.clause).toMatch(clauseId);
  expect(typeof d.message).toBe('string');
  if (d.token !== undefined) expect(d.message).toContain(d.token);
  if (d.source?.line !== undefined) expect(d.source.line).toBeGreaterThanOrEqual(1);
  if (d.source?.column !== undefined) expect(d.source.column).toBeGreaterThanOrEqual(1);
}

// ---------------------------------------------------------------------------------------------
// The schema files themselves

describe('schema files', () => {
  const names = ['rule', 'capability', 'config', 'fixture', 'conformance-report'];
  it.each(names)('%s.schema.json is JSON Schema 2020-12 with a stable $id, title and description', (name) => {
    const schema = JSON.parse(readFileSync(new URL(`../schema/${name}.schema.json`, import.meta.url), 'utf8')) as Obj;
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.$id).toBe(`https://oarc.dev/schema/${name}.schema.json`);
    expect(typeof schema.title).toBe('string');
    expect((schema.description as string).length).toBeGreaterThan(40);
    // Every schema compiles under ajv's strict mode.
    new Ajv2020({ strict: true, strictRequired: false, allowUnionTypes: true }).compile(schema);
  });

  it('clause tables name well-formed clause identifiers', () => {
    for (const row of [...RULE_CLAUSES, ...CAPABILITY_CLAUSES, ...CONFIG_CLAUSES, ...FIXTURE_CLAUSES]) {
      expect(row.clause).toMatch(clauseId);
      expect(row.field === '**' || row.field.startsWith('/')).toBe(true);
    }
  });

  it('validators are compiled once, never per document', () => {
    validateRuleDocument(sourceOf(BASE)); // compile, if no earlier test has
    const spy = vi.spyOn(Ajv2020.prototype, 'compile');
    try {
      for (let i = 0; i < 50; i++) validateRuleDocument(sourceOf({ ...BASE, id: `R_${i}`, foo: i }));
      expect(spy).not.toHaveBeenCalled();
    } finally {
      spy.mockRestore();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// The version marker, checked first

describe('rule documents: `oar` first [OAR-CONF-2]', () => {
  it('[OAR-DOC-3] accepts "1.0" and rejects "01.0", "1", "1.0.0", " 1.0" and a number', () => {
    accepts({ oar: '1.0' });
    for (const bad of ['01.0', '1.00', '1', '1.0.0', ' 1.0', 'v1.0', '']) rejects({ oar: bad }, 'OAR-DOC-3', 'oar');
    const d = rejects({ oar: '01.0' }, 'OAR-DOC-3', 'oar');
    expect(d.message).toContain('01.0');
    rejects({ oar: 1 }, 'OAR-DOC-3', 'oar');
  });

  it('[OAR-DOC-4] rejects an unsupported major', () => {
    for (const v of ['2.0', '0.9', '10.0']) expect(rejects({ oar: v }, 'OAR-DOC-4', 'oar').message).toContain(v);
  });

  it('[OAR-DOC-5] rejects a minor greater than 0, at any size', () => {
    for (const v of ['1.1', '1.99999999999999999999']) expect(rejects({ oar: v }, 'OAR-DOC-5', 'oar').message).toContain(v);
  });

  it('[OAR-DOC-2] rejects a document without `oar`, naming it', () => {
    rejects({}, 'OAR-DOC-2', 'oar', ['oar']);
  });

  it('[OAR-DOC-2] a capability or configuration document given as a rule file: the error says where it goes', () => {
    const cap = readFileSync('examples/gateway/capability.yaml', 'utf8');
    const { docs } = parseSource(cap, 'capability.yaml', { expandSequences: false });
    const [d] = validateRuleDocument(docs[0] as SourceDoc);
    expect(d?.message).toBe('missing required field `oar`: the version marker is checked first; this looks like a capability document: pass it with --capability, not as a rule file');
    expect(validateRuleDocument(sourceOf({ host: 'acme', anchors: { core: {} } }))[0]?.message).toContain('this looks like a capability document');
    expect(validateRuleDocument(sourceOf({ oar_config: '1.0' }))[0]?.message).toContain('this looks like an operator configuration document: pass it with --config');
    // A rule that only forgot its marker gets no such hint.
    expect(validateRuleDocument(sourceOf({ id: 'X', kind: 'policy', anchor: 'tool.pre_invoke', effect: 'block' }))[0]?.message).toBe('missing required field `oar`: the version marker is checked first');
  });

  it('[OAR-CONF-2] stops processing a document whose `oar` fails', () => {
    const ds = check({ oar: '1.1', kind: 'rule', foo: 1 });
    expect(ds.map((d) => d.clause)).toEqual(['OAR-DOC-5']);
  });
});

// ---------------------------------------------------------------------------------------------
// Every field of section 2

describe('rule documents: section 2 fields', () => {
  it('accepts the section 2.1 example', () => {
    accepts({
      namespace: 'acme.security',
      selector: { tool: ['read'] },
      requires: { profiles: ['tool', 'filesystem'] },
      when: 'path_outside_scope("read")',
      on_error: 'fail_closed',
      copy: { what: 'The call reads outside the declared scope.', fix: 'Read inside scope, or widen the scope deliberately.' },
    });
  });

  it.each(['oar', 'id', 'kind', 'anchor', 'effect'])('[OAR-DOC-2] rejects a document missing `%s`, naming it', (field) => {
    rejects({}, 'OAR-DOC-2', field, [field]);
  });

  it('[OAR-DOC-6] id matches ^[A-Z][A-Z0-9_]*$, naming the value', () => {
    accepts({ id: 'A' });
    accepts({ id: 'A1_B2' });
    for (const bad of ['read_scope', '1ABC', '_A', 'A-B', 'ÀB']) rejects({ id: bad }, 'OAR-DOC-6', bad);
    rejects({ id: 7 }, 'OAR-DOC-6', 'id');
  });

  it('[OAR-DOC-7] namespace matches the publisher grammar, naming the value', () => {
    for (const ok of ['acme', 'acme.security', 'a-b.c0', '0']) accepts({ namespace: ok });
    for (const bad of ['Acme', 'acme.', '.acme', 'ac_me', '-acme', 'acme-', 'a..b']) rejects({ namespace: bad }, 'OAR-DOC-7', bad);
  });

  it('[OAR-DOC-10] kind is schema, policy, invariant or detector', () => {
    for (const k of ['schema', 'policy', 'invariant']) accepts({ kind: k });
    accepts({ kind: 'detector', detector: { ref: 'detector://noop' } });
    expect(rejects({ kind: 'rule' }, 'OAR-DOC-10', 'kind').message).toContain('rule');
    rejects({ kind: 'Policy' }, 'OAR-DOC-10', 'kind');
  });

  it('[OAR-DOC-11] effect is block, warn, nudge, allow or transform', () => {
    for (const e of ['block', 'warn', 'nudge', 'allow']) accepts({ effect: e });
    accepts({ effect: 'transform', transform: { action: 'redact', target: 'content' } });
    expect(rejects({ effect: 'deny' }, 'OAR-DOC-11', 'effect').message).toContain('deny');
  });

  it('[OAR-DOC-12] anchor is a non-empty string (resolution comes later)', () => {
    accepts({ anchor: 'gateway.pre_render' });
    rejects({ anchor: '' }, 'OAR-DOC-12', 'anchor');
    rejects({ anchor: ['tool.pre_invoke'] }, 'OAR-DOC-12', 'anchor');
  });

  it('[OAR-DOC-13] selector is an object; [OAR-SEL-1] each clause a list of strings', () => {
    accepts({ selector: {} });
    accepts({ selector: { tool: ['read', 'write'], principal: [] } });
    rejects({ selector: ['tool'] }, 'OAR-DOC-13', 'selector');
    rejects({ selector: { tool: 'read' } }, 'OAR-SEL-1', 'tool');
    rejects({ selector: { tool: ['read', 3] } }, 'OAR-SEL-1', 'tool');
  });

  it('[OAR-DOC-14] when is a string', () => {
    accepts({ when: 'fire_count > 2' });
    rejects({ when: true }, 'OAR-DOC-14', 'when');
  });

  it('[OAR-DOC-15] flow is a non-empty list of strings', () => {
    accepts({ flow: ['read', 'send'] });
    rejects({ flow: [] }, 'OAR-DOC-15', 'flow');
    rejects({ flow: 'read' }, 'OAR-DOC-15', 'flow');
    rejects({ flow: [1] }, 'OAR-DOC-15', 'flow');
  });

  it('[OAR-DOC-16] enforcement is enforce, monitor or off', () => {
    for (const e of ['enforce', 'monitor', 'off']) accepts({ enforcement: e });
    rejects({ enforcement: 'audit' }, 'OAR-DOC-16', 'enforcement');
  });

  it('[OAR-DOC-17] mandatory is a boolean', () => {
    accepts({ mandatory: true });
    accepts({ mandatory: false });
    rejects({ mandatory: 'yes' }, 'OAR-DOC-17', 'mandatory');
  });

  it('[OAR-DOC-18] on_error is fail_closed, fail_open, or a rule identifier', () => {
    for (const v of ['fail_closed', 'fail_open', 'FALLBACK', 'oar.test/FALLBACK']) accepts({ on_error: v });
    for (const bad of ['fail-closed', 'FAIL_OPEN/', 'Fallback', 'oar.test/']) rejects({ on_error: bad }, 'OAR-DOC-18', 'on_error');
  });

  it('[OAR-DOC-19] on_fire is a list; [OAR-FIRE-1] drawn from the closed vocabulary, naming the bad side-effect', () => {
    accepts({ on_fire: [] });
    accepts({ on_fire: ['increment_counter', 'reset_counter', 'publish_event', 'increment_breaker', 'reset_breaker', 'increment_counter'] });
    const d = rejects({ on_fire: ['increment_counter', 'send_email'] }, 'OAR-FIRE-1', 'send_email');
    expect(d.path).toEqual(['on_fire', 1]);
    rejects({ on_fire: 'publish_event' }, 'OAR-DOC-19', 'on_fire');
  });

  it('[OAR-DOC-20] overrides is a list of qualified or bare identifiers', () => {
    accepts({ overrides: ['OTHER', 'acme.security/OTHER'] });
    rejects({ overrides: ['other'] }, 'OAR-DOC-20', 'other');
    rejects({ overrides: 'OTHER' }, 'OAR-DOC-20', 'overrides');
  });

  it('[OAR-DOC-21] requires has optional profiles and facts lists', () => {
    accepts({ requires: {} });
    accepts({ requires: { profiles: ['tool'], facts: ['acme.tier', 'tool_arg_string'] } });
    rejects({ requires: { profiles: 'tool' } }, 'OAR-DOC-21', 'profiles');
    rejects({ requires: ['tool'] }, 'OAR-DOC-21', 'requires');
    rejects({ requires: { profile: ['tool'] } }, 'OAR-DOC-27', 'profile');
  });

  it('[OAR-DOC-22] transform is present exactly when effect is transform; [OAR-OPS-13] its shape', () => {
    accepts({ effect: 'transform', transform: { action: 'redact', target: 'secret_matches' } });
    accepts({ effect: 'transform', transform: { action: 'replace', target: 'content', replacement: '***' } });
    accepts({ effect: 'transform', transform: { action: 'annotate', target: 'content', replacement: ' [checked]' } });
    rejects({ effect: 'transform' }, 'OAR-DOC-22', 'transform');
    rejects({ effect: 'warn', transform: { action: 'redact', target: 'content' } }, 'OAR-DOC-22', 'transform');
    rejects({ effect: 'transform', transform: { action: 'replace', target: 'content' } }, 'OAR-OPS-13', 'replacement');
    rejects({ effect: 'transform', transform: { action: 'annotate', target: 'content' } }, 'OAR-OPS-13', 'replacement');
    rejects({ effect: 'transform', transform: { action: 'mask', target: 'content' } }, 'OAR-OPS-13', 'action');
    rejects({ effect: 'transform', transform: { action: 'redact' } }, 'OAR-OPS-13', 'target');
    rejects({ effect: 'transform', transform: { action: 'redact', target: 'content', replacment: 'x' } }, 'OAR-DOC-27', 'replacment');
  });

  it('[OAR-DOC-23] detector is present exactly when kind is detector; [OAR-OPS-12] its ref', () => {
    accepts({ kind: 'detector', detector: { ref: 'detector://presidio' } });
    accepts({ kind: 'detector', detector: { ref: 'detector://a-1' } });
    rejects({ kind: 'detector' }, 'OAR-DOC-23', 'detector');
    rejects({ kind: 'policy', detector: { ref: 'detector://noop' } }, 'OAR-DOC-23', 'detector');
    rejects({ kind: 'detector', detector: {} }, 'OAR-DOC-23', 'ref');
    for (const bad of ['presidio', 'detector://Presidio', 'detector://-x', 'https://x', 'detector://a/b']) {
      rejects({ kind: 'detector', detector: { ref: bad } }, 'OAR-OPS-12', bad);
    }
  });

  it('[OAR-DOC-24] copy is the closed set title, what, cause, why, fix, instead', () => {
    accepts({ copy: { title: 't', what: 'w', cause: 'c', why: 'y', fix: 'f', instead: 'i' } });
    accepts({ copy: { what: 'Blocked {{ tool }}' } });
    rejects({ copy: { what: 3 } }, 'OAR-DOC-24', 'what');
    rejects({ copy: { titel: 'x' } }, 'OAR-DOC-27', 'titel');
    rejects({ copy: 'text' }, 'OAR-DOC-24', 'copy');
  });

  it('[OAR-DOC-25] references is an object', () => {
    accepts({ references: { 'owasp-llm': ['LLM01'], cwe: 'CWE-22' } });
    rejects({ references: 'LLM01' }, 'OAR-DOC-25', 'references');
  });

  it('[OAR-DOC-29] status is experimental, test, stable or deprecated', () => {
    for (const s of ['experimental', 'test', 'stable', 'deprecated']) accepts({ status: s });
    rejects({ status: 'final' }, 'OAR-DOC-29', 'status');
  });

  it('[OAR-DOC-30] related items carry id and a lineage type', () => {
    accepts({ related: [{ id: 'OLD_RULE', type: 'renamed' }, { id: 'acme/OTHER', type: 'similar' }] });
    rejects({ related: [{ id: 'OLD', type: 'cousin' }] }, 'OAR-DOC-30', 'type');
    rejects({ related: [{ id: 'OLD' }] }, 'OAR-DOC-30', 'type');
    rejects({ related: [{ id: 'old', type: 'derived' }] }, 'OAR-DOC-30', 'old');
    rejects({ related: [{ id: 'OLD', type: 'derived', note: 'x' }] }, 'OAR-DOC-27', 'note');
  });

  it('[OAR-DOC-32] counter_scope is a non-empty string', () => {
    accepts({ counter_scope: 'tool_args_fingerprint' });
    rejects({ counter_scope: '' }, 'OAR-DOC-32', 'counter_scope');
    rejects({ counter_scope: ['tool'] }, 'OAR-DOC-32', 'counter_scope');
  });
});

describe('rule documents: unknown fields and extensions', () => {
  it('[OAR-DOC-26] ignores x- extension fields, top-level and nested', () => {
    accepts({ 'x-foo': { anything: [1, 2] }, 'x-acme-review': 'ok' });
    accepts({ effect: 'transform', transform: { action: 'redact', target: 'content', 'x-mask': '*' } });
    accepts({ requires: { 'x-note': 1 }, copy: { 'x-locale': 'en' }, related: [{ id: 'A', type: 'derived', 'x-why': 'split' }] });
    accepts({ kind: 'detector', detector: { ref: 'detector://noop', 'x-timeout-ms': 5 } });
  });

  it('[OAR-DOC-27] rejects x_foo, foo, X-Foo and other near misses, naming the field', () => {
    for (const bad of ['x_foo', 'foo', 'X-Foo', 'x-', 'x-Foo', 'x-foo_bar', 'x--foo', 'Effect', 'on-error']) {
      const d = rejects({ [bad]: 1 }, 'OAR-DOC-27', bad);
      expect(d.path).toEqual([bad]);
    }
  });

  it('reports several errors in one document, each once, in source order', () => {
    const ds = check({ id: 'bad', kind: 'rule', effect: 'transform', flow: [], on_fire: ['explode'], status: 'final', foo: 1, 'x-ok': 1 }, ['anchor']);
    const got = ds.map((d) => `${d.clause} ${d.token}`);
    expect(got).toEqual(
      expect.arrayContaining([
        'OAR-DOC-2 anchor',
        'OAR-DOC-6 bad',
        'OAR-DOC-10 kind',
        'OAR-DOC-22 transform',
        'OAR-DOC-15 flow',
        'OAR-FIRE-1 explode',
        'OAR-DOC-29 status',
        'OAR-DOC-27 foo',
      ]),
    );
    expect(ds).toHaveLength(8);
    expect(new Set(got).size).toBe(got.length);
    const lines = ds.map((d) => d.source!.line!);
    expect([...lines].sort((a, b) => a - b)).toEqual(lines);
  });
});

describe('rule documents: positions and paths', () => {
  const yamlText = ['oar: "1.0"', 'id: A', 'kind: policy', 'anchor: tool.pre_invoke', 'effect: block', 'transform:', '  action: redact', '  target: content', 'fooo: 1', ''].join('\n');
  const jsonText = [
    '{',
    '  "oar": "1.0", "id": "A", "kind": "policy",',
    '  "anchor": "tool.pre_invoke", "effect": "block",',
    '  "transform": { "action": "redact", "target": "content" },',
    '  "fooo": 1',
    '}',
  ].join('\n');

  it('puts an unknown field at its line and column in YAML', () => {
    const doc = parseSource(yamlText, 'r.yaml').docs[0]!;
    const ds = validateRuleDocument(doc);
    const unknown = ds.find((d) => d.clause === 'OAR-DOC-27')!;
    expect(unknown.source).toEqual({ file: 'r.yaml', line: 9, column: 1 });
    expect(ds.find((d) => d.clause === 'OAR-DOC-22')!.source).toEqual({ file: 'r.yaml', line: 6, column: 1 });
  });

  it('puts an unknown field at its line and column in JSON', () => {
    const doc = parseSource(jsonText, 'r.json').docs[0]!;
    const ds = validateRuleDocument(doc);
    expect(ds.find((d) => d.clause === 'OAR-DOC-27')!.source).toEqual({ file: 'r.json', line: 5, column: 3 });
    expect(ds.find((d) => d.clause === 'OAR-DOC-22')!.source).toEqual({ file: 'r.json', line: 4, column: 3 });
  });

  it('validates a rule inside another document at a path, prefixing paths', () => {
    const fixture = parseSource(JSON.stringify({ id: 'f', rules: [BASE, { ...BASE, fooo: 1 }] }, null, 2), 'f.json').docs[0]!;
    expect(validateRuleDocument(fixture, ['rules', 0])).toEqual([]);
    const ds = validateRuleDocument(fixture, ['rules', 1]);
    expect(ds).toHaveLength(1);
    expect(ds[0]).toMatchObject({ clause: 'OAR-DOC-27', token: 'fooo', path: ['rules', 1, 'fooo'], source: { file: 'f.json', line: 17, column: 7 } });
  });
});

describe('rule documents that are not objects', () => {
  it('[OAR-DOC-1] a single document that is not a JSON object', () => {
    const doc = parseSource('- - 1\n', 'x.yaml', { expandSequences: false }).docs[0]!;
    expect(validateRuleDocument(doc).map((d) => d.clause)).toEqual(['OAR-DOC-1']);
    const str = parseSource('"rule"', 'x.json').docs[0]!;
    expect(validateRuleDocument(str).map((d) => d.clause)).toEqual(['OAR-DOC-1']);
  });

  it('[OAR-DOC-31] a rule-set member that is not a rule document, in an array, a stream, or a fixture', () => {
    const arr = parseSource(`[${JSON.stringify(BASE)}, 7]`, 'set.json').docs;
    expect(validateRuleDocument(arr[0]!)).toEqual([]);
    expect(validateRuleDocument(arr[1]!).map((d) => d.clause)).toEqual(['OAR-DOC-31']);
    const stream = parseSource(`${stringify(BASE)}---\n- not a rule\n`, 'set.yaml', { expandSequences: false }).docs;
    expect(validateRuleDocument(stream[1]!).map((d) => d.clause)).toEqual(['OAR-DOC-31']);
    const fixture = parseSource(JSON.stringify({ rules: [BASE, 'x'] }), 'f.json').docs[0]!;
    expect(validateRuleDocument(fixture, ['rules', 1]).map((d) => [d.clause, d.path])).toEqual([['OAR-DOC-31', ['rules', 1]]]);
  });
});

// ---------------------------------------------------------------------------------------------
// Capability documents

const CAPABILITY_YAML = `oar_capability_version: "1.0"
host: acme.gateway
anchors:
  core:
    tool.pre_invoke: tool.pre_invoke
    tool.post_invoke: tool.post_invoke
    model.input: content.input
    model.output: content.output
  unsupported:
    - tool.handler
    - agent.post_turn
    - agent.finalize
    - model.tool_result
  host:
    - gateway.pre_render
profiles: [tool, content, secrets, mcp]
activity_window: 16
supports_transform: true
expression_nodes_max: 1024
host_facts:
  - name: acme.tenant_tier
    type: string
  - name: acme.quota_for
    type: "(string) -> int"
detectors:
  - detector://presidio
`;

describe('capability documents [OAR-FACT-21]', () => {
  const parsed = () => parseSource(CAPABILITY_YAML, 'cap.yaml').docs[0]!;
  const cap = () => structuredClone(parsed().value) as Obj;
  const capCheck = (v: unknown) => validateCapabilityDocument(v, parsed().locate);

  it('accepts the section 8.2 example', () => {
    expect(validateCapabilityDocument(parsed().value, parsed().locate)).toEqual([]);
  });

  it('accepts a minimal document: the list members may be omitted as empty', () => {
    expect(
      capCheck({ oar_capability_version: '1.0', host: 'h', anchors: { core: {} }, activity_window: 0, supports_transform: false, expression_nodes_max: 256 }),
    ).toEqual([]);
  });

  it.each(['oar_capability_version', 'host', 'anchors', 'activity_window', 'supports_transform', 'expression_nodes_max'])(
    'requires %s, naming it',
    (field) => {
      const v = cap();
      delete v[field];
      const ds = capCheck(v);
      expect(ds).toHaveLength(1);
      expectNamed(ds[0]!, 'OAR-FACT-21', field);
    },
  );

  it('[OAR-FACT-24] checks its version like a rule checks oar', () => {
    for (const [v, ok] of [
      ['1.0', true],
      ['1.1', false],
      ['2.0', false],
      ['01.0', false],
    ] as const) {
      const ds = capCheck({ ...cap(), oar_capability_version: v });
      expect(ds.length === 0, v).toBe(ok);
      if (!ok) expectNamed(ds[0]!, 'OAR-FACT-24', 'oar_capability_version');
    }
  });

  it('rejects bad members under their clauses', () => {
    const cases: [Obj, string, string][] = [
      [{ anchors: { core: { 'tool.preinvoke': 'x' } } }, 'OAR-PROF-2', 'tool.preinvoke'],
      [{ anchors: { core: {}, unsupported: ['tool.pre_invoke', 'tool.pre_invoke'] } }, 'OAR-PROF-2', 'unsupported'],
      [{ anchors: { core: {}, host: [''] } }, 'OAR-PROF-5', 'host'],
      [{ activity_window: -1 }, 'OAR-PROF-3', 'activity_window'],
      [{ activity_window: 1.5 }, 'OAR-PROF-3', 'activity_window'],
      [{ expression_nodes_max: 0 }, 'OAR-EXPR-17', 'expression_nodes_max'],
      [{ supports_transform: 'true' }, 'OAR-FACT-21', 'supports_transform'],
      [{ host: 'Acme' }, 'OAR-FACT-18', 'Acme'],
      [{ host_facts: [{ name: 'acme.x', type: 'float' }] }, 'OAR-FACT-22', 'float'],
      [{ host_facts: [{ name: 'acme.x' }] }, 'OAR-FACT-21', 'type'],
      [{ detectors: ['detector://Presidio'] }, 'OAR-OPS-12', 'detector://Presidio'],
      [{ supports_transfrom: true }, 'OAR-FACT-24', 'supports_transfrom'],
    ];
    for (const [change, clause, token] of cases) {
      const ds = capCheck({ ...cap(), ...change });
      expect(ds, JSON.stringify(change)).toHaveLength(1);
      expectNamed(ds[0]!, clause, token);
    }
    expect(capCheck({ ...cap(), 'x-build': 'abc' })).toEqual([]);
    expect(capCheck([]).map((d) => d.clause)).toEqual(['OAR-FACT-24']);
  });
});

// ---------------------------------------------------------------------------------------------
// Configuration documents

describe('configuration documents [OAR-CFG-1]', () => {
  const cfg = (v: unknown) => validateConfigDocument(v);

  it('accepts oar_config with any of disable and enforcement', () => {
    expect(cfg({ oar_config: '1.0' })).toEqual([]);
    expect(cfg({ oar_config: '1.0', disable: ['A', 'acme/B'], enforcement: { C: 'monitor', 'acme/D': 'off' } })).toEqual([]);
  });

  it('rejects any other member, x- included, naming it', () => {
    for (const bad of ['x-note', 'rules', 'enforce']) {
      const ds = cfg({ oar_config: '1.0', [bad]: 1 });
      expect(ds).toHaveLength(1);
      expect(ds[0]).toMatchObject({ clause: 'OAR-CFG-1', token: bad });
    }
  });

  it('checks oar_config like oar: missing, malformed, major, minor', () => {
    for (const v of [{}, { oar_config: '01.0' }, { oar_config: 1 }, { oar_config: '2.0' }, { oar_config: '1.1' }]) {
      const ds = cfg(v);
      expect(ds, JSON.stringify(v)).toHaveLength(1);
      expect(ds[0]).toMatchObject({ clause: 'OAR-CFG-1', token: 'oar_config' });
    }
  });

  it('[OAR-CFG-2] disable lists rule identifiers; [OAR-CFG-3] enforcement maps them to a mode', () => {
    expect(cfg({ oar_config: '1.0', disable: ['lower'] })[0]).toMatchObject({ clause: 'OAR-CFG-2', token: 'lower' });
    expect(cfg({ oar_config: '1.0', disable: 'A' })[0]).toMatchObject({ clause: 'OAR-CFG-2', token: 'disable' });
    expect(cfg({ oar_config: '1.0', enforcement: { A: 'loud' } })[0]).toMatchObject({ clause: 'OAR-CFG-3', token: 'A' });
    const key = cfg({ oar_config: '1.0', enforcement: { 'not a rule': 'off' } });
    expect(key).toHaveLength(1);
    expect(key[0]).toMatchObject({ clause: 'OAR-CFG-3', token: 'not a rule' });
  });
});

// ---------------------------------------------------------------------------------------------
// Fixtures

const CAP = { oar_capability_version: '1.0', host: 'oar.test', anchors: { core: { 'tool.pre_invoke': 'tool.pre_invoke' } }, activity_window: 0, supports_transform: false, expression_nodes_max: 256 };
const FIXTURE: Obj = {
  id: 'eval-block-short-circuits',
  title: 'A block short-circuits the occurrence',
  covers: ['OAR-EVAL-4'],
  rules: [BASE],
  input: { capability: CAP, anchor: 'tool.pre_invoke', facts: { tool: 'read' } },
  expected: { decision: 'block', code: 'READ_OUTSIDE_SCOPE', rule: 'READ_OUTSIDE_SCOPE', applied: ['READ_OUTSIDE_SCOPE:fired'] },
};

describe('fixtures [OAR-CONF-17]', () => {
  const fx = (change: (f: Obj) => void, file = 'eval-block-short-circuits.json') => {
    const f = structuredClone(FIXTURE);
    change(f);
    // A bigint is written as its exact JSON integer, which JSON.stringify cannot do on its own.
    const text = JSON.stringify(f, (_k, v: unknown) => (typeof v === 'bigint' ? `\u0000${v}` : v), 2).replace(/"\\u0000(-?\d+)"/g, '$1');
    const doc = parseSource(text, file, { bigInts: true, expandSequences: false }).docs[0]!;
    return validateFixtureDocument(doc.value, doc.locate);
  };
  const one = (ds: Diagnostic[], clause: string, token: string) => {
    expect(ds, JSON.stringify(ds.map((d) => d.message))).toHaveLength(1);
    return expectNamed(ds[0]!, clause, token);
  };

  it('accepts a single-occurrence fixture and an occurrences fixture', () => {
    expect(fx(() => {})).toEqual([]);
    expect(
      fx((f) => {
        f.input = {
          capability: CAP,
          session_id: 's1',
          config: { oar_config: '1.0' },
          occurrences: [
            { anchor: 'tool.pre_invoke', tool_call: { name: 'read', arguments: { path: '/etc' } }, expected: { decision: 'none' } },
            { anchor: 'tool.pre_invoke', facts: { tool: 'read' }, recent_activity: ['read'] },
          ],
        };
        f.expected = { counters: { 'oar.test/A': { fire_count: 2, breaker_count: 0 }, 'oar.test/B#abc': { fire_count: 1 } } };
      }),
    ).toEqual([]);
  });

  it.each(['id', 'covers', 'rules', 'input', 'expected'])('requires %s', (field) => {
    one(fx((f) => delete f[field]), 'OAR-CONF-17', field);
  });

  it('[OAR-CONF-17] covers is a non-empty list of clause ids, and id equals the file stem', () => {
    one(fx((f) => (f.covers = [])), 'OAR-CONF-17', 'covers');
    one(fx((f) => (f.covers = ['EVAL-4'])), 'OAR-CONF-17', 'covers');
    one(fx(() => {}, 'conformance/fixtures/other-name.json'), 'OAR-CONF-17', 'eval-block-short-circuits');
    one(fx((f) => (f.notes = 'x')), 'OAR-CONF-17', 'notes');
  });

  it('[OAR-CONF-19] input carries capability', () => {
    one(fx((f) => delete (f.input as Obj).capability), 'OAR-CONF-19', 'capability');
  });

  it('[OAR-CONF-18] input carries anchor or occurrences, never both', () => {
    one(fx((f) => delete (f.input as Obj).anchor), 'OAR-CONF-18', 'anchor');
    const both = fx((f) => ((f.input as Obj).occurrences = [{ anchor: 'tool.pre_invoke' }]));
    expect(both.map((d) => [d.clause, d.token])).toEqual([
      ['OAR-CONF-18', 'anchor'],
      ['OAR-CONF-18', 'facts'],
    ]);
    one(fx((f) => ((f.input as Obj).facts_ = {})), 'OAR-CONF-18', 'facts_');
  });

  it('[OAR-CONF-31] occurrences is a non-empty list of closed members', () => {
    const occ = (o: unknown) => (f: Obj) => (f.input = { capability: CAP, occurrences: o });
    one(fx(occ([])), 'OAR-CONF-31', 'occurrences');
    one(fx(occ([{ facts: {} }])), 'OAR-CONF-31', 'anchor');
    one(fx(occ([{ anchor: 'a', session_id: 's' }])), 'OAR-CONF-31', 'session_id');
  });

  it('[OAR-CONF-32] counters are never supplied as facts', () => {
    for (const name of ['fire_count', 'breaker_count', 'fire_count_of', 'breaker_count_of']) {
      one(fx((f) => ((f.input as Obj).facts = { [name]: 3 })), 'OAR-CONF-32', name);
    }
  });

  it('[OAR-CONF-21] [OAR-CONF-22] expected is the closed key set, skipped_transforms included', () => {
    for (const key of ['decision', 'code', 'rule', 'on_fire', 'transforms', 'advisories', 'applied', 'counters', 'events', 'copy', 'error', 'skipped_transforms']) {
      const value = { decision: 'none', on_fire: [], transforms: [], advisories: [], applied: [], counters: {}, events: [], copy: {}, error: 'OAR-DOC-27', skipped_transforms: [] }[key] ?? 'X';
      expect(fx((f) => (f.expected = { [key]: value })), key).toEqual([]);
    }
    one(fx((f) => ((f.expected as Obj).decisoin = 'block')), 'OAR-CONF-22', 'decisoin');
    one(fx((f) => ((f.expected as Obj).decision = 'allow')), 'OAR-CONF-21', 'decision');
    one(fx((f) => ((f.expected as Obj).applied = ['READ_OUTSIDE_SCOPE:blocked'])), 'OAR-CONF-21', 'applied');
  });

  it('[OAR-CONF-30] expected.error is a single machine token', () => {
    expect(fx((f) => (f.expected = { error: 'x_foo' }))).toEqual([]);
    one(fx((f) => (f.expected = { error: 'unknown field x_foo' })), 'OAR-CONF-30', 'error');
  });

  it('[OAR-CONF-37] advisories items carry only code, rule and copy', () => {
    expect(fx((f) => (f.expected = { decision: 'warn', advisories: [{ code: 'A' }, { rule: 'n/B', copy: { what: 'x' } }] }))).toEqual([]);
    one(fx((f) => (f.expected = { advisories: [{ effect: 'warn' }] })), 'OAR-CONF-37', 'effect');
  });

  it('[OAR-CONF-39] skipped_transforms entries carry rule, start, end and reason overlap', () => {
    const entry = { rule: 'n/A', start: 0, end: 4, reason: 'overlap' };
    expect(fx((f) => (f.expected = { skipped_transforms: [entry] }))).toEqual([]);
    one(fx((f) => (f.expected = { skipped_transforms: [{ ...entry, reason: 'clamped' }] })), 'OAR-CONF-39', 'reason');
    one(fx((f) => (f.expected = { skipped_transforms: [{ rule: 'n/A', start: 0, reason: 'overlap' }] })), 'OAR-CONF-39', 'end');
    one(fx((f) => (f.expected = { skipped_transforms: [{ ...entry, start: -1 }] })), 'OAR-CONF-39', 'start');
  });

  it('[OAR-CONF-40] tool_call has a non-empty name and object arguments', () => {
    one(fx((f) => ((f.input as Obj).tool_call = { name: '', arguments: {} })), 'OAR-CONF-40', 'name');
    one(fx((f) => ((f.input as Obj).tool_call = { name: 'read', arguments: ['/etc'] })), 'OAR-CONF-40', 'arguments');
    one(fx((f) => ((f.input as Obj).tool_call = { name: 'read' })), 'OAR-CONF-40', 'arguments');
  });

  it('[OAR-CONF-34] expected.content needs content to start from, naming the fixture', () => {
    expect(fx((f) => ((f.input as Obj).content = 'abc', (f.expected as Obj).content = 'a[REDACTED]'))).toEqual([]);
    one(fx((f) => ((f.expected as Obj).content = 'x')), 'OAR-CONF-34', 'eval-block-short-circuits');
    const occurrences = (f: Obj) => (f.input = { capability: CAP, occurrences: [{ anchor: 'a', content: 'x' }, { anchor: 'a' }] });
    one(fx((f) => (occurrences(f), (f.expected = { content: 'x' }))), 'OAR-CONF-34', 'eval-block-short-circuits');
  });

  it('keeps big integers in facts exact (bigInts) without tripping the schema', () => {
    const f = structuredClone(FIXTURE);
    (f.input as Obj).facts = { size: 9007199254740993n };
    const text = JSON.stringify(f, (_k, v: unknown) => (typeof v === 'bigint' ? `\u0000${v}` : v)).replace(/"\\u0000(-?\d+)"/g, '$1');
    expect(text).toContain('"size":9007199254740993}');
    const doc = parseSource(text, 'eval-block-short-circuits.json', { bigInts: true }).docs[0]!;
    expect(((doc.value as { input: { facts: Obj } }).input.facts.size)).toBe(9007199254740993n);
    expect(validateFixtureDocument(doc.value, doc.locate)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Conformance reports

describe('conformance reports', () => {
  const report = (): Obj => ({
    engine: { name: 'oarc', version: '0.1.0' },
    spec: '1.0',
    capabilities: {
      profiles: ['tool'],
      core_anchors: ['tool.pre_invoke'],
      host_anchors: true,
      host_facts: true,
      detectors: ['detector://noop', 'detector://error', 'detector://fixture'],
      supports_transform: true,
      activity_window_max: 16,
      expression_nodes_max: 1024,
    },
    capabilities_from: 'runner',
    counts: { passed: 1, failed: 1, skipped: 1, errored: 1 },
    failed_cases: ['b', 'd'],
    total: 4,
    corpus: { paths: ['fixtures'], fixture_files: 4, sha256: 'a'.repeat(64) },
    cases: [
      { id: 'a', file: 'a.json', verdict: 'passed' },
      { id: 'b', file: 'b.json', verdict: 'failed', diff: { decision: { expected: 'block', actual: 'none' } } },
      { id: 'c', file: 'c.json', verdict: 'skipped', reason: 'profile not adoptable', skipped_capability: 'profile:pii' },
      { id: 'd', file: 'd.json', verdict: 'errored', reason: 'fixture expected.content without content' },
    ],
  });

  it('accepts a report whose counts sum to its total', () => {
    expect(validateReport(report())).toEqual([]);
  });

  it('rejects counts that do not sum to the total or match the cases', () => {
    const r = report();
    (r.counts as Obj).passed = 2;
    expect(validateReport(r).join('\n')).toMatch(/total/);
    const r2 = report();
    (r2.cases as Obj[])[0]!.verdict = 'failed';
    (r2.cases as Obj[])[0]!.diff = { code: { expected: 'A', actual: 'B' } };
    expect(validateReport(r2).join('\n')).toMatch(/counts\/passed/);
    const r3 = report();
    (r3.cases as Obj[]).pop();
    expect(validateReport(r3).join('\n')).toMatch(/cases lists 3/);
  });

  it('requires failed_cases to name exactly the failed and errored cases, in order', () => {
    for (const wrong of [['b'], ['d', 'b'], ['b', 'c', 'd']]) {
      const r = report();
      r.failed_cases = wrong;
      expect(validateReport(r).join('\n')).toMatch(/failed_cases/);
    }
    const r = report();
    delete r.failed_cases;
    expect(validateReport(r).join('\n')).toMatch(/failed_cases/);
  });

  it('requires a skipped case to say which capability, and never passes a skip', () => {
    const r = report();
    delete (r.cases as Obj[])[2]!.skipped_capability;
    expect(validateReport(r).join('\n')).toMatch(/skipped_capability/);
    const r2 = report();
    (r2.cases as Obj[])[0]!.skipped_capability = 'profile:pii';
    expect(validateReport(r2).join('\n')).toMatch(/skipped_capability/);
    const r3 = report();
    (r3.cases as Obj[])[2]!.verdict = 'pass';
    expect(validateReport(r3).length).toBeGreaterThan(0);
    expect(validateReport('not a report').length).toBeGreaterThan(0);
  });

  it('requires the corpus it measured: paths, fixture files, a SHA-256 digest', () => {
    const r = report();
    delete r.corpus;
    expect(validateReport(r).join('\n')).toMatch(/corpus/);
    const r2 = report();
    (r2.corpus as Obj).sha256 = 'not a digest';
    expect(validateReport(r2).join('\n')).toMatch(/sha256/);
    const r3 = report();
    (r3.corpus as Obj).manifests = [{ file: 'manifest.json', fixtures: 4 }];
    expect(validateReport(r3)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Never throw

describe('parseSource + validateRuleDocument never throw (property)', () => {
  const runs = Number(process.env.OARC_PROPERTY_RUNS ?? 1000);
  const fieldNames = ['oar', 'id', 'namespace', 'kind', 'anchor', 'selector', 'when', 'flow', 'effect', 'enforcement', 'mandatory', 'on_error', 'on_fire', 'overrides', 'requires', 'transform', 'detector', 'copy', 'references', 'status', 'related', 'counter_scope', 'x-foo', 'x_foo', '__proto__', 'constructor'];
  const VALID_TEXTS = [
    JSON.stringify({ ...BASE, selector: { tool: ['read'] }, on_fire: ['increment_counter'], copy: { what: 'x' } }, null, 2),
    stringify({ ...BASE, effect: 'transform', transform: { action: 'redact', target: 'content' }, related: [{ id: 'A', type: 'derived' }] }),
    `${stringify(BASE)}---\n${stringify({ ...BASE, id: 'B' })}`,
    JSON.stringify([BASE, { ...BASE, id: 'C' }]),
    'a: &x [1, *x]\nb: !!binary aGk=\n',
  ];

  // The loaders' catch-alls turn a defect into a diagnostic; the property must not let that pass.
  const noInternalError = (d: Diagnostic) => expect(d.message).not.toMatch(/internal error/);
  const check = (text: string, file: string) => {
    const r = parseSource(text, file, { bigInts: true });
    r.diagnostics.forEach(noInternalError);
    expect(Array.isArray(r.docs)).toBe(true);
    expect(r.docs.length > 0 || r.diagnostics.length > 0).toBe(true);
    r.diagnostics.forEach(wellFormed);
    for (const doc of r.docs) {
      const ds = validateRuleDocument(doc);
      ds.forEach(wellFormed);
      ds.forEach(noInternalError);
      doc.locate(['transform', 'action', 0, 'x']);
    }
  };

  const mutation = fc.tuple(
    fc.constantFrom('insert', 'delete', 'replace', 'duplicate'),
    fc.nat(),
    fc.nat({ max: 64 }),
    fc.string({ unit: fc.constantFrom('{', '}', '[', ']', ':', ',', '"', "'", '-', ' ', '\n', '\t', '&', '*', '!', '#', '|', '>', '%', '?', 'a', '1', '.', '\\', '\u0000', '\uFEFF', '\uD800') }),
  );
  const mutate = (text: string, muts: readonly (readonly [string, number, number, string])[]) =>
    muts.reduce((t, [op, at, len, ins]) => {
      const i = t.length === 0 ? 0 : at % (t.length + 1);
      switch (op) {
        case 'insert':
          return t.slice(0, i) + ins + t.slice(i);
        case 'delete':
          return t.slice(0, i) + t.slice(i + len);
        case 'replace':
          return t.slice(0, i) + ins + t.slice(i + ins.length);
        default:
          return t.slice(0, i) + t.slice(i, i + len) + t.slice(i);
      }
    }, text);

  it('on mutated rule texts, JSON and YAML', () => {
    fc.assert(
      fc.property(fc.constantFrom(...VALID_TEXTS), fc.array(mutation, { minLength: 1, maxLength: 6 }), fc.boolean(), (text, muts, json) => {
        check(mutate(text, muts), json ? 'm.json' : 'm.yaml');
      }),
      { seed: Number(process.env.OARC_SEED ?? 20240601), numRuns: runs },
    );
  });

  it('on random documents built from rule fields and arbitrary JSON values', () => {
    const value = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.constantFrom('1.0', '01.0', '1.1', 'block', 'transform', 'detector', 'detector://noop', 'increment_counter', 'READ', 'x'),
      fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }),
    );
    const doc = fc.dictionary(fc.oneof(fc.constantFrom(...fieldNames), fc.string({ maxLength: 6 })), value, { maxKeys: 12 });
    const top = fc.oneof(doc, fc.array(doc, { maxLength: 3 }), fc.jsonValue({ maxDepth: 2 }));
    fc.assert(
      fc.property(top, fc.boolean(), (v, json) => {
        const text = json ? JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? Number(x) : x)) ?? 'null' : stringify(v);
        check(text, json ? 'r.json' : 'r.yaml');
      }),
      { seed: Number(process.env.OARC_SEED ?? 7), numRuns: runs },
    );
  });

  it('on arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200, unit: 'binary' }), fc.boolean(), (text, json) => {
        check(text, json ? 't.json' : 't.yaml');
      }),
      { seed: Number(process.env.OARC_SEED ?? 99), numRuns: runs },
    );
  });
});
