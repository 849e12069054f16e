/**
 * The corpus lint (conformance/corpus-lint.ts), run by the coverage check on every CI run:
 *
 * - [OAR-CONF-36] a fixture's capability document declares no capability the fixture does not
 *   need, judged behaviourally: each removable declaration is removed in turn and the fixture re-run
 *   through the real runner; a declaration whose removal leaves the outcome unchanged is flagged.
 * - [OAR-CONF-23] a fixture restricts itself to core anchors and core or declared-profile facts,
 *   except where the clause it covers is about host-tier behaviour (or, by the documented reading,
 *   about the condition language or copy needing typed data), and declares the host facts it uses.
 *
 * Each is exercised on fixtures that obey it and on fixtures that break it, and the repository's
 * own corpus is held to both.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  HOST_TIER_CLAUSES,
  lintCapabilityNeeds,
  lintCorpus,
  lintHostTier,
  removableDeclarations,
  withCapability,
} from '../../conformance/corpus-lint.js';
import { readSpecData } from '../../conformance/clauses.js';
import { checkCoverageFiles, defaultPaths, main, renderCoverage } from '../../conformance/coverage.js';
import { runFixtureText } from '../../conformance/runner.js';

type Obj = Record<string, unknown>;

const CORE = ['tool.pre_invoke', 'tool.handler', 'tool.post_invoke', 'agent.post_turn', 'agent.finalize', 'model.input', 'model.output', 'model.tool_result'];

function cap(extra: Obj = {}, core: Record<string, string> = { 'tool.pre_invoke': 'tool.pre_invoke' }): Obj {
  return { anchors: { core, unsupported: CORE.filter((a) => !(a in core)) }, ...extra };
}

const rule = (id: string, extra: Obj = {}): Obj => ({ oar: '1.0', id, kind: 'policy', anchor: 'tool.pre_invoke', effect: 'block', ...extra });

/** A fixture whose rule needs the `tool` profile, and whose capability declares exactly that. */
function fixture(id: string, change: (f: Obj & { input: Obj; expected: Obj; rules: Obj[] }) => void = () => {}): Obj {
  const f = {
    id,
    covers: ['OAR-FACT-19'],
    rules: [rule('NO_SHELL', { requires: { profiles: ['tool'] }, when: 'tool == "shell"' })],
    input: { capability: cap({ profiles: ['tool'] }), anchor: 'tool.pre_invoke', facts: { tool: 'shell' } } as Obj,
    expected: { decision: 'block', rule: 'NO_SHELL' } as Obj,
  };
  change(f);
  return f;
}

const text = (f: Obj) => `${JSON.stringify(f, null, 2)}\n`;
const needs = (f: Obj) => lintCapabilityNeeds(text(f), `fixtures/${String(f.id)}.json`);
const hostTier = (f: Obj) => lintHostTier(text(f), `fixtures/${String(f.id)}.json`);
const capOf = (f: Obj) => (f.input as Obj).capability as Obj;

describe('[OAR-CONF-36] removable declarations', () => {
  it('are each profile, host fact, detector and host anchor, supports_transform: true and a non-zero window — never the anchor map', () => {
    const c = cap({
      host: 'acme',
      profiles: ['tool', 'session'],
      host_facts: [{ name: 'acme.tier', type: 'string' }],
      detectors: ['detector://noop'],
      supports_transform: true,
      activity_window: 4,
      expression_nodes_max: 512,
    });
    (c.anchors as Obj).host = ['gateway.render'];
    expect(removableDeclarations(c).map((d) => d.label)).toEqual([
      'profiles: tool',
      'profiles: session',
      'host_facts: acme.tier',
      'detectors: detector://noop',
      'anchors.host: gateway.render',
      'supports_transform: true',
      'activity_window: 4',
    ]);
    expect(removableDeclarations(cap({ supports_transform: false, activity_window: 0 }))).toEqual([]);
    expect(removableDeclarations(cap())).toEqual([]);
  });

  it('removing one leaves the others, and the text around the capability is kept byte for byte', () => {
    const f = fixture('big', (x) => {
      x.input.capability = cap({ profiles: ['tool', 'session'], supports_transform: true });
    });
    // An integer beyond 2^53 elsewhere in the fixture must survive: a parse and re-serialisation
    // would round it.
    const t = text(f).replace('"shell"\n', '"shell",\n      "x-big": 9223372036854775807\n');
    const [session, st] = [removableDeclarations(capOf(f))[1]!, removableDeclarations(capOf(f))[2]!];
    const c1 = structuredClone(capOf(f));
    session.remove(c1);
    st.remove(c1);
    const out = withCapability(t, c1);
    expect(out).toContain('9223372036854775807');
    const parsed = JSON.parse(out) as { input: { capability: Obj } };
    expect(parsed.input.capability.profiles).toEqual(['tool']);
    expect(parsed.input.capability.supports_transform).toBe(false);
    expect(out.slice(0, out.indexOf('"capability"'))).toBe(t.slice(0, t.indexOf('"capability"')));
  });
});

