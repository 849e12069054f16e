/**
 * The fuzz library in process: the seeded generator is deterministic, generated cases are JSON
 * and respect the model, the shrinker reaches a minimal case, and the comparison sees every
 * member of the wire form.
 */
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { compileToBundle, loadPackFiles } from '../../compiler/index.js';
import { decideInProcess, inProcess, type Backend } from '../../fuzz/backends.js';
import { fuzz } from '../../fuzz/run.js';
import { comparable, firstDifference } from '../../fuzz/compare.js';
import { generateCase, type FuzzCase } from '../../fuzz/generate.js';
import { parseJsonText, toJsonText } from '../../fuzz/json.js';
import { buildModel } from '../../fuzz/model.js';
import { Prng, parseSeed } from '../../fuzz/prng.js';
import { shrinkCase } from '../../fuzz/shrink.js';
import { ROOT } from '../support/build.js';
import { toolArgsFingerprint } from '../../runtime/fingerprint.js';

const PACK = join(ROOT, 'test/fuzz/fixtures/pack');

function load() {
  const r = loadPackFiles({ capability: join(PACK, 'capability.yaml'), rules: [join(PACK, 'rules.yaml')] });
  if (!r.ok) throw new Error(r.diagnostics.map((d) => d.message).join('\n'));
  return r.pack;
}

describe('Prng', () => {
  it('gives the same sequence for a seed and a different one for another seed', () => {
    const draw = (seed: number) => {
      const r = new Prng(seed);
      return Array.from({ length: 20 }, () => r.u32());
    };
    expect(draw(7)).toEqual(draw(7));
    expect(draw(7)).not.toEqual(draw(8));
    const r = new Prng(1);
    for (let k = 0; k < 1000; k++) {
      const n = r.int(5);
      expect(n >= 0 && n < 5 && Number.isInteger(n)).toBe(true);
    }
  });

  it('reads seeds in [0, 2^32) only', () => {
    expect(parseSeed('0')).toBe(0);
    expect(parseSeed('4294967295')).toBe(4294967295);
    for (const bad of ['4294967296', '-1', '1.5', 'x', '', '01']) expect(parseSeed(bad)).toBeUndefined();
  });
});

describe('the model and the generator', () => {
  const pack = load();
  const bundle = compileToBundle(pack);
  const model = buildModel(bundle, pack);

  it('mines the constants the rules compare with', () => {
    expect(model.toolNames).toContain('bash');
    expect(model.toolArgs.get('command')).toBe('string');
    expect(model.near.get('arg:command')).toContain('rm -rf');
    expect(model.ints).toContain(100n);
    expect(model.near.get('acme.tier')).toContain('gold');
    expect([...model.spanTargets]).toEqual(['secret_matches']);
  });

  it('generates cases whose tool arguments have no fingerprint (an integer beyond binary64) without failing', () => {
    // The gateway pack supplies tool_args_fingerprint as a fact; the generator writes edge
    // integers into arguments on purpose, and a fingerprint of those is a provider failure
    // ([OAR-FACT-28], [OAR-OPS-3]) — not a reason for the generator to throw mid-run.
    const gw = loadPackFiles({ capability: join(ROOT, 'examples/gateway/capability.yaml'), rules: [join(ROOT, 'examples/gateway/rules.yaml')] });
    if (!gw.ok) throw new Error('the gateway pack does not load');
    const gwModel = buildModel(compileToBundle(gw.pack), gw.pack);
    const r = new Prng(1);
    let unfingerprinted = 0;
    for (let k = 0; k < 40_000 && unfingerprinted < 3; k++) {
      for (const o of generateCase(gwModel, r.fork()).occurrences) {
        if (o.tool_call === undefined || o.facts?.tool_args_fingerprint === undefined) continue;
        try {
          toolArgsFingerprint(o.tool_call.name, o.tool_call.arguments ?? {});
        } catch {
          unfingerprinted++;
        }
      }
    }
    expect(unfingerprinted).toBeGreaterThan(0);
  });

  it('generates the same cases for a seed, each one JSON that reads back unchanged', () => {
    const cases = (seed: number) => {
      const r = new Prng(seed);
      return Array.from({ length: 50 }, () => generateCase(model, r.fork()));
    };
    const a = cases(11);
    expect(toJsonText(a)).toBe(toJsonText(cases(11)));
    expect(toJsonText(a)).not.toBe(toJsonText(cases(12)));
    for (const c of a) {
      expect(toJsonText(parseJsonText(toJsonText(c)))).toBe(toJsonText(c));
      for (const o of c.occurrences) expect(['tool.pre_invoke', 'content.output']).toContain(o.anchor);
    }
  });

  it('reaches blocks, transforms, nudges (counters across a session) and refused occurrences', () => {
    const r = new Prng(5);
    const seen = new Set<string>();
    for (let k = 0; k < 300; k++) {
      const c = generateCase(model, r.fork());
      for (const a of decideInProcess(bundle, {}, true, c.occurrences)) seen.add('error' in a ? `refused:${a.error.kind}` : a.decision.decision);
    }
    for (const k of ['block', 'transform', 'nudge', 'warn', 'none', 'refused:occurrence']) expect(seen).toContain(k);
  });
});

