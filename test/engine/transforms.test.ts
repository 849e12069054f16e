/**
 * Transforms through the engine (section 7.2): accumulated in evaluation order ([OAR-OPS-15]),
 * applied over original offsets ([OAR-OPS-16], [OAR-OPS-20]), discarded by a block ([OAR-OPS-17]),
 * span shape ([OAR-OPS-19]), annotate ([OAR-OPS-21]) and the skip report ([OAR-OPS-23]).
 */
import { describe, expect, it } from 'vitest';
import { cap, harness, head, loadErrors, rule, trace } from './harness.js';

const CAP = cap({
  profiles: ['content', 'secrets', 'pii'],
  transform: true,
  core: { 'model.output': 'content.output', 'tool.pre_invoke': 'tool.pre_invoke' },
  detectors: ['detector://fixture'],
});
const OUT = 'content.output';

/** A transform rule at model.output in namespace `x`. */
function t(id: string, action: string, target: string, replacement?: string, extra: Record<string, unknown> = {}): string {
  return rule({
    id,
    namespace: 'x',
    anchor: 'model.output',
    effect: 'transform',
    requires: { profiles: ['content', 'secrets', 'pii'] },
    transform: { action, target, ...(replacement !== undefined ? { replacement } : {}) },
    ...extra,
  });
}

//                0123456789012345 6
const CONTENT = 'key sk-1 mail a@b';
const SECRET = { start: 4, end: 8, kind: 'api_key' };
const EMAIL = { start: 14, end: 17 };

describe('[OAR-OPS-15] [OAR-OPS-16] accumulation', () => {
  it('[OAR-OPS-15] [OAR-OPS-13] every enforced transform that fires is accumulated, in evaluation order, and applied', () => {
    const h = harness({
      capability: CAP,
      rules: [t('A_SECRETS', 'redact', 'secret_matches'), t('B_PII', 'replace', 'pii_entities', '<pii>'), t('C_NOTE', 'annotate', 'content', ' [checked]')],
    });
    const d = h.decide({ anchor: OUT, content: CONTENT, facts: { secret_matches: [SECRET], pii_entities: [EMAIL] } });
    expect(trace(d)).toEqual(['x/A_SECRETS:fired', 'x/B_PII:fired', 'x/C_NOTE:fired']);
    expect(head(d)).toEqual({ decision: 'transform', code: 'A_SECRETS', rule: 'x/A_SECRETS' });
    expect(d.transforms).toEqual([
      { rule: 'x/A_SECRETS', action: 'redact', target: 'secret_matches', replacement: '[REDACTED]' },
      { rule: 'x/B_PII', action: 'replace', target: 'pii_entities', replacement: '<pii>' },
      { rule: 'x/C_NOTE', action: 'annotate', target: 'content', replacement: ' [checked]' },
    ]);
    expect(d.content).toBe('key [REDACTED] mail <pii> [checked]');
    expect(d.skippedTransforms).toEqual([]);
    expect(d.advisories).toEqual([]);
  });

  it('[OAR-OPS-16] [OAR-OPS-23] a span overlapping an earlier rewrite is skipped and reported; evaluation order decides which', () => {
    const wide = { start: 0, end: 8 };
    const narrow = { start: 4, end: 13 };
    const rules = (first: string, second: string) => [t(first, 'redact', 'secret_matches'), t(second, 'replace', 'pii_entities', '#')];
    const facts = { secret_matches: [wide], pii_entities: [narrow, EMAIL] };
    const ab = harness({ capability: CAP, rules: rules('A', 'B') }).decide({ anchor: OUT, content: CONTENT, facts });
    expect(ab.content).toBe('[REDACTED] mail #');
    expect(ab.skippedTransforms).toEqual([{ rule: 'x/B', start: 4, end: 13, reason: 'overlap' }]);
    // Swap the evaluation order: the pii rule now goes first and the secret span is the one skipped.
    const ba = harness({ capability: CAP, rules: rules('Z', 'B') }).decide({ anchor: OUT, content: CONTENT, facts });
    expect(ba.transforms.map((x) => x.rule)).toEqual(['x/B', 'x/Z']);
    expect(ba.content).toBe('key # #');
    expect(ba.skippedTransforms).toEqual([{ rule: 'x/Z', start: 0, end: 8, reason: 'overlap' }]);
  });

  it('[OAR-OPS-20] overlapping spans within one transform are rewritten once; offsets are original', () => {
    const h = harness({ capability: CAP, rules: [t('A', 'replace', 'secret_matches', '*')] });
    const d = h.decide({ anchor: OUT, content: CONTENT, facts: { secret_matches: [{ start: 9, end: 11 }, { start: 0, end: 3 }, { start: 10, end: 13 }] } });
    expect(d.content).toBe('* sk-1 * a@b');
    expect(d.skippedTransforms).toEqual([]);
  });

  it('[OAR-OPS-19] a well-formed span outside the content is ignored: not an error, not a skip', () => {
    const h = harness({ capability: CAP, rules: [t('A', 'redact', 'secret_matches')] });
    const d = h.decide({ anchor: OUT, content: CONTENT, facts: { secret_matches: [{ start: 10, end: 30 }, { start: 17, end: 18 }, SECRET] } });
    expect(trace(d)).toEqual(['x/A:fired']);
    expect(d.decision).toBe('transform');
    expect(d.content).toBe('key [REDACTED] mail a@b');
    expect(d.skippedTransforms).toEqual([]);
  });

  it('[OAR-OPS-13] [OAR-OPS-16] a transform with nothing to rewrite still decides transform, content unchanged', () => {
    const h = harness({ capability: CAP, rules: [t('A', 'redact', 'secret_matches')] });
    const d = h.decide({ anchor: OUT, content: CONTENT });
    expect(d.decision).toBe('transform');
    expect(d.content).toBe(CONTENT);
  });
});

