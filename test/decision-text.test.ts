/**
 * `decisionJsonText(d)` is `JSON.stringify(decisionToJson(d))`, byte for byte — the one JSON form
 * of a decision, which `oarc serve` writes per request: the effect and the rule that made it
 * ([OAR-EVAL-8]), the advisories ([OAR-EVAL-20]), the trace ([OAR-OPS-9]), the skipped spans
 * ([OAR-OPS-23]) and the changed counters by name ([OAR-CONF-33]). Two sources of decisions:
 * arbitrary ones over the Decision type (hostile strings: quotes, backslashes, controls, lone
 * surrogates; integer-like and `__proto__` record keys; non-finite counter values; every optional
 * member), and every decision the engine makes on the whole-pack generator's packs.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compileToBundle, loadPackTexts } from '../compiler/index.js';
import { createEngine } from '../runtime/engine.js';
import { MemoryCounterStore } from '../runtime/counters.js';
import type { Decision, Outcome } from '../runtime/decision.js';
import { decisionJsonText } from '../runtime/decision-text.js';
import { decisionToJson } from '../runtime/wire.js';
import { packCaseArb } from './property/pack-generators.js';

const text = fc.oneof(fc.string({ unit: 'binary', maxLength: 12 }), fc.constantFrom('', '"', '\\', '\u0000', '\u001f', '\u007f', '\ud800', 'a\udfffb', '\u2028', '😀', 'acme/RULE_1'));

/** A record built by defining its keys, so `__proto__` is an own key as a JSON reader makes it. */
const recordOf = <T,>(value: fc.Arbitrary<T>) =>
  fc.array(fc.tuple(fc.oneof(text, fc.constantFrom('0', '7', '__proto__', '-1', '01')), value), { maxLength: 4 }).map((entries) => {
    const r: Record<string, T> = {};
    for (const [k, v] of entries) Object.defineProperty(r, k, { value: v, enumerable: true, writable: true, configurable: true });
    return r;
  });

const OUTCOMES: Outcome[] = ['fired', 'passed', 'errored', 'suppressed', 'monitored_fired', 'monitored_passed', 'monitored_errored'];

const counterNumber = fc.oneof(fc.integer({ min: -5, max: 2 ** 40 }), fc.constantFrom(Number.NaN, Infinity, -Infinity, -0, 0.5));

const decisionArb: fc.Arbitrary<Decision> = fc.record(
  {
    decision: fc.constantFrom('block', 'transform', 'nudge', 'warn', 'none'),
    code: fc.option(text),
    rule: fc.option(text),
    copy: fc.option(recordOf(text)),
    advisories: fc.array(fc.record({ code: text, rule: text, copy: recordOf(text) }), { maxLength: 3 }),
    transforms: fc.array(fc.record({ rule: text, action: fc.constantFrom('redact', 'replace', 'annotate'), target: text, replacement: text }), { maxLength: 3 }),
    content: text,
    skippedTransforms: fc.array(fc.record({ rule: text, start: fc.nat(), end: fc.nat(), reason: fc.constant('overlap') }), { maxLength: 2 }),
    applied: fc.array(
      fc.record({ rule: text, outcome: fc.constantFrom(...OUTCOMES), error: fc.record({ code: fc.constantFrom('type_error', 'side_effect_failed'), clause: text, message: text }) }, { requiredKeys: ['rule', 'outcome'] }),
      { maxLength: 4 },
    ),
    onFire: fc.array(fc.record({ rule: text, action: fc.constantFrom('increment_counter', 'publish_event') }), { maxLength: 3 }),
    events: fc.array(fc.record({ rule: text, anchor: text, effect: fc.constantFrom('block', 'warn', 'allow') }), { maxLength: 2 }),
    counters: recordOf(fc.record({ fire_count: counterNumber, breaker_count: counterNumber })),
  },
  { requiredKeys: ['decision', 'code', 'rule', 'copy', 'advisories', 'transforms', 'skippedTransforms', 'applied', 'onFire', 'events', 'counters'] },
) as fc.Arbitrary<Decision>;

describe('decisionJsonText [OAR-EVAL-8] [OAR-EVAL-20] [OAR-OPS-9] [OAR-OPS-23] [OAR-CONF-33]', () => {
  it('writes what JSON.stringify(decisionToJson(d)) writes, for arbitrary decisions', () => {
    fc.assert(
      fc.property(decisionArb, (d) => {
        expect(decisionJsonText(d)).toBe(JSON.stringify(decisionToJson(d)));
      }),
      { numRuns: 3000, seed: 20261202 },
    );
  });

  it('writes a lone surrogate escaped and a line separator as itself, as JSON.stringify does', () => {
    const d: Decision = { decision: 'block', code: 'X', rule: 'a/X', copy: { what: 'a\ud800"\\\n\u2028' }, advisories: [], transforms: [], skippedTransforms: [], applied: [], onFire: [], events: [], counters: {} };
    const t = decisionJsonText(d);
    expect(t).toContain('"what":"a\\ud800\\"\\\\\\n\u2028"');
    expect(JSON.parse(t)).toEqual(decisionToJson(d));
  });

  it('writes a name the same from its kept quoting, past the number of names kept and past their length', () => {
    // 20,000 rule ids (some needing escapes) fill the kept quotings beyond their bound; a
    // 300-character rule id is longer than a kept name may be. Written twice: the second time
    // from what the first kept.
    const applied = Array.from({ length: 20_000 }, (_, i) => ({ rule: i % 2 === 0 ? `acme/R${i}` : `acme/"R\\${i}\u0001`, outcome: OUTCOMES[i % OUTCOMES.length] as Outcome }));
    const d: Decision = { decision: 'warn', code: 'W', rule: `acme/${'W'.repeat(300)}`, copy: { what: 'w' }, advisories: [], transforms: [], skippedTransforms: [], applied, onFire: [], events: [], counters: {} };
    const want = JSON.stringify(decisionToJson(d));
    expect(decisionJsonText(d)).toBe(want);
    expect(decisionJsonText(d)).toBe(want);
  });

  it('writes every decision the engine makes on generated packs as JSON.stringify does', () => {
    let decisions = 0;
    fc.assert(
      fc.property(packCaseArb, (c) => {
        const r = loadPackTexts({ capability: c.pack.capability, rules: c.pack.rules, configs: c.pack.configs });
        if (!r.ok) throw new Error('generator bug: a generated pack does not load');
        const engine = createEngine(compileToBundle(r.pack, 'specialised'), { counters: new MemoryCounterStore() });
        for (const occ of c.occurrences) {
          let d: Decision;
          try {
            d = engine.decide(occ);
          } catch {
            continue; // a host-input refusal: no decision to write
          }
          decisions++;
          expect(decisionJsonText(d)).toBe(JSON.stringify(decisionToJson(d)));
        }
      }),
      { numRuns: 150, seed: 424242 },
    );
    // The generator must have produced decisions to compare, or the test proves nothing.
    expect(decisions).toBeGreaterThan(150);
  }, 120_000);
});
