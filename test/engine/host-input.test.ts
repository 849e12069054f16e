/**
 * A host's mistake in the occurrence is never a silent allow: on the example pack, where the rules
 * block `rm -rf /`, each of these misspellings or misshapes would decide `none` if it were read as
 * "nothing observed". Each is a thrown `HostInputError` naming the member, anchor or fact, with the
 * declared name it was probably meant to be — on both back ends, from `decide` and `decideAsync`.
 * The values of declared facts stay observations: a wrong-typed one takes the rule's `on_error`
 * ([OAR-FACT-26]).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileToBundle, loadPackFiles, type Backend } from '../../compiler/index.js';
import { formatDiagnostic } from '../../compiler/diagnostics.js';
import { HostInputError, createEngine, type Engine, type Occurrence } from '../../runtime/index.js';
import { BACKENDS } from './harness.js';

const GW = join(import.meta.dirname, '../../examples/gateway');
const loaded = loadPackFiles({ capability: join(GW, 'capability.yaml'), rules: [join(GW, 'rules.yaml')] });
if (!loaded.ok) throw new Error(loaded.diagnostics.map(formatDiagnostic).join('\n'));
const pack = loaded.pack;

function engine(backend: Backend): Engine {
  return createEngine(compileToBundle(pack, backend), {
    // An async store that holds nothing: these tests are about the occurrence, not counting.
    asyncCounters: { readMany: async (keys) => keys.map(() => ({ fire_count: 0, breaker_count: 0 })), applyMany: async () => {} },
    detectors: { 'detector://secret-scanner': () => ({ secret_matches: [] }), 'detector://injection-corpus': () => ({}) },
  });
}

const RM = { name: 'bash', arguments: { command: 'rm -rf /' } };

/** What `decide` throws for `occ`, on both back ends (they must agree). */
function thrown(occ: unknown): HostInputError {
  const errors = BACKENDS.map((b) => {
    try {
      engine(b).decide(occ as Occurrence);
    } catch (e) {
      return e;
    }
    throw new Error(`${b}: decide(${JSON.stringify(occ)}) did not throw`);
  });
  const [compiled, interpreter] = errors as [HostInputError, HostInputError];
  expect(compiled).toBeInstanceOf(HostInputError);
  expect(interpreter).toBeInstanceOf(HostInputError);
  expect(interpreter.message).toBe(compiled.message);
  expect(interpreter.path).toEqual(compiled.path);
  return compiled;
}