describe('[OAR-OPS-17] a block discards the transforms', () => {
  it('[OAR-OPS-17] [OAR-OPS-23] the transform list, its skips and the content are all discarded', () => {
    const h = harness({
      capability: CAP,
      rules: [
        t('A', 'redact', 'secret_matches'),
        t('B', 'redact', 'pii_entities'),
        rule({ id: 'Z_BLOCK', namespace: 'x', anchor: 'model.output', effect: 'block', requires: { profiles: ['content'] }, when: 'content_length > 3' }),
      ],
    });
    const d = h.decide({ anchor: OUT, content: CONTENT, facts: { secret_matches: [SECRET], pii_entities: [{ start: 5, end: 6 }] } });
    expect(trace(d)).toEqual(['x/A:fired', 'x/B:fired', 'x/Z_BLOCK:fired']);
    expect(head(d)).toEqual({ decision: 'block', code: 'Z_BLOCK', rule: 'x/Z_BLOCK' });
    expect(d.transforms).toEqual([]);
    expect(d.skippedTransforms).toEqual([]);
    // [OAR-CONF-34] no transform is applied at a block: the content is the input unchanged.
    expect(d.content).toBe(CONTENT);
  });
});

describe('[OAR-OPS-19] span shape', () => {
  const malformed: [string, unknown][] = [
    ['no end', { start: 1 }],
    ['no start', { end: 1 }],
    ['start after end', { start: 5, end: 2 }],
    ['negative start', { start: -1, end: 2 }],
    ['fractional end', { start: 1, end: 2.5 }],
    ['string offsets', { start: '1', end: '2' }],
  ];
  for (const [what, span] of malformed) {
    it(`[OAR-OPS-19] [OAR-OPS-3] a span with ${what} is a provider failure: fail_closed blocks`, () => {
      const h = harness({ capability: CAP, rules: [t('A', 'redact', 'secret_matches'), t('B', 'redact', 'pii_entities')] });
      const d = h.decide({ anchor: OUT, content: CONTENT, facts: { secret_matches: [SECRET, span], pii_entities: [EMAIL] } });
      expect(head(d)).toEqual({ decision: 'block', code: 'A', rule: 'x/A' });
      expect(trace(d)).toEqual(['x/A:errored']);
      expect(d.transforms).toEqual([]);
      expect(d.content).toBe(CONTENT); // [OAR-OPS-17] nothing applied
    });
  }

  it('[OAR-OPS-19] [OAR-OPS-4] fail_open: the malformed rule is errored, the other transforms still apply', () => {
    const h = harness({ capability: CAP, rules: [t('A', 'redact', 'secret_matches', undefined, { on_error: 'fail_open' }), t('B', 'redact', 'pii_entities')] });
    const d = h.decide({ anchor: OUT, content: CONTENT, facts: { secret_matches: [SECRET, { start: 3 }], pii_entities: [EMAIL] } });
    expect(trace(d)).toEqual(['x/A:errored', 'x/B:fired']);
    expect(head(d)).toEqual({ decision: 'transform', code: 'B', rule: 'x/B' });
    expect(d.transforms.map((x) => x.rule)).toEqual(['x/B']);
    expect(d.content).toBe('key sk-1 mail [REDACTED]');
  });

  it('[OAR-OPS-19] [OAR-FACT-11] the target is read only when its rule fires', () => {
    const h = harness({ capability: CAP, rules: [t('A', 'redact', 'secret_matches', undefined, { when: 'false' }), t('B', 'redact', 'pii_entities')] });
    const d = h.decide({ anchor: OUT, content: CONTENT, facts: { secret_matches: [{ start: 'x' }], pii_entities: [EMAIL] } });
    expect(trace(d)).toEqual(['x/A:passed', 'x/B:fired']);
    expect(d.content).toBe('key sk-1 mail [REDACTED]');
  });
});

