/**
 * Hostile host values ([OAR-OPS-3], [OAR-FACT-26]): whatever a host hands the engine as a value —
 * a provider that throws something that is not an Error, a getter that throws, a Proxy whose every
 * trap throws, a detector returning a non-object — is read inside the one `on_error` sink. Neither
 * `decide` nor `decideAsync` throws, every failure is described (never "Cannot convert object to
 * primitive value"), and every back end — the specialised decision procedure, the generic engine
 * with compiled conditions, the interpreter — reports the same error kind for the same value.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../compiler/index.js';
import { HostInputError, type Decision, type Occurrence } from '../../runtime/index.js';
import { propertyConfig, runProperty } from '../property/run.js';
import { asyncMemory, BACKENDS, cap, errorOf, harness, rule, trace } from './harness.js';

const PRE = 'tool.pre_invoke';
const HOST = [
  { name: 'acme.gw.s', type: 'string' },
  { name: 'acme.gw.n', type: 'int' },
  { name: 'acme.gw.x', type: 'double' },
  { name: 'acme.gw.roles', type: 'list<string>' },
  { name: 'acme.gw.labels', type: 'map<string,string>' },
  { name: 'acme.gw.spans', type: 'list<map>' },
  { name: 'acme.gw.key', type: 'string' },
  { name: 'acme.gw.check', type: '(string) -> bool' },
];
const CAP = cap({ profiles: ['tool', 'content'], window: 4, transform: true, hostFacts: HOST, detectors: ['detector://hostile'] });
const NAMES = HOST.map((f) => f.name);

function r(id: string, effect: string, extra: Record<string, unknown>): string {
  return rule({ id, namespace: 'h', anchor: PRE, effect, requires: { profiles: ['tool'], facts: NAMES }, ...extra });
}

const RULES = [
  r('BLOCK_ADMIN', 'block', { when: '"admin" in acme.gw.roles', on_error: 'fail_open' }),
  r('WARN_N', 'warn', { when: 'acme.gw.n > 1 && acme.gw.x < 2.5', on_error: 'fail_open', copy: { what: 'n is {{ acme.gw.n }} for {{ acme.gw.s }}' } }),
  r('NUDGE_CHECK', 'nudge', { when: 'acme.gw.check("q")', on_error: 'fail_open' }),
  r('WARN_LABEL', 'warn', { when: 'size(acme.gw.labels) > 0 && acme.gw.s == "a"', on_error: 'fail_open' }),
  r('COUNT_KEY', 'allow', { counter_scope: 'acme.gw.key', on_fire: ['increment_counter'], on_error: 'fail_open' }),
  r('COUNT_CALL', 'allow', { counter_scope: 'tool_args_fingerprint', on_fire: ['increment_counter'], on_error: 'fail_open' }),
  r('ARG', 'nudge', { when: 'tool_arg_string("cmd") == "x" || tool_arg_int("k") > 2', on_error: 'fail_open' }),
  r('DETECT', 'warn', { kind: 'detector', detector: { ref: 'detector://hostile' }, when: 'acme.gw.n == 3', on_error: 'fail_open' }),
  r('CLOSED', 'warn', { when: 'acme.gw.s == "closed"', on_error: 'fail_closed' }),
  r('FLOW', 'nudge', { flow: ['read', 'send'], on_error: 'fail_open' }),
];

/** Throwables that are not well-behaved Errors. */
const nullProto = Object.create(null) as object;
const trapsThrow = (): object =>
  new Proxy({}, {
    get() { throw nullProto; },
    has() { throw nullProto; },
    ownKeys() { throw nullProto; },
    getOwnPropertyDescriptor() { throw nullProto; },
    getPrototypeOf() { throw nullProto; },
  });
const messageThrows = (): Error => {
  const e = new Error('x');
  Object.defineProperty(e, 'message', { get() { throw nullProto; } });
  return e;
};
const THROWABLES: readonly (() => unknown)[] = [
  () => null, () => undefined, () => 42, () => 'text', () => Symbol('s'), () => 10n, () => nullProto,
  () => ({ toString() { throw nullProto; } }), trapsThrow, messageThrows, () => new Error('boom'), () => new RangeError('range'),
];

