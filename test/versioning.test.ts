/**
 * Section 11, extensibility and versioning. [OAR-VER-1] to [OAR-VER-5] constrain how the
 * specification evolves and how rule authors target engines; none is a rule an engine evaluates.
 * Each has consequences an engine makes observable, and those are what this file checks:
 *
 * - [OAR-VER-1] a minor revision only adds: so at its own minor an engine accepts every value the
 *   1.0 text lists for each closed enumeration (nothing narrowed) and nothing beyond it (a later
 *   minor's addition is refused, never ignored) — each list read from the specification's text.
 * - [OAR-VER-2] a breaking change bumps the major: an engine refuses every major but its own, for
 *   rule documents, configuration documents and capability documents alike, never coercing one.
 * - [OAR-VER-3] a published version is immutable: oarc pins the one version it implements, and
 *   that is the version the specification it is tested against declares.
 * - [OAR-VER-4] (with [OAR-DOC-5]) an engine accepts every minor up to its own and refuses a
 *   greater one, so an author targeting a mixed fleet must write to its lowest minor.
 * - [OAR-VER-5] a profile's facts never change within a major: oarc's profile tables, core facts and
 *   core anchors are exactly the 1.0 tables parsed from the specification text, and a capability
 *   claiming a profile gets exactly that table's declarations — no more, no fewer.
 *
 * What is read from the specification is `conformance/clauses.json` (conformance/clauses.ts
 * extracts it; test/conformance/clauses.test.ts holds it to the text when OARC_SPEC names it).
 */
import { describe, expect, it } from 'vitest';
import { defaultSpecDataFile, readSpecData } from '../conformance/clauses.js';
import { capabilitySymbols, CAPABILITY_VERSION, loadCapability } from '../compiler/load/capability.js';
import { IMPLEMENTED_VERSION } from '../compiler/load/schema.js';
import { CORE_ANCHORS, CORE_FACTS, DETECTOR_BACKED_PROFILES, STANDARD_PROFILES, STANDARD_PROFILE_NAMES, declaredType } from '../compiler/load/vocabulary.js';
import type { Diagnostic } from '../compiler/diagnostics.js';
import { cap, load, loadErrors, rule } from './engine/harness.js';

const SPEC = readSpecData(defaultSpecDataFile());
const CLAUSES = new Map(SPEC.clauses.map((c) => [c.id, c]));

const IMPL = `${IMPLEMENTED_VERSION.major}.${IMPLEMENTED_VERSION.minor}`;

const named = (ds: readonly Diagnostic[], token: string) => ds.some((d) => d.message.includes(token) || d.token === token);
const clauses = (ds: readonly Diagnostic[]) => [...new Set(ds.map((d) => d.clause))];

/** The one closed list a clause defines. */
function listed(clause: string): string[] {
  const c = CLAUSES.get(clause);
  if (c === undefined) throw new Error(`${clause} is not defined`);
  expect(c.enumerations, `${clause} defines one closed list`).toHaveLength(1);
  return c.enumerations[0]!;
}

describe('the specification', () => {
  it('is the version oarc implements ([OAR-VER-3])', () => {
    // [OAR-VER-3] oarc pins one version: the one the text declares, and its change log's latest.
    expect(SPEC.version).toBe(IMPL);
    expect(SPEC.changeLog.at(-1)).toBe(IMPL);
    expect(`${CAPABILITY_VERSION.major}.${CAPABILITY_VERSION.minor}`).toBe(IMPL);
  });
});

// ---------------------------------------------------------------------------------------------
// [OAR-VER-2] [OAR-VER-4] version markers

const CAP = cap({ profiles: [] });
const ok = (oar: unknown) => rule({ id: 'R', oar, anchor: 'tool.pre_invoke', effect: 'warn' });

