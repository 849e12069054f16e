/**
 * The conformance runner: verdicts, the malformed fixtures it refuses, skip vs baseline, the
 * report and its arithmetic, the table and its last line, exit status, and readable diffs.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ADOPTABLE, adoptionGaps, collectFixtureFiles, runFixtureText, runFixtures } from '../../conformance/runner.js';
import { main, renderTable, reportJson, reportProblems, summaryLine, type CaseResult } from '../../conformance/report.js';
import { validateReport } from '../../compiler/load/schema.js';
import { DEFAULT_MAX_BYTES } from '../../compiler/load/source.js';
import { loadCapability } from '../../compiler/load/capability.js';
import { COMPILER_VERSION } from '../../compiler/version.js';

type Obj = Record<string, unknown>;

const FIXTURES = 'conformance/fixtures';
const CORE = ['tool.pre_invoke', 'tool.handler', 'tool.post_invoke', 'agent.post_turn', 'agent.finalize', 'model.input', 'model.output', 'model.tool_result'];

/** A capability mapping the given core anchors (identity unless spelled), the rest unsupported. */
function cap(core: Record<string, string> = { 'tool.pre_invoke': 'tool.pre_invoke' }, extra: Obj = {}): Obj {
  return { anchors: { core, unsupported: CORE.filter((a) => !(a in core)) }, ...extra };
}

const rule = (id: string, extra: Obj = {}): Obj => ({ oar: '1.0', id, kind: 'policy', anchor: 'tool.pre_invoke', effect: 'block', ...extra });

/** A passing baseline fixture: one rule that blocks. */
function fixture(id = 'fx', change: (f: Obj & { input: Obj; expected: Obj }) => void = () => {}): Obj {
  const f = {
    id,
    covers: ['OAR-EVAL-4'],
    rules: [rule('BLOCK')],
    input: { capability: cap(), anchor: 'tool.pre_invoke' } as Obj,
    expected: { decision: 'block', rule: 'BLOCK', applied: ['BLOCK:fired'] } as Obj,
  };
  change(f);
  return f;
}

/** Run a fixture object as the file `<id>.json` (or `file`). */
function run(f: Obj, file = `${String(f.id)}.json`): CaseResult {
  return runFixtureText(JSON.stringify(f, null, 2), file);
}

function expectErrored(c: CaseResult, clause: string, token?: string): void {
  expect(c.verdict, JSON.stringify(c)).toBe('errored');
  expect(c.reason).toContain(clause);
  if (token !== undefined) expect(c.reason).toContain(token);
  expect(c.diff).toBeUndefined();
}

const temp: string[] = [];
function tempDir(files: Record<string, Obj | string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'oarc-conformance-'));
  temp.push(dir);
  for (const [name, content] of Object.entries(files)) {
    const path = join(dir, name);
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  }
  return dir;
}
afterAll(() => {
  for (const d of temp) rmSync(d, { recursive: true, force: true });
});

function capture(): { io: { out(t: string): void; err(t: string): void }; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return { io: { out: (t) => void (out += t), err: (t) => void (err += t) }, out: () => out, err: () => err };
}

// ---------------------------------------------------------------------------------------------

describe('the corpus in conformance/fixtures', () => {
  const report = runFixtures([FIXTURES]);

  it('enumerates every fixture file, with counts summing to the total', () => {
    const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.json'));
    expect(report.total).toBe(files.length);
    expect(report.cases.map((c) => c.id).sort()).toEqual(files.map((f) => f.replace(/\.json$/, '')).sort());
    const { passed, failed, skipped, errored } = report.counts;
    expect(passed + failed + skipped + errored).toBe(report.total);
  });

  it('passes every fixture it can adopt and skips the one needing detector://acme-pii [OAR-CONF-20] [OAR-CONF-24]', () => {
    const notPassed = report.cases.filter((c) => c.verdict !== 'passed');
    expect(notPassed.map((c) => [c.id, c.verdict, c.skipped_capability])).toEqual([
      ['detector-not-invoked-when-unselected', 'skipped', 'detector:detector://acme-pii'],
    ]);
    const skipped = notPassed[0]!;
    expect(skipped.baseline).toBe(false);
    expect(skipped.reason).toMatch(/detector:\/\/acme-pii.*not implemented/);
    // A skip is reported as a skip: never counted with the passes.
    expect(report.counts.passed).toBe(report.total - 1);
    expect(report.counts.skipped).toBe(1);
  });

  // The report above ran on the default back end (the bundle's decision procedures).
  it.each(['compiled', 'interpreter'] as const)('gives the same verdicts on the %s back end', (backend) => {
    const r = runFixtures([FIXTURES], { backend });
    expect(r.cases.map((c) => [c.id, c.verdict])).toEqual(report.cases.map((c) => [c.id, c.verdict]));
  });

  it('validates against schema/conformance-report.schema.json, publishing ADOPTABLE as its capabilities', () => {
    expect(reportProblems(report)).toEqual([]);
    const json = JSON.parse(reportJson(report)) as Obj;
    expect(validateReport(json)).toEqual([]);
    expect(json.engine).toEqual({ name: 'oarc', version: COMPILER_VERSION });
    expect(json.spec).toBe('1.0');
    expect(json.capabilities).toEqual(JSON.parse(JSON.stringify(ADOPTABLE)));
    expect(ADOPTABLE.detectors).toEqual(['detector://noop', 'detector://error', 'detector://fixture']);
    expect(ADOPTABLE.expression_nodes_max).toBe(1024);
  });
});

// ---------------------------------------------------------------------------------------------