let detectorResult: () => unknown = () => ({});
const options = () => ({ detectors: { 'detector://hostile': () => detectorResult() as Readonly<Record<string, unknown>> } });


function assertDescribed(d: Decision): void {
  for (const t of d.applied) {
    if (t.error === undefined) continue;
    expect(typeof t.error.message).toBe('string');
    expect(t.error.message).not.toMatch(/Cannot convert|is not iterable|undefined is not/);
  }
}

/** Decide on every back end (the harness asserts they agree), then decideAsync on each, agreeing too. */
async function decideEverywhere(occ: () => Occurrence): Promise<Decision> {
  const h = harness({ capability: CAP, rules: RULES, options });
  let d: Decision;
  expect(() => (d = h.decide(occ()))).not.toThrow();
  assertDescribed(d!);
  const asyncH = harness({ capability: CAP, rules: RULES, options: () => ({ ...options(), asyncCounters: asyncMemory() }) });
  const viaAsync = await Promise.all(BACKENDS.map((b: Backend) => asyncH.engines[b].decideAsync(occ())));
  for (const a of viaAsync) expect(trace(a)).toEqual(trace(d!));
  for (const a of viaAsync) expect(a.applied.map((t) => t.error?.code)).toEqual(d!.applied.map((t) => t.error?.code));
  return d!;
}