describe('[OAR-VER-2] [OAR-VER-4] the version gates ([OAR-DOC-4], [OAR-DOC-5], [OAR-CFG-1])', () => {
  it('[OAR-VER-4] every minor up to the implemented one is accepted (the implemented minor is 0: 1.0 alone)', () => {
    for (let minor = 0n; minor <= IMPLEMENTED_VERSION.minor; minor++) {
      const v = `${IMPLEMENTED_VERSION.major}.${minor}`;
      expect(load({ capability: CAP, rules: [ok(v)] }).rules.map((r) => r.qid), v).toEqual(['R']);
      expect(load({ capability: CAP, rules: [ok(v)], configs: [JSON.stringify({ oar_config: v, enforcement: { R: 'monitor' } })] }).rules).toHaveLength(1);
    }
  });

  it('[OAR-VER-4] a greater minor is refused, naming oar — never loaded with its unknown parts ignored', () => {
    for (const v of ['1.1', '1.2', '1.10', '1.99999999999999999999']) {
      const ds = loadErrors({ capability: CAP, rules: [ok(v)] });
      expect(clauses(ds), v).toEqual(['OAR-DOC-5']);
      expect(named(ds, 'oar'), v).toBe(true);
    }
  });

  it('[OAR-VER-2] another major is refused, not downgraded or coerced', () => {
    for (const v of ['0.0', '0.9', '2.0', '10.0', '100000000000000000001.0']) {
      const ds = loadErrors({ capability: CAP, rules: [ok(v)] });
      expect(clauses(ds), v).toEqual(['OAR-DOC-4']);
      expect(named(ds, 'oar'), v).toBe(true);
    }
    // Nor is a spelling that merely looks like the implemented version coerced to it.
    for (const v of ['01.0', '1.00', '1', '1.0.0', 'v1.0', ' 1.0', 1.0, 1]) {
      expect(clauses(loadErrors({ capability: CAP, rules: [ok(v)] })), String(v)).toEqual(['OAR-DOC-3']);
    }
  });

  it('[OAR-VER-2] [OAR-VER-4] configuration documents follow the same rules ([OAR-CFG-1])', () => {
    const config = (v: string) => JSON.stringify({ oar_config: v, disable: ['R'] });
    for (const v of ['1.1', '2.0', '0.9', '01.0']) {
      const ds = loadErrors({ capability: CAP, rules: [ok('1.0')], configs: [config(v)] });
      expect(clauses(ds), v).toEqual(['OAR-CFG-1']);
      expect(named(ds, 'oar_config'), v).toBe(true);
    }
  });

  it('[OAR-VER-2] [OAR-VER-4] capability documents follow the same rules', () => {
    const doc = (v: string) => ({ ...(JSON.parse(CAP) as Record<string, unknown>), oar_capability_version: v });
    expect(loadCapability(doc(IMPL)).capability).toBeDefined();
    for (const [v, clause] of [['1.1', 'OAR-DOC-5'], ['2.0', 'OAR-DOC-4'], ['0.9', 'OAR-DOC-4'], ['01.0', 'OAR-DOC-3']] as const) {
      const r = loadCapability(doc(v));
      expect(r.capability, v).toBeUndefined();
      expect(clauses(r.diagnostics.filter((d) => d.severity === 'error')), v).toEqual([clause]);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// [OAR-VER-1] closed enumerations: exactly the 1.0 members

interface Enumeration {
  clause: string;
  /** A rule using `value`, and the capability it needs. */
  use: (value: string) => { rule: string; capability?: string };
  /** A value no 1.0 list has: what a later minor might add. */
  later: string;
}

const PRE = 'tool.pre_invoke';
const ENUMERATIONS: Record<string, Enumeration> = {
  kind: {
    clause: 'OAR-DOC-10',
    use: (kind) => ({ rule: rule({ id: 'R', kind, anchor: PRE, effect: 'warn', ...(kind === 'detector' ? { detector: { ref: 'detector://noop' } } : {}) }) }),
    later: 'audit',
  },
  effect: {
    clause: 'OAR-DOC-11',
    use: (effect) =>
      effect === 'transform'
        ? { rule: rule({ id: 'R', anchor: 'model.output', effect, transform: { action: 'redact', target: 'content' } }), capability: cap({ transform: true }) }
        : { rule: rule({ id: 'R', anchor: PRE, effect }) },
    later: 'deny',
  },
  enforcement: { clause: 'OAR-DOC-16', use: (enforcement) => ({ rule: rule({ id: 'R', anchor: PRE, effect: 'warn', enforcement }) }), later: 'shadow' },
  status: { clause: 'OAR-DOC-29', use: (status) => ({ rule: rule({ id: 'R', anchor: PRE, effect: 'warn', status }) }), later: 'draft' },
  'related.type': {
    clause: 'OAR-DOC-30',
    use: (type) => ({ rule: rule({ id: 'R', anchor: PRE, effect: 'warn', related: [{ id: 'OLD_RULE', type }] }) }),
    later: 'supersedes',
  },
  on_fire: { clause: 'OAR-FIRE-1', use: (a) => ({ rule: rule({ id: 'R', anchor: PRE, effect: 'warn', on_fire: [a] }) }), later: 'reset_all' },
  'transform.action': {
    clause: 'OAR-OPS-13',
    use: (action) => ({
      rule: rule({ id: 'R', anchor: 'model.output', effect: 'transform', transform: { action, target: 'content', replacement: '*' } }),
      capability: cap({ transform: true }),
    }),
    later: 'mask',
  },
};

describe('[OAR-VER-1] the 1.0 enumerations, neither narrowed nor widened', () => {
  it('[OAR-VER-1] the lists parsed from the text are the ones expected (the parser reads what it should)', () => {
    expect(listed('OAR-DOC-10')).toEqual(['schema', 'policy', 'invariant', 'detector']);
    expect(listed('OAR-FIRE-1')).toEqual(['increment_counter', 'reset_counter', 'publish_event', 'increment_breaker', 'reset_breaker']);
    expect(listed('OAR-OPS-13')).toEqual(['redact', 'replace', 'annotate']);
  });

  for (const [field, e] of Object.entries(ENUMERATIONS)) {
    it(`[OAR-VER-1] ${field}: every member ${e.clause} lists loads, and a member it does not list is refused`, () => {
      const members = listed(e.clause);
      expect(members.length).toBeGreaterThan(1);
      for (const v of members) {
        const u = e.use(v);
        expect(load({ capability: u.capability ?? CAP, rules: [u.rule] }).rules, `${field} ${v}`).toHaveLength(1);
      }
      expect(members).not.toContain(e.later);
      const u = e.use(e.later);
      const ds = loadErrors({ capability: u.capability ?? CAP, rules: [u.rule] });
      expect(named(ds, e.later), `${field} ${e.later}: ${ds.map((d) => d.message).join(' | ')}`).toBe(true);
    });
  }
});

// ---------------------------------------------------------------------------------------------
// [OAR-VER-5] profiles are the 1.0 tables

describe('[OAR-VER-5] the vocabulary is the 1.0 tables of the specification text', () => {
  it('[OAR-VER-5] every standard profile, in order, with exactly its facts and functions, names and types', () => {
    expect(SPEC.profiles.map((p) => p.name)).toEqual([...STANDARD_PROFILE_NAMES]);
    for (const { name: p, facts: rows } of SPEC.profiles) {
      expect(rows.length, p).toBeGreaterThan(0);
      expect((STANDARD_PROFILES.get(p) ?? []).map((d) => [d.name, declaredType(d)]), p).toEqual(rows);
    }
  });

  it('[OAR-VER-5] the core facts (5.3) and core anchors (8.1)', () => {
    expect(CORE_FACTS.map((d) => [d.name, declaredType(d)])).toEqual(SPEC.coreFacts);
    expect([...CORE_ANCHORS]).toEqual(SPEC.coreAnchors);
    expect(SPEC.coreAnchors).toHaveLength(8);
  });

  it('[OAR-VER-5] a capability claiming a profile declares exactly that table: the core tier plus its rows, nothing more', () => {
    for (const { name: p, facts: rows } of SPEC.profiles) {
      const doc = {
        ...(JSON.parse(CAP) as Record<string, unknown>),
        profiles: [p],
        detectors: DETECTOR_BACKED_PROFILES.includes(p) ? ['detector://noop'] : [],
      };
      const r = loadCapability(doc);
      expect(r.capability, `${p}: ${r.diagnostics.map((d) => d.message).join(' | ')}`).toBeDefined();
      const declared = capabilitySymbols(r.capability!).symbols.map((s) => [s.name, s.kind === 'fact' ? s.type : `(${s.param}) -> ${s.result}`]);
      expect(declared, p).toEqual([...SPEC.coreFacts, ...rows]);
    }
  });

  it('[OAR-VER-5] a profile name the 1.0 text does not define cannot be claimed (a later minor\'s new profile is not assumed)', () => {
    const doc = { ...(JSON.parse(CAP) as Record<string, unknown>), profiles: ['tool-lite'] };
    const r = loadCapability(doc);
    expect(r.capability).toBeUndefined();
    expect(named(r.diagnostics, 'tool-lite')).toBe(true);
  });
});
