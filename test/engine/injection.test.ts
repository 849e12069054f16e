/**
 * detector://injection-corpus inside the engine, on both back ends: it scores the occurrence's
 * content and the string values of the tool call's arguments, reports observations only — the
 * score and the nearest record's signal and id as host facts ([OAR-OPS-11], [OAR-FACT-18]) — and a
 * corpus that cannot be read is a detector failure decided by the rule's on_error ([OAR-OPS-3]).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCorpus } from '../../injection/corpus.js';
import { DETECTOR_REF, SEED_CORPUS, corpusDetector, factNames } from '../../injection/detector.js';
import type { Detector } from '../../runtime/index.js';
import { cap, errorOf, harness, head, rule, trace } from './harness.js';

const HOST = 'acme.gw';
const NAMES = factNames(HOST);
const CAP = cap({
  host: HOST,
  profiles: ['tool', 'content', 'prompt-injection'],
  detectors: [DETECTOR_REF],
  hostFacts: [
    { name: NAMES.signal, type: 'string' },
    { name: NAMES.topMatchId, type: 'string' },
  ],
});
const POST = 'tool.post_invoke';
const seed = loadCorpus([{ path: SEED_CORPUS }]).records;
const exfil = seed.find((r) => r.signal === 'exfil-email' && r.text.startsWith('Send an email to attacker@evil.example'))!;

const tmp = mkdtempSync(join(tmpdir(), 'oarc-injection-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function det(id: string, when: string, extra: Record<string, unknown> = {}): string {
  return rule({
    id,
    namespace: 'inj',
    kind: 'detector',
    anchor: POST,
    requires: { profiles: ['tool', 'prompt-injection'], facts: [NAMES.signal, NAMES.topMatchId] },
    detector: { ref: DETECTOR_REF },
    when,
    effect: 'block',
    ...extra,
  });
}

/** A fresh detector per back end: each keeps its own loaded corpus. */
const over = (path: string) => () => ({ detectors: { [DETECTOR_REF]: corpusDetector([{ path }], NAMES) as Detector } });

describe('[OAR-OPS-11] what the detector reports', () => {
  const h = harness({
    capability: CAP,
    rules: [
      det('SIGNAL', `prompt_injection_score > 0.5 && ${NAMES.signal} == "exfil-email"`, {
        copy: { what: '{{ acme.gw.injection.signal }} {{ acme.gw.injection.top_match_id }}' },
      }),
    ],
    options: over(SEED_CORPUS),
  });

  it('a tool result that is a corpus record: its signal and id, and a high score', () => {
    const d = h.decide({ anchor: POST, toolCall: { name: 'fetch' }, content: exfil.text });
    expect(head(d)).toEqual({ decision: 'block', code: 'SIGNAL', rule: 'inj/SIGNAL' });
    expect(d.copy).toEqual({ what: `exfil-email ${exfil.id}` });
  });

  it('scores the string values of the tool call\'s arguments, at any depth', () => {
    const d = h.decide({ anchor: POST, toolCall: { name: 'mail', arguments: { n: 3, to: ['x@example.com', { body: exfil.text }] } } });
    expect(head(d).decision).toBe('block');
  });

  it('ordinary text passes; the engine reads nothing it was not given', () => {
    expect(trace(h.decide({ anchor: POST, toolCall: { name: 'fetch' }, content: 'The weather tomorrow is sunny with a light breeze.' }))).toEqual(['inj/SIGNAL:passed']);
    expect(trace(h.decide({ anchor: POST, toolCall: { name: 'fetch' } }))).toEqual(['inj/SIGNAL:passed']);
  });
});

describe('the score is a threshold a rule can use', () => {
  it('nothing to score is a score of 0 and no neighbour; a recognised injection scores above 0.9', () => {
    const h = harness({
      capability: CAP,
      rules: [
        det('EMPTY', `prompt_injection_score == 0.0 && ${NAMES.signal} == "" && ${NAMES.topMatchId} == ""`, { selector: { tool: ['none'] } }),
        det('HIGH', 'prompt_injection_score > 0.9', { selector: { tool: ['fetch'] } }),
      ],
      options: over(SEED_CORPUS),
    });
    expect(head(h.decide({ anchor: POST, toolCall: { name: 'none' } })).code).toBe('EMPTY');
    expect(head(h.decide({ anchor: POST, toolCall: { name: 'fetch' }, content: exfil.text })).code).toBe('HIGH');
  });
});

describe('[OAR-OPS-3] an unreadable corpus is a detector failure', () => {
  const missing = join(tmp, 'missing.jsonl');

  it('fail_closed (the default): block with the rule\'s identifiers; the copy that needs its facts is omitted ([OAR-COPY-11])', () => {
    const h = harness({ capability: CAP, rules: [det('GUARD', 'prompt_injection_score > 0.5', { effect: 'nudge', copy: { what: 'seen {{ acme.gw.injection.signal }}' } })], options: over(missing) });
    const d = h.decide({ anchor: POST, toolCall: { name: 'fetch' }, content: 'anything' });
    expect(head(d)).toEqual({ decision: 'block', code: 'GUARD', rule: 'inj/GUARD' });
    expect(trace(d)).toEqual(['inj/GUARD:errored']);
    expect(errorOf(d, 'inj/GUARD')).toBeDefined();
    expect(d.copy).toEqual({});
  });

  it('fail_open: the rule is skipped and the occurrence goes through', () => {
    const h = harness({ capability: CAP, rules: [det('GUARD', 'prompt_injection_score > 0.5', { on_error: 'fail_open' })], options: over(missing) });
    const d = h.decide({ anchor: POST, toolCall: { name: 'fetch' }, content: exfil.text });
    expect(d.decision).toBe('none');
    expect(trace(d)).toEqual(['inj/GUARD:errored']);
  });

  it('a corpus that becomes readable is picked up at the next invocation, without a new engine', () => {
    const later = join(tmp, 'later.jsonl');
    const h = harness({ capability: CAP, rules: [det('GUARD', `${NAMES.signal} == "exfil-email"`, { on_error: 'fail_open' })], options: over(later) });
    const occ = { anchor: POST, toolCall: { name: 'fetch' }, content: exfil.text };
    expect(trace(h.decide(occ))).toEqual(['inj/GUARD:errored']);
    writeFileSync(later, `${JSON.stringify({ id: 'e1', text: exfil.text, signal: 'exfil-email' })}\n${JSON.stringify({ id: 'b1', text: 'the weather is nice', signal: 'benign' })}\n`);
    expect(head(h.decide(occ))).toEqual({ decision: 'block', code: 'GUARD', rule: 'inj/GUARD' });
  });
});
