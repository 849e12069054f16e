import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Diagnostic } from '../compiler/diagnostics.js';
import { DEFAULT_MAX_BYTES, parseSource, readSources } from '../compiler/load/source.js';

const errors = (ds: readonly Diagnostic[]) => ds.filter((d) => d.severity === 'error');
const ms = (f: () => void) => {
  const t = performance.now();
  f();
  return performance.now() - t;
};

const RULE_YAML = ['oar: "1.0"', 'id: READ_OUTSIDE_SCOPE', 'kind: policy', 'anchor: tool.pre_invoke', 'effect: block', 'selector:', '  tool: [read]', 'foo: 1', ''].join(
  '\n',
);
const RULE_JSON = [
  '{',
  '  "oar": "1.0",',
  '  "id": "READ_OUTSIDE_SCOPE",',
  '  "kind": "policy",',
  '  "anchor": "tool.pre_invoke",',
  '  "effect": "block",',
  '  "selector": { "tool": ["read"] },',
  '    "foo": 1',
  '}',
].join('\n');

describe('parseSource: positions [OAR-DOC-1]', () => {
  it('locates an unknown field at its key in YAML (1-based line and column)', () => {
    const { docs, diagnostics } = parseSource(RULE_YAML, 'rule.yaml');
    expect(diagnostics).toEqual([]);
    expect(docs).toHaveLength(1);
    expect(docs[0]!.locate(['foo'])).toEqual({ file: 'rule.yaml', line: 8, column: 1 });
    expect(docs[0]!.locate(['selector', 'tool', 0])).toEqual({ file: 'rule.yaml', line: 7, column: 10 });
  });

  it('locates an unknown field at its key in JSON, through the same code path', () => {
    const { docs, diagnostics } = parseSource(RULE_JSON, 'rule.json');
    expect(diagnostics).toEqual([]);
    expect(docs[0]!.value).toMatchObject({ id: 'READ_OUTSIDE_SCOPE', foo: 1 });
    expect(docs[0]!.locate(['foo'])).toEqual({ file: 'rule.json', line: 8, column: 5 });
    expect(docs[0]!.locate(['selector', 'tool', 0])).toEqual({ file: 'rule.json', line: 7, column: 26 });
  });

  it('locates a missing member at the key of its nearest existing parent', () => {
    const { docs } = parseSource(RULE_YAML, 'rule.yaml');
    expect(docs[0]!.locate(['selector', 'principal'])).toEqual({ file: 'rule.yaml', line: 6, column: 1 });
    expect(docs[0]!.locate(['selector', 'tool', 9])).toEqual({ file: 'rule.yaml', line: 7, column: 3 });
    expect(docs[0]!.locate(['transform', 'action'])).toEqual({ file: 'rule.yaml', line: 1, column: 1 });
    expect(docs[0]!.locate([])).toEqual({ file: 'rule.yaml', line: 1, column: 1 });
  });

  it('follows aliases when locating', () => {
    const { docs } = parseSource('a: &x {k: v}\nb: *x\n', 'a.yaml');
    expect(docs[0]!.value).toEqual({ a: { k: 'v' }, b: { k: 'v' } });
    expect(docs[0]!.locate(['b', 'k'])).toEqual({ file: 'a.yaml', line: 1, column: 8 });
  });

  it('drops a byte-order mark without shifting columns', () => {
    const { docs, diagnostics } = parseSource('\uFEFF{"a": 1}', 'bom.json');
    expect(diagnostics).toEqual([]);
    expect(docs[0]!.value).toEqual({ a: 1 });
    expect(docs[0]!.locate(['a'])).toEqual({ file: 'bom.json', line: 1, column: 2 });
  });
});

