/**
 * The second realistic pack of the decision benchmark (bench/content-pack: redaction with spans at
 * three content anchors, counters and a breaker, advisories, overrides): it loads clean, and its
 * occurrence stream is decided identically — decision, trace, counters, events, transforms,
 * content — by the specialised procedures, the generic engine and the interpreter, with no
 * occurrence handed from a procedure to the generic path. The hand-written guard and the timing
 * section for it are not built yet (#14).
 */
import { describe, expect, it } from 'vitest';
import { CONTENT_ANCHORS, generateContentStream, loadContentPack } from '../bench/content-pack.js';
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
});
