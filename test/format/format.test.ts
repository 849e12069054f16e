/**
 * `oarc fmt`'s formatter (format/): the canonical layout, and its two properties — formatting is
 * idempotent, and the formatted pack loads to exactly the same checked pack (the same diagnostics
 * and the same bundle, but for the line and column each rule's source is recorded at) — over
 * random packs and real ones (the example pack, the rules of every conformance fixture).
 */
import fc from 'fast-check';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify as yamlStringify } from 'yaml';
import { compile, loadPackTexts, type Diagnostic } from '../../compiler/index.js';
import { RULE_FIELDS, formatText } from '../../format/index.js';
import { packArb } from '../property/pack-generators.js';
import { propertyConfig, runProperty } from '../property/run.js';
import { ROOT } from '../support/build.js';

const fmt = (text: string, file = 'rules.yaml'): string => {
  const r = formatText(text, file);
  if (!r.ok) throw new Error(`cannot format: ${r.problems.map((p) => `${p.line}:${p.column}: ${p.message}`).join('; ')}`);
  return r.text;
};

describe('the canonical layout', () => {
  it('orders fields as the spec example does, the rest after, x- and unknown fields last as written', () => {
    const out = fmt(['x-team: core', 'effect: block', 'when: tool == "bash"', 'id: A', 'bogus: 1', 'kind: policy', 'anchor: tool.pre_invoke', 'oar: "1.0"', ''].join('\n'));
    expect(out).toBe(['oar: "1.0"', 'id: A', 'kind: policy', 'anchor: tool.pre_invoke', `when: 'tool == "bash"'`, 'effect: block', 'x-team: core', 'bogus: 1', ''].join('\n'));
  });

  it('keeps the relative order of the section 2.1 example document', () => {
    const example = ['oar', 'id', 'namespace', 'kind', 'anchor', 'selector', 'requires', 'when', 'effect', 'on_error', 'copy'];
    const at = example.map((f) => RULE_FIELDS.indexOf(f));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
  });

  it('single-quotes when and copy strings, a multi-line one as a block, and orders copy members', () => {
    const out = fmt(['oar: "1.0"', 'id: A', 'kind: policy', 'anchor: a', 'effect: warn', 'when: "tool == \\"x\\""', 'copy:', '  fix: "it\'s fine"', '  what: plain text', '  why: "two\\nlines"', ''].join('\n'));
    expect(out).toContain(`when: 'tool == "x"'\n`);
    expect(out).toContain(`copy:\n  what: 'plain text'\n  why: |-\n    two\n    lines\n  fix: 'it''s fine'\n`);
  });

  it('double-quotes a value a single-quoted scalar cannot carry', () => {
    const out = fmt('oar: "1.0"\nid: A\nkind: policy\nanchor: a\neffect: warn\nwhen: "\\u0007 == \\"\\""\n');
    expect(out).toContain('when: "\\a == \\"\\""');
  });

  it('keeps comments with their fields, the header at the top, and every document of a stream', () => {
    const src = ['# the pack', 'id: A', 'oar: "1.0"', 'kind: policy', '# why we block', 'effect: block # hard stop', 'anchor: a', '---', '# second', 'effect: warn', 'oar: "1.0"', 'id: B', 'kind: policy', 'anchor: a', ''].join('\n');
    const out = fmt(src);
    expect(out).toBe(['# the pack', 'oar: "1.0"', 'id: A', 'kind: policy', 'anchor: a', '# why we block', 'effect: block # hard stop', '---', '# second', 'oar: "1.0"', 'id: B', 'kind: policy', 'anchor: a', 'effect: warn', ''].join('\n'));
  });

  it('leaves a document that is not a rule (a capability document) exactly as written', () => {
    const cap = readFileSync(join(ROOT, 'examples', 'gateway', 'capability.yaml'), 'utf8');
    expect(fmt(cap)).toBe(cap);
  });

  it('formats JSON rule files: field order, two-space indentation, big integers exact', () => {
    const out = fmt('[{"effect":"block","x-n":9007199254740993,"id":"A","oar":"1.0","kind":"policy","anchor":"a"}]', 'r.json');
    expect(out).toBe('[\n  {\n    "oar": "1.0",\n    "id": "A",\n    "kind": "policy",\n    "anchor": "a",\n    "effect": "block",\n    "x-n": 9007199254740993\n  }\n]\n');
  });

  it('reports a text that does not parse, with its line', () => {
    const r = formatText('oar: "1.0"\nid: [A\n', 'bad.yaml');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems[0]?.line).toBeGreaterThanOrEqual(2);
  });
});

// ---------------------------------------------------------------------------------------------
// The properties

/**
 * A diagnostic without its position, nor the positions its message cites ("first at
 * <rules 0>:1:15"): what must not change when only the layout does.
 */
const meaning = (d: Diagnostic) => JSON.stringify([d.severity, d.clause, d.message.replace(/(<rules \d+>):\d+:\d+/g, '$1'), d.token ?? null, d.path ?? null]);