describe('parseSource: rule sets [OAR-DOC-31]', () => {
  it('reads a JSON array as one document per member, each marked as a collection member', () => {
    const { docs, diagnostics } = parseSource('[\n  {"id": "A"},\n  {"id": "B"}\n]', 'set.json');
    expect(diagnostics).toEqual([]);
    expect(docs.map((d) => d.value)).toEqual([{ id: 'A' }, { id: 'B' }]);
    expect(docs.map((d) => [d.index, d.inCollection])).toEqual([
      [0, true],
      [1, true],
    ]);
    // Positions are relative to the member, in the file's coordinates.
    expect(docs[1]!.locate(['id'])).toEqual({ file: 'set.json', line: 3, column: 4 });
  });

  it('reads a multi-document YAML stream as independent documents', () => {
    const { docs, diagnostics } = parseSource('---\nid: A\n---\nid: B\n...\n---\nid: C\n', 'set.yaml');
    expect(diagnostics).toEqual([]);
    expect(docs.map((d) => d.value)).toEqual([{ id: 'A' }, { id: 'B' }, { id: 'C' }]);
    expect(docs.every((d) => d.inCollection)).toBe(true);
    expect(docs[2]!.locate(['id'])).toEqual({ file: 'set.yaml', line: 7, column: 1 });
  });

  it('reads a YAML sequence of documents as members', () => {
    const { docs } = parseSource('- id: A\n  kind: policy\n- id: B\n', 'set.yaml');
    expect(docs.map((d) => d.value)).toEqual([{ id: 'A', kind: 'policy' }, { id: 'B' }]);
    expect(docs[1]!.locate(['id'])).toEqual({ file: 'set.yaml', line: 3, column: 3 });
  });

  it('[OAR-DOC-31] in a stream, a document that is a list is one member, not expanded', () => {
    const { docs } = parseSource('- id: A\n- id: B\n---\nid: C\n---\n[{id: D}]\n', 'mixed.yaml');
    expect(docs.map((d) => [Array.isArray(d.value) ? 'list' : (d.value as { id: string }).id, d.index, d.inCollection])).toEqual([
      ['list', 0, true],
      ['C', 1, true],
      ['list', 2, true],
    ]);
  });

  it('a single document is not a collection member', () => {
    const { docs } = parseSource('---\nid: A\n', 'one.yaml');
    expect(docs).toHaveLength(1);
    expect(docs[0]!.inCollection).toBe(false);
  });

  it('keeps a top-level sequence whole when expandSequences is off', () => {
    const { docs } = parseSource('[1, 2]', 'x.json', { expandSequences: false });
    expect(docs).toHaveLength(1);
    expect(docs[0]!.value).toEqual([1, 2]);
  });

  it('returns a document that is not an object, for the caller to report under its own clause', () => {
    const single = parseSource('"just a string"', 'x.json');
    expect(errors(single.diagnostics)).toEqual([]);
    expect(single.docs.map((d) => [d.value, d.inCollection])).toEqual([['just a string', false]]);
    const member = parseSource('[{"id": "A"}, 42, null]', 'x.json');
    expect(member.docs.map((d) => [d.value, d.index, d.inCollection])).toEqual([
      [{ id: 'A' }, 0, true],
      [42, 1, true],
      [null, 2, true],
    ]);
    expect(member.docs[1]!.locate([])).toEqual({ file: 'x.json', line: 1, column: 15 });
  });

  it('warns about, and skips, an empty document in a stream; an empty file has no documents', () => {
    const r = parseSource('id: A\n---\n# nothing here\n---\nid: B\n', 's.yaml');
    expect(r.docs.map((d) => d.value)).toEqual([{ id: 'A' }, { id: 'B' }]);
    expect(r.diagnostics.map((d) => d.severity)).toEqual(['warning']);
    const empty = parseSource('# only a comment\n', 'e.yaml');
    expect(empty.docs).toEqual([]);
    expect(empty.diagnostics).toHaveLength(1);
    expect(empty.diagnostics[0]!.severity).toBe('warning');
  });

  it('one malformed member does not hide the others', () => {
    const { docs, diagnostics } = parseSource('- {id: A}\n- {id: B, id: C}\n- {id: D}\n', 'set.yaml');
    expect(docs.map((d) => d.value)).toEqual([{ id: 'A' }, { id: 'D' }]);
    // The index is the member's position in the file, so messages about D still say member 2.
    expect(docs.map((d) => d.index)).toEqual([0, 2]);
    expect(errors(diagnostics)).toHaveLength(1);
  });
});

