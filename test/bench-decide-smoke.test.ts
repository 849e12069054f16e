/**
 * Smoke test for the decision, allocation and compile benchmarks (bench/packs.ts, decide.ts,
 * decide-baseline.ts, alloc.ts, compile.ts, index.ts): the generated packs load, the hand-written
 * baseline agrees with the engine on whole decisions, and a quick run renders. No timing is
 * asserted — that is the benchmark's job, not a test's.
 */
import { describe, expect, it } from 'vitest';
import { checkAgreement, firstDifference, preparePack, runnersFor } from '../bench/decide.js';
import { baselineSource } from '../bench/decide-baseline.js';
import { generatePack, generateStream, growthOccurrences, packTexts } from '../bench/packs.js';
import { parseArgs, runBench } from '../bench/index.js';
import { loadPackTexts } from '../compiler/index.js';
import { createEngine, MemoryCounterStore } from '../runtime/index.js';

describe('generated gateway packs', () => {
  it.each([10, 100, 1000])('the %i-rule pack loads with exactly that many rules', (n) => {
    const pack = generatePack(n);
    expect(pack.specs).toHaveLength(n);
    const r = loadPackTexts(packTexts(pack));
    if (!r.ok) throw new Error(r.diagnostics.slice(0, 5).map((d) => d.message).join('\n'));
    expect(r.pack.rules).toHaveLength(n);
    expect(new Set(r.pack.rules.map((x) => x.qid)).size).toBe(n);
  });

  it('is deterministic, and a smaller pack is a prefix of a bigger one', () => {
    expect(generatePack(100).ruleTexts).toEqual(generatePack(100).ruleTexts);
    expect(generatePack(100).specs.map((r) => r.qid)).toEqual(generatePack(1000).specs.slice(0, 100).map((r) => r.qid));
    const p = generatePack(100);
    expect(JSON.stringify(generateStream(p, { length: 50 }))).toBe(JSON.stringify(generateStream(p, { length: 50 })));
  });

  it('covers the rule shapes the benchmark promises', () => {
    const texts = generatePack(100).ruleTexts.join('\n');
    for (const needle of ['starts_with(tool_arg_string', 'contains(tool_arg_string', ' in [', 'counter_scope: tool_args_fingerprint',
      'increment_counter', 'fire_count_of(', 'overrides:', 'enforcement: monitor', 'effect: warn', 'effect: nudge',
      'detector://fixture', 'target: secret_matches', 'target: pii_entities']) {
      expect(texts).toContain(needle);
    }
  });
});

describe('hand-written baseline', () => {
  it.each([10, 100])('agrees with the compiled and interpreted engine on every occurrence of the %i-rule stream', (n) => {
    const p = preparePack(n, 400);
    const mix = checkAgreement(p, runnersFor(p));
    expect(mix.occurrences).toBe(400);
    // The stream exercises every effect and the interesting outcomes.
    for (const e of ['none', 'block', 'transform', 'nudge', 'warn']) expect(mix.effects[e] ?? 0).toBeGreaterThan(0);
    for (const o of ['fired', 'passed', 'suppressed', 'monitored_fired', 'monitored_passed']) expect(mix.outcomes[o] ?? 0).toBeGreaterThan(0);
    expect(mix.counterWrites).toBeGreaterThan(0);
  });

  it.each([10, 100, 1000])('the %i-rule gateway stream is decided by the procedures alone, never the generic fallback', (n) => {
    const p = preparePack(n, 400);
    expect(Object.keys(p.compiled.procedures ?? {})).toEqual(['tool.pre_invoke', 'content.output']);
    const engine = createEngine(p.compiled, { counters: new MemoryCounterStore() });
    for (const o of p.stream) engine.decide(o);
    expect((engine as unknown as { procedureFallbacks: number }).procedureFallbacks).toBe(0);
  });

  it('is rejected when it disagrees, naming the occurrence and the field', () => {
    const p = preparePack(10, 400);
    const runners = runnersFor(p);
    const hand = runners.get('hand')!;
    runners.set('hand', {
      reset: () => hand.reset(),
      decide: (o) => {
        const d = hand.decide(o);
        return d.applied.length > 0 ? { ...d, applied: d.applied.slice(1) } : d;
      },
    });
    expect(() => checkAgreement(p, runners)).toThrow(/hand-written baseline disagrees .* at \$\.applied/);
  });

  it('dispatches with a switch for a few tools and a Map for many', () => {
    expect(baselineSource(generatePack(10))).toContain('switch (tool)');
    expect(baselineSource(generatePack(100))).toContain('const TOOLS = new Map(');
  });

  it('growth occurrences select the same rules at every size', () => {
    const g = growthOccurrences();
    const counts = [10, 100].map((n) => {
      const p = preparePack(n, 400);
      const r = runnersFor(p).get('compiled')!;
      r.reset();
      return [r.decide(g.selected).applied.length, r.decide(g.unselected).applied.length];
    });
    expect(counts[0]).toEqual([7, 1]);
    expect(counts[1]).toEqual(counts[0]);
  });

  it('firstDifference finds the first differing path', () => {
    expect(firstDifference({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).toBeNull();
    expect(firstDifference({ a: [1, { b: 2 }] }, { a: [1, { b: 3 }] })?.path).toBe('$.a[1].b');
    expect(firstDifference({ a: 1 }, { a: 1, c: undefined })?.path).toBe('$.c');
  });
});

describe('bench harness', () => {
  it('parses its options', () => {
    expect(parseArgs(['--quick', '--only=decide,compile'])).toMatchObject({ quick: true, only: ['decide', 'compile'], json: false });
    expect(() => parseArgs(['--only=nope'])).toThrow(/unknown section/);
    expect(() => parseArgs(['--fast'])).toThrow(/unknown option/);
  });

  it('a --quick run renders every section', async () => {
    const run = await runBench({
      quick: true,
      only: ['decide', 'alloc', 'compile'],
      decide: { sizes: [10, 100], streamLength: 60, rounds: 1, taskMs: 1, growthBatch: 5 },
      alloc: { sizes: [10], decisions: 500, streamLength: 60 },
      compile: { sizes: [10, 100], rounds: 1 },
    });
    expect(run.written).toEqual([]);
    const md = run.markdown;
    for (const heading of ['# oarc benchmarks', '## decide()', '### Growth', '## Allocation per decision', '## Compile, bundle size, import', '**Targets**']) {
      expect(md).toContain(heading);
    }
    const d = run.sections.decide!;
    expect(d.sizes.map((s) => s.size)).toEqual([10, 100]);
    for (const s of d.sizes) {
      for (const v of ['specialised', 'compiled', 'interpreter', 'hand']) {
        expect(s.variants[v]!.streamNs).toBeGreaterThan(0);
        expect(s.variants[v]!.p99Ns).toBeGreaterThanOrEqual(s.variants[v]!.p50Ns);
      }
      expect(Number.isFinite(s.ratios.specialisedVsHand)).toBe(true);
      expect(Number.isFinite(s.ratios.compiledVsSpecialised)).toBe(true);
    }
    expect(d.growth.map((g) => g.case)).toEqual(['selected', 'unselected']);
    expect(run.sections.alloc!.sizes[0]!.variants.compiled!.bytesPerDecision).toBeGreaterThan(0);
    expect(run.sections.compile!.sizes.map((s) => s.bytes).every((b) => b > 0)).toBe(true);
    expect(run.sections.compile!.linearity).not.toBeNull();
  });
});