/** The bundle module text with each rule's recorded `line:column` blanked (the layout moves them). */
const withoutPositions = (module: string) => module.replace(/("source": "[^"]*?):\d+:\d+"/g, '$1"');

function samePack(capability: string, before: readonly string[], after: readonly string[], configs: readonly string[] = []): void {
  const a = loadPackTexts({ capability, rules: before, configs });
  const b = loadPackTexts({ capability, rules: after, configs });
  expect(b.ok).toBe(a.ok);
  const diagnostics = (r: typeof a) => (r.ok ? r.pack.diagnostics : r.diagnostics).map(meaning).sort();
  expect(diagnostics(b)).toEqual(diagnostics(a));
  if (a.ok && b.ok) expect(withoutPositions(compile(b.pack))).toBe(withoutPositions(compile(a.pack)));
}

function checkProperties(capability: string, texts: readonly string[], files: readonly string[], configs: readonly string[] = []): void {
  const once = texts.map((t, i) => fmt(t, files[i]));
  once.forEach((t, i) => expect(fmt(t, files[i]), 'formatting is idempotent').toBe(t));
  samePack(capability, texts, once, configs);
}

/** A YAML spelling a person might write: fields in any order, comments, mixed quoting. */
function scramble(docs: readonly Record<string, unknown>[], seed: number[], typo: boolean): string {
  let s = 0;
  const next = () => (seed[s++ % seed.length] as number) + s;
  return docs
    .map((d, k) => {
      const keys = Object.keys(d).sort((a, b) => ((next() % 3) - 1) || a.localeCompare(b));
      const shuffled: Record<string, unknown> = {};
      for (const key of keys) shuffled[key] = d[key];
      if (typo && k === 0) shuffled.efect = 'block'; // a diagnostic that must survive formatting
      const text = yamlStringify(shuffled, { defaultStringType: next() % 2 === 0 ? 'QUOTE_DOUBLE' : 'PLAIN', lineWidth: next() % 2 === 0 ? 40 : 0 });
      // A comment goes above a top-level field, never inside a scalar folded over lines.
      const lines = text.split('\n');
      const fields = lines.map((l, i) => (/^[^\s#-]/.test(l) ? i : -1)).filter((i) => i >= 0);
      lines.splice(fields[next() % fields.length] as number, 0, `# note ${k}`);
      return `${k === 0 ? '' : '---\n'}${lines.join('\n')}`;
    })
    .join('');
}

describe('formatting changes the layout and nothing else', () => {
  const config = propertyConfig(16_2025, 150);

  it('random packs: idempotent, same diagnostics, same bundle', () => {
    const arb = fc.tuple(packArb, fc.array(fc.nat({ max: 97 }), { minLength: 1, maxLength: 8 }), fc.boolean());
    runProperty(config, 'fmt keeps the pack', arb, ([pack, seed, typo]) => {
      const scrambled = scramble(pack.docs, seed, typo);
      checkProperties(pack.capability, [scrambled], ['rules.yaml'], pack.configs);
      // The generator's own serialisations too (YAML and JSON, one document each or a collection).
      checkProperties(pack.capability, pack.rules, pack.rules.map((t) => (t.trimStart().startsWith('{') || t.trimStart().startsWith('[') ? 'r.json' : 'r.yaml')), pack.configs);
      // Comments survive.
      const out = fmt(scrambled);
      for (const c of scrambled.match(/# note \d+/g) ?? []) expect(out).toContain(c);
    }, config.runs, 'npx vitest run test/format/format.test.ts');
  });

  it('the example pack', () => {
    const dir = join(ROOT, 'examples', 'gateway');
    const rules = readFileSync(join(dir, 'rules.yaml'), 'utf8');
    checkProperties(readFileSync(join(dir, 'capability.yaml'), 'utf8'), [rules], ['rules.yaml']);
    expect(fmt(rules), 'the example pack is formatted').toBe(rules);
  });

  it('the rules of every conformance fixture, as YAML and as JSON', () => {
    const dir = join(ROOT, 'conformance', 'fixtures');
    let n = 0;
    for (const f of readdirSync(dir).filter((x) => x.endsWith('.json') && x !== 'manifest.json')) {
      const fx = JSON.parse(readFileSync(join(dir, f), 'utf8')) as { rules: unknown[]; input: { capability: unknown; config?: unknown } };
      const configs = fx.input.config === undefined ? [] : (Array.isArray(fx.input.config) ? fx.input.config : [fx.input.config]).map((c) => JSON.stringify(c));
      const capability = JSON.stringify(fx.input.capability);
      const yamlText = fx.rules.map((r) => yamlStringify(r)).join('---\n');
      checkProperties(capability, [yamlText], ['rules.yaml'], configs);
      checkProperties(capability, [JSON.stringify(fx.rules)], ['rules.json'], configs);
      n++;
    }
    expect(n).toBeGreaterThan(400);
  });
});
