/**
 * A condition error is reported at the exact line and column of the offending token in the file
 * ([OAR-FACT-3] names the identifier; this pins *where*): for random placements of the token inside
 * a condition, written in every YAML scalar style — plain (folded over lines), single-quoted (with
 * `''`), double-quoted (escapes, folds and escaped line breaks), literal and folded block — and as
 * a JSON string with escapes, in a document at random depth and after random lines. The oracle is
 * independent of the loader: the token is written out literally once, so its place in the text is
 * where it must be reported.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { loadPack, parseSource, type Diagnostic } from '../../compiler/index.js';
import { propertyConfig, runProperty } from '../property/run.js';
import { capability, rule } from './fixtures.js';

const TOKEN = 'nosuch_fact';
const CONFIG = propertyConfig(15015, 300);

/** Terms that check against the fixtures' host, so the only error is the token. */
const TERM = fc.constantFrom('tool == "bash"', "tool == 'its'", 'size(tool) > 2', 'tool in ["a", "b"]', 'acme.count >= 3', '(!(tool == "x\\\\y"))', 'tool_arg_string("path") != ""');

type Style = 'plain' | 'single' | 'double' | 'literal' | 'folded' | 'json';

interface Case {
  words: string[];
  style: Style;
  breaks: boolean[];
  escapes: number[];
  before: number;
  nested: boolean;
}

const CASE: fc.Arbitrary<Case> = fc
  .record({
    pre: fc.array(TERM, { maxLength: 4 }),
    post: fc.array(TERM, { maxLength: 4 }),
    style: fc.constantFrom<Style>('plain', 'single', 'double', 'literal', 'folded', 'json'),
    seed: fc.array(fc.boolean(), { minLength: 80, maxLength: 80 }),
    escapes: fc.array(fc.nat(6), { minLength: 80, maxLength: 80 }),
    before: fc.nat(3),
    nested: fc.boolean(),
  })
  .map(({ pre, post, style, seed, escapes, before, nested }) => {
    const condition = [...pre, `${TOKEN} == "v"`, ...post].join(' && ');
    return { words: condition.split(' '), style, breaks: seed, escapes, before, nested };
  });

/** The condition the scalar must read back as: a literal block keeps its line breaks. */
const conditionOf = (c: Case) => c.words.map((w, i) => (i === 0 ? w : (c.style === 'literal' && c.breaks[i] ? '\n' : ' ') + w)).join('');

/** A character of a double-quoted YAML or JSON string, escaped one of several ways (never the token's). */
function escapeChar(ch: string, how: number, json: boolean): string {
  if (ch === '"' || ch === '\\') return `\\${ch}`;
  if (how === 1) return `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
  if (how === 2 && !json) return `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`;
  if (how === 3 && !json) return `\\U${ch.charCodeAt(0).toString(16).padStart(8, '0')}`;
  if (how === 4 && ch === '/') return '\\/';
  return ch;
}

function quoted(c: Case, indent: string, json: boolean): string {
  let k = 0;
  const esc = (w: string) => (w.includes(TOKEN) ? w.replace(/["\\]/g, (x) => `\\${x}`) : Array.from(w).map((ch) => escapeChar(ch, c.escapes[k++ % c.escapes.length] as number, json)).join(''));
  if (json) return `"${c.words.map(esc).join(' ')}"`;
  // A fold (a line break between words) reads as the space; an escaped break inside a word reads as nothing.
  let out = '"';
  c.words.forEach((w, i) => {
    if (i > 0) out += c.breaks[i] ? `\n${indent}` : ' ';
    out += c.breaks[i + 40] && w.length > 3 && !w.includes(TOKEN) ? `${esc(w.slice(0, 2))}\\\n${indent}${esc(w.slice(2))}` : esc(w);
  });
  return `${out}"`;
}

