/**
 * What a detector returns is a synchronous plain object of facts by name ([OAR-OPS-11]); anything
 * else — a Promise or other thenable, an array, a Map, a class instance, null — is the detector
 * failing to answer: a provider failure routed to the rule's `on_error` ([OAR-OPS-3],
 * [OAR-CONF-9], [OAR-OPS-5]), never a result whose facts read as zeros ([OAR-FACT-25]) and so
 * silently allow. One check (`detectorResult`) serves every back end, the `detector://fixture`
 * shortcut, and `decideAsync`.
 */
import { describe, expect, it } from 'vitest';
import type { Decision, Detector, Occurrence } from '../../runtime/index.js';
import { detectorResult } from '../../runtime/detectors.js';
import { isRaise } from '../../runtime/raise.js';
import { asyncMemory, BACKENDS, cap, errorOf, harness, head, rule, trace } from './harness.js';

const PRE = 'tool.pre_invoke';
const CAP = cap({ profiles: ['tool'], hostFacts: [{ name: 'acme.gw.n', type: 'int' }], detectors: ['detector://host'] });
const det = (id: string, onError: string, ref = 'detector://host') =>
  rule({ id, namespace: 'd', kind: 'detector', anchor: PRE, effect: 'warn', on_error: onError, requires: { facts: ['acme.gw.n'] }, detector: { ref }, when: 'acme.gw.n == 0' });
const FALLBACK = rule({ id: 'FALLBACK', namespace: 'd', anchor: 'tool.post_invoke', effect: 'nudge' });

class Findings {
  'acme.gw.n' = 0;
}
const thenable = { then: (resolve: (v: unknown) => void) => resolve({ 'acme.gw.n': 0 }), 'acme.gw.n': 0 };
const nullProto = Object.assign(Object.create(null) as Record<string, unknown>, { 'acme.gw.n': 0 });

/** Each is what a detector might hand back instead of facts; the comment is why it is no result. */
const NOT_RESULTS: Record<string, () => unknown> = {
  'a Promise': () => Promise.resolve({ 'acme.gw.n': 0 }), // an async detector: its facts are not yet there
  'a rejected Promise': () => Promise.reject(new Error('model down')),
  'a thenable': () => thenable,
  'an array': () => [{ 'acme.gw.n': 0 }],
  'a Map': () => new Map([['acme.gw.n', 0]]),
  'a class instance': () => new Findings(),
  null: () => null,
  'a number': () => 0,
};


/** Decide on every back end (the harness asserts they agree) and through decideAsync on each. */
async function everywhere(rules: string[], detector: () => unknown, occ: () => Occurrence = () => ({ anchor: PRE, toolCall: { name: 'x' } })): Promise<Decision> {
  const detectors = { 'detector://host': (() => detector()) as Detector };
  const d = harness({ capability: CAP, rules, options: () => ({ detectors }) }).decide(() => occ());
  const asyncH = harness({ capability: CAP, rules, options: () => ({ detectors, asyncCounters: asyncMemory() }) });
  for (const b of BACKENDS) {
    const a = await asyncH.engines[b].decideAsync(occ());
    expect(head(a)).toEqual(head(d));
    expect(trace(a)).toEqual(trace(d));
  }
  return d;
}

describe('[OAR-OPS-3] a detector result that is not a plain object of facts is a provider failure', () => {
  for (const [name, value] of Object.entries(NOT_RESULTS)) {
    it(`${name}: fail_closed blocks with the rule's identifiers`, async () => {
      const d = await everywhere([det('A', 'fail_closed')], value);
      // Read as facts, each would make acme.gw.n its zero and the warn fire: never that.
      expect(head(d)).toEqual({ decision: 'block', code: 'A', rule: 'd/A' });
      expect(trace(d)).toEqual(['d/A:errored']);
      expect(errorOf(d, 'd/A')).toBe('provider_failure');
    });
  }

  it('fail_open records the failure and contributes nothing ([OAR-OPS-4])', async () => {
    const d = await everywhere([det('A', 'fail_open')], NOT_RESULTS['a Promise'] as () => unknown);
    expect(head(d)).toEqual({ decision: 'none', code: null, rule: null });
    expect(trace(d)).toEqual(['d/A:errored']);
  });

  it('a substitute blocks with the substituted identifiers ([OAR-OPS-5])', async () => {
    const d = await everywhere([det('A', 'FALLBACK'), FALLBACK], NOT_RESULTS['a class instance'] as () => unknown);
    expect(head(d)).toEqual({ decision: 'block', code: 'FALLBACK', rule: 'd/FALLBACK' });
  });

  it('detector://fixture checks the occurrence\'s detectorFacts the same way ([OAR-CONF-25])', async () => {
    const rules = [det('A', 'fail_closed', 'detector://fixture')];
    // The occurrence check already refuses a class instance as detectorFacts (HostInputError); the
    // shortcut's own check is what catches one that changes after that check read it (a getter).
    const changing = (): Occurrence => {
      let reads = 0;
      return Object.defineProperty({ anchor: PRE }, 'detectorFacts', { enumerable: true, get: () => (reads++ === 0 ? {} : new Findings()) }) as Occurrence;
    };
    const d = await everywhere(rules, () => ({}), changing);
    expect(head(d)).toEqual({ decision: 'block', code: 'A', rule: 'd/A' });
    expect(errorOf(d, 'd/A')).toBe('provider_failure');
  });

  it('a plain object, with or without a prototype, is a result', async () => {
    expect(head(await everywhere([det('A', 'fail_closed')], () => ({ 'acme.gw.n': 0 })))).toEqual({ decision: 'warn', code: 'A', rule: 'd/A' });
    expect(head(await everywhere([det('A', 'fail_closed')], () => nullProto))).toEqual({ decision: 'warn', code: 'A', rule: 'd/A' });
  });

  it('a value whose inspection throws is a provider failure, not a crash', () => {
    const hostile = new Proxy({}, { getPrototypeOf: () => { throw new Error('trap'); } });
    const r = detectorResult(hostile, 'detector://host');
    expect(isRaise(r) && r.code).toBe('provider_failure');
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    expect(isRaise(detectorResult(revoked.proxy, 'detector://host'))).toBe(true);
  });

  it('the message names what came back', () => {
    const m = (v: unknown) => {
      const r = detectorResult(v, 'detector://host');
      return isRaise(r) ? r.message : '';
    };
    expect(m(Promise.resolve({}))).toMatch(/Promise/);
    expect(m(new Map())).toMatch(/a Map/);
    expect(m(new Findings())).toMatch(/instance of Findings/);
    expect(m([])).toMatch(/an array/);
    expect(m(null)).toMatch(/null/);
  });
});
