/**
 * `oarc diff` as a library: rules compared on their checked form (a reformatted rule is no change,
 * a changed condition, effect or copy is), the generator's determinism and type-direction (oarc
 * fuzz's generator over one model of both packs), and
 * the grouping of decision changes with a shrunk example.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compileToBundle, createEngine, loadPackTexts, occurrenceFromJson, type LoadedPack } from '../../compiler/index.js';
import { generatedCases } from '../../diff/cases.js';
import { buildModel, mergeModels } from '../../fuzz/model.js';
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

describe('the generator (oarc fuzz\'s, over one model of both packs)', () => {
  const both = (...ps: LoadedPack[]) => ps.map((p) => ({ bundle: compileToBundle(p), pack: p }));

  it('one model of two packs holds the constants, tools and argument types of either', () => {
    const a = pack(RM);
    const b = pack(RM.replace('id: RM', 'id: RM2').replace('bash', 'zsh').replace('"rm -rf"', '"shred"').replace('> 3', '> 9'));
    const m = mergeModels(both(a, b).map((p) => buildModel(p.bundle, p.pack)));
    expect(m.toolNames).toEqual(['bash', 'zsh']);
    expect(m.strings).toEqual(expect.arrayContaining(['rm -rf', 'shred']));
    expect(m.ints).toEqual(expect.arrayContaining([3n, 9n]));
    expect([...m.toolArgs].sort()).toEqual([['command', 'string'], ['depth', 'int']]);
    expect(m.ruled.map((r) => r.local)).toEqual(['tool.pre_invoke']);
    expect(m.near.get('arg:depth')).toEqual(expect.arrayContaining([3n, 9n]));
  });

  it('is deterministic for a seed, and different for another', () => {
    const packs = both(pack(RM));
    const run = (seed: number) => JSON.stringify([...generatedCases(packs, seed, 50)], (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
    expect(run(7)).toBe(run(7));
    expect(run(7)).not.toBe(run(8));
  });

  it('produces occurrences the engine accepts, with values around the constants', () => {
    const p = pack(RM);
    const engine = createEngine(compileToBundle(p));
    const depths = new Set<unknown>();
    let blocked = 0;
    for (const c of generatedCases(both(p), 1, 500)) {
      for (const o of c.occurrences) {
        const d = engine.decide({ ...occurrenceFromJson(o), session: 'generator-test' });
        if (d.decision === 'block') blocked++;
        // An int is a JSON number when it fits one exactly, a bigint beyond ±(2^53 − 1).
        const depth = o.tool_call?.arguments?.depth;
        if (typeof depth === 'bigint' || Number.isSafeInteger(depth)) depths.add(BigInt(depth as number | bigint));
      }
    }
    for (const b of [2n, 3n, 4n]) expect(depths).toContain(b);
    expect(blocked).toBeGreaterThan(0);
  });
});

describe('runDiff', () => {
  const cases = (p: LoadedPack[], n: number): DiffCase[] => [...generatedCases(p.map((x) => ({ bundle: compileToBundle(x), pack: x })), 1, n)];

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
    expect(BigInt(g.example.occurrence.tool_call?.arguments?.depth as number | bigint)).toBe(4n);
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