describe('[OAR-OPS-3] values a host hands in are read inside the on_error sink', () => {
  it('a provider that throws an object without a prototype is a described provider failure', async () => {
    const d = await decideEverywhere(() => ({ anchor: PRE, toolCall: { name: 'x' }, facts: { 'acme.gw.s': () => { throw nullProto; } } }));
    expect(errorOf(d, 'h/WARN_LABEL')).toBeUndefined(); // labels are empty: the && never reads acme.gw.s
    expect(errorOf(d, 'h/CLOSED')).toBe('provider_failure');
    expect(d.decision).toBe('block'); // CLOSED fails closed
    expect(d.applied.find((t) => t.rule === 'h/CLOSED')?.error?.message).toMatch(/provider of fact acme\.gw\.s failed: a thrown object/);
  });

  it('a getter on the facts that throws, and a facts Proxy whose traps throw, are provider failures', async () => {
    const getter = await decideEverywhere(() => ({ anchor: PRE, toolCall: { name: 'x' }, facts: { get 'acme.gw.n'() { throw Symbol('no'); } } }));
    expect(errorOf(getter, 'h/WARN_N')).toBe('provider_failure');
    const proxy = await decideEverywhere(() => ({ anchor: PRE, toolCall: { name: 'x' }, facts: trapsThrow() as Record<string, unknown> }));
    expect(errorOf(proxy, 'h/BLOCK_ADMIN')).toBe('provider_failure');
    expect(proxy.decision).toBe('block');
    expect(proxy.rule).toBe('h/CLOSED');
  });

  it('an observation function that throws a symbol, or a number, is a provider failure', async () => {
    for (const thrown of [Symbol('s'), 7]) {
      const d = await decideEverywhere(() => ({ anchor: PRE, toolCall: { name: 'x' }, facts: { 'acme.gw.check': () => { throw thrown; } } }));
      expect(errorOf(d, 'h/NUDGE_CHECK')).toBe('provider_failure');
    }
  });

  it('tool arguments behind a throwing Proxy fail the rules that read them, never the decision', async () => {
    const d = await decideEverywhere(() => ({ anchor: PRE, toolCall: { name: 'x', arguments: trapsThrow() as Record<string, unknown> } }));
    expect(errorOf(d, 'h/ARG')).toBe('provider_failure');
    expect(errorOf(d, 'h/COUNT_CALL')).toBe('provider_failure'); // its scope, the fingerprint, cannot be read
  });

  it('a tool call whose name getter throws: the rules reading the fingerprint fail, the step is not recorded', async () => {
    const occ = (): Occurrence => ({ anchor: PRE, session: 'g', toolCall: { get name(): string { throw nullProto; } } });
    const d = await decideEverywhere(occ);
    expect(errorOf(d, 'h/COUNT_CALL')).toBe('provider_failure');
    const h = harness({ capability: CAP, rules: RULES, options });
    h.decide(occ());
    expect(h.activity('g')).toEqual([]);
  });

  it('a detector that returns a non-object, or a Proxy, or throws a non-Error, fails its own rule', async () => {
    for (const produce of [() => 5, () => null, trapsThrow, () => { throw nullProto; }]) {
      detectorResult = produce;
      const d = await decideEverywhere(() => ({ anchor: PRE, toolCall: { name: 'x' } }));
      expect(errorOf(d, 'h/DETECT')).toBe('provider_failure');
    }
    detectorResult = () => ({});
  });

  it('content that is not a string is the host\'s mistake on every back end: a HostInputError, never a decision', () => {
    const h = harness({
      capability: CAP,
      rules: [rule({ id: 'LONG', namespace: 'h', anchor: 'model.output', effect: 'warn', requires: { profiles: ['content'] }, when: 'content_length > 3', on_error: 'fail_open' })],
    });
    for (const b of BACKENDS) {
      expect(() => h.engines[b].decide({ anchor: 'model.output', content: 5 as unknown as string })).toThrow(HostInputError);
    }
  });

  it('an explicit activity window that is not a list of strings fails the flow rules, on every back end', () => {
    const h = harness({ capability: CAP, rules: [r('FLOW', 'warn', { flow: ['read', 'send'], on_error: 'fail_open' })] });
    // A window that is not a list is the host's mistake ([OAR-CONF-40] a window is a list of steps);
    // one whose reading throws is a failure of the flow rule that reads it.
    expect(() => h.decide({ anchor: PRE, toolCall: { name: 'x' }, recentActivity: 5 as unknown as string[] })).toThrow(HostInputError);
    expect(errorOf(h.decide({ anchor: PRE, toolCall: { name: 'x' }, recentActivity: new Proxy([], { get() { throw nullProto; } }) as string[] }), 'h/FLOW')).toBe('provider_failure');
    expect(trace(h.decide({ anchor: PRE, toolCall: { name: 'x' }, recentActivity: ['read', 'x', 'send'] }))).toEqual(['h/FLOW:fired']);
  });
});

