/**
 * Every load-time rejection names what it rejects ([OAR-CONF-30], [OAR-CONF-1], [OAR-FACT-3]): a
 * diagnostic carries the machine token — the field, identifier, anchor, rule or construct — and
 * its message contains that token verbatim, so a fixture asserting the token passes on the message
 * alone. Checked over every rejection the conformance corpus makes the loader produce, and over
 * rejections that once named only a bracket or a shape.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPackTexts } from '../../compiler/index.js';
import type { Diagnostic } from '../../compiler/diagnostics.js';
import { cap } from '../engine/harness.js';

const FIXTURES = join(import.meta.dirname, '../../conformance/fixtures');

type Obj = Record<string, unknown>;

function rejections(): { fixture: string; d: Diagnostic }[] {
  const out: { fixture: string; d: Diagnostic }[] = [];
  for (const file of readdirSync(FIXTURES).filter((f) => f.endsWith('.json'))) {
    const f = JSON.parse(readFileSync(join(FIXTURES, file), 'utf8')) as Obj;
    const expected = f.expected as Obj | undefined;
    if (expected?.error === undefined) continue;
    const input = f.input as Obj;
    const config = input.config === undefined ? [] : ([] as unknown[]).concat(input.config);
    const r = loadPackTexts({
      capability: JSON.stringify(input.capability),
      rules: (f.rules as unknown[]).map((x) => JSON.stringify(x)),
      configs: config.map((c) => JSON.stringify(c)),
    });
    for (const d of r.ok ? [] : r.diagnostics) if (d.severity === 'error') out.push({ fixture: file, d });
  }
  return out;
}

function only(when: string, capability = cap({ profiles: ['tool'] })): Diagnostic {
  const rule = JSON.stringify({ oar: '1.0', id: 'R', kind: 'policy', anchor: 'tool.pre_invoke', requires: { profiles: ['tool'] }, when, effect: 'warn' });
  const r = loadPackTexts({ capability, rules: [rule] });
  expect(r.ok).toBe(false);
  const errors = r.ok ? [] : r.diagnostics.filter((d) => d.severity === 'error');
  expect(errors).toHaveLength(1);
  return errors[0] as Diagnostic;
}

describe('[OAR-CONF-30] every load-time diagnostic names its token', () => {
  it('[OAR-CONF-30] each rejection of the corpus carries a token, and its message contains it', () => {
    const all = rejections();
    expect(all.length).toBeGreaterThan(150);
    const unnamed = all.filter(({ d }) => d.token === undefined || d.token === '' || !d.message.includes(d.token));
    expect(unnamed.map(({ fixture, d }) => `${fixture}: [${d.clause}] ${d.message}`)).toEqual([]);
  });

  it('[OAR-EXPR-19] indexing a map names the fact, and offers the typed function for tool_args', () => {
    const d = only('tool_args["path"] == "/etc/passwd"');
    expect(d.clause).toBe('OAR-EXPR-19');
    expect(d.token).toBe('tool_args');
    expect(d.message).toContain("'tool_args' is a map");
    expect(d.message).toContain('tool_arg_string("path")');
  });

  it('[OAR-EXPR-13] a wrong subscript names the indexed fact', () => {
    const d = only('arg_validation_errors["x"] == "y"');
    expect(d.clause).toBe('OAR-EXPR-13');
    expect(d.token).toBe('arg_validation_errors');
    expect(d.message).toContain("'arg_validation_errors' (list<string>) with string");
  });

  it('[OAR-DOC-31] a rule-set member that is not a rule names what it is', () => {
    const r = loadPackTexts({ capability: cap(), rules: ['[42]'] });
    const d = r.ok ? undefined : r.diagnostics.find((x) => x.clause === 'OAR-DOC-31');
    expect(d?.token).toBe('number');
    expect(d?.message).toContain('a JSON number');
  });
});