/** The `when:` value in the case's style, its continuation lines at `indent`. */
function scalar(c: Case, indent: string): string {
  const joined = (sep: (i: number) => string, words = c.words) => words.map((w, i) => (i === 0 ? w : sep(i) + w)).join('');
  switch (c.style) {
    case 'plain':
      return joined((i) => (c.breaks[i] ? `\n${indent}` : ' '));
    case 'single':
      return `'${joined((i) => (c.breaks[i] ? `\n${indent}` : ' '), c.words.map((w) => w.replace(/'/g, "''")))}'`;
    case 'double':
      return quoted(c, indent, false);
    case 'literal':
      return `|-\n${indent}${joined((i) => (c.breaks[i] ? `\n${indent}` : ' '))}`;
    case 'folded':
      return `>-\n${indent}${joined((i) => (c.breaks[i] ? `\n${indent}` : ' '))}`;
    case 'json':
      return quoted(c, indent, true);
  }
}

function document(c: Case): { text: string; file: string } {
  const r = rule({ requires: { profiles: ['tool'], facts: ['acme.count'] } });
  if (c.style === 'json') {
    const members = Object.entries(r).map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`);
    const lines = ['{', ...Array.from({ length: c.before }, (_, i) => `  "x-pad-${i}": "${'p'.repeat(i)}",`), ...members.map((m) => `${m},`), `  "when": ${scalar(c, '')}`, '}'];
    const text = c.nested ? `[\n${lines.join('\n')}\n]` : lines.join('\n');
    return { text, file: 'rules.json' };
  }
  const pad = c.nested ? '  ' : '';
  const lines = Object.entries(r).map(([k, v]) => `${k}: ${JSON.stringify(v)}`);
  const body = [...Array.from({ length: c.before }, (_, i) => `# comment ${i}`), ...lines, `when: ${scalar(c, `${pad}  `)}`];
  const text = c.nested ? body.map((l, i) => (i === c.before ? `- ${l}` : l.startsWith('#') ? l : `${pad}${l.replace(/\n/g, '\n')}`)).join('\n') : body.join('\n');
  return { text: `${text}\n`, file: 'rules.yaml' };
}

/** 1-based line and UTF-16 column of the one literal occurrence of the token. */
function expectedPosition(text: string): { line: number; column: number } {
  const at = text.indexOf(TOKEN);
  expect(text.indexOf(TOKEN, at + 1)).toBe(-1);
  const before = text.slice(0, at);
  const line = before.split('\n').length;
  return { line, column: at - before.lastIndexOf('\n') };
}

function load(text: string, file: string): Diagnostic[] {
  const cap = parseSource(JSON.stringify(capability()), 'cap.json');
  const rules = parseSource(text, file);
  expect(rules.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  const r = loadPack({ capability: cap.docs[0]!, rules: rules.docs });
  return r.ok ? [] : r.diagnostics;
}

describe('[OAR-FACT-3] a condition error is reported at the token, in every scalar style', () => {
  it('for random placements, styles, escapes and folds, line:column is the token and the span ends after it', () => {
    runProperty(
      CONFIG,
      'condition error positions',
      CASE,
      (c) => {
        const { text, file } = document(c);
        // The generator itself must write a scalar that reads back as the condition.
        const parsed = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
        expect((Array.isArray(parsed) ? parsed[0] : parsed).when).toBe(conditionOf(c));
        const errors = load(text, file);
        expect(errors.map((d) => [d.clause, d.token])).toEqual([['OAR-FACT-3', TOKEN]]);
        const { line, column } = expectedPosition(text);
        expect(errors[0]!.source).toMatchObject({ file, line, column, endLine: line, endColumn: column + TOKEN.length });
      },
      CONFIG.runs,
      'npx vitest run test/load/positions.test.ts',
      true,
    );
  });

  it('an error at the end of a condition ("end of condition") is placed just after its last character', () => {
    const text = 'oar: "1.0"\nid: A\nkind: policy\nanchor: tool.pre_invoke\neffect: block\nwhen: "tool ==   "\n';
    const [d] = load(text, 'rules.yaml');
    expect(d).toMatchObject({ clause: 'OAR-EXPR-1', source: { line: 6, column: 18 } });
  });
});