describe('[OAR-CONF-36] lintCapabilityNeeds', () => {
  it('a fixture declaring exactly what it needs: nothing flagged, one run per declaration plus its own', () => {
    const f = fixture('exact');
    expect(runFixtureText(text(f), 'fixtures/exact.json').verdict).toBe('passed');
    expect(needs(f)).toEqual({ unnecessary: [], runs: 2 });
  });

  it('a fixture with nothing removable is not run at all', () => {
    const f = fixture('bare', (x) => {
      x.rules = [rule('B')];
      x.input.capability = cap();
      delete x.input.facts;
      x.expected = { decision: 'block' };
    });
    expect(needs(f)).toEqual({ unnecessary: [], runs: 0 });
  });

  it('flags an unused profile, host fact, host anchor, detector, supports_transform and activity window', () => {
    const f = fixture('extra', (x) => {
      const c = cap({
        host: 'acme',
        profiles: ['tool', 'session'],
        host_facts: [{ name: 'acme.tier', type: 'string' }],
        detectors: ['detector://noop'],
        supports_transform: true,
        activity_window: 8,
      });
      (c.anchors as Obj).host = ['gateway.render'];
      x.input.capability = c;
    });
    expect(runFixtureText(text(f), 'fixtures/extra.json').verdict).toBe('passed');
    const r = needs(f);
    expect(r.unnecessary).toEqual([
      'profiles: session',
      'host_facts: acme.tier',
      'detectors: detector://noop',
      'anchors.host: gateway.render',
      'supports_transform: true',
      'activity_window: 8',
    ]);
    expect(r.runs).toBe(8);
  });

  it('keeps declarations the outcome depends on: a flow needs its window, a transform needs supports_transform, a host anchor its catalogue', () => {
    const flow = fixture('flow', (x) => {
      x.covers = ['OAR-FACT-12'];
      x.rules = [rule('AFTER_READ', { flow: ['read'] })];
      x.input.capability = cap({ activity_window: 2 });
      x.input.recent_activity = ['read'];
      delete x.input.facts;
      x.expected = { decision: 'block', rule: 'AFTER_READ' };
    });
    expect(needs(flow).unnecessary).toEqual([]);

    const transform = fixture('transform', (x) => {
      x.covers = ['OAR-OPS-13'];
      x.rules = [
        rule('REDACT', {
          anchor: 'model.output',
          effect: 'transform',
          transform: { action: 'redact', target: 'acme.spans', replacement: '#' },
          requires: { facts: ['acme.spans'] },
        }),
      ];
      x.input.capability = cap(
        { host: 'acme', supports_transform: true, host_facts: [{ name: 'acme.spans', type: 'list<map>' }] },
        { 'model.output': 'model.output' },
      );
      x.input.anchor = 'model.output';
      x.input.content = 'abc';
      x.input.facts = { 'acme.spans': [{ start: 0, end: 1 }] };
      x.expected = { decision: 'transform', content: '#bc' };
    });
    expect(runFixtureText(text(transform), 'fixtures/transform.json').verdict).toBe('passed');
    expect(needs(transform).unnecessary).toEqual([]);

    const host = fixture('host', (x) => {
      x.covers = ['OAR-PROF-5'];
      x.rules = [rule('R', { anchor: 'gateway.render' })];
      const c = cap();
      (c.anchors as Obj).host = ['gateway.render'];
      x.input.capability = c;
      x.input.anchor = 'gateway.render';
      delete x.input.facts;
      x.expected = { decision: 'block' };
    });
    expect(needs(host).unnecessary).toEqual([]);
  });

  it('a rejection fixture that would still pass for another reason keeps the declaration it is about', () => {
    // [OAR-FACT-20]: a declared host fact named only in copy must be reached through requires.
    // Undeclared, the binding is rejected as an unknown identifier ([OAR-COPY-2]) naming the same
    // token, so the fixture would still "pass" — but for a reason that is not the clause it covers.
    const f = fixture('subject', (x) => {
      x.covers = ['OAR-FACT-20'];
      x.rules = [rule('R', { copy: { what: 'Tier {{acme.tier}}' } })];
      x.input.capability = cap({ host: 'acme', host_facts: [{ name: 'acme.tier', type: 'string' }] });
      delete x.input.facts;
      x.expected = { error: 'acme.tier' };
    });
    const without = structuredClone(f);
    delete (capOf(without) as Obj).host_facts;
    expect(runFixtureText(text(without), 'fixtures/subject.json').verdict).toBe('passed');
    expect(needs(f).unnecessary).toEqual([]);

    // …while a declaration the rejection does not depend on is still flagged.
    const extra = structuredClone(f);
    capOf(extra).profiles = ['session'];
    expect(needs(extra).unnecessary).toEqual(['profiles: session']);
  });

  it('a fixture that does not pass as written is not judged, and says so', () => {
    const f = fixture('wrong', (x) => {
      x.expected = { decision: 'warn' };
    });
    const r = needs(f);
    expect(r.unnecessary).toEqual([]);
    expect(r.notJudged).toContain('failed as written');
    expect(r.notJudged).toContain('OAR-CONF-36');
  });

  it('a skipped fixture is flagged for a declaration whose removal makes it pass', () => {
    const f = fixture('skip', (x) => {
      x.input.capability = cap({ profiles: ['tool'], detectors: ['detector://acme-unknown'] });
    });
    expect(runFixtureText(text(f), 'fixtures/skip.json').verdict).toBe('skipped');
    expect(needs(f).unnecessary).toEqual(['detectors: detector://acme-unknown']);
  });
});