describe('parseSource: malformed text is a diagnostic with a position [OAR-DOC-1]', () => {
  it('rejects a duplicate key, naming it, in YAML and JSON', () => {
    const y = parseSource('id: A\nkind: policy\nid: B\n', 'd.yaml');
    expect(y.docs).toEqual([]);
    expect(errors(y.diagnostics)).toHaveLength(1);
    expect(y.diagnostics[0]).toMatchObject({ clause: 'OAR-DOC-1', token: 'id', path: ['id'], source: { file: 'd.yaml', line: 3, column: 1 } });
    expect(y.diagnostics[0]!.message).toContain('id');

    const j = parseSource('{\n  "effect": "block",\n  "effect": "allow"\n}', 'd.json');
    expect(j.docs).toEqual([]);
    expect(j.diagnostics[0]).toMatchObject({ token: 'effect', source: { line: 3, column: 3 } });
  });

  it('treats keys that map to the same JSON key as duplicates', () => {
    const r = parseSource('1: a\n"1": b\n', 'k.yaml');
    expect(r.diagnostics[0]).toMatchObject({ severity: 'error', token: '1' });
  });

  it('reports malformed YAML with line and column, never throwing', () => {
    const r = parseSource('id: A\nselector: [read, write\nkind: policy\n', 'bad.yaml');
    expect(r.docs).toEqual([]);
    const e = errors(r.diagnostics);
    expect(e.length).toBeGreaterThan(0);
    expect(e[0]!.clause).toBe('OAR-DOC-1');
    expect(e[0]!.source).toMatchObject({ file: 'bad.yaml' });
    expect(e[0]!.source!.line).toBeGreaterThanOrEqual(2);

    const tab = parseSource('a:\n\tb: 1\n', 'tab.yaml');
    expect(errors(tab.diagnostics)[0]!.source).toEqual({ file: 'tab.yaml', line: 2, column: 1 });
  });

  it('reports malformed JSON with line and column', () => {
    const unterminated = parseSource('{\n  "id": "A",\n  "kind": "pol', 'bad.json');
    expect(unterminated.docs).toEqual([]);
    expect(errors(unterminated.diagnostics)[0]!.source!.line).toBe(3);

    // Valid YAML flow syntax that is not JSON is still refused in a .json file.
    const trailing = parseSource('{\n  "id": "A",\n}', 'trailing.json');
    expect(trailing.docs).toEqual([]);
    expect(errors(trailing.diagnostics)[0]!.source).toEqual({ file: 'trailing.json', line: 3, column: 1 });
    const single = parseSource("{'id': 'A'}", 'single.json');
    expect(errors(single.diagnostics)).toHaveLength(1);
    const bare = parseSource('{"mandatory": yes}', 'bare.json');
    expect(errors(bare.diagnostics)).toHaveLength(1);
    // The same text is fine as YAML.
    expect(parseSource("{'id': 'A', 'x': yes,}", 'ok.yaml').docs[0]!.value).toEqual({ id: 'A', x: 'yes' });
  });

  it('produces nothing but JSON data: tags, timestamps, binary and non-finite numbers are errors', () => {
    for (const text of ['a: !!js/function "f"\n', 'a: !custom x\n', 'a: !!binary aGVsbG8=\n', 'a: !!timestamp 2001-12-14\n', 'a: !!set {x}\n']) {
      const r = parseSource(text, 't.yaml');
      expect(r.docs, text).toEqual([]);
      expect(errors(r.diagnostics), text).toHaveLength(1);
    }
    for (const text of ['a: .inf\n', 'a: -.inf\n', 'a: .nan\n']) {
      const r = parseSource(text, 't.yaml');
      expect(r.docs, text).toEqual([]);
      expect(errors(r.diagnostics)[0]!.path, text).toEqual(['a']);
    }
    expect(errors(parseSource('{"a": 1e400}', 'big.json').diagnostics)).toHaveLength(1);
    // A date-shaped scalar and YAML 1.1 booleans stay strings under the 1.2 core schema.
    const plain = parseSource('d: 2001-12-14\ny: yes\nn: ~\nh: 0x1F\n', 'p.yaml');
    expect(plain.docs[0]!.value).toEqual({ d: '2001-12-14', y: 'yes', n: null, h: 31 });
    expect(errors(parseSource('%YAML 1.1\n---\na: yes\n', 'v.yaml').diagnostics)).toHaveLength(1);
  });

  it('rejects a collection used as a mapping key', () => {
    const r = parseSource('? [a, b]\n: c\n', 'k.yaml');
    expect(r.docs).toEqual([]);
    expect(errors(r.diagnostics)).toHaveLength(1);
  });

  it('keeps a __proto__ key as data, never as the prototype', () => {
    const { docs } = parseSource('{"__proto__": {"polluted": true}}', 'p.json');
    const v = docs[0]!.value as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.keys(v)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('rejects an unresolved or self-containing alias', () => {
    expect(errors(parseSource('a: *nope\n', 'a.yaml').diagnostics)[0]!.token).toBe('nope');
    expect(errors(parseSource('a: &x [1, *x]\n', 'a.yaml').diagnostics)[0]!.token).toBe('x');
  });
});

describe('parseSource: hostile input is bounded [OAR-DOC-1]', () => {
  it('rejects 50 MB of text before parsing it, fast', () => {
    const text = 'x'.repeat(50 * 1024 * 1024);
    let r!: ReturnType<typeof parseSource>;
    const took = ms(() => (r = parseSource(text, 'huge.yaml')));
    expect(r.docs).toEqual([]);
    expect(errors(r.diagnostics)).toHaveLength(1);
    expect(r.diagnostics[0]!.message).toContain(String(DEFAULT_MAX_BYTES));
    expect(took).toBeLessThan(100);
  });

  it('honours a smaller maxBytes, counting UTF-8 bytes rather than characters', () => {
    expect(errors(parseSource('a: "ééé"', 'u.yaml', { maxBytes: 10 }).diagnostics)).toHaveLength(1);
    expect(parseSource('a: "eee"', 'u.yaml', { maxBytes: 10 }).docs).toHaveLength(1);
  });

  it('ends a billion-laughs alias bomb with an error, fast', () => {
    let text = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n';
    let prev = 'a';
    for (const name of 'bcdefghi') {
      text += `${name}: &${name} [${Array(9).fill(`*${prev}`).join(', ')}]\n`;
      prev = name;
    }
    let r!: ReturnType<typeof parseSource>;
    const took = ms(() => (r = parseSource(text, 'bomb.yaml')));
    expect(r.docs).toEqual([]);
    expect(errors(r.diagnostics)[0]!.message).toMatch(/alias/);
    expect(took).toBeLessThan(1000);
  });

  it('rejects 10,000-deep nesting without a stack overflow, fast', () => {
    const n = 10_000;
    const cases: [string, string][] = [
      ['[' .repeat(n) + ']'.repeat(n), 'flow.json'],
      ['[' .repeat(n) + ']'.repeat(n), 'flow.yaml'],
      ['{"a":'.repeat(n) + '1' + '}'.repeat(n), 'maps.json'],
      ['- '.repeat(n) + 'x\n', 'dashes.yaml'],
      ['['.repeat(n), 'unclosed.yaml'],
      [Array.from({ length: 1000 }, (_, i) => ' '.repeat(i) + 'a:').join('\n') + ' x\n', 'indent.yaml'],
    ];
    for (const [text, file] of cases) {
      let r!: ReturnType<typeof parseSource>;
      const took = ms(() => (r = parseSource(text, file)));
      expect(r.docs, file).toEqual([]);
      const e = errors(r.diagnostics);
      expect(e, file).toHaveLength(1);
      expect(e[0]!.message, file).toContain('64');
      expect(e[0]!.source!.line, file).toBeGreaterThanOrEqual(1);
      expect(took, file).toBeLessThan(1000);
    }
  });

  it('draws the depth line exactly at maxDepth, for flow and block nesting', () => {
    const flow = (d: number) => '['.repeat(d) + ']'.repeat(d);
    const block = (d: number) => Array.from({ length: d }, (_, i) => ' '.repeat(i) + 'a:').join('\n') + ' x\n';
    for (const make of [flow, block]) {
      expect(parseSource(make(64), 'd.yaml').docs).toHaveLength(1);
      expect(errors(parseSource(make(65), 'd.yaml').diagnostics)).toHaveLength(1);
      expect(parseSource(make(8), 'd.yaml', { maxDepth: 8 }).docs).toHaveLength(1);
      expect(errors(parseSource(make(9), 'd.yaml', { maxDepth: 8 }).diagnostics)).toHaveLength(1);
    }
    // Aliases cannot smuggle depth past the limit.
    const deep = '[' .repeat(40) + ']'.repeat(40);
    const r = parseSource(`a: &x ${deep}\nb: ${'['.repeat(30)}*x${']'.repeat(30)}\n`, 'alias.yaml');
    expect(r.docs).toEqual([]);
    expect(errors(r.diagnostics)[0]!.message).toContain('64');
  });
});

describe('parseSource: integers [OAR-DOC-1]', () => {
  it('keeps 9007199254740993 exact as a bigint in bigInts mode', () => {
    const { docs } = parseSource('{"big": 9007199254740993, "neg": -9223372036854775808, "small": 42, "float": 1.5}', 'f.json', { bigInts: true });
    const v = docs[0]!.value as Record<string, unknown>;
    expect(v.big).toBe(9007199254740993n);
    expect(v.neg).toBe(-9223372036854775808n);
    expect(v.small).toBe(42);
    expect(typeof v.small).toBe('number');
    expect(v.float).toBe(1.5);
  });

  it('returns numbers, as JSON.parse does, without bigInts', () => {
    const { docs } = parseSource('{"big": 9007199254740993, "zero": -0}', 'f.json');
    expect(docs[0]!.value).toEqual({ big: 9007199254740992, zero: 0 });
    expect(Object.is((docs[0]!.value as { zero: number }).zero, 0)).toBe(true);
  });
});

describe('readSources', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'oarc-source-'));
    mkdirSync(join(dir, 'b'));
    mkdirSync(join(dir, 'a', 'deep'), { recursive: true });
    writeFileSync(join(dir, 'b', 'two.yaml'), 'id: TWO\n');
    writeFileSync(join(dir, 'a', 'one.json'), '{"id": "ONE"}');
    writeFileSync(join(dir, 'a', 'deep', 'three.yml'), '- id: THREE\n- id: FOUR\n');
    writeFileSync(join(dir, 'a', 'notes.txt'), 'not a rule');
    writeFileSync(join(dir, 'big.yaml'), `id: ${'X'.repeat(200)}\n`);
    writeFileSync(join(dir, 'latin1.yaml'), Buffer.from([0x69, 0x64, 0x3a, 0x20, 0xe9, 0x0a]));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('walks directories recursively, sorted by path, reading only .json/.yaml/.yml', () => {
    const r = readSources([join(dir, 'a'), join(dir, 'b')]);
    expect(r.diagnostics).toEqual([]);
    expect(r.docs.map((d) => (d.value as { id: string }).id)).toEqual(['THREE', 'FOUR', 'ONE', 'TWO']);
    expect(r.docs[0]!.file).toBe(join(dir, 'a', 'deep', 'three.yml'));
  });

  it('reports a missing file as a diagnostic naming it', () => {
    const missing = join(dir, 'nope.yaml');
    const r = readSources([missing, join(dir, 'b', 'two.yaml')]);
    expect(r.docs).toHaveLength(1);
    expect(r.diagnostics).toHaveLength(1);
    expect(r.diagnostics[0]).toMatchObject({ severity: 'error', token: missing });
    expect(r.diagnostics[0]!.message).toContain(missing);
  });

  it('refuses an oversized file without reading it, and text that is not UTF-8', () => {
    const big = readSources([join(dir, 'big.yaml')], { maxBytes: 100 });
    expect(big.docs).toEqual([]);
    expect(errors(big.diagnostics)).toHaveLength(1);
    const latin1 = readSources([join(dir, 'latin1.yaml')]);
    expect(latin1.docs).toEqual([]);
    expect(errors(latin1.diagnostics)[0]!.message).toContain('UTF-8');
  });
});