describe('malformed fixtures are errored with the reason, never run or passed', () => {
  it('accepts the well-formed base fixture', () => {
    expect(run(fixture())).toEqual({ id: 'fx', file: 'fx.json', verdict: 'passed', baseline: true });
  });

  it('[OAR-CONF-22] an expected key the specification does not define', () => {
    expectErrored(run(fixture('fx', (f) => (f.expected.decisoin = 'block'))), 'OAR-CONF-22', 'decisoin');
    const occ = fixture('fx', (f) => {
      f.input = { capability: cap(), occurrences: [{ anchor: 'tool.pre_invoke', expected: { verdict: 'block' } }] };
    });
    expectErrored(run(occ), 'OAR-CONF-22', 'verdict');
  });

  it('[OAR-CONF-18] both occurrence spellings, or neither', () => {
    const both = fixture('fx', (f) => (f.input.occurrences = [{ anchor: 'tool.pre_invoke' }]));
    expectErrored(run(both), 'OAR-CONF-18', 'anchor');
    const neither = fixture('fx', (f) => delete f.input.anchor);
    expectErrored(run(neither), 'OAR-CONF-18', 'anchor');
  });

  it('[OAR-CONF-19] no input.capability', () => {
    expectErrored(run(fixture('fx', (f) => delete f.input.capability)), 'OAR-CONF-19', 'capability');
  });

  it('[OAR-CONF-34] expected.content without content, naming the fixture', () => {
    expectErrored(run(fixture('no-content', (f) => (f.expected = { content: 'x' }))), 'OAR-CONF-34', 'no-content');
    const last = fixture('no-content', (f) => {
      f.input = { capability: cap(), occurrences: [{ anchor: 'tool.pre_invoke', content: 'a' }, { anchor: 'tool.pre_invoke' }] };
      f.expected = { content: 'a' };
    });
    expectErrored(run(last), 'OAR-CONF-34', 'no-content');
  });

  it.each(['fire_count', 'breaker_count', 'fire_count_of', 'breaker_count_of'])('[OAR-CONF-32] %s supplied in facts', (name) => {
    expectErrored(run(fixture('fx', (f) => (f.input.facts = { [name]: 3 }))), 'OAR-CONF-32', name);
    const inOccurrence = fixture('fx', (f) => {
      f.input = { capability: cap(), occurrences: [{ anchor: 'tool.pre_invoke', facts: { [name]: 1 } }] };
    });
    expectErrored(run(inOccurrence), 'OAR-CONF-32', name);
  });

  it('[OAR-CONF-17] an id that is not the file name stem', () => {
    expectErrored(run(fixture('fx'), 'conformance/fixtures/other-name.json'), 'OAR-CONF-17', 'other-name');
    // A file given under another extension is held to the same rule.
    expectErrored(run(fixture('fx'), 'conformance/fixtures/other-name.fixture'), 'OAR-CONF-17', 'other-name');
    expect(run(fixture('fx'), 'conformance/fixtures/fx.fixture').verdict).toBe('passed');
  });

  it('[OAR-CONF-17] missing members, an empty covers, an unknown top-level member', () => {
    expectErrored(run(fixture('fx', (f) => delete (f as Obj).rules)), 'OAR-CONF-17', 'rules');
    expectErrored(run(fixture('fx', (f) => ((f as Obj).covers = []))), 'OAR-CONF-17', 'covers');
    expectErrored(run(fixture('fx', (f) => ((f as Obj).notes = 'x'))), 'OAR-CONF-17', 'notes');
  });

  it('[OAR-CONF-30] an expected.error that is a phrase rather than a token', () => {
    expectErrored(run(fixture('fx', (f) => (f.expected = { error: 'unknown field colour' }))), 'OAR-CONF-30', 'error');
  });

  it('[OAR-CONF-21] expected.error beside another assertion, or inside an occurrence', () => {
    expectErrored(run(fixture('fx', (f) => (f.expected = { error: 'colour', decision: 'none' }))), 'OAR-CONF-21', 'expected.decision');
    const occ = fixture('fx', (f) => {
      f.input = { capability: cap(), occurrences: [{ anchor: 'tool.pre_invoke', expected: { error: 'colour' } }] };
      f.expected = {};
    });
    expectErrored(run(occ), 'OAR-CONF-31', 'occurrences[0].expected.error');
  });

  it('[OAR-CONF-29] an occurrence anchor that is not a host-local spelling of the capability', () => {
    const coreSpelling = fixture('fx', (f) => {
      f.input.capability = cap({ 'tool.pre_invoke': 'before_tool' });
      f.expected = { decision: 'none' };
    });
    const c = run(coreSpelling);
    expectErrored(c, 'OAR-CONF-29', 'before_tool');
    expect(c.reason).toContain('core identifier');
  });

  it('[OAR-CONF-33] a counter key that names no loaded rule, or the wrong scope spelling', () => {
    expectErrored(run(fixture('fx', (f) => (f.expected = { counters: { NOPE: 0 } }))), 'OAR-CONF-33', 'NOPE');
    expectErrored(run(fixture('fx', (f) => (f.expected = { counters: { 'BLOCK#x': 0 } }))), 'OAR-CONF-33', 'BLOCK#x');
    const scoped = fixture('fx', (f) => {
      f.input.capability = cap(undefined, { profiles: ['tool'] });
      f.rules = [rule('BLOCK', { requires: { profiles: ['tool'] }, counter_scope: 'tool', on_fire: ['increment_counter'] })];
      f.expected = { counters: { BLOCK: 1 } };
    });
    expectErrored(run(scoped), 'OAR-CONF-33', 'BLOCK#<scope value>');
  });

  it('text that is not a fixture at all', () => {
    for (const text of ['', 'not json', 'null', '[]', '{"id": "x"', '{"id":"x","id":"y"}']) {
      const c = runFixtureText(text, 'x.json');
      expect(c.verdict, text).toBe('errored');
      expect(c.reason, text).toMatch(/JSON|malformed/);
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe('reasons that say whose mistake it is', () => {
  it('[OAR-CONF-23] a fact the capability does not declare is the fixture\'s mistake, naming the member — not an internal error', () => {
    const single = run(fixture('undeclared', (f) => (f.input.facts = { 'acme.nope': 1 })));
    expectErrored(single, 'OAR-CONF-23', 'input.facts.acme.nope: the engine refuses the occurrence the fixture describes: facts names `acme.nope`, which the bundle does not declare');
    expect(single.reason).not.toContain('internal error');
    const many = run(fixture('undeclared', (f) => {
      delete f.input.anchor;
      f.input.occurrences = [{ anchor: 'tool.pre_invoke' }, { anchor: 'tool.pre_invoke', detector_facts: { nope: [] } }];
    }));
    expectErrored(many, 'OAR-CONF-23', 'input.occurrences[1].detector_facts.nope:');
  });

  it('a fixture beyond the size limit is too large (and not read), one that is not UTF-8 says so, one nested too deep is not called invalid JSON', () => {
    const d = tempDir({ 'deep.json': fixture('deep', (f) => (f.input.facts = { x: JSON.parse(`${'['.repeat(80)}${']'.repeat(80)}`) })) });
    writeFileSync(join(d, 'big.json'), `${' '.repeat(DEFAULT_MAX_BYTES)}${JSON.stringify(fixture('big'))}`);
    writeFileSync(join(d, 'latin1.json'), JSON.stringify(fixture('latin1', (f) => (f.title = 'caf\u00e9'))), 'latin1'); // é as the one byte 0xE9
    const r = runFixtures([d]);
    const reason = (id: string) => r.cases.find((c) => c.id === id)?.reason ?? '';
    expect(reason('big')).toBe(`the fixture is too large: ${DEFAULT_MAX_BYTES + JSON.stringify(fixture('big')).length} bytes, more than the ${DEFAULT_MAX_BYTES}-byte limit on a document; it was not read`);
    expect(reason('latin1')).toBe('the fixture is not valid UTF-8: JSON text is UTF-8 [OAR-DOC-1]');
    expect(reason('deep')).toMatch(/^the fixture was not parsed: .*nests deeper than/);
    expect(r.cases.map((c) => c.verdict)).toEqual(['errored', 'errored', 'errored']);
  });
});

describe('skipped vs baseline [OAR-CONF-20] [OAR-CONF-35]', () => {
  const acme = (id: string) =>
    fixture(id, (f) => {
      f.input.capability = cap({ 'model.output': 'model.output' }, { profiles: ['pii'], detectors: ['detector://acme-pii'] });
      f.input.anchor = 'model.output';
      f.rules = [rule('PII', { kind: 'detector', anchor: 'model.output', detector: { ref: 'detector://acme-pii' }, requires: { profiles: ['pii'] } })];
    });

  it('skips a fixture whose capability registers a detector the runner does not implement, naming it', () => {
    const c = run(acme('acme'));
    expect(c.verdict).toBe('skipped');
    expect(c.skipped_capability).toBe('detector:detector://acme-pii');
    expect(c.reason).toContain('[OAR-CONF-20]');
    expect(c.baseline).toBe(false);
  });

  it('[OAR-VER-5] skips a capability from a later minor revision — a newer version, a profile added since — unless its rejection is asserted', () => {
    const later = (change: (c: Obj) => void, expected: Obj = { decision: 'none' }) =>
      run(fixture('later', (f) => {
        change(f.input.capability as Obj);
        f.expected = expected;
      }));
    const profile = later((c) => (c.profiles = ['browser']));
    expect([profile.verdict, profile.skipped_capability]).toEqual(['skipped', 'profile:browser']);
    const version = later((c) => (c.oar_capability_version = '1.1'));
    expect([version.verdict, version.skipped_capability]).toEqual(['skipped', 'oar_capability_version:1.1']);
    // A fixture asserting the rejection runs, and the loader's rejection is what it asserts.
    expect(later((c) => (c.profiles = ['browser']), { error: 'browser' }).verdict).toBe('passed');
    // A new major is not a later minor: it is a capability this engine rejects.
    expect(later((c) => (c.oar_capability_version = '2.0')).verdict).toBe('failed');
  });

  it('a profile that is a misspelling of an OAR 1.0 one is skipped with the profile meant', () => {
    const c = run(fixture('typo', (f) => ((f.input.capability as Obj).profiles = ['tol'])));
    expect([c.verdict, c.skipped_capability]).toEqual(['skipped', 'profile:tol']);
    expect(c.reason).toContain('profile `tol` is not one of the profiles of OAR 1.0 this engine knows (did you mean `tool`?)');
    expect(run(fixture('far', (f) => ((f.input.capability as Obj).profiles = ['browser']))).reason).not.toContain('did you mean');
  });

  it('skips even when the fixture would otherwise fail, and names every gap', () => {
    const f = acme('acme');
    ((f.input as Obj).capability as Obj).expression_nodes_max = 4096;
    const c = run(f);
    expect(c.verdict).toBe('skipped');
    expect(c.skipped_capability).toBe('detector:detector://acme-pii, expression_nodes_max:4096');
  });

  // A condition of 3 * 400 + 399 = 1599 nodes: within the fixture's declared 2048, beyond our 1024.
  const big = Array.from({ length: 400 }, (_, i) => `anchor == "x${i}"`).join(' || ');

  it('runs a baseline fixture it cannot fully adopt, and fails it rather than skipping it', () => {
    const f = fixture('big', (x) => {
      x.input.capability = cap(undefined, { expression_nodes_max: 2048 });
      x.rules = [rule('BIG', { when: big })];
      x.expected = { decision: 'none' };
    });
    const c = run(f);
    expect(c.baseline).toBe(true);
    expect(c.verdict).toBe('failed');
    expect(c.reason).toContain('expression_nodes_max:2048');
    expect(c.reason).toContain('[OAR-CONF-35]');
    expect(c.diff?.error?.actual).toEqual([expect.stringContaining('OAR-EXPR-17')]);
  });

  it('a non-baseline fixture with the same gap is skipped', () => {
    const f = fixture('big', (x) => {
      x.input.capability = cap(undefined, { expression_nodes_max: 2048, profiles: ['session'] });
      x.rules = [rule('BIG', { when: big })];
      x.expected = { decision: 'none' };
    });
    const c = run(f);
    expect([c.verdict, c.skipped_capability, c.baseline]).toEqual(['skipped', 'expression_nodes_max:2048', false]);
  });

  it('a baseline fixture it cannot fully adopt still passes when its outcome does not depend on the gap', () => {
    const c = run(fixture('fx', (f) => (f.input.capability = cap(undefined, { expression_nodes_max: 2048 }))));
    expect(c.verdict).toBe('passed');
    expect(c.reason).toContain('[OAR-CONF-35]');
  });

  it('decides from ADOPTABLE alone: the same capability is a gap or not as the constant says', () => {
    const c = loadCapability(cap(undefined, { detectors: ['detector://acme-pii'], profiles: ['session'], activity_window: 8 })).capability!;
    expect(adoptionGaps(c).map((g) => g.capability)).toEqual(['detector:detector://acme-pii']);
    const narrower = { ...ADOPTABLE, profiles: [], detectors: [...ADOPTABLE.detectors, 'detector://acme-pii'], activity_window_max: 4 };
    expect(adoptionGaps(c, narrower).map((g) => g.capability)).toEqual(['profile:session', 'activity_window:8']);
    expect(Object.isFrozen(ADOPTABLE)).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------

describe('the real loader and engine [OAR-CONF-38]', () => {
  const colour = fixture('fx', (f) => {
    f.rules = [rule('TYPO', { colour: 'red' })];
    f.expected = { error: 'colour' };
  });

  it('expected.error passes only when the real loader rejects, naming the token in message, token or clause', () => {
    expect(run(colour).verdict).toBe('passed');
    expect(run({ ...colour, expected: { error: 'OAR-DOC-27' } }).verdict).toBe('passed');
    const wrong = run({ ...colour, expected: { error: 'color' } });
    expect(wrong.verdict).toBe('failed');
    expect(wrong.reason).toContain('no diagnostic names "color"');
    expect(wrong.diff?.error?.actual).toEqual([expect.stringContaining('`colour`')]);
  });

  it('expected.error fails when the rules load', () => {
    const c = run(fixture('fx', (f) => (f.expected = { error: 'BLOCK' })));
    expect(c.verdict).toBe('failed');
    expect(c.diff).toEqual({ error: { expected: 'BLOCK', actual: null } });
  });

  it('without expected.error the rules must load', () => {
    const c = run({ ...colour, expected: { decision: 'block' } });
    expect(c.verdict).toBe('failed');
    expect(c.reason).toMatch(/expects the rules to load.*colour.*OAR-DOC-27/);
  });

  it('adopts the fixture capability: a rule needing an unclaimed profile is rejected by the loader', () => {
    const f = fixture('fx', (x) => {
      x.rules = [rule('R', { requires: { profiles: ['tool'] } })];
      x.expected = { error: 'tool' };
    });
    expect(run(f).verdict).toBe('passed');
    const claimed = fixture('fx', (x) => {
      x.input.capability = cap(undefined, { profiles: ['tool'] });
      x.rules = [rule('R', { requires: { profiles: ['tool'] } })];
      x.expected = { decision: 'block' };
    });
    expect(run(claimed).verdict).toBe('passed');
  });

  it('applies configuration documents, one or a list, in order', () => {
    const configs = (config: unknown, decision: string) =>
      run(fixture('fx', (f) => ((f.input.config = config), (f.expected = { decision }))));
    expect(configs({ oar_config: '1.0', disable: ['BLOCK'] }, 'none').verdict).toBe('passed');
    const list = [{ oar_config: '1.0', disable: ['BLOCK'] }, { oar_config: '1.0', enforcement: { BLOCK: 'enforce' } }];
    expect(configs(list, 'block').verdict).toBe('passed');
    const c = run(fixture('fx', (f) => ((f.input.config = { oar_config: '1.0', disable: ['GONE'] }), (f.expected = { error: 'GONE' }))));
    expect(c.verdict).toBe('passed');
  });

  it('[OAR-CONF-25] detector_facts reach only a rule that runs detector://fixture', () => {
    const pii = (kind: 'detector' | 'policy') =>
      fixture('fx', (f) => {
        f.input.capability = cap({ 'model.output': 'model.output' }, { profiles: ['pii'], detectors: ['detector://fixture'] });
        f.input.anchor = 'model.output';
        f.input.detector_facts = { pii_entities: [{ start: 0, end: 1 }] };
        f.rules = [
          rule('PII', { kind, anchor: 'model.output', requires: { profiles: ['pii'] }, when: 'size(pii_entities) > 0', ...(kind === 'detector' ? { detector: { ref: 'detector://fixture' } } : {}) }),
        ];
        f.expected = { decision: kind === 'detector' ? 'block' : 'none' };
      });
    expect(run(pii('detector')).verdict).toBe('passed');
    expect(run(pii('policy')).verdict).toBe('passed');
  });

  it('[OAR-CONF-40] [OAR-PROF-9] the engine maintains activity when recent_activity is absent; an explicit window replaces it once', () => {
    const flow = (occurrences: Obj[], expected: Obj) =>
      run(
        fixture('fx', (f) => {
          f.input = { capability: cap(undefined, { profiles: ['tool'], activity_window: 4 }), occurrences };
          f.rules = [rule('READ_THEN_SEND', { requires: { profiles: ['tool'] }, flow: ['read', 'send'] })];
          f.expected = expected;
        }),
      );
    const call = (name: string, extra: Obj = {}) => ({ anchor: 'tool.pre_invoke', tool_call: { name, arguments: {} }, ...extra });
    // read and send are admitted as steps; the third call sees both.
    expect(flow([call('read'), call('send'), call('write')], { decision: 'block' }).verdict).toBe('passed');
    // An explicit window replaces the maintained one for that occurrence only.
    const c = flow([call('read'), call('send', { recent_activity: [], expected: { decision: 'none' } }), call('write', { recent_activity: ['write'], expected: { decision: 'none' } }), call('x')], {
      decision: 'block',
    });
    expect(c.verdict, c.reason).toBe('passed');
  });

  it('runs occurrences as one session against one counter store, asserting each member and the run', () => {
    const f = fixture('fx', (x) => {
      x.input = { capability: cap(), session_id: 's', occurrences: [0, 1, 2].map(() => ({ anchor: 'tool.pre_invoke' })) };
      x.rules = [rule('TRIP', { effect: 'warn', on_fire: ['increment_breaker'] }), rule('OPEN', { when: 'breaker_count_of("TRIP") >= 2' })];
      (x.input.occurrences as Obj[])[1]!.expected = { decision: 'warn', counters: { TRIP: 2, OPEN: 0 } };
      // OPEN is evaluated first and short-circuits the last occurrence, so TRIP stays at 2 — and is
      // still reported over the run, though the last occurrence left it untouched.
      x.expected = { decision: 'block', rule: 'OPEN', applied: ['OPEN:fired'], counters: { TRIP: { breaker_count: 2, fire_count: 0 } } };
    });
    expect(run(f).verdict).toBe('passed');
  });
});

// ---------------------------------------------------------------------------------------------

describe('comparison and diffs', () => {
  it('reports each differing member with expected and actual, and a note per difference', () => {
    const c = run(fixture('fx', (f) => (f.expected = { decision: 'warn', code: 'BLOCK', applied: ['BLOCK:passed'] })));
    expect(c.verdict).toBe('failed');
    expect(c.diff).toEqual({
      decision: { expected: 'warn', actual: 'block' },
      applied: { expected: ['BLOCK:passed'], actual: ['BLOCK:fired'] },
    });
    expect(c.reason).toBe('decision: expected "warn", actual "block"\napplied[0]: expected "BLOCK:passed", actual "BLOCK:fired"');
  });

  it('shows list items in the members the fixture asserts, and names a length difference', () => {
    const f = fixture('fx', (x) => {
      x.rules = [rule('A', { effect: 'warn', copy: { what: 'a', fix: 'f' } }), rule('B', { effect: 'warn' })];
      x.expected = { advisories: [{ code: 'A', copy: { what: 'a' } }] };
    });
    const c = run(f);
    expect(c.verdict).toBe('failed');
    expect(c.diff?.advisories).toEqual({ expected: [{ code: 'A', copy: { what: 'a' } }], actual: [{ code: 'A', copy: { what: 'a' } }, { code: 'B', copy: {} }] });
    expect(c.reason).toBe('advisories: expected 1 item, actual 2; first extra: {"code":"B","copy":{}}');
    const ok = run({ ...f, expected: { advisories: [{ code: 'A', copy: { what: 'a' } }, { rule: 'B' }] } });
    expect(ok.verdict).toBe('passed');
  });

  it('compares content by code point, naming the first difference', () => {
    const f = fixture('fx', (x) => {
      x.input.capability = cap(undefined, { supports_transform: true });
      x.input.content = '\u{1F600}abc';
      x.rules = [rule('T', { effect: 'transform', transform: { action: 'annotate', target: 'content', replacement: '!' } })];
      x.expected = { content: '\u{1F600}abc!' };
    });
    expect(run(f).verdict).toBe('passed');
    const c = run({ ...f, expected: { content: '\u{1F600}abd!' } });
    expect(c.reason).toBe('content: first difference at code point 3: expected U+0064 "d", actual U+0063 "c" (lengths 5 and 5 code points)');
  });

  it('[OAR-EVAL-8] [OAR-COPY-1] a decision of none may be asserted with null code, rule and copy', () => {
    const none = fixture('fx', (x) => {
      x.rules = [rule('W', { effect: 'warn', when: 'false' })];
      x.expected = { decision: 'none', code: null, rule: null, copy: null };
    });
    expect(run(none).verdict).toBe('passed');
    const warned = fixture('fx', (x) => {
      x.rules = [rule('W', { effect: 'warn', copy: { what: 'w' } })];
      x.expected = { decision: 'warn', code: null, copy: null };
    });
    const c = run(warned);
    expect(c.verdict).toBe('failed');
    expect(Object.keys(c.diff ?? {}).sort()).toEqual(['code', 'copy']);
  });

  it('[OAR-CONF-34] [OAR-OPS-17] at a block no transform is applied: the content is the input unchanged, and null is not content', () => {
    const withTransform = (expected: Record<string, unknown>) => fixture('fx', (x) => {
      x.input.capability = cap(undefined, { supports_transform: true });
      x.input.content = 'abc';
      x.rules = [rule('A_T', { effect: 'transform', transform: { action: 'redact', target: 'content' } }), rule('B_BLOCK', { effect: 'block' })];
      x.expected = expected;
    });
    expect(run(withTransform({ decision: 'block', transforms: [], content: 'abc' })).verdict).toBe('passed');
    const redacted = run(withTransform({ decision: 'block', content: '[REDACTED]' }));
    expect(redacted.verdict).toBe('failed');
    expect(redacted.diff?.content).toEqual({ expected: '[REDACTED]', actual: 'abc' });
    const nullContent = run(withTransform({ decision: 'block', content: null }));
    expect(nullContent.verdict).not.toBe('passed');
  });

  it('conformance/README.md documents content at a block as the runner compares it: the input unchanged, not null', () => {
    const row = readFileSync('conformance/README.md', 'utf8').split('\n').find((l) => l.startsWith('| `content` |'));
    expect(row).toBeDefined();
    expect(row).toMatch(/unchanged at `nudge`, `warn`, `none` and `block`/);
    expect(row).not.toMatch(/\(a block\) has content `null`/);
  });

  it('on_fire accepts action names and {rule, action} objects', () => {
    const f = (on_fire: unknown[]) =>
      run(
        fixture('fx', (x) => {
          x.rules = [rule('A', { effect: 'warn', on_fire: ['increment_counter', 'publish_event'] })];
          x.expected = { on_fire };
        }),
      );
    expect(f(['increment_counter', 'publish_event']).verdict).toBe('passed');
    expect(f([{ rule: 'A', action: 'increment_counter' }, { action: 'publish_event' }]).verdict).toBe('passed');
    expect(f(['increment_counter', { rule: 'A' }]).verdict).toBe('passed');
    const c = f(['publish_event', 'increment_counter']);
    expect(c.diff?.on_fire).toEqual({ expected: ['publish_event', 'increment_counter'], actual: ['increment_counter', 'publish_event'] });
  });

  it('counters: an asserted zero matches an absent entry; a plain number is fire_count, or breaker_count for a breaker-only rule', () => {
    const f = (rules: Obj[], counters: Obj) => run(fixture('fx', (x) => ((x.rules = rules), (x.expected = { counters }))));
    const counting = [rule('A', { effect: 'warn', on_fire: ['increment_counter'] }), rule('Z', { effect: 'warn' })];
    expect(f(counting, { A: 1, Z: 0 }).verdict).toBe('passed');
    expect(f(counting, { A: { fire_count: 1, breaker_count: 0 }, Z: { breaker_count: 0 } }).verdict).toBe('passed');
    const breaker = [rule('B', { effect: 'warn', on_fire: ['increment_breaker'] })];
    expect(f(breaker, { B: 1 }).verdict).toBe('passed');
    const c = f(breaker, { B: { fire_count: 1 } });
    expect(c.reason).toBe('counters: B.fire_count: expected 1, actual 0');
    expect(c.diff?.counters).toEqual({ expected: { B: { fire_count: 1 } }, actual: { B: { fire_count: 0 } } });
    // Monitor mode advances nothing: the negative test an asserted zero exists for.
    expect(f([rule('M', { enforcement: 'monitor', on_fire: ['increment_breaker'] })], { M: 0 }).verdict).toBe('passed');
  });

  it('transforms, events and skipped_transforms compare by length, order and present members', () => {
    const f = fixture('fx', (x) => {
      x.input.capability = cap({ 'model.output': 'model.output' }, { profiles: ['pii'], detectors: ['detector://fixture'], supports_transform: true });
      x.input.anchor = 'model.output';
      x.input.content = 'abcdef';
      x.input.detector_facts = { pii_entities: [{ start: 1, end: 3 }] };
      const pii = { kind: 'detector', anchor: 'model.output', detector: { ref: 'detector://fixture' }, requires: { profiles: ['pii'] } };
      x.rules = [
        rule('A', { ...pii, effect: 'transform', transform: { action: 'redact', target: 'pii_entities', replacement: '#' }, on_fire: ['publish_event'] }),
        rule('B', { ...pii, effect: 'transform', transform: { action: 'replace', target: 'pii_entities', replacement: '*' } }),
      ];
      x.expected = {
        transforms: [{ rule: 'A', action: 'redact' }, { rule: 'B', replacement: '*' }],
        events: [{ rule: 'A', effect: 'transform' }],
        skipped_transforms: [{ rule: 'B', start: 1, end: 3, reason: 'overlap' }],
        content: 'a#def',
      };
    });
    const c = run(f);
    expect(c.verdict, c.reason).toBe('passed');
    const wrong = run({ ...f, expected: { skipped_transforms: [{ rule: 'B', start: 1, end: 2, reason: 'overlap' }] } });
    expect(wrong.reason).toBe('skipped_transforms[0]: expected {"rule":"B","start":1,"end":2,"reason":"overlap"}, actual {"rule":"B","start":1,"end":3,"reason":"overlap"}');
  });
});

// ---------------------------------------------------------------------------------------------

describe('[OAR-CONF-17] covers', () => {
  it('names only clauses the specification defines: an unknown one is errored, naming the nearest defined clause', () => {
    const c = run(fixture('unknown', (f) => (f.covers = ['OAR-EVAL-4', 'OAR-EVAL-999'])));
    expectErrored(c, 'OAR-CONF-17', 'covers names `OAR-EVAL-999`, which this specification does not define (the nearest defined clause is `OAR-EVAL-');
    expect(run(fixture('typo', (f) => (f.covers = ['OAR-EVL-4']))).reason).toContain('(the nearest defined clause is `OAR-EVAL-4`)');
  });

  it('accepts a retired clause: it is still defined', () => {
    const spec = JSON.parse(readFileSync('conformance/clauses.json', 'utf8')) as { clauses: { id: string; retired: boolean }[] };
    const retired = spec.clauses.find((c) => c.retired);
    expect(retired).toBeDefined();
    expect(run(fixture('retired', (f) => (f.covers = [retired!.id]))).verdict).toBe('passed');
  });
});

describe('the report, the table and the command', () => {
  const dir = tempDir({
    'pass.json': fixture('pass'),
    'fail.json': fixture('fail', (f) => (f.expected = { decision: 'none' })),
    'sub/bad.json': fixture('bad', (f) => (f.expected.verdict = 'x')),
    'sub/wrong-stem.json': fixture('other'),
    'notes.txt': 'not a fixture',
  });

  it('[OAR-CONF-24] enumerates every case and counts errored apart from failed and skipped apart from passed', () => {
    const r = runFixtures([dir, join(dir, 'pass.json'), join(dir, 'missing.json')]);
    // pass.json named twice is run once; the missing path is a case that could not be run.
    expect(r.cases.map((c) => [c.id, c.verdict])).toEqual([
      ['fail', 'failed'],
      ['pass', 'passed'],
      ['bad', 'errored'],
      ['wrong-stem', 'errored'], // named by its file: its id \`other\` claims nothing
      ['missing', 'errored'],
    ]);
    expect(r.counts).toEqual({ passed: 1, failed: 1, skipped: 0, errored: 3 });
    expect(r.total).toBe(5);
    expect(reportProblems(r)).toEqual([]);
  });

  it('keeps case ids unique: a second fixture claiming an id is errored, naming both files', () => {
    const d = tempDir({ 'a/same.json': fixture('same'), 'b/same.json': fixture('same') });
    const r = runFixtures([d]);
    expect(r.cases.map((c) => c.verdict)).toEqual(['passed', 'errored']);
    expect(r.cases[1]!.id).toBe(`same (${join(d, 'b/same.json')})`);
    expect(r.cases[1]!.reason).toContain(join(d, 'a/same.json'));
    expect(reportProblems(r)).toEqual([]);
  });

  it('[OAR-CONF-17] a fixture claiming another\'s id is errored under its own file name; the other still runs', () => {
    const d = tempDir({ 'aaa.json': fixture('bar'), 'bar.json': fixture('bar') });
    const r = runFixtures([d]);
    expect(r.cases.map((c) => [c.id, c.verdict])).toEqual([['aaa', 'errored'], ['bar', 'passed']]);
    expect(r.cases[0]!.reason).toContain('OAR-CONF-17');
    expect(reportProblems(r)).toEqual([]);
  });

  it('[OAR-CONF-35] a directory search passes over the corpus manifest beside the fixtures', () => {
    const d = tempDir({ 'manifest.json': { version: '1.0.0', baseline: ['pass'] }, 'pass.json': fixture('pass') });
    const r = runFixtures([d]);
    expect(r.cases.map((c) => [c.id, c.verdict])).toEqual([['pass', 'passed']]);
    expect(r.total).toBe(1);
  });

  it('[OAR-CONF-17] a link giving a fixture another name never stands in for it: the real file is run, the alias is errored under its own name', () => {
    const d = tempDir({ 'ok.json': fixture('ok') });
    symlinkSync('ok.json', join(d, 'a-alias.json'));
    const r = runFixtures([d]);
    expect(r.cases.map((c) => [c.id, c.verdict])).toEqual([['a-alias', 'errored'], ['ok', 'passed']]);
    expect(r.cases[0]!.reason).toContain('must equal its file name stem');
    expect(r.cases[0]!.reason).toContain(`${join(d, 'a-alias.json')} is a symbolic link to`);
    expect(r.total).toBe(2);
    // The real file named beside its directory is still run once.
    expect(runFixtures([d, join(d, 'ok.json')]).total).toBe(2);
    expect(reportProblems(r)).toEqual([]);
  });

  it('runs a file reached through a linked directory once, and a directory link loop ends', () => {
    const d = tempDir({ 'sub/ok.json': fixture('ok') });
    symlinkSync('sub', join(d, 'again'));
    symlinkSync('..', join(d, 'sub', 'up'));
    const r = runFixtures([d]);
    expect(r.cases.map((c) => [c.id, c.verdict])).toEqual([['ok', 'passed']]);
  });

  it('identifies the corpus it measured: the paths, the fixture files, a digest of their relative paths and bytes', () => {
    const files = { 'a.json': fixture('a'), 'sub/b.json': fixture('b') };
    const one = runFixtures([tempDir(files)]);
    const copy = tempDir(files);
    const two = runFixtures([copy]);
    expect(two.corpus).toEqual({ paths: [copy], fixture_files: 2, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    // The same fixtures elsewhere: the same digest. One byte or one name changed: another.
    expect(two.corpus.sha256).toBe(one.corpus.sha256);
    expect(runFixtures([tempDir({ ...files, 'a.json': fixture('a', (f) => (f.title = 'x')) })]).corpus.sha256).not.toBe(one.corpus.sha256);
    expect(runFixtures([tempDir({ 'a.json': fixture('a'), 'b.json': fixture('b') })]).corpus.sha256).not.toBe(one.corpus.sha256);
    // The documented construction, by hand.
    const h = createHash('sha256');
    for (const [rel, f] of [['a.json', files['a.json']], ['sub/b.json', files['sub/b.json']]] as const) {
      const bytes = Buffer.from(JSON.stringify(f, null, 2));
      h.update(`${rel}\0${bytes.length}\0`).update(bytes);
    }
    expect(one.corpus.sha256).toBe(h.digest('hex'));
    expect(renderTable(two)).toContain(`corpus: ${copy} — 2 fixture files; sha256 ${two.corpus.sha256}`);
    expect(reportProblems(two)).toEqual([]);
  });

  it('[OAR-CONF-35] a fixture the corpus manifest lists with no file is an errored case, so the total is the manifest\'s count', () => {
    for (const fixtures of [['a', 'gone', 'b'], [{ id: 'a' }, { id: 'gone', baseline: true }, { id: 'b' }]]) {
      const d = tempDir({ 'manifest.json': { version: '1.0.0', fixtures }, 'a.json': fixture('a'), 'sub/b.json': fixture('b') });
      const r = runFixtures([d]);
      expect(r.cases.map((c) => [c.id, c.verdict])).toEqual([['a', 'passed'], ['b', 'passed'], ['gone', 'errored']]);
      expect(r.cases[2]!.reason).toBe(`listed in ${join(d, 'manifest.json')}, no file: no fixture with this id was found under ${d}`);
      expect(r.total).toBe(3);
      expect(r.corpus).toMatchObject({ fixture_files: 2, manifests: [{ file: join(d, 'manifest.json'), fixtures: 3 }] });
      expect(reportProblems(r)).toEqual([]);
    }
    // A manifest that cannot be read is said, not ignored.
    const bad = tempDir({ 'manifest.json': '{"fixtures": [', 'a.json': fixture('a') });
    const r = runFixtures([bad]);
    expect(r.cases.map((c) => [c.id, c.verdict])).toEqual([['a', 'passed'], ['manifest', 'errored']]);
    expect(r.cases[1]!.reason).toContain('cannot be read');
  });

  it('collects *.json recursively, sorted, and reports an unreadable path', () => {
    const entries = collectFixtureFiles([dir, join(dir, 'nope')]);
    expect(entries).toEqual([
      { file: join(dir, 'fail.json') },
      { file: join(dir, 'pass.json') },
      { file: join(dir, 'sub/bad.json') },
      { file: join(dir, 'sub/wrong-stem.json') },
      { path: join(dir, 'nope'), reason: expect.stringContaining('no such file') },
    ]);
  });

  it('a path given that is not there is said in words, naming what the argument should be', () => {
    const nope = join(dir, 'nope');
    const r = runFixtures([nope]);
    expect(r.cases[0]?.reason).toBe(`cannot read \`${nope}\`: no such file or directory; give a conformance fixture file (*.json) or a directory of them`);
    expect(renderTable(r)).not.toContain('ENOENT');
  });

  it('renders a table whose last line is exactly "N passed, N failed, N skipped", errored counted as failed', () => {
    const r = runFixtures([dir, join(dir, 'missing.json')]);
    const text = renderTable(r);
    const lines = text.trimEnd().split('\n');
    expect(lines[lines.length - 1]).toBe('1 passed, 4 failed, 0 skipped');
    expect(lines[lines.length - 1]).toBe(summaryLine(r));
    expect(text.endsWith('1 passed, 4 failed, 0 skipped\n')).toBe(true);
    expect(text).toContain('- decision: expected "none", actual "block"');
    expect(text).toMatch(/errored\s+bad .*\n\s+malformed fixture: .*verdict.*OAR-CONF-22/);
  });

  it('exits 0 only when nothing failed or errored', () => {
    const ok = tempDir({ 'pass.json': fixture('pass') });
    const cap1 = capture();
    expect(main([ok], cap1.io)).toBe(0);
    expect(cap1.out().trimEnd().split('\n').pop()).toBe('1 passed, 0 failed, 0 skipped');
    // A skip alone does not fail the run; it is reported.
    const skip = tempDir({
      'pass.json': fixture('pass'),
      'acme.json': fixture('acme', (f) => (f.input.capability = cap(undefined, { detectors: ['detector://acme'] }))),
    });
    const cap2 = capture();
    expect(main([skip], cap2.io)).toBe(0);
    expect(cap2.out().trimEnd().split('\n').pop()).toBe('1 passed, 0 failed, 1 skipped');
    expect(main([join(dir, 'fail.json')], capture().io)).toBe(1);
    expect(main([join(dir, 'sub/bad.json')], capture().io)).toBe(1); // errored only
    expect(main([join(ok, 'missing.json')], capture().io)).toBe(1);
  });

  it('the two summary lines agree: errored cases are among the failed in both', () => {
    const lines = renderTable(runFixtures([dir, join(dir, 'missing.json')])).trimEnd().split('\n');
    expect(lines.slice(-2)).toEqual(['5 fixtures: 1 passed, 4 failed (3 errored: could not be run), 0 skipped (not adoptable)', '1 passed, 4 failed, 0 skipped']);
    const clean = renderTable(runFixtures([join(dir, 'pass.json')])).trimEnd().split('\n');
    expect(clean.slice(-2)).toEqual(['1 fixture: 1 passed, 0 failed, 0 skipped (not adoptable)', '1 passed, 0 failed, 0 skipped']);
  });

  it('a run where every case errored exits 1 pointing at the errors, not at skips', () => {
    const c = capture();
    expect(main([join(dir, 'sub/bad.json')], c.io)).toBe(1);
    expect(c.out().trimEnd().split('\n').slice(-2)).toEqual(['1 fixture: 0 passed, 1 failed (1 errored: could not be run), 0 skipped (not adoptable)', '0 passed, 1 failed, 0 skipped']);
    expect(c.err()).toBe('oarc conformance: no fixture was run: 1 errored, none passed or failed; the report says why the errored case could not be run: fix that and run again\n');
  });

  it('[OAR-CONF-35] exits 1 when no fixture was run — every one skipped — keeping the last line\'s format', () => {
    const skipped = tempDir({ 'acme.json': fixture('acme', (f) => (f.input.capability = cap(undefined, { detectors: ['detector://acme'] }))) });
    const c = capture();
    expect(main([skipped], c.io)).toBe(1);
    expect(c.out().trimEnd().split('\n').pop()).toBe('0 passed, 0 failed, 1 skipped');
    expect(c.err()).toBe('oarc conformance: no fixture was run: 1 skipped, none passed or failed; a conformance claim cannot be built of skips [OAR-CONF-35]\n');
  });

  it('exits 1 when no fixture was found, 2 on a usage error', () => {
    const empty = tempDir({});
    const c = capture();
    expect(main([empty], c.io)).toBe(1);
    expect(c.err()).toContain('no fixtures found');
    expect(main([], capture().io)).toBe(2);
    const u = capture();
    expect(main(['--xml', empty], u.io)).toBe(2);
    expect(u.err()).toContain('unknown option --xml');
    const h = capture();
    expect(main(['--help'], h.io)).toBe(0);
    expect(h.out()).toContain('usage: oarc conformance');
  });

  it('--help documents the verdicts, the summary lines and the exit status; a misspelt option names the one meant', () => {
    const h = capture();
    expect(main(['--help'], h.io)).toBe(0);
    for (const part of ['Verdicts', 'passed ', 'failed ', 'skipped ', 'errored ', 'Summary lines', 'N passed, N failed, N skipped', 'Exit status', '  0   ', '  1   ', '  2   ']) {
      expect(h.out()).toContain(part);
    }
    const u = capture();
    expect(main([FIXTURES, '--jsn'], u.io)).toBe(2);
    expect(u.err()).toContain('oarc conformance: unknown option --jsn (did you mean `--json`?)');
  });

  it('--json prints the report, which validates against the schema', () => {
    const c = capture();
    expect(main([dir, '--json'], c.io)).toBe(1);
    const report = JSON.parse(c.out()) as Obj;
    expect(validateReport(report)).toEqual([]);
    expect(report.total).toBe(4);
    const failedCase = (report.cases as Obj[]).find((x) => x.id === 'fail')!;
    expect(failedCase.diff).toEqual({ decision: { expected: 'none', actual: 'block' } });
  });

  it('reads integers beyond 2^53 exactly', () => {
    const f = (literal: string) =>
      fixture('fx', (x) => {
        x.input.capability = cap(undefined, { profiles: ['tool'] });
        x.rules = [rule('BIG', { requires: { profiles: ['tool'] }, when: `tool_arg_int("n") == ${literal}` })];
        x.input.tool_call = { name: 'count', arguments: { n: '@' } };
        x.expected = { decision: literal === '9007199254740993' ? 'block' : 'none' };
      });
    // 9007199254740993 is not a double: read as a number it would equal ...992.
    for (const literal of ['9007199254740993', '9007199254740992']) {
      const text = JSON.stringify(f(literal)).replace('"@"', '9007199254740993');
      expect(runFixtureText(text, 'fx.json').verdict, literal).toBe('passed');
    }
  });
});