describe('[OAR-CONF-23] lintHostTier', () => {
  const withHostFact = (id: string, covers: string[]) =>
    fixture(id, (x) => {
      x.covers = covers;
      x.rules = [rule('R', { requires: { facts: ['acme.n'] }, when: 'acme.n > 1' })];
      x.input.capability = cap({ host: 'acme', host_facts: [{ name: 'acme.n', type: 'int' }] });
      x.input.facts = { 'acme.n': 2 };
      x.expected = { decision: 'block' };
    });

  it('a fixture within core anchors and declared profiles raises nothing', () => {
    expect(hostTier(fixture('ok'))).toEqual([]);
  });

  it('host facts need a covered clause about host-tier behaviour, the condition language or copy', () => {
    expect(hostTier(withHostFact('h1', ['OAR-FACT-18']))).toEqual([]);
    expect(hostTier(withHostFact('h2', ['OAR-SEL-9', 'OAR-EVAL-4']))).toEqual([]);
    expect(hostTier(withHostFact('h3', ['OAR-EXPR-15']))).toEqual([]);
    expect(hostTier(withHostFact('h4', ['OAR-COPY-4']))).toEqual([]);
    const bad = hostTier(withHostFact('h5', ['OAR-EVAL-4']));
    expect(bad).toHaveLength(1);
    expect(bad[0]).toMatch(/h5\.json: declares host fact acme\.n but covers no clause about host-tier behaviour.*\(OAR-EVAL-4\).*\[OAR-CONF-23\]/);
    // Fact typing and provider failure can use a profile fact, so they do not justify one.
    expect(hostTier(withHostFact('h6', ['OAR-FACT-26', 'OAR-FACT-23']))).toHaveLength(1);
  });

  it('host anchors need a host-tier clause; typed data never justifies an anchor', () => {
    const withAnchor = (id: string, covers: string[]) =>
      fixture(id, (x) => {
        x.covers = covers;
        (capOf(x).anchors as Obj).host = ['gateway.render'];
      });
    expect(hostTier(withAnchor('a1', ['OAR-PROF-5']))).toEqual([]);
    expect(hostTier(withAnchor('a2', ['OAR-CONF-3']))).toEqual([]);
    const bad = hostTier(withAnchor('a3', ['OAR-EXPR-10']));
    expect(bad).toHaveLength(1);
    expect(bad[0]).toContain('declares host anchor gateway.render');
  });

  it('every supplied fact is core, of a declared profile, or a declared host fact', () => {
    const undeclaredHost = fixture('u1', (x) => {
      x.input.facts = { tool: 'shell', 'acme.tier': 'gold' };
    });
    expect(hostTier(undeclaredHost)).toEqual([
      'fixtures/u1.json: input.facts supplies host fact acme.tier, which input.capability.host_facts does not declare [OAR-CONF-23]',
    ]);
    const undeclaredProfile = fixture('u2', (x) => {
      x.input.occurrences = [{ anchor: 'tool.pre_invoke', facts: { tool: 'shell' } }, { anchor: 'tool.pre_invoke', detector_facts: { pii_entities: [] } }];
      delete x.input.anchor;
      delete x.input.facts;
    });
    expect(hostTier(undeclaredProfile)).toEqual([
      'fixtures/u2.json: input.occurrences[1].detector_facts supplies pii_entities, which is neither a core fact, nor of a declared profile, nor a declared host fact [OAR-CONF-23]',
    ]);
    // A declared host fact, a declared profile's function, and a core fact are all fine.
    const fine = withHostFact('u3', ['OAR-FACT-18']);
    capOf(fine).profiles = ['tool'];
    (fine.input as Obj).facts = { 'acme.n': 2, tool_arg_string: 'x', anchor: 'tool.pre_invoke' };
    expect(hostTier(fine)).toEqual([]);
  });
});