describe('shrinkCase', () => {
  it('keeps only what the failure needs', async () => {
    const start: FuzzCase = {
      occurrences: [
        { anchor: 'a', facts: { x: 'hello world', y: 12345 } },
        { anchor: 'a', facts: { x: 'keep', z: [1, 2, 3] }, content: 'some content' },
        { anchor: 'b' },
      ],
    };
    // "Fails" while some occurrence has a fact x containing 'k'.
    const fails = (c: FuzzCase) => Promise.resolve(c.occurrences.some((o) => typeof o.facts?.x === 'string' && o.facts.x.includes('k')));
    const r = await shrinkCase(start, fails, 1000);
    expect(r.case).toEqual({ occurrences: [{ anchor: 'a', facts: { x: 'k' } }] });
  });

  it('stops at its budget', async () => {
    const start: FuzzCase = { occurrences: Array.from({ length: 10 }, () => ({ anchor: 'a', facts: { x: 'abcdefgh' } })) };
    const r = await shrinkCase(start, () => Promise.resolve(true), 3);
    expect(r.runs).toBe(3);
    expect(r.case.occurrences).toHaveLength(7);
  });
});

describe('firstDifference', () => {
  const pack = load();
  const bundle = compileToBundle(pack);
  const occ = [{ anchor: 'tool.pre_invoke', tool_call: { name: 'bash', arguments: { command: 'rm -rf /' } } }];
  const answers = decideInProcess(bundle, {}, true, occ);

  it('finds none between identical answers and names the members that differ', () => {
    expect(firstDifference('a', answers, 'b', answers, false)).toBeUndefined();
    const flipped = structuredClone(answers);
    const d0 = flipped[0] as { decision: { decision: string; counters: Record<string, unknown> } };
    d0.decision.decision = 'none';
    expect(firstDifference('a', answers, 'b', flipped, false)?.members).toEqual(['decision']);
    d0.decision.decision = 'block';
    d0.decision.counters = { 't/COUNT#x': { fire_count: 9, breaker_count: 0 } };
    expect(firstDifference('a', answers, 'b', flipped, false)?.members).toEqual(['counters']);
  });

  it('against an external engine, compares a trace error by its code and a refusal by its being one', () => {
    const a = { decision: { applied: [{ rule: 'r', outcome: 'errored', error: { code: 'wrong_type', clause: 'OAR-FACT-26', message: 'x' } }] } } as never;
    const b = { decision: { applied: [{ rule: 'r', outcome: 'errored', error: { code: 'wrong_type', clause: 'OAR-FACT-26', message: 'other words' } }] } } as never;
    expect(firstDifference('a', [a], 'b', [b], true)).toBeUndefined();
    expect(firstDifference('a', [a], 'b', [b], false)?.members).toEqual(['applied']);
    expect(comparable({ error: { kind: 'occurrence', message: 'm' } }, true)).toEqual(comparable({ error: { kind: 'occurrence', message: 'n' } }, true));
  });
});

describe('fuzz()', () => {
  const pack = load();
  const bundle = compileToBundle(pack);
  const model = buildModel(bundle, pack);
  const specialised = inProcess('specialised', bundle, {}, true);

  it('finds a back end that differs on one effect, and shrinks the case to the occurrence that shows it', async () => {
    // A planted in-process divergence: a "generic" back end that reports every transform as none.
    const flipped: Backend = {
      name: 'generic',
      decide: async (occs) =>
        (await specialised.decide(occs)).map((a) => ('decision' in a && a.decision.decision === 'transform' ? { decision: { ...a.decision, decision: 'none' as const } } : a)),
    };
    const r = await fuzz({ model, backends: [specialised, flipped], seed: 4, runs: 200 });
    expect(r.finding).toBeDefined();
    const f = r.finding!;
    expect(f.difference.members).toEqual(['decision']);
    expect(f.shrunk.occurrences).toHaveLength(1);
    expect(f.shrunk.occurrences[0]?.anchor).toBe('content.output');
    expect(f.shrunk.occurrences.length).toBeLessThanOrEqual(f.original.occurrences.length);
    // The same seed finds the same case.
    const again = await fuzz({ model, backends: [specialised, flipped], seed: 4, runs: 200 });
    expect(toJsonText(again.finding?.shrunk)).toBe(toJsonText(f.shrunk));
  });

  it('stops at --time, and reports progress with the cases done', async () => {
    let t = 0;
    const seen: number[] = [];
    // Each reading of the clock advances it 100 ms: the run ends after about 5 s of "time".
    const r = await fuzz({ model, backends: [specialised], seed: 1, timeMs: 5000, now: () => (t += 100), progress: (p) => seen.push(p.cases) });
    expect(r.finding).toBeUndefined();
    expect(r.cases).toBeGreaterThan(10);
    expect(r.cases).toBeLessThan(60);
    expect(seen[seen.length - 1]).toBe(r.cases);
  });
});