describe('a host mistake in the occurrence is a typed error, never a decision', () => {
  it('the well-formed occurrence blocks, so each mistake below would have failed open', () => {
    for (const b of BACKENDS) expect(engine(b).decide({ anchor: 'tool.pre_invoke', toolCall: RM }).decision).toBe('block');
  });

  it('[OAR-CONF-29] a core anchor the host spells differently is named with the host spelling', () => {
    const e = thrown({ anchor: 'model.output', content: 'sk-live-1234' });
    expect(e.path).toEqual(['anchor']);
    expect(e.message).toContain('unknown anchor `model.output`');
    expect(e.message).toContain('spells core anchor model.output as `content.output`');
  });

  it('[OAR-DOC-12] a misspelled anchor gets the nearest one the bundle knows', () => {
    const e = thrown({ anchor: 'tool.pre_invok', toolCall: RM });
    expect(e.message).toContain('unknown anchor `tool.pre_invok` (did you mean `tool.pre_invoke`?)');
    expect(thrown({ anchor: 'tool.handler', toolCall: RM }).message).toContain('unknown anchor `tool.handler`');
    expect(thrown({ toolCall: RM }).path).toEqual(['anchor']);
    expect(thrown({ anchor: '', toolCall: RM }).message).toContain('the empty string');
  });

  it.each([
    ['tool_call', '(did you mean `toolCall`? `tool_call` is the JSON spelling'],
    ['toolcall', '(did you mean `toolCall`?)'],
    ['Session', '(did you mean `session`?)'],
    ['session_id', '(did you mean `session`?'],
    ['verdict', 'an occurrence has anchor, session, facts, content, toolCall, recentActivity, detectorFacts'],
  ])('an occurrence member the engine does not read (%s) is named', (member, hint) => {
    const e = thrown({ anchor: 'tool.pre_invoke', [member]: RM });
    expect(e.path).toEqual([member]);
    expect(e.message).toContain(`unknown occurrence member \`${member}\``);
    expect(e.message).toContain(hint);
  });

  it('[OAR-FACT-3] a fact name the bundle does not declare is named, with the declared one near it', () => {
    const e = thrown({ anchor: 'tool.pre_invoke', toolCall: RM, facts: { 'acme.tenant_teir': 'gold' } });
    expect(e.path).toEqual(['facts', 'acme.tenant_teir']);
    expect(e.message).toContain('facts names `acme.tenant_teir`, which the bundle does not declare (did you mean `acme.tenant_tier`?)');
    const d = thrown({ anchor: 'content.output', content: 'x', detectorFacts: { secret_match: [] } });
    expect(d.path).toEqual(['detectorFacts', 'secret_match']);
    expect(d.message).toContain('(did you mean `secret_matches`?)');
  });

  it.each([
    ['content: 42', { anchor: 'content.output', content: 42 }, ['content'], 'content must be a string'],
    ['content: an array', { anchor: 'content.output', content: ['a', 'b'] }, ['content'], 'got an array'],
    ['facts: an array', { anchor: 'tool.pre_invoke', facts: [] }, ['facts'], 'facts must be a plain object'],
    ['facts: a Map', { anchor: 'tool.pre_invoke', facts: new Map([['tool', 'bash']]) }, ['facts'], 'got a Map (use Object.fromEntries)'],
    ['facts: a Promise (not awaited)', { anchor: 'tool.pre_invoke', facts: Promise.resolve({ tool: 'bash' }) }, ['facts'], 'got a Promise (await it first)'],
    ['facts: a class instance', { anchor: 'tool.pre_invoke', facts: new (class Observed { tool = 'bash'; })() }, ['facts'], 'got an instance of Observed'],
    ['detectorFacts: a Promise', { anchor: 'content.output', content: 'x', detectorFacts: Promise.resolve({}) }, ['detectorFacts'], 'got a Promise'],
    ['toolCall: a string', { anchor: 'tool.pre_invoke', toolCall: 'bash' }, ['toolCall'], 'toolCall must be an object'],
    ['toolCall without a name', { anchor: 'tool.pre_invoke', toolCall: { arguments: {} } }, ['toolCall', 'name'], 'toolCall.name must be a non-empty string'],
    ['toolCall.args', { anchor: 'tool.pre_invoke', toolCall: { name: 'bash', args: {} } }, ['toolCall', 'args'], 'unknown toolCall member `args`; a tool call is { name, arguments }'],
    ['toolCall.arguments: a list', { anchor: 'tool.pre_invoke', toolCall: { name: 'bash', arguments: ['rm'] } }, ['toolCall', 'arguments'], 'toolCall.arguments must be an object'],
    ['toolCall.arguments: a class instance with a getter', { anchor: 'tool.pre_invoke', toolCall: { name: 'bash', arguments: new (class Args { get command() { return 'rm -rf /'; } })() } }, ['toolCall', 'arguments'], 'got an instance of Args'],
    ['toolCall.arguments: inherited members', { anchor: 'tool.pre_invoke', toolCall: { name: 'bash', arguments: Object.create({ command: 'rm -rf /' }) as Record<string, unknown> } }, ['toolCall', 'arguments'], 'must be a plain object (or a Map)'],
    ['toolCall.arguments: a Promise', { anchor: 'tool.pre_invoke', toolCall: { name: 'bash', arguments: Promise.resolve({ command: 'rm -rf /' }) as unknown as Record<string, unknown> } }, ['toolCall', 'arguments'], 'got a Promise (await it first)'],
    ['recentActivity: 5', { anchor: 'tool.pre_invoke', recentActivity: 5 }, ['recentActivity'], 'recentActivity must be a list of tool names'],
    ['recentActivity: [read, 5]', { anchor: 'tool.pre_invoke', recentActivity: ['read', 5] }, ['recentActivity', 1], 'recentActivity[1] must be a tool name (a string), got a number'],
    ['session: 7', { anchor: 'tool.pre_invoke', session: 7 }, ['session'], 'session must be a string'],
  ])('a member of the wrong shape (%s) is named', (_what, occ, path, text) => {
    const e = thrown(occ);
    expect(e.path).toEqual(path);
    expect(e.message).toContain(text);
  });

  it('[OAR-FACT-26] tool arguments as a null-prototype object or a Map decide as the plain object does', () => {
    for (const b of BACKENDS) {
      const plain = engine(b).decide({ anchor: 'tool.pre_invoke', toolCall: RM });
      const bare = Object.assign(Object.create(null) as Record<string, unknown>, RM.arguments);
      expect(engine(b).decide({ anchor: 'tool.pre_invoke', toolCall: { name: 'bash', arguments: bare } })).toEqual(plain);
      expect(engine(b).decide({ anchor: 'tool.pre_invoke', toolCall: { name: 'bash', arguments: new Map(Object.entries(RM.arguments)) as unknown as Record<string, unknown> } })).toEqual(plain);
      expect(plain.decision).toBe('block');
    }
  });

  it.each([[null], [undefined], ['tool.pre_invoke'], [[{ anchor: 'tool.pre_invoke' }]]])('decide(%j) is a typed error, not a TypeError', (occ) => {
    expect(thrown(occ).message).toContain('the occurrence must be an object');
  });

  it('decideAsync rejects with the same typed error', async () => {
    for (const b of BACKENDS) {
      await expect(engine(b).decideAsync({ anchor: 'tool.pre_invok', toolCall: RM })).rejects.toBeInstanceOf(HostInputError);
    }
  });

  it('[OAR-FACT-26] a wrong-typed VALUE of a declared fact is an observation failure, handled by on_error, not thrown', () => {
    for (const b of BACKENDS) {
      const d = engine(b).decide({ anchor: 'tool.pre_invoke', toolCall: RM, facts: { tool: 42 } });
      expect(d.decision).toBe('block'); // fail_closed
      expect(d.applied.some((t) => t.outcome === 'errored' && t.error?.code === 'wrong_type')).toBe(true);
    }
  });

  it('explicitly undefined optional members are absent, not mistakes', () => {
    for (const b of BACKENDS) {
      expect(engine(b).decide({ anchor: 'tool.pre_invoke', toolCall: RM, session: undefined, facts: undefined, content: undefined }).decision).toBe('block');
    }
  });
});

describe('an occurrence whose own reading throws is a typed error, never a raw exception', () => {
  it.each([
    ['a content getter', () => Object.defineProperty({ anchor: 'content.output' }, 'content', { enumerable: true, get() { throw new Error('gone'); } }), ['content'], "reading the occurrence's `content` threw: gone"],
    ['a session getter throwing a non-Error', () => Object.defineProperty({ anchor: 'tool.pre_invoke' }, 'session', { enumerable: true, get() { throw Object.create(null); } }), ['session'], "reading the occurrence's `session` threw"],
    ['an anchor getter', () => Object.defineProperty({}, 'anchor', { enumerable: true, get() { throw 7; } }), ['anchor'], "reading the occurrence's `anchor` threw: 7"],
    ['a Proxy whose ownKeys trap throws', () => new Proxy({ anchor: 'tool.pre_invoke' }, { ownKeys() { throw new Error('trap'); } }), [], "the occurrence's members could not be listed: trap"],
  ])('%s', (_what, make, path, text) => {
    const e = thrown(make());
    expect(e.path).toEqual(path);
    expect(e.message).toContain(text);
  });
});