describe('the host-tier clause list', () => {
  it('names only clauses the specification defines, each with a reason', () => {
    const defined = new Set(readSpecData(defaultPaths().clauses).clauses.map((c) => c.id));
    for (const [id, why] of Object.entries(HOST_TIER_CLAUSES)) {
      expect(defined.has(id), id).toBe(true);
      expect(why.length).toBeGreaterThan(10);
    }
    const missing = new Set(defined);
    missing.delete('OAR-FACT-18');
    expect(lintCorpus([], missing).problems).toEqual(['corpus-lint: HOST_TIER_CLAUSES names OAR-FACT-18, which the specification does not define [OAR-CONF-23]']);
  });
});

describe('the repository corpus', () => {
  it('obeys [OAR-CONF-23] and [OAR-CONF-36]: no problem, nothing unjudged', () => {
    const dir = 'conformance/fixtures';
    const fixtures = readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => ({ file: join(dir, f), text: readFileSync(join(dir, f), 'utf8') }));
    const r = lintCorpus(fixtures);
    expect(r.problems).toEqual([]);
    expect(r.notJudged).toEqual([]);
    expect(r.fixtures).toBe(fixtures.length);
    expect(r.runs).toBeGreaterThan(100);
  });

  it('the coverage check fails on a fixture breaking either, and only then', () => {
    const root = mkdtempSync(join(tmpdir(), 'oarc-corpus-lint-'));
    try {
      // A specification whose clauses need no coverage, so the lint alone decides the verdict.
      const spec = join(root, 'spec.md');
      writeFileSync(spec, '- **[OAR-FACT-19]** An engine MAY do this.\n- **[OAR-EVAL-4]** An engine MAY do that.\n');
      const paths = { ...defaultPaths(), spec, fixtures: join(root, 'fixtures'), exempt: join(root, 'none.json') };
      mkdirSync(paths.fixtures);
      const write = (f: Obj) => writeFileSync(join(paths.fixtures, `${String(f.id)}.json`), text(f));
      const args = [spec, '--fixtures', paths.fixtures, '--exempt', paths.exempt];
      write(fixture('clean'));
      let out = '';
      expect(main(args, (s) => void (out += s))).toBe(0);
      expect(out).toMatch(/corpus lint \[OAR-CONF-23\] \[OAR-CONF-36\]: 1 fixtures, 2 runs to test capability declarations, 0 not judged/);

      write(
        fixture('extra-profile', (x) => {
          capOf(x).profiles = ['tool', 'session'];
        }),
      );
      write(
        fixture('host-fact', (x) => {
          x.covers = ['OAR-EVAL-4'];
          x.rules = [rule('R', { requires: { facts: ['acme.n'] }, when: 'acme.n > 1' })];
          x.input.capability = cap({ host: 'acme', host_facts: [{ name: 'acme.n', type: 'int' }] });
          x.input.facts = { 'acme.n': 2 };
          x.expected = { decision: 'block' };
        }),
      );
      const r = checkCoverageFiles(paths);
      expect(r.uncovered).toEqual([]);
      expect(r.lint?.problems).toEqual([
        expect.stringContaining("extra-profile.json: declares profiles: session in input.capability, but the fixture's outcome is the same without it [OAR-CONF-36]"),
        expect.stringContaining('host-fact.json: declares host fact acme.n but covers no clause about host-tier behaviour'),
      ]);
      expect(r.problems).toEqual(r.lint!.problems);
      expect(renderCoverage(r).trimEnd().endsWith('coverage: FAILED')).toBe(true);
      out = '';
      expect(main(args, (s) => void (out += s))).toBe(1);
      expect(out).toContain('extra-profile.json: declares profiles: session');
      expect(out).toContain('host-fact.json: declares host fact acme.n');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