describe('[OAR-OPS-21] annotate', () => {
  it('[OAR-OPS-21] annotating then redacting one span yields the redaction followed by the annotation', () => {
    const h = harness({ capability: CAP, rules: [t('A_NOTE', 'annotate', 'secret_matches', ' (secret)'), t('B_REDACT', 'redact', 'secret_matches')] });
    const d = h.decide({ anchor: OUT, content: CONTENT, facts: { secret_matches: [SECRET] } });
    expect(d.content).toBe('key [REDACTED] (secret) mail a@b');
    expect(d.skippedTransforms).toEqual([]);
  });

  it('[OAR-OPS-21] redacting then annotating one span yields both, in that order; annotate is never skipped', () => {
    const h = harness({ capability: CAP, rules: [t('A_REDACT', 'redact', 'secret_matches'), t('B_NOTE', 'annotate', 'secret_matches', ' (secret)')] });
    const d = h.decide({ anchor: OUT, content: CONTENT, facts: { secret_matches: [SECRET] } });
    expect(d.content).toBe('key [REDACTED] (secret) mail a@b');
    expect(d.skippedTransforms).toEqual([]);
  });

  it('[OAR-OPS-21] an annotation of the content goes at its end and removes nothing', () => {
    const h = harness({ capability: CAP, rules: [t('A', 'annotate', 'content', '!'), t('B', 'redact', 'content', '[gone]')] });
    const d = h.decide({ anchor: OUT, content: CONTENT });
    // The whole-content rewrite ends where the annotation was inserted, so it preserves it.
    expect(d.content).toBe('[gone]!');
  });
});

describe('content when the decision is not transform', () => {
  it('[OAR-OPS-16] a warn or none decision delivers the content unchanged', () => {
    const h = harness({
      capability: CAP,
      rules: [
        rule({ id: 'W', namespace: 'x', anchor: 'model.output', effect: 'warn', requires: { profiles: ['content'] }, when: 'content_length > 100' }),
        // A monitor transform fires but is not accumulated, and its target is never read.
        t('M', 'redact', 'secret_matches', undefined, { enforcement: 'monitor' }),
      ],
    });
    const d = h.decide({ anchor: OUT, content: CONTENT, facts: { secret_matches: [{ start: 'bad' }] } });
    expect(trace(d)).toEqual(['x/M:monitored_fired', 'x/W:passed']);
    expect(d).toMatchObject({ decision: 'none', content: CONTENT, transforms: [], skippedTransforms: [] });
    const long = 'y'.repeat(101);
    expect(h.decide({ anchor: OUT, content: long })).toMatchObject({ decision: 'warn', content: long, transforms: [] });
  });
});

describe('code points', () => {
  it('[OAR-OPS-19] [OAR-FACT-23] offsets and content_length count code points, not UTF-16 units', () => {
    const h = harness({
      capability: CAP,
      rules: [t('A', 'redact', 'secret_matches', undefined, { when: 'content_length == 5' })],
    });
    const d = h.decide({ anchor: OUT, content: 'a😀b😀c', facts: { secret_matches: [{ start: 1, end: 2 }, { start: 3, end: 4 }] } });
    expect(trace(d)).toEqual(['x/A:fired']);
    expect(d.content).toBe('a[REDACTED]b[REDACTED]c');
    const past = h.decide({ anchor: OUT, content: 'a😀b😀c', facts: { secret_matches: [{ start: 4, end: 6 }] } });
    expect(past.content).toBe('a😀b😀c'); // ends past the fifth code point: outside, ignored
  });
});

describe('[OAR-CONF-25] [OAR-FACT-11] a detector-produced target', () => {
  it('[OAR-CONF-25] the spans a detector reports reach its own rule\'s transform, and no other rule', () => {
    const h = harness({
      capability: CAP,
      rules: [
        t('A_DETECTED', 'redact', 'secret_matches', undefined, { kind: 'detector', detector: { ref: 'detector://fixture' }, when: 'size(secret_matches) > 0' }),
        // Its own invocation of the fixture detector produces the spans again, for itself.
        t('B_OWN_RUN', 'replace', 'secret_matches', '#', { kind: 'detector', detector: { ref: 'detector://fixture' }, when: 'size(secret_matches) == 0' }),
        t('C_POLICY', 'replace', 'secret_matches', '?', { when: 'size(secret_matches) == 0' }),
      ],
    });
    const d = h.decide({ anchor: OUT, content: CONTENT, detectorFacts: { secret_matches: [SECRET] } });
    expect(trace(d)).toEqual(['x/C_POLICY:fired', 'x/A_DETECTED:fired', 'x/B_OWN_RUN:passed']);
    expect(d.content).toBe('key [REDACTED] mail a@b');
  });
});

describe('transforms the host cannot serve', () => {
  it('[OAR-OPS-18] a host without content mutation rejects a transform rule at load', () => {
    const errors = loadErrors({ capability: cap({ profiles: ['secrets'], detectors: ['detector://fixture'] }), rules: [t('A', 'redact', 'content')] });
    expect(errors.map((e) => e.clause)).toContain('OAR-OPS-18');
  });

  it('[OAR-OPS-14] a target that is neither content nor a list<map> fact is rejected at load, naming it', () => {
    const errors = loadErrors({ capability: CAP, rules: [t('A', 'redact', 'content_length')] });
    expect(errors.map((e) => e.clause)).toEqual(['OAR-OPS-14']);
    expect(errors[0]?.token).toBe('content_length');
  });
});