describe('[OAR-OPS-3] property: hostile host values never escape decide, on any back end', () => {
  const config = propertyConfig(1313, 300);
  /** A host value for one fact: absent, well typed, wrong typed, or hostile in one of several ways. */
  const good: Record<string, fc.Arbitrary<unknown>> = {
    'acme.gw.s': fc.constantFrom('a', 'closed', 'b', ''),
    'acme.gw.n': fc.integer({ min: -2, max: 4 }),
    'acme.gw.x': fc.double({ min: -5, max: 5, noNaN: true }),
    'acme.gw.roles': fc.array(fc.constantFrom('admin', 'user')),
    'acme.gw.labels': fc.dictionary(fc.constantFrom('k', 'j'), fc.constantFrom('v', 'w')),
    'acme.gw.spans': fc.array(fc.record({ start: fc.nat(4), end: fc.nat(8) })),
    'acme.gw.key': fc.constantFrom('k1', 'k2', '\uD800'),
    'acme.gw.check': fc.constantFrom(() => true, () => false, true),
  };
  const throwable = fc.nat(THROWABLES.length - 1).map((i) => THROWABLES[i] as () => unknown);
  type Shape = { kind: 'absent' } | { kind: 'value'; v: unknown } | { kind: 'wrong'; v: unknown } | { kind: 'provider' | 'getter' | 'proxyValue'; t: () => unknown };
  const shape = (name: string): fc.Arbitrary<Shape> =>
    fc.oneof(
      fc.constant<Shape>({ kind: 'absent' }),
      (good[name] as fc.Arbitrary<unknown>).map((v): Shape => ({ kind: 'value', v })),
      fc.constantFrom<unknown>(5, 'str', [1], {}, null, NaN, true).map((v): Shape => ({ kind: 'wrong', v })),
      throwable.map((t): Shape => ({ kind: 'provider', t })),
      throwable.map((t): Shape => ({ kind: 'getter', t })),
      fc.constant<Shape>({ kind: 'proxyValue', t: () => nullProto }),
    );
  const scenario = fc.record({
    facts: fc.record(Object.fromEntries(NAMES.map((n) => [n, shape(n)])) as Record<string, fc.Arbitrary<Shape>>),
    factsProxy: fc.boolean(),
    args: fc.oneof(fc.constant<unknown>({ cmd: 'x' }), fc.constant<unknown>({ k: 3 }), fc.constant('proxy'), fc.constant('getter')),
    detector: fc.oneof(fc.constant<unknown>('ok'), fc.constant<unknown>('proxy'), throwable),
    window: fc.constantFrom('absent', 'steps', 'proxy'),
  });
  type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

  function build(s: Scenario): Occurrence {
    const facts: Record<string, unknown> = {};
    for (const [name, sh] of Object.entries(s.facts)) {
      const throwIt = (t: () => unknown) => () => { throw t(); };
      if (sh.kind === 'value' || sh.kind === 'wrong') facts[name] = sh.v;
      else if (sh.kind === 'provider') facts[name] = throwIt(sh.t);
      else if (sh.kind === 'getter') Object.defineProperty(facts, name, { enumerable: true, get: throwIt(sh.t) });
      else if (sh.kind === 'proxyValue') facts[name] = trapsThrow();
    }
    let args: unknown = s.args;
    if (s.args === 'proxy') args = trapsThrow();
    else if (s.args === 'getter') args = Object.defineProperty({}, 'cmd', { enumerable: true, get() { throw nullProto; } });
    // An explicit window whose reading throws fails the flow rule ([OAR-OPS-3]).
    const window = s.window === 'absent' ? {} : { recentActivity: s.window === 'steps' ? ['read', 'x', 'send'] : (new Proxy([], { get() { throw nullProto; } }) as string[]) };
    return { anchor: PRE, session: 'p', toolCall: { name: 'x', arguments: args as Record<string, unknown> }, facts: s.factsProxy ? (trapsThrow() as Record<string, unknown>) : facts, ...window };
  }

  it('[OAR-OPS-3] decide and decideAsync return a decision; every back end agrees on it and on every error kind', async () => {
    const cases: Scenario[] = [];
    const h = harness({ capability: CAP, rules: RULES, options });
    runProperty(config, 'hostile host values', scenario, (s) => {
      detectorResult = s.detector === 'ok' ? () => ({ 'acme.gw.n': 3 }) : s.detector === 'proxy' ? trapsThrow : () => { throw (s.detector as () => unknown)(); };
      const d = h.decide(build(s)); // throws if any back end throws, or if they disagree
      assertDescribed(d);
      cases.push(s);
    }, config.runs, 'npx vitest run test/engine/hostile-values.test.ts');
    // The specialised back end decided some scenarios through its procedure and handed the others
    // (every one where a value raised) to the generic path: both of its paths were compared.
    const handedOver = (h.engines.specialised as unknown as { procedureFallbacks: number }).procedureFallbacks;
    expect(handedOver).toBeGreaterThan(0);
    expect(handedOver).toBeLessThan(cases.length);
    // decideAsync over a sample of the same scenarios: the same decisions
    for (const s of cases.slice(0, 40)) {
      detectorResult = s.detector === 'ok' ? () => ({ 'acme.gw.n': 3 }) : s.detector === 'proxy' ? trapsThrow : () => { throw (s.detector as () => unknown)(); };
      await decideEverywhere(() => build(s));
    }
    detectorResult = () => ({});
  });
});
