/**
 * `oarc diff` as a library: rules compared on their checked form (a reformatted rule is no change,
 * a changed condition, effect or copy is), the generator's determinism and type-direction, and
 * the grouping of decision changes with a shrunk example.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compileToBundle, createEngine, loadPackTexts, occurrenceFromJson, type LoadedPack } from '../../compiler/index.js';
import { Generator, mine } from '../../diff/generate.js';
import { diffRules } from '../../diff/rules.js';
import { runDiff, type DiffCase } from '../../diff/run.js';

const CAP = readFileSync('examples/gateway/capability.yaml', 'utf8');

function pack(...rules: string[]): LoadedPack {
  const r = loadPackTexts({ capability: CAP, rules });
  if (!r.ok) throw new Error(r.diagnostics.map((d) => d.message).join('\n'));
  return r.pack;
}

const RM = `oar: "1.0"
id: RM
namespace: t
kind: policy
anchor: tool.pre_invoke
selector: { tool: [ bash ] }
requires: { profiles: [ tool ] }
when: 'contains(tool_arg_string("command"), "rm -rf") && tool_arg_int("depth") > 3'
effect: block
copy: { what: 'No {{ tool }}.' }
`;
// The same rule laid out otherwise: block style, other quoting, fields reordered, spaces in the condition.
const RM_REFORMATTED = `# a comment
id: RM
oar: '1.0'
kind: policy
namespace: t
anchor: tool.pre_invoke
effect: block
requires:
  profiles:
    - tool
selector:
  tool: [bash]
when: >-
  contains( tool_arg_string("command"),  "rm -rf" )
  && (tool_arg_int("depth") > 3)
copy:
  what: "No {{ tool }}."
`;

describe('rules compared by meaning', () => {
  it('a reformatted rule is unchanged', () => {
    expect(diffRules(pack(RM), pack(RM_REFORMATTED))).toEqual({ added: [], removed: [], changed: [], unchanged: 1 });
  });

  it('names the fields that changed', () => {
    const changed = RM.replace('"rm -rf"', '"rm -r"').replace('effect: block', 'effect: warn').replace('No {{ tool }}.', 'Never {{ tool }}.');
    expect(diffRules(pack(RM), pack(changed)).changed).toEqual([{ rule: 't/RM', fields: ['when', 'effect', 'copy'] }]);
  });

  it('lists rules added and removed by qualified identifier', () => {
    const other = RM.replace('id: RM', 'id: OTHER');
    expect(diffRules(pack(RM), pack(other))).toEqual({ added: ['t/OTHER'], removed: ['t/RM'], changed: [], unchanged: 0 });
  });
});

describe('the generator', () => {
  it('mines the constants, tool names and argument types the conditions use', () => {
    const m = mine([pack(RM)]);
    expect(m.tools).toEqual(['bash']);
    expect(m.strings).toContain('rm -rf');
    expect(m.ints).toContain(3n);
    expect([...m.args]).toEqual([['command', 'string'], ['depth', 'int']]);
    expect(m.anchors).toEqual(['tool.pre_invoke']);
  });

  it('is deterministic for a seed, and different for another', () => {
    const m = mine([pack(RM)]);
    const run = (seed: number) => {
      const g = new Generator(m, seed);
      return JSON.stringify(Array.from({ length: 50 }, () => g.next()), (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
    };
    expect(run(7)).toBe(run(7));
    expect(run(7)).not.toBe(run(8));
  });

  it('produces occurrences the engine accepts, with values around the constants', () => {
    const p = pack(RM);
    const g = new Generator(mine([p]), 1);
    const engine = createEngine(compileToBundle(p));
    const depths = new Set<unknown>();
    let blocked = 0;
    for (let i = 0; i < 500; i++) {
      for (const o of g.next()) {
        const d = engine.decide(occurrenceFromJson(o));
        if (d.decision === 'block') blocked++;
        const depth = o.tool_call?.arguments?.depth;
        if (typeof depth === 'bigint') depths.add(depth);
      }
    }
    for (const b of [2n, 3n, 4n]) expect(depths).toContain(b);
    expect(blocked).toBeGreaterThan(0);
  });
});

describe('runDiff', () => {
  const cases = (p: LoadedPack[], n: number): DiffCase[] => {
    const g = new Generator(mine(p), 1);
    return Array.from({ length: n }, () => ({ origin: 'generated' as const, occurrences: g.next() }));
  };

  it('finds no change between a pack and its reformatted copy', () => {
    const a = pack(RM);
    const b = pack(RM_REFORMATTED);
    const r = runDiff({ old: compileToBundle(a), new: compileToBundle(b), detectors: {}, cases: cases([a, b], 300) });
    expect(r.changed).toBe(0);
    expect(r.groups).toEqual([]);
    expect(r.decided).toBeGreaterThan(300);
  });

  it('groups a planted change and shrinks its example', () => {
    const a = pack(RM);
    const b = pack(RM.replace('> 3', '> 4'));
    const r = runDiff({ old: compileToBundle(a), new: compileToBundle(b), detectors: {}, cases: cases([a, b], 500) });
    expect(r.groups.map((g) => g.title)).toEqual(['`block` → `none` at tool.pre_invoke, rule t/RM no longer fires']);
    const g = r.groups[0]!;
    expect(g.generated).toBe(r.changed);
    // The example keeps only what the change needs: depth 4, and a command containing "rm -rf".
    expect(g.example.before).toEqual([]);
    expect(g.example.occurrence.tool_call?.arguments?.depth).toBe(4n);
    expect(Object.keys(g.example.occurrence.tool_call?.arguments ?? {})).toEqual(['command', 'depth']);
    expect(g.example.occurrence.recent_activity).toBeUndefined();
    expect(g.example).toMatchObject({ old: { decision: 'block', rule: 't/RM' }, new: { decision: 'none', rule: null } });
  });

  it('a change of copy alone is a change, reported as such', () => {
    const a = pack(RM);
    const b = pack(RM.replace('No {{ tool }}.', 'Never {{ tool }}.'));
    const r = runDiff({ old: compileToBundle(a), new: compileToBundle(b), detectors: {}, cases: cases([a, b], 300) });
    expect(r.groups.map((g) => g.title)).toEqual(['`block` at tool.pre_invoke, rule t/RM, copy changed']);
  });
});
