/**
 * The second realistic pack of the decision benchmark (bench/content-pack: redaction with spans at
 * three content anchors, counters and a breaker, advisories, overrides): it loads clean, and its
 * occurrence stream is decided identically — decision, trace, counters, events, transforms,
 * content — by the specialised procedures, the generic engine and the interpreter, with no
 * occurrence handed from a procedure to the generic path; and the benchmark's hand-written guard
 * for it (bench/content-baseline.ts) returns the engine's decision on every occurrence, so the
 * baseline the decide-content section times cannot drift from what the engine decides (#14).
 */
import { describe, expect, it } from 'vitest';
import { createContentBaseline } from '../bench/content-baseline.js';
import { CONTENT_ANCHORS, generateContentStream, loadContentPack } from '../bench/content-pack.js';
import { firstDifference } from '../bench/decide.js';
import { renderContent, runContentBench } from '../bench/decide-content.js';
import { compileToBundle } from '../compiler/index.js';
import { createEngine, decisionToJson, MemoryCounterStore, type Engine } from '../runtime/index.js';

describe('the content pack', () => {
  it('loads with no diagnostics', () => {
    const pack = loadContentPack();
    expect(pack.rules.length).toBe(19);
    expect(pack.diagnostics).toEqual([]);
  });

  it('is decided identically by the three back ends, and by the procedures alone', () => {
    const pack = loadContentPack();
    const specialised = compileToBundle(pack, 'specialised');
    const engines: [string, Engine][] = [
      ['specialised', createEngine(specialised, { counters: new MemoryCounterStore() })],
      ['generic', createEngine(specialised, { counters: new MemoryCounterStore(), procedures: false })],
      ['interpreter', createEngine(compileToBundle(pack, 'interpreter'), { counters: new MemoryCounterStore() })],
    ];
    const stream = generateContentStream({ length: 1500 });
    const effects: Record<string, number> = {};
    const anchors = new Set<string>();
    let counted = 0;
    let transformed = 0;
    stream.forEach((occ, i) => {
      const [ref, ...rest] = engines.map(([, e]) => decisionToJson(e.decide(occ)));
      for (const [k, got] of rest.entries()) expect(got, `occurrence #${i} on the ${engines[k + 1]?.[0]} back end`).toEqual(ref);
      const d = ref as ReturnType<typeof decisionToJson>;
      effects[d.decision] = (effects[d.decision] ?? 0) + 1;
      anchors.add(occ.anchor);
      if (Object.keys(d.counters).length > 0) counted++;
      if (d.decision === 'transform' && d.content !== occ.content) transformed++;
    });
    expect((engines[0]?.[1] as unknown as { procedureFallbacks: number }).procedureFallbacks).toBe(0);
    // The stream reaches what the pack is about: every anchor, every effect, counters and real redactions.
    expect([...anchors].sort()).toEqual(Object.values(CONTENT_ANCHORS).sort());
    for (const e of ['none', 'block', 'transform', 'warn', 'nudge']) expect(effects[e] ?? 0, `decisions ${e}`).toBeGreaterThan(0);
    expect(counted).toBeGreaterThan(0);
    expect(transformed).toBeGreaterThan(0);
  });

  it('is decided by the hand-written guard exactly as by the engine, on the whole benchmark stream', () => {
    const engine = createEngine(compileToBundle(loadContentPack(), 'specialised'), { counters: new MemoryCounterStore() });
    const hand = createContentBaseline();
    // The benchmark's own stream (bench/decide-content.ts: 2000 occurrences, the default seed) and a second seed.
    for (const seed of [undefined, 7]) {
      const stream = generateContentStream({ length: 2000, ...(seed === undefined ? {} : { seed }) });
      let skipped = 0;
      let astral = 0;
      stream.forEach((occ, i) => {
        const want = engine.decide(occ);
        const got = hand.decide(occ);
        // Strict: own keys, array lengths and order, values by Object.is (decide.ts's check).
        expect(firstDifference(want, got), `occurrence #${i} (seed ${seed ?? 'default'})`).toBeNull();
        skipped += want.skippedTransforms.length;
        if (want.decision === 'transform' && want.content !== occ.content && /[\uD800-\uDBFF]/.test(occ.content ?? '')) astral++;
      });
      // The parts of the redaction a simpler guard would get wrong are on the stream.
      expect(skipped, 'spans skipped for overlap').toBeGreaterThan(0);
      expect(astral, 'redactions of content with surrogate pairs').toBeGreaterThan(0);
    }
  });

  it("the agreement check sees a wrong guard (a redaction that drops [OAR-OPS-23]'s skip report)", () => {
    const engine = createEngine(compileToBundle(loadContentPack(), 'specialised'), { counters: new MemoryCounterStore() });
    const hand = createContentBaseline();
    const skipAt = generateContentStream({ length: 2000 }).find((occ) => {
      const want = engine.decide(occ);
      const got = hand.decide(occ);
      if (want.skippedTransforms.length === 0) return false;
      got.skippedTransforms.length = 0;
      expect(firstDifference(want, got)?.path).toBe('$.skippedTransforms[0]');
      return true;
    });
    expect(skipAt).toBeDefined();
  });

  it('the decide-content benchmark section runs (smoke counts) and renders', () => {
    const r = runContentBench({ quick: true, streamLength: 60, rounds: 1, taskMs: 1, allocDecisions: 200 });
    for (const v of ['specialised', 'compiled', 'hand'] as const) {
      expect(r.variants[v].streamNs).toBeGreaterThan(0);
      expect(r.variants[v].p99Ns).toBeGreaterThanOrEqual(r.variants[v].p50Ns);
    }
    expect(r.mix.fallbacks).toBe(0);
    expect(Number.isFinite(r.ratios.specialisedVsHand)).toBe(true);
    expect(renderContent(r)).toContain('## decide() on the content pack');
  });
});
