/**
 * Every load-time rule of sections 2, 3, 5, 6, 7, 8, 9 and Appendices A and C that the loader
 * enforces on a rule, a rule set, a capability or a configuration: for each clause a document (or
 * set) that must load and one that must be rejected, the rejection asserting the clause and the
 * token the clause says must be named (with the offset, inside conditions and copy). Everything goes
 * through the public loader (`loadPackTexts`, `loadPackFiles`).
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { formatDiagnostic, loadPackFiles, portabilityReport, type LoadedPack } from '../../compiler/index.js';
import {
  capability,
  errorsOf,
  load,
  loads,
  rejects,
  rejectsWith,
  rule,
  type Doc,
} from './fixtures.js';

const TOOL = { profiles: ['tool'] };
const qids = (p: LoadedPack) => p.rules.map((r) => r.qid);
const only = (p: LoadedPack, qid = 'A') => {
  const r = p.rules.find((x) => x.qid === qid);
  expect(r, `rule ${qid} loaded`).toBeDefined();
  return r!;
};
const config = (over: Doc = {}): Doc => ({ oar_config: '1.0', ...over });

// =============================================================================================
// Section 2 — the document model
// =============================================================================================

describe('[OAR-DOC-1] a rule document is a JSON object; YAML maps to it losslessly', () => {
  it('loads the same rule from JSON and from YAML', () => {
    const doc = rule({ when: 'tool == "read"', requires: TOOL });
    const fromJson = loads([JSON.stringify(doc)]);
    const fromYaml = loads([stringify(doc)]);
    expect(qids(fromYaml)).toEqual(qids(fromJson));
    expect(only(fromYaml).when?.source).toBe(only(fromJson).when?.source);
  });

  it('rejects a document that is not an object', () => {
    for (const text of ['"just a string"', '42', 'true']) {
      const r = load([text]);
      expect(r.ok).toBe(false);
      const errs = errorsOf(r);
      expect(errs).toHaveLength(1);
      expect(errs[0]!.clause).toBe('OAR-DOC-1');
      expect(errs[0]!.message).toMatch(/not a rule document|JSON object/);
    }
  });

  it('rejects YAML that has no lossless JSON mapping (a custom tag)', () => {
    const r = load(['oar: "1.0"\nid: A\nkind: policy\nanchor: tool.pre_invoke\neffect: !custom block\n']);
    expect(r.ok).toBe(false);
    expect(errorsOf(r).map((d) => d.clause)).toEqual(['OAR-DOC-1']);
  });
});

describe('[OAR-DOC-2] oar, id, kind, anchor and effect are required', () => {
  it('loads a document carrying all five and nothing else', () => {
    expect(qids(loads([rule()]))).toEqual(['A']);
  });

  for (const field of ['oar', 'id', 'kind', 'anchor', 'effect']) {
    it(`rejects a document missing ${field}, naming it`, () => {
      rejects([rule({ [field]: undefined })], 'OAR-DOC-2', field);
    });
  }
});

describe('[OAR-DOC-3] oar is <major>.<minor> without leading zeros', () => {
  it('loads "1.0"', () => {
    loads([rule({ oar: '1.0' })]);
  });

  it('rejects "01.0" — it is not a version, whatever it might equal', () => {
    const d = rejects([rule({ oar: '01.0' })], 'OAR-DOC-3', 'oar');
    expect(d.message).toContain('01.0');
  });

  for (const bad of ['1.00', '1', '1.0.0', 'v1.0', ' 1.0', '1.0 ', '1.-0']) {
    it(`rejects ${JSON.stringify(bad)}`, () => {
      rejects([rule({ oar: bad })], 'OAR-DOC-3', 'oar');
    });
  }

  it('rejects a number where the string is required (1.0 in JSON)', () => {
    rejects(['{"oar": 1.0, "id": "A", "kind": "policy", "anchor": "tool.pre_invoke", "effect": "block"}'], 'OAR-DOC-3', 'oar');
  });
});

describe('[OAR-DOC-4] an unsupported major is rejected, never coerced', () => {
  it('loads major 1', () => {
    loads([rule({ oar: '1.0' })]);
  });
  for (const v of ['2.0', '0.9', '10.0']) {
    it(`rejects ${v}`, () => {
      rejects([rule({ oar: v })], 'OAR-DOC-4', 'oar');
    });
  }
});

describe('[OAR-DOC-5] a greater minor is rejected; every lesser or equal minor loads', () => {
  it('loads 1.0 (the implemented minor)', () => {
    loads([rule({ oar: '1.0' })]);
  });
  for (const v of ['1.1', '1.10', '1.18446744073709551616']) {
    it(`rejects ${v}`, () => {
      rejects([rule({ oar: v })], 'OAR-DOC-5', 'oar');
    });
  }
});

describe('[OAR-CONF-2] oar is checked before any other processing', () => {
  it('a document with an unsupported oar reports that alone, not its other faults', () => {
    rejects([rule({ oar: '2.0', colour: 'red', kind: 'rule', anchor: 'nowhere' })], 'OAR-DOC-4', 'oar');
    rejects([rule({ oar: '01.0', id: 'lowercase', effect: 'deny' })], 'OAR-DOC-3', 'oar');
    rejects([rule({ oar: '1.1', when: 'nosuch' })], 'OAR-DOC-5', 'oar');
  });

  it('a document whose version is rejected takes no part in rule-set identity', () => {
    // The second document is not read past its `oar`, so its `id` cannot collide with the first.
    rejects([rule({ oar: '1.0' }), rule({ oar: '2.0' })], 'OAR-DOC-4', 'oar');
  });
});

describe('[OAR-DOC-6] id matches ^[A-Z][A-Z0-9_]*$', () => {
  it('loads A, A_1 and READ_OUTSIDE_SCOPE', () => {
    expect(qids(loads([rule({ id: 'A' }), rule({ id: 'A_1' }), rule({ id: 'READ_OUTSIDE_SCOPE' })]))).toEqual([
      'A',
      'A_1',
      'READ_OUTSIDE_SCOPE',
    ]);
  });
  for (const bad of ['a', '1A', '_A', 'A-B', 'A.B', '']) {
    it(`rejects ${JSON.stringify(bad)}`, () => {
      const r = load([rule({ id: bad })]);
      const errs = errorsOf(r);
      expect(errs).toHaveLength(1);
      expect(errs[0]!.clause).toBe('OAR-DOC-6');
      // The offending value is named; an empty value names nothing, so the field is named instead
      // ([OAR-CONF-1] "naming the failing field").
      expect(errs[0]!.token).toBe(bad === '' ? 'id' : bad);
    });
  }
});

describe('[OAR-DOC-7] namespace is a dotted lowercase publisher scope', () => {
  it('loads acme, acme.security and oar-test.x1', () => {
    loads([rule({ namespace: 'acme' }), rule({ namespace: 'acme.security' }), rule({ namespace: 'oar-test.x1' })]);
  });
  for (const bad of ['Acme', 'acme.', '.acme', '-acme', 'acme-', 'acme..x', 'acme/x', 'acme_x']) {
    it(`rejects ${JSON.stringify(bad)}, naming it`, () => {
      rejects([rule({ namespace: bad })], 'OAR-DOC-7', bad);
    });
  }
});

describe('[OAR-DOC-8] identity is (namespace, id); the qualified identifier is derived from the document alone', () => {
  it('the same id under different namespaces (and none) gives distinct rules that all load', () => {
    const p = loads([rule({ namespace: 'acme' }), rule({ namespace: 'beta' }), rule()]);
    expect(qids(p)).toEqual(['A', 'acme/A', 'beta/A']);
    expect(p.rules.map((r) => r.id)).toEqual(['A', 'A', 'A']);
  });

  it('an unnamespaced rule is the bare id, with no host name substituted', () => {
    const p = loads([rule()], { capability: capability({ host: 'acme.gateway' }) });
    expect(only(p).qid).toBe('A');
    expect(only(p).namespace).toBeUndefined();
  });
});

describe('[OAR-DOC-9] two rules with one qualified identifier are rejected', () => {
  it('loads acme/A beside beta/A and A', () => {
    loads([rule({ namespace: 'acme' }), rule({ namespace: 'beta' }), rule()]);
  });

  it('rejects two acme/A, naming the qualified identifier and pointing at the second', () => {
    const d = rejects([rule({ namespace: 'acme' }), rule({ namespace: 'acme', effect: 'warn' })], 'OAR-DOC-9', 'acme/A');
    expect(d.source?.file).toBe('<rules 1>');
  });

  it('rejects a duplicate inside one JSON array (a rule set)', () => {
    rejects([JSON.stringify([rule(), rule({ effect: 'warn' })])], 'OAR-DOC-9', 'A');
  });

  it('[OAR-OPS-7] a pack cannot replace a mandatory rule by shipping the same identity', () => {
    rejects([rule({ mandatory: true }), rule({ mandatory: false, enforcement: 'off' })], 'OAR-DOC-9', 'A');
  });
});

describe('[OAR-DOC-10] kind', () => {
  it('loads each of the four kinds', () => {
    const p = loads([
      rule({ id: 'S', kind: 'schema' }),
      rule({ id: 'P', kind: 'policy' }),
      rule({ id: 'I', kind: 'invariant' }),
      rule({ id: 'D', kind: 'detector', detector: { ref: 'detector://noop' } }),
    ]);
    expect(p.rules.map((r) => r.kind)).toEqual(['schema', 'policy', 'invariant', 'detector']);
  });
  it('rejects kind: rule', () => {
    rejects([rule({ kind: 'rule' })], 'OAR-DOC-10', 'kind');
  });
});

describe('[OAR-DOC-11] effect', () => {
  it('loads block, warn, nudge and allow (transform: see [OAR-DOC-22])', () => {
    loads(['block', 'warn', 'nudge', 'allow'].map((effect, i) => rule({ id: `R${i}`, effect })));
  });
  it('rejects effect: deny', () => {
    rejects([rule({ effect: 'deny' })], 'OAR-DOC-11', 'effect');
  });
});

describe('[OAR-DOC-12] / [OAR-CONF-3] anchor names exactly one resolvable moment', () => {
  it('loads a core anchor, resolved through the profile map, and a catalogued host anchor', () => {
    const p = loads([rule({ id: 'CORE', anchor: 'model.input' }), rule({ id: 'HOST', anchor: 'gateway.pre_render' })]);
    expect(only(p, 'CORE')).toMatchObject({ anchor: 'model.input', localAnchor: 'content.input', coreAnchor: true });
    expect(only(p, 'HOST')).toMatchObject({ anchor: 'gateway.pre_render', localAnchor: 'gateway.pre_render', coreAnchor: false });
  });

  it('rejects an anchor that is neither, naming the value', () => {
    rejects([rule({ anchor: 'tool.pre_invok' })], 'OAR-DOC-12', 'tool.pre_invok');
  });

  it('rejects a host-local spelling used in place of the core anchor it implements', () => {
    // Rules name core anchors; `content.input` is only the local spelling of `model.input`.
    rejects([rule({ anchor: 'content.input' })], 'OAR-DOC-12', 'content.input');
  });

  it('rejects an anchor that is not a string', () => {
    rejects([rule({ anchor: ['tool.pre_invoke'] })], 'OAR-DOC-12', 'anchor');
  });
});

describe('[OAR-DOC-13] selector is an optional object', () => {
  it('loads without a selector and with an empty one', () => {
    expect(only(loads([rule()])).selector).toEqual([]);
    expect(only(loads([rule({ selector: {} })])).selector).toEqual([]);
  });
  it('rejects a selector that is a list', () => {
    rejects([rule({ selector: ['tool'] })], 'OAR-DOC-13', 'selector');
  });
  it('[OAR-SEL-1] rejects a clause that is not a list of strings', () => {
    rejects([rule({ selector: { tool: 'read' }, requires: TOOL })], 'OAR-SEL-1', 'tool');
    rejects([rule({ selector: { tool: [1] }, requires: TOOL })], 'OAR-SEL-1', 'tool');
  });
});

describe('[OAR-DOC-14] when is an optional condition string', () => {
  it('loads without when (the condition is satisfied) and with one', () => {
    expect(only(loads([rule()])).when).toBeUndefined();
    expect(only(loads([rule({ when: 'true' })])).when?.source).toBe('true');
  });
  it('rejects a when that is not a string', () => {
    rejects([rule({ when: true })], 'OAR-DOC-14', 'when');
  });
});

describe('[OAR-DOC-15] flow, when present, is a non-empty list', () => {
  it('loads a flow', () => {
    expect(only(loads([rule({ flow: ['read', 'write'] })])).flow).toEqual(['read', 'write']);
  });
  it('rejects an empty flow rather than choosing a meaning for it', () => {
    rejects([rule({ flow: [] })], 'OAR-DOC-15', 'flow');
  });
  it('rejects a flow that is not a list of strings', () => {
    rejects([rule({ flow: 'read' })], 'OAR-DOC-15', 'flow');
    rejects([rule({ flow: [1] })], 'OAR-DOC-15', 'flow');
  });
});

describe('[OAR-DOC-16] to [OAR-DOC-20] optional fields and their defaults', () => {
  it('defaults: enforce, not mandatory, fail_closed, no side-effects, no overrides', () => {
    const r = only(loads([rule()]));
    expect(r.enforcement).toBe('enforce');
    expect(r.mandatory).toBe(false);
    expect(r.onError).toEqual({ mode: 'fail_closed' });
    expect(r.onFire).toEqual([]);
    expect(r.overrides).toEqual([]);
  });

  it('loads every declared value', () => {
    const p = loads([
      rule({ id: 'E1', enforcement: 'enforce', mandatory: true, on_error: 'fail_open', on_fire: ['increment_counter', 'publish_event'] }),
      rule({ id: 'E2', enforcement: 'monitor', on_error: 'fail_closed', overrides: ['E3'] }),
      rule({ id: 'E3', enforcement: 'off', on_error: 'E1' }),
    ]);
    expect(only(p, 'E1')).toMatchObject({ enforcement: 'enforce', mandatory: true, onError: { mode: 'fail_open' }, onFire: ['increment_counter', 'publish_event'] });
    expect(only(p, 'E2')).toMatchObject({ enforcement: 'monitor', onError: { mode: 'fail_closed' }, overrides: ['E3'] });
    expect(only(p, 'E3')).toMatchObject({ enforcement: 'off', onError: { mode: 'substitute', rule: 'E1', id: 'E1' } });
  });

  it('[OAR-DOC-16] rejects enforcement: loud', () => {
    rejects([rule({ enforcement: 'loud' })], 'OAR-DOC-16', 'enforcement');
  });
  it('[OAR-DOC-17] rejects mandatory: "yes"', () => {
    rejects([rule({ mandatory: 'yes' })], 'OAR-DOC-17', 'mandatory');
  });
  it('[OAR-DOC-18] rejects on_error: explode and a lowercase identifier', () => {
    rejects([rule({ on_error: 'explode' })], 'OAR-DOC-18', 'on_error');
    rejects([rule({ on_error: 'acme/b' })], 'OAR-DOC-18', 'on_error');
  });
  it('[OAR-DOC-19] rejects on_fire that is not a list', () => {
    rejects([rule({ on_fire: 'publish_event' })], 'OAR-DOC-19', 'on_fire');
  });
  it('[OAR-DOC-20] rejects overrides that is not a list, and an entry that is not an identifier', () => {
    rejects([rule({ overrides: 'B' })], 'OAR-DOC-20', 'overrides');
    rejects([rule({ overrides: ['b'] })], 'OAR-DOC-20', 'b');
  });
});

describe('[OAR-FIRE-1] on_fire draws from a closed vocabulary', () => {
  it('loads all five side-effects, in the order listed', () => {
    const all = ['reset_breaker', 'increment_counter', 'reset_counter', 'publish_event', 'increment_breaker'];
    expect(only(loads([rule({ on_fire: all })])).onFire).toEqual(all);
  });
  it('rejects any other side-effect, naming it', () => {
    rejects([rule({ on_fire: ['publish_event', 'send_email'] })], 'OAR-FIRE-1', 'send_email');
  });
});

describe('[OAR-DOC-21] requires is an object of profiles and facts', () => {
  it('loads profiles and facts', () => {
    const r = only(loads([rule({ requires: { profiles: ['tool', 'session'], facts: ['acme.count', 'acme.lookup'] } })]));
    expect(r.requires).toEqual({ profiles: ['tool', 'session'], facts: ['acme.count', 'acme.lookup'] });
  });
  it('rejects a requires that is not an object, and members that are not lists', () => {
    rejects([rule({ requires: 'tool' })], 'OAR-DOC-21', 'requires');
    rejects([rule({ requires: { profiles: 'tool' } })], 'OAR-DOC-21', 'profiles');
  });
  it('[OAR-DOC-27] rejects an unknown member of requires, naming it', () => {
    rejects([rule({ requires: { profile: ['tool'] } })], 'OAR-DOC-27', 'profile');
  });
});

describe('[OAR-DOC-22] transform is carried exactly when effect is transform', () => {
  it('loads effect: transform with a transform', () => {
    const r = only(loads([rule({ effect: 'transform', transform: { action: 'redact', target: 'content' } })]));
    expect(r.transform).toEqual({ action: 'redact', target: 'content', replacement: '[REDACTED]' });
  });
  it('rejects effect: transform without one', () => {
    rejects([rule({ effect: 'transform' })], 'OAR-DOC-22', 'transform');
  });
  for (const effect of ['block', 'warn', 'nudge', 'allow']) {
    it(`rejects effect: ${effect} carrying one`, () => {
      rejects([rule({ effect, transform: { action: 'redact', target: 'content' } })], 'OAR-DOC-22', 'transform');
    });
  }
});

describe('[OAR-DOC-23] detector is carried exactly when kind is detector', () => {
  it('loads kind: detector with a registered reference', () => {
    expect(only(loads([rule({ kind: 'detector', detector: { ref: 'detector://presidio' } })])).detector).toBe('detector://presidio');
  });
  it('rejects kind: detector without one', () => {
    rejects([rule({ kind: 'detector' })], 'OAR-DOC-23', 'detector');
  });
  for (const kind of ['schema', 'policy', 'invariant']) {
    it(`rejects kind: ${kind} carrying one`, () => {
      rejects([rule({ kind, detector: { ref: 'detector://noop' } })], 'OAR-DOC-23', 'detector');
    });
  }
  it('rejects a detector without ref, and an unknown member of it', () => {
    rejects([rule({ kind: 'detector', detector: {} })], 'OAR-DOC-23', 'ref');
    rejects([rule({ kind: 'detector', detector: { ref: 'detector://noop', url: 'x' } })], 'OAR-DOC-27', 'url');
  });
});

describe('[OAR-OPS-12] a detector reference is detector://<name> and must resolve', () => {
  it('loads a registered reference', () => {
    loads([rule({ kind: 'detector', detector: { ref: 'detector://noop' } })]);
  });
  it('rejects an unregistered reference, naming it', () => {
    rejects([rule({ kind: 'detector', detector: { ref: 'detector://pii-scan' } })], 'OAR-OPS-12', 'detector://pii-scan');
  });
  for (const bad of ['https://example.com/detector', 'detector://Presidio', 'detector://-x', 'detector://']) {
    it(`rejects the malformed reference ${bad}, naming it`, () => {
      rejects([rule({ kind: 'detector', detector: { ref: bad } })], 'OAR-OPS-12', bad);
    });
  }
});

describe('[OAR-DOC-24] copy is the closed member set title, what, cause, why, fix, instead', () => {
  it('loads all six members', () => {
    const copy = { title: 't', what: 'w', cause: 'c', why: 'y', fix: 'f', instead: 'i' };
    expect(Object.keys(only(loads([rule({ copy })])).copy).sort()).toEqual(['cause', 'fix', 'instead', 'title', 'what', 'why']);
  });
  it('rejects a member outside the set, naming it', () => {
    rejects([rule({ copy: { what: 'w', body: 'b' } })], 'OAR-DOC-27', 'body');
  });
  it('rejects a member that is not a string', () => {
    rejects([rule({ copy: { what: 3 } })], 'OAR-DOC-24', 'what');
  });
});

describe('[OAR-DOC-25] references is an optional object', () => {
  it('loads any taxonomy tags', () => {
    loads([rule({ references: { owasp: ['LLM01'], cwe: 'CWE-22', nested: { free: true } } })]);
  });
  it('rejects references that is not an object', () => {
    rejects([rule({ references: ['LLM01'] })], 'OAR-DOC-25', 'references');
  });
});

describe('[OAR-DOC-29] status', () => {
  it('loads each status', () => {
    loads(['experimental', 'test', 'stable', 'deprecated'].map((status, i) => rule({ id: `S${i}`, status })));
  });
  it('rejects status: beta', () => {
    rejects([rule({ status: 'beta' })], 'OAR-DOC-29', 'status');
  });
});

describe('[OAR-DOC-30] related records lineage and never requires its target to be loaded', () => {
  it('loads related entries naming rules that are not loaded', () => {
    loads([rule({ related: [{ id: 'OLD_RULE', type: 'renamed' }, { id: 'acme/OTHER', type: 'similar' }] })]);
  });
  it('rejects an unknown type, a malformed id and a missing member', () => {
    rejects([rule({ related: [{ id: 'OLD', type: 'sibling' }] })], 'OAR-DOC-30', 'type');
    rejects([rule({ related: [{ id: 'old', type: 'renamed' }] })], 'OAR-DOC-30', 'old');
    rejects([rule({ related: [{ id: 'OLD' }] })], 'OAR-DOC-30', 'type');
  });
});

describe('[OAR-DOC-26] x- extension fields are ignored', () => {
  const ext = rule({
    'x-acme-note': { free: ['form', 1, null] },
    'x-1': 2,
    requires: { profiles: ['tool'], 'x-why': 'audit' },
    effect: 'transform',
    transform: { action: 'replace', target: 'content', replacement: '*', 'x-acme': true },
    copy: { what: 'w', 'x-lang': 'en' },
    related: [{ id: 'OLD', type: 'renamed', 'x-since': '2024' }],
  });

  it('loads x- members at the top level and inside closed objects', () => {
    loads([ext]);
  });

  it('an x- member changes nothing in the loaded rule', () => {
    const plain = rule({
      requires: { profiles: ['tool'] },
      effect: 'transform',
      transform: { action: 'replace', target: 'content', replacement: '*' },
      copy: { what: 'w' },
      related: [{ id: 'OLD', type: 'renamed' }],
    });
    const strip = (p: LoadedPack) => JSON.stringify(p.rules.map(({ source: _s, ...r }) => r));
    expect(strip(loads([ext]))).toBe(strip(loads([plain])));
  });

  for (const bad of ['X-acme', 'x-', 'x_acme', 'x-Acme', 'x-acme-', 'xacme']) {
    it(`[OAR-DOC-27] rejects ${bad}, which is not an extension name, naming it`, () => {
      rejects([rule({ [bad]: 1 })], 'OAR-DOC-27', bad);
    });
  }
});

describe('[OAR-DOC-27] an unknown field is rejected, naming it', () => {
  it('rejects a top-level typo', () => {
    rejects([rule({ wen: 'true' })], 'OAR-DOC-27', 'wen');
  });
  it('rejects an unknown member of transform', () => {
    rejects([rule({ effect: 'transform', transform: { action: 'redact', target: 'content', with: 'x' } })], 'OAR-DOC-27', 'with');
  });
  it('rejects an unknown member of a related entry', () => {
    rejects([rule({ related: [{ id: 'OLD', type: 'renamed', note: 'x' }] })], 'OAR-DOC-27', 'note');
  });
  it('[OAR-CONF-1] reports every schema failure of a document, each naming its field', () => {
    const r = load([rule({ wen: 'true', kind: 'rule', effect: 'deny', mandatory: 1 })]);
    expect(errorsOf(r).map((d) => `${d.clause} ${d.token}`).sort()).toEqual([
      'OAR-DOC-10 kind',
      'OAR-DOC-11 effect',
      'OAR-DOC-17 mandatory',
      'OAR-DOC-27 wen',
    ]);
  });
});

describe('[OAR-DOC-32] counter_scope is an optional string', () => {
  it('loads a string counter_scope', () => {
    expect(only(loads([rule({ counter_scope: 'anchor' })])).counterScope?.name).toBe('anchor');
  });
  it('rejects a counter_scope that is not a string, or is empty', () => {
    rejects([rule({ counter_scope: 5 })], 'OAR-DOC-32', 'counter_scope');
    rejects([rule({ counter_scope: ['tool'] })], 'OAR-DOC-32', 'counter_scope');
    rejects([rule({ counter_scope: '' })], 'OAR-DOC-32', 'counter_scope');
  });
});

// ---------------------------------------------------------------------------------------------
// Identity, order and collections ([OAR-DOC-28], [OAR-DOC-31], [OAR-EVAL-1])

describe('[OAR-DOC-28] / [OAR-DOC-31] identity and order come from the documents, never their storage', () => {
  const set = [
    rule({ id: 'ZETA', kind: 'schema' }),
    rule({ id: 'ALPHA', kind: 'detector', detector: { ref: 'detector://noop' } }),
    rule({ id: 'MID' }),
    rule({ id: 'B', namespace: 'acme' }),
    rule({ id: 'B' }),
    rule({ id: 'Z', namespace: 'acme', kind: 'invariant' }),
  ];
  const expected = ['ZETA', 'B', 'MID', 'acme/B', 'acme/Z', 'ALPHA'];

  function permutations<T>(xs: readonly T[]): T[][] {
    if (xs.length <= 1) return [[...xs]];
    return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p]));
  }

  it('every order of separate texts gives the same pack.rules order: kind, then qualified id by code point', () => {
    for (const order of permutations(set)) expect(qids(loads(order))).toEqual(expected);
  });

  it('one JSON array, a multi-document YAML stream and separate texts give the same order', () => {
    const fromArray = loads([JSON.stringify([...set].reverse())]);
    const fromStream = loads([set.map((d) => `---\n${stringify(d)}`).join('')]);
    const fromSplit = loads([JSON.stringify(set.slice(0, 3)), stringify(set.slice(3))]);
    expect(qids(fromArray)).toEqual(expected);
    expect(qids(fromStream)).toEqual(expected);
    expect(qids(fromSplit)).toEqual(expected);
  });

  it('files named after other ids, in any directory layout, load the same rules in the same order', () => {
    const dir = mkdtempSync(join(tmpdir(), 'oarc-doc28-'));
    try {
      const cap = join(dir, 'capability.json');
      writeFileSync(cap, JSON.stringify(capability()));
      // Layout 1: each rule in a file named after a *different* rule, deliberately misleading.
      const one = join(dir, 'one');
      mkdirSync(one);
      set.forEach((d, i) => writeFileSync(join(one, `${String(set[(i + 1) % set.length]!.id)}-${i}.yaml`), stringify(d)));
      // Layout 2: everything in one JSON file, nested in a subdirectory, reversed.
      const two = join(dir, 'two', 'nested');
      mkdirSync(two, { recursive: true });
      writeFileSync(join(two, 'pack.json'), JSON.stringify([...set].reverse()));
      // A pack's `oarc test` file beside its rules is not a rule document, in any layout.
      writeFileSync(join(one, 'pack.test.yaml'), 'capability: ../capability.json\nrules: [.]\ntests: []\n');
      writeFileSync(join(two, 'more.test.json'), '{"tests": []}');
      const a = loadPackFiles({ capability: cap, rules: [one] });
      const b = loadPackFiles({ capability: cap, rules: [join(dir, 'two')] });
      if (!a.ok || !b.ok) expect.fail(JSON.stringify([a, b].flatMap((r) => (r.ok ? [] : r.diagnostics))));
      expect(qids(a.pack)).toEqual(expected);
      expect(qids(b.pack)).toEqual(expected);
      expect(a.pack.rules.map((r) => r.id)).toEqual(b.pack.rules.map((r) => r.id));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a file named after a rule does not make that rule its identity', () => {
    const dir = mkdtempSync(join(tmpdir(), 'oarc-doc28-'));
    try {
      const cap = join(dir, 'cap.json');
      writeFileSync(cap, JSON.stringify(capability()));
      // Two files, each named after the other's id: a loader that took identity from the file
      // name would see two rules called B (or A) and reject them as duplicates.
      writeFileSync(join(dir, 'B.json'), JSON.stringify(rule({ id: 'A' })));
      writeFileSync(join(dir, 'A.json'), JSON.stringify(rule({ id: 'B' })));
      const r = loadPackFiles({ capability: cap, rules: [join(dir, 'B.json'), join(dir, 'A.json')] });
      if (!r.ok) expect.fail(JSON.stringify(r.diagnostics));
      expect(qids(r.pack)).toEqual(['A', 'B']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('[OAR-DOC-31] a rule set: every member is validated on its own terms', () => {
  it('loads a JSON array of rules and a multi-document YAML stream', () => {
    expect(qids(loads([JSON.stringify([rule({ id: 'A' }), rule({ id: 'B' })])]))).toEqual(['A', 'B']);
    expect(qids(loads([`${stringify(rule({ id: 'A' }))}---\n${stringify(rule({ id: 'B' }))}`]))).toEqual(['A', 'B']);
  });

  it('rejects a member that is not a rule document, naming its position', () => {
    for (const member of [3, 'rule', null, [rule({ id: 'B' })]]) {
      const r = load([JSON.stringify([rule(), member])]);
      const errs = errorsOf(r);
      expect(errs).toHaveLength(1);
      expect(errs[0]!.clause).toBe('OAR-DOC-31');
      expect(errs[0]!.message).toContain('member 1');
    }
  });

  it('rejects a YAML stream whose member is a list, as it rejects a list inside a JSON array', () => {
    // A stream is a collection whose members are its documents; a document that is a sequence is
    // not a rule document, whatever the sequence holds. The JSON array above rejects its nested
    // list whole; the stream must not instead flatten one into a second level of rule set.
    for (const member of ['- 1\n- 2\n', `- ${JSON.stringify(rule({ id: 'B' }))}\n- ${JSON.stringify(rule({ id: 'C' }))}\n`]) {
      const r = load([`${stringify(rule())}---\n${member}`]);
      expect(r.ok).toBe(false);
      const errs = errorsOf(r);
      expect(errs.map((d) => d.clause)).toEqual(['OAR-DOC-31']);
      expect(errs[0]!.message).toContain('member 1');
    }
  });

  it('each faulty member is reported on its own; a good member beside them is still checked', () => {
    const r = load([JSON.stringify([rule({ id: 'GOOD', when: 'nosuch' }), rule({ id: 'B', colour: 1 }), rule({ id: 'C', kind: 'rule' })], null, 2)]);
    const errs = errorsOf(r);
    expect(errs.map((d) => `${d.clause} ${d.token}`).sort()).toEqual(['OAR-DOC-10 kind', 'OAR-DOC-27 colour', 'OAR-FACT-3 nosuch']);
    // Each names a position inside its own member.
    const lines = errs.map((d) => d.source!.line);
    expect(new Set(lines).size).toBe(3);
  });
});

// =============================================================================================
// Section 3 — selection
// =============================================================================================

describe('[OAR-SEL-3] a selector clause must name a declared string or list<string> fact', () => {
  it('loads clauses on a core string fact, a profile string fact and a host list<string> fact', () => {
    const r = only(
      loads([rule({ selector: { anchor: ['tool.pre_invoke'], tool: ['read'], 'acme.tags': ['a', 'b'] }, requires: { profiles: ['tool'], facts: ['acme.tags'] } })]),
    );
    expect(r.selector.map((c) => [c.fact.name, c.values])).toEqual([
      ['anchor', ['tool.pre_invoke']],
      ['tool', ['read']],
      ['acme.tags', ['a', 'b']],
    ]);
  });

  it('rejects a clause naming an undeclared fact, naming the clause', () => {
    rejects([rule({ selector: { tool_name: ['read'] } })], 'OAR-SEL-3', 'tool_name');
  });
  it('rejects a clause naming a fact of an unclaimed profile', () => {
    rejects([rule({ selector: { principal_roles: ['admin'] } })], 'OAR-SEL-3', 'principal_roles', {
      capability: capability({ profiles: ['tool'] }),
    });
  });
  it('rejects clauses naming int, bool, map and list<map> facts', () => {
    rejects([rule({ selector: { 'acme.count': ['1'] }, requires: { facts: ['acme.count'] } })], 'OAR-SEL-3', 'acme.count');
    rejects([rule({ selector: { policy_denied: ['true'] }, requires: TOOL })], 'OAR-SEL-3', 'policy_denied');
    rejects([rule({ selector: { tool_args: ['path'] }, requires: TOOL })], 'OAR-SEL-3', 'tool_args');
    rejects([rule({ selector: { secret_matches: ['x'] }, requires: { profiles: ['secrets'] } })], 'OAR-SEL-3', 'secret_matches');
  });
  it('rejects a clause naming an observation function', () => {
    rejects([rule({ selector: { tool_arg_string: ['x'] }, requires: TOOL })], 'OAR-SEL-3', 'tool_arg_string');
    rejects([rule({ selector: { fire_count_of: ['x'] } })], 'OAR-SEL-3', 'fire_count_of');
  });
});

describe('[OAR-SEL-6] a clause whose list is empty loads, with a warning', () => {
  it('loads and warns, naming the clause', () => {
    const p = loads([rule({ selector: { tool: [] }, requires: TOOL })]);
    expect(only(p).selector).toEqual([expect.objectContaining({ values: [] })]);
    const warnings = p.diagnostics.filter((d) => d.severity === 'warning' && d.clause === 'OAR-SEL-6');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.token).toBe('tool');
    expect(formatDiagnostic(warnings[0]!)).toMatch(/^<rules 0>:\d+:\d+: warning: .*tool.* \[OAR-SEL-6\]$/);
  });
  it('a non-empty clause loads without the warning', () => {
    expect(loads([rule({ selector: { tool: ['read'] }, requires: TOOL })]).diagnostics).toEqual([]);
  });
});

// =============================================================================================
// Section 5 — facts, conditions, capability profiles
// =============================================================================================

describe('[OAR-FACT-3] / [OAR-CONF-5] an unknown identifier in a condition is rejected, naming it and its offset', () => {
  it('loads a condition over declared facts and functions', () => {
    loads([rule({ when: 'tool == "read" && tool_arg_int("n") > 2 && fire_count < 3', requires: TOOL })]);
  });
  it('rejects an unknown identifier', () => {
    const d = rejects([rule({ when: 'tool == "x" && nosuch', requires: TOOL })], 'OAR-FACT-3', 'nosuch');
    expect(d.offset).toBe(15);
    expect(d.path).toEqual(['when']);
  });
  it('offsets count code points, not UTF-16 units', () => {
    expect(rejects([rule({ when: '"😀😀" == nosuch' })], 'OAR-FACT-3', 'nosuch').offset).toBe(8);
  });
  it('rejects null as an unknown identifier ([OAR-EXPR-7])', () => {
    rejects([rule({ when: 'tool == null', requires: TOOL })], 'OAR-FACT-3', 'null');
  });
  it('rejects a fact of a profile the host does not claim', () => {
    rejects([rule({ when: 'prompt_injection_score > 0.8' })], 'OAR-FACT-3', 'prompt_injection_score');
  });
});

describe('[OAR-FACT-4] / [OAR-CONF-5] a condition must be type-correct and produce bool', () => {
  it('loads a bool condition', () => {
    loads([rule({ when: 'acme.count + 1 > 2', requires: { facts: ['acme.count'] } })]);
  });
  it('rejects a non-bool result, naming the type produced and the word bool', () => {
    const d = rejects([rule({ when: 'acme.count + 1', requires: { facts: ['acme.count'] } })], 'OAR-FACT-4', 'int');
    expect(d.message).toContain('bool');
    expect(d.offset).toBe(0);
    const s = rejects([rule({ when: 'tool', requires: TOOL })], 'OAR-FACT-4', 'string');
    expect(s.message).toContain('bool');
  });
  it('rejects a type error at load rather than returning false ([OAR-EXPR-11])', () => {
    const d = rejects([rule({ when: 'tool == 1', requires: TOOL })], 'OAR-EXPR-11', '==');
    expect(d.path).toEqual(['when']);
    expect(typeof d.offset).toBe('number');
  });
  it('rejects a function argument of the wrong type', () => {
    rejects([rule({ when: 'tool_arg_bool(1)', requires: TOOL })], 'OAR-FACT-4', 'tool_arg_bool');
  });
  it('[OAR-EXPR-1] rejects a syntax error, naming the construct and its offset', () => {
    const d = rejectsWith([rule({ when: 'true && && false' })], 'OAR-EXPR-1', '&&');
    expect(d.offset).toBe(8);
  });
});

describe('[OAR-FACT-13] flow longer than the declared activity window is rejected', () => {
  it('loads a flow as long as the window', () => {
    loads([rule({ flow: ['a', 'b', 'c'] })]);
  });
  it('rejects a flow one step longer, naming flow', () => {
    rejects([rule({ flow: ['a', 'b', 'c', 'd'] })], 'OAR-FACT-13', 'flow');
  });
  it('[OAR-PROF-3] a host declaring window 0 rejects every flow', () => {
    rejects([rule({ flow: ['a'] })], 'OAR-PROF-3', 'flow', { capability: capability({ activity_window: 0 }) });
    loads([rule()], { capability: capability({ activity_window: 0 }) });
  });
});

describe('[OAR-FACT-19] / [OAR-CONF-4] requires must be provided, naming the rule and the capability', () => {
  it('loads when every required profile and fact is provided', () => {
    loads([rule({ namespace: 'acme', requires: { profiles: ['tool', 'mcp'], facts: ['acme.tenant_tier', 'tool_arg_string', 'anchor'] } })]);
  });
  it('rejects an unprovided profile', () => {
    const d = rejects([rule({ namespace: 'acme', requires: { profiles: ['tool', 'pii'] } })], 'OAR-FACT-19', 'pii');
    expect(d.message).toContain('acme/A');
    expect(d.path).toEqual(['requires', 'profiles', 1]);
  });
  it('rejects an unprovided fact, and a fact of an unclaimed profile', () => {
    expect(rejects([rule({ requires: { facts: ['acme.nope'] } })], 'OAR-FACT-19', 'acme.nope').message).toMatch(/\bA\b/);
    rejects([rule({ requires: { facts: ['jailbreak_score'] } })], 'OAR-FACT-19', 'jailbreak_score');
  });
  it('rejects a profile name that is not a standard profile', () => {
    rejects([rule({ requires: { profiles: ['core'] } })], 'OAR-FACT-19', 'core');
  });
});

describe('[OAR-FACT-20] / [OAR-CONF-4] a non-core reference must be reached through requires', () => {
  const reach = [
    { how: 'requires.profiles', requires: { profiles: ['tool', 'secrets'], facts: ['acme.tenant_tier', 'acme.spans', 'acme.count', 'acme.lookup'] } },
    { how: 'requires.facts', requires: { facts: ['tool', 'tool_args_fingerprint', 'secret_matches', 'tool_arg_int', 'acme.tenant_tier', 'acme.spans', 'acme.count', 'acme.lookup'] } },
  ];
  for (const { how, requires } of reach) {
    it(`loads every field's reference reached through ${how}`, () => {
      loads([
        rule({ id: 'COND', when: 'tool == "x" && tool_arg_int("n") > acme.lookup("k") + acme.count', requires }),
        rule({ id: 'SEL', selector: { tool: ['read'], 'acme.tenant_tier': ['gold'] }, requires }),
        rule({ id: 'SCOPE', counter_scope: 'tool_args_fingerprint', requires }),
        rule({ id: 'T1', effect: 'transform', transform: { action: 'redact', target: 'secret_matches' }, requires }),
        rule({ id: 'T2', effect: 'transform', transform: { action: 'redact', target: 'acme.spans' }, requires }),
        rule({ id: 'COPY', copy: { what: '{{ tool }} for {{ acme.tenant_tier }}{% if acme.count %}!{% endif %}' }, requires }),
      ]);
    });
  }

  it('core facts and functions need no requires', () => {
    loads([rule({ when: 'anchor == "tool.pre_invoke" && fire_count_of("A") < 3 && breaker_count == 0', selector: { anchor: ['x'] }, counter_scope: 'anchor', copy: { what: '{{ anchor }} {{ fire_count }}' } })]);
  });

  it('rejects a profile fact in the condition, naming it and its offset', () => {
    expect(rejects([rule({ when: 'true && tool == "x"' })], 'OAR-FACT-20', 'tool').offset).toBe(8);
  });
  it('rejects a profile function in the condition', () => {
    expect(rejects([rule({ when: 'tool_arg_int("n") > 1' })], 'OAR-FACT-20', 'tool_arg_int').offset).toBe(0);
  });
  it('rejects a host fact and a host function in the condition', () => {
    rejects([rule({ when: 'acme.count > 1' })], 'OAR-FACT-20', 'acme.count');
    rejects([rule({ when: 'acme.lookup("k") > 1' })], 'OAR-FACT-20', 'acme.lookup');
  });
  it('a profile named for another profile does not reach a fact', () => {
    rejects([rule({ when: 'tool == "x"', requires: { profiles: ['session'] } })], 'OAR-FACT-20', 'tool');
  });
  it('rejects a selector clause', () => {
    expect(rejects([rule({ selector: { tool: ['read'] } })], 'OAR-FACT-20', 'tool').path).toEqual(['selector', 'tool']);
    rejects([rule({ selector: { 'acme.tenant_tier': ['gold'] } })], 'OAR-FACT-20', 'acme.tenant_tier');
  });
  it('rejects a counter_scope ([OAR-FIRE-10] names the fact)', () => {
    rejects([rule({ counter_scope: 'tool_args_fingerprint' })], 'OAR-FIRE-10', 'tool_args_fingerprint');
    rejects([rule({ counter_scope: 'acme.tenant_tier' })], 'OAR-FIRE-10', 'acme.tenant_tier');
  });
  it('rejects a transform target', () => {
    expect(rejects([rule({ effect: 'transform', transform: { action: 'redact', target: 'secret_matches' } })], 'OAR-FACT-20', 'secret_matches').path).toEqual([
      'transform',
      'target',
    ]);
    rejects([rule({ effect: 'transform', transform: { action: 'redact', target: 'acme.spans' } })], 'OAR-FACT-20', 'acme.spans');
  });
  it('[OAR-COPY-5] rejects a fact named only in copy — in a binding and in a conditional', () => {
    expect(rejects([rule({ copy: { what: 'calling {{ tool }}' } })], 'OAR-COPY-5', 'tool').path).toEqual(['copy', 'what']);
    rejects([rule({ copy: { fix: '{% if not policy_denied %}ok{% endif %}' } })], 'OAR-COPY-5', 'policy_denied');
    rejects([rule({ copy: { why: '{% if acme.count %}n{% else %}z{% endif %}' } })], 'OAR-COPY-5', 'acme.count');
  });
});

describe('[OAR-FACT-24] the capability document is validated before any rule; an invalid one refuses to start', () => {
  it('loads against a valid capability, ignoring its x- members ([OAR-DOC-26])', () => {
    loads([rule()]);
    loads([rule()], { capability: capability({ 'x-acme-build': { sha: 'abc' } }) });
  });
  it('rejects a capability with an unknown member, naming it, and loads no rule', () => {
    const r = load([rule(), rule({ kind: 'rule' })], { capability: capability({ colour: 'red' }) });
    expect(r.ok).toBe(false);
    const errs = errorsOf(r);
    expect(errs.map((d) => `${d.clause} ${d.token}`)).toEqual(['OAR-FACT-24 colour']);
    expect(errs[0]!.source?.file).toBe('<capability>');
  });
  it('rejects a host fact of a type outside [OAR-FACT-22] and one outside the host namespace ([OAR-FACT-18])', () => {
    const bad = capability({ host_facts: [{ name: 'acme.when', type: 'timestamp' }, { name: 'other.x', type: 'string' }] });
    const errs = errorsOf(load([rule()], { capability: bad }));
    expect(errs.map((d) => `${d.clause} ${d.token}`).sort()).toEqual(['OAR-FACT-18 other.x', 'OAR-FACT-22 timestamp']);
  });
  it('rejects a capability claiming a profile that is not standard ([OAR-FACT-16])', () => {
    rejects([rule()], 'OAR-FACT-16', 'billing', { capability: capability({ profiles: ['tool', 'billing'] }) });
  });
  it('[OAR-OPS-22] rejects a detector-backed profile with no detector registered, naming the profile', () => {
    rejects([rule()], 'OAR-OPS-22', 'pii', { capability: capability({ profiles: ['tool', 'pii'], detectors: [] }) });
    loads([rule()], { capability: capability({ profiles: ['tool', 'pii'], detectors: ['detector://presidio'] }) });
  });
});

// =============================================================================================
// Section 6 — counters
// =============================================================================================

describe('[OAR-FIRE-10] counter_scope names a declared string fact, reached through requires', () => {
  it('loads a core, a profile and a host string fact', () => {
    const p = loads([
      rule({ id: 'C1', counter_scope: 'anchor' }),
      rule({ id: 'C2', counter_scope: 'tool_args_fingerprint', requires: TOOL }),
      rule({ id: 'C3', counter_scope: 'acme.tenant_tier', requires: { facts: ['acme.tenant_tier'] } }),
    ]);
    expect(p.rules.map((r) => r.counterScope?.name)).toEqual(['anchor', 'tool_args_fingerprint', 'acme.tenant_tier']);
  });
  it('rejects an undeclared fact, naming it', () => {
    rejects([rule({ counter_scope: 'fingerprint' })], 'OAR-FIRE-10', 'fingerprint');
  });
  it('rejects a fact whose type is not string, naming it', () => {
    rejects([rule({ counter_scope: 'fire_count' })], 'OAR-FIRE-10', 'fire_count');
    rejects([rule({ counter_scope: 'acme.tags', requires: { facts: ['acme.tags'] } })], 'OAR-FIRE-10', 'acme.tags');
    rejects([rule({ counter_scope: 'tool_args', requires: TOOL })], 'OAR-FIRE-10', 'tool_args');
  });
  it('rejects a counter_scope naming a function ([OAR-FACT-27])', () => {
    rejects([rule({ counter_scope: 'tool_arg_string', requires: TOOL })], 'OAR-FIRE-10', 'tool_arg_string');
    rejects([rule({ counter_scope: 'fire_count_of' })], 'OAR-FIRE-10', 'fire_count_of');
  });
});

describe('[OAR-FIRE-11] fire_count_of / breaker_count_of take a string literal naming a loaded rule', () => {
  it('loads bare, qualified and namespace-resolved references, resolved to qualified identifiers', () => {
    const p = loads([
      rule({ id: 'COUNTER', on_fire: ['increment_counter'] }),
      rule({ id: 'COUNTER', namespace: 'acme', on_fire: ['increment_breaker'] }),
      rule({ id: 'READER', namespace: 'acme', when: 'fire_count_of("COUNTER") > 2 || breaker_count_of("acme/COUNTER") > 0' }),
      rule({ id: 'BARE_READER', when: "fire_count_of('COUNTER') >= 5" }),
    ]);
    expect(only(p, 'acme/READER').counterReads).toEqual(['acme/COUNTER']);
    expect(only(p, 'BARE_READER').counterReads).toEqual(['COUNTER']);
  });
  it('rejects a reference resolving to no loaded rule, naming it and its offset', () => {
    const d = rejects([rule({ when: 'true && fire_count_of("NOPE") > 1' })], 'OAR-FIRE-11', 'NOPE');
    expect(d.offset).toBe(22); // the string literal naming the rule
  });
  it('resolves a bare reference inside the reader\'s own namespace only', () => {
    // acme/READER reading "COUNTER" means acme/COUNTER, not the unnamespaced COUNTER.
    rejects([rule({ id: 'COUNTER' }), rule({ id: 'READER', namespace: 'acme', when: 'fire_count_of("COUNTER") > 1' })], 'OAR-FIRE-11', 'COUNTER');
  });
  it('rejects an argument that is not a string literal', () => {
    rejects([rule({ id: 'B' }), rule({ when: 'fire_count_of(tool) > 1', requires: TOOL })], 'OAR-FIRE-11', 'fire_count_of');
    rejects([rule({ id: 'B' }), rule({ when: 'breaker_count_of("B" + "") > 1' })], 'OAR-FIRE-11', 'breaker_count_of');
  });
});

// =============================================================================================
// Section 4.1 and 7 — references between rules, transforms
// =============================================================================================

describe('[OAR-EVAL-13] / [OAR-CONF-6] an overrides entry must resolve to a loaded rule', () => {
  it('loads qualified and bare (own-namespace) entries, resolved to qualified identifiers', () => {
    const p = loads([
      rule({ id: 'GENERAL', namespace: 'acme' }),
      rule({ id: 'OTHER', namespace: 'beta' }),
      rule({ id: 'SPECIFIC', namespace: 'acme', overrides: ['GENERAL', 'beta/OTHER'] }),
    ]);
    expect(only(p, 'acme/SPECIFIC').overrides).toEqual(['acme/GENERAL', 'beta/OTHER']);
  });
  it('rejects an entry resolving to no loaded rule, naming it', () => {
    rejects([rule({ overrides: ['NOPE'] })], 'OAR-EVAL-13', 'NOPE');
  });
  it('a bare entry is resolved within the suppressing rule\'s namespace, never elsewhere', () => {
    rejects([rule({ id: 'GENERAL' }), rule({ id: 'SPECIFIC', namespace: 'acme', overrides: ['GENERAL'] })], 'OAR-EVAL-13', 'GENERAL');
    rejects([rule({ id: 'GENERAL', namespace: 'acme' }), rule({ id: 'SPECIFIC', overrides: ['GENERAL'] })], 'OAR-EVAL-13', 'GENERAL');
  });
});

describe('[OAR-EVAL-16] / [OAR-CONF-6] a suppression cycle is rejected, naming the rules in it', () => {
  it('loads a chain (suppression does not transit, and a chain is no cycle)', () => {
    loads([rule({ id: 'A', overrides: ['B'] }), rule({ id: 'B', overrides: ['C'] }), rule({ id: 'C' })]);
  });
  it('rejects a two-rule cycle', () => {
    const r = load([rule({ id: 'A', overrides: ['B'] }), rule({ id: 'B', overrides: ['A'] })]);
    const errs = errorsOf(r);
    expect(errs).toHaveLength(1);
    expect(errs[0]!.clause).toBe('OAR-EVAL-16');
    for (const q of ['A', 'B']) expect(errs[0]!.message).toMatch(new RegExp(`\\b${q}\\b`));
  });
  it('rejects a three-rule cycle across namespaces, naming all three', () => {
    const r = load([
      rule({ id: 'X', namespace: 'acme', overrides: ['beta/Y'] }),
      rule({ id: 'Y', namespace: 'beta', overrides: ['Z'] }),
      rule({ id: 'Z', namespace: 'beta', overrides: ['acme/X'] }),
      rule({ id: 'BYSTANDER', overrides: ['acme/X'] }),
    ]);
    const errs = errorsOf(r);
    expect(errs).toHaveLength(1);
    expect(errs[0]!.clause).toBe('OAR-EVAL-16');
    for (const q of ['acme/X', 'beta/Y', 'beta/Z']) expect(errs[0]!.message).toContain(q);
    expect(errs[0]!.message).not.toContain('BYSTANDER');
  });
  it('two cycles sharing rules are one diagnostic naming every rule in them', () => {
    // A -> B -> C -> A and A -> D -> C -> A: a depth-first search that stops at the first cycle
    // would never name D.
    const r = load([
      rule({ id: 'A', overrides: ['B', 'D'] }),
      rule({ id: 'B', overrides: ['C'] }),
      rule({ id: 'C', overrides: ['A'] }),
      rule({ id: 'D', overrides: ['C'] }),
      rule({ id: 'E', overrides: ['A'] }),
    ]);
    const errs = errorsOf(r);
    expect(errs.map((d) => d.clause)).toEqual(['OAR-EVAL-16']);
    for (const q of ['A', 'B', 'C', 'D']) expect(errs[0]!.message).toMatch(new RegExp(`\\b${q}\\b`));
    expect(errs[0]!.message).not.toMatch(/\bE\b/);
  });
  it('rejects a rule overriding itself', () => {
    const errs = errorsOf(load([rule({ id: 'SELF', overrides: ['SELF'] })]));
    expect(errs.map((d) => d.clause)).toEqual(['OAR-EVAL-16']);
    expect(errs[0]!.message).toContain('SELF');
  });
});

describe('[OAR-EVAL-17] overrides cannot name a mandatory rule', () => {
  it('loads an override of a rule that is explicitly not mandatory', () => {
    loads([rule({ id: 'B', mandatory: false }), rule({ overrides: ['B'] })]);
  });
  it('rejects an override naming a mandatory rule, naming it', () => {
    rejects([rule({ id: 'B', mandatory: true }), rule({ overrides: ['B'] })], 'OAR-EVAL-17', 'B');
  });
});

describe('[OAR-OPS-5] / [OAR-CONF-6] an on_error substitute must be a loaded rule', () => {
  it('loads bare (own namespace) and qualified substitutes', () => {
    const p = loads([
      rule({ id: 'FALLBACK', namespace: 'oar.test', effect: 'nudge' }),
      rule({ id: 'A_DETECTOR', namespace: 'oar.test', effect: 'warn', on_error: 'FALLBACK' }),
      rule({ id: 'OTHER', on_error: 'oar.test/FALLBACK' }),
    ]);
    expect(only(p, 'oar.test/A_DETECTOR').onError).toEqual({ mode: 'substitute', rule: 'oar.test/FALLBACK', id: 'FALLBACK' });
    expect(only(p, 'OTHER').onError).toEqual({ mode: 'substitute', rule: 'oar.test/FALLBACK', id: 'FALLBACK' });
  });
  it('rejects a substitute that is not loaded, naming it', () => {
    rejects([rule({ on_error: 'FALLBACK' })], 'OAR-OPS-5', 'FALLBACK');
  });
  it('a bare substitute is resolved within the failing rule\'s namespace', () => {
    rejects([rule({ id: 'FALLBACK' }), rule({ namespace: 'acme', on_error: 'FALLBACK' })], 'OAR-OPS-5', 'FALLBACK');
  });
});

describe('[OAR-OPS-13] a transform carries action and target; replace and annotate carry replacement', () => {
  const t = (transform: Doc) => rule({ effect: 'transform', transform });
  it('loads each action; redact defaults its replacement to [REDACTED]', () => {
    const p = loads([
      rule({ id: 'R1', effect: 'transform', transform: { action: 'redact', target: 'content' } }),
      rule({ id: 'R2', effect: 'transform', transform: { action: 'redact', target: 'content', replacement: '***' } }),
      rule({ id: 'R3', effect: 'transform', transform: { action: 'replace', target: 'content', replacement: '' } }),
      rule({ id: 'R4', effect: 'transform', transform: { action: 'annotate', target: 'content', replacement: ' [checked]' } }),
    ]);
    expect(p.rules.map((r) => r.transform?.replacement)).toEqual(['[REDACTED]', '***', '', ' [checked]']);
  });
  it('rejects replace and annotate without replacement', () => {
    rejects([t({ action: 'replace', target: 'content' })], 'OAR-OPS-13', 'replacement');
    rejects([t({ action: 'annotate', target: 'content' })], 'OAR-OPS-13', 'replacement');
  });
  it('rejects an unknown action, a missing action or target, and a non-string replacement', () => {
    rejects([t({ action: 'delete', target: 'content' })], 'OAR-OPS-13', 'action');
    rejects([t({ target: 'content' })], 'OAR-OPS-13', 'action');
    rejects([t({ action: 'redact' })], 'OAR-OPS-13', 'target');
    rejects([t({ action: 'redact', target: 'content', replacement: 1 })], 'OAR-OPS-13', 'replacement');
  });
});

describe('[OAR-OPS-14] a transform target is content or a list<map> fact', () => {
  it('loads content, a profile list<map> and a host list<map>', () => {
    const p = loads([
      rule({ id: 'T1', effect: 'transform', transform: { action: 'redact', target: 'content' } }),
      rule({ id: 'T2', effect: 'transform', transform: { action: 'redact', target: 'secret_matches' }, requires: { profiles: ['secrets'] } }),
      rule({ id: 'T3', effect: 'transform', transform: { action: 'redact', target: 'acme.spans' }, requires: { facts: ['acme.spans'] } }),
    ]);
    expect(p.rules.map((r) => (r.transform?.target === 'content' ? 'content' : r.transform?.target.name))).toEqual(['content', 'secret_matches', 'acme.spans']);
  });
  for (const [target, requires] of [
    ['acme.tenant_tier', { facts: ['acme.tenant_tier'] }],
    ['acme.tags', { facts: ['acme.tags'] }],
    ['tool_args', TOOL],
    ['tool_arg_string', TOOL],
    ['acme.lookup', { facts: ['acme.lookup'] }],
    ['spans', {}],
    ['Content', {}],
  ] as const) {
    it(`rejects ${target}, naming it`, () => {
      rejects([rule({ effect: 'transform', transform: { action: 'redact', target }, requires })], 'OAR-OPS-14', target);
    });
  }
});

describe('[OAR-OPS-18] an engine without content mutation rejects effect: transform', () => {
  it('loads a transform rule when supports_transform is true', () => {
    loads([rule({ effect: 'transform', transform: { action: 'redact', target: 'content' } })]);
  });
  it('rejects it when supports_transform is false or absent', () => {
    for (const cap of [capability({ supports_transform: false }), capability({ supports_transform: undefined })]) {
      rejects([rule({ effect: 'transform', transform: { action: 'redact', target: 'content' } })], 'OAR-OPS-18', 'transform', { capability: cap });
    }
  });
});

// =============================================================================================
// Section 8 — portability
// =============================================================================================

describe('[OAR-PROF-2] the anchor profile map names every core anchor exactly once', () => {
  const anchors = (core: Doc, unsupported: string[]) => capability({ anchors: { core, unsupported, host: [] } });
  const identity = (xs: readonly string[]) => Object.fromEntries(xs.map((a) => [a, a]));
  const ALL = ['tool.pre_invoke', 'tool.handler', 'tool.post_invoke', 'agent.post_turn', 'agent.finalize', 'model.input', 'model.output', 'model.tool_result'];
  it('loads a full map', () => {
    loads([rule()], { capability: anchors(identity(ALL), []) });
  });
  it('rejects a map omitting one, naming it', () => {
    rejects([rule()], 'OAR-PROF-2', 'model.output', { capability: anchors(identity(ALL.filter((a) => a !== 'model.output')), []) });
  });
  it('rejects a map declaring one twice, naming it', () => {
    rejects([rule()], 'OAR-PROF-2', 'tool.handler', { capability: anchors(identity(ALL), ['tool.handler']) });
  });
  it('rejects a map naming something that is not a core anchor', () => {
    rejects([rule()], 'OAR-PROF-2', 'tool.invoke', { capability: anchors({ ...identity(ALL), 'tool.invoke': 'x' }, []) });
  });
});

describe('[OAR-PROF-4] a rule targeting an unsupported core anchor is rejected, naming the anchor', () => {
  it('loads a supported core anchor', () => {
    loads([rule({ anchor: 'agent.post_turn' })]);
  });
  it('rejects agent.finalize, which this host declares unsupported', () => {
    rejects([rule({ anchor: 'agent.finalize' })], 'OAR-PROF-4', 'agent.finalize');
  });
});

describe('[OAR-PROF-5] host-native anchors load when catalogued', () => {
  it('loads a catalogued host anchor (not portable)', () => {
    expect(only(loads([rule({ anchor: 'gateway.pre_render' })])).coreAnchor).toBe(false);
  });
  it('rejects an uncatalogued one, naming the value ([OAR-DOC-12])', () => {
    rejects([rule({ anchor: 'gateway.post_render' })], 'OAR-DOC-12', 'gateway.post_render');
  });
  it('rejects a catalogue entry colliding with a core anchor identifier', () => {
    const cap = capability({ anchors: { ...(capability().anchors as Doc), host: ['tool.pre_invoke'] } });
    rejects([rule()], 'OAR-PROF-5', 'tool.pre_invoke', { capability: cap });
  });
});

describe('[OAR-PROF-6] to [OAR-PROF-8] the portability report', () => {
  const pack = loads([
    rule({ id: 'PORTABLE', when: 'tool == "read" && fire_count < 3', requires: { profiles: ['tool'] }, copy: { what: '{{ tool }}' } }),
    rule({ id: 'HOST_ANCHOR', anchor: 'gateway.pre_render' }),
    rule({ id: 'HOST_FACT', when: 'acme.count > 1', requires: { facts: ['acme.count'] } }),
    rule({ id: 'HOST_SELECTOR', selector: { 'acme.tenant_tier': ['gold'] }, requires: { facts: ['acme.tenant_tier'] } }),
    rule({ id: 'HOST_COPY', copy: { what: '{{ acme.tenant_tier }}' }, requires: { facts: ['acme.tenant_tier'] } }),
    rule({ id: 'VIA_FACTS', when: 'tool == "read"', requires: { facts: ['tool'] } }),
    rule({ id: 'FLOW', flow: ['read', 'write'] }),
  ]);
  const report = new Map(portabilityReport(pack.rules).map((e) => [e.rule, e]));

  it('is a report, never a load failure: every one of these rules loaded', () => {
    expect(report.size).toBe(7);
  });
  it('a rule over core and required-profile facts at a core anchor is portable', () => {
    expect(report.get('PORTABLE')).toMatchObject({ portable: true, reasons: [] });
  });
  it('a host-native anchor makes a rule non-portable, and the report names it', () => {
    const e = report.get('HOST_ANCHOR')!;
    expect(e.portable).toBe(false);
    expect(e.reasons.join(' ')).toContain('gateway.pre_render');
  });
  it('a host-tier fact in the condition, selector or copy makes a rule non-portable, naming the fact', () => {
    for (const [id, fact] of [['HOST_FACT', 'acme.count'], ['HOST_SELECTOR', 'acme.tenant_tier'], ['HOST_COPY', 'acme.tenant_tier']] as const) {
      const e = report.get(id)!;
      expect(e.portable, id).toBe(false);
      expect(e.reasons.join(' ')).toContain(fact);
    }
  });
  it('a profile fact reached only through requires.facts is not portable: its profile is not named', () => {
    const e = report.get('VIA_FACTS')!;
    expect(e.portable).toBe(false);
    expect(e.reasons.join(' ')).toContain('tool');
  });
  it('a flow is portable only between equal windows: noted, not a reason', () => {
    const e = report.get('FLOW')!;
    expect(e.portable).toBe(true);
    expect(e.notes.join(' ')).toMatch(/activity window/);
  });
});

// =============================================================================================
// Appendix C — copy
// =============================================================================================

describe('[OAR-COPY-2] a copy binding must name a declared fact', () => {
  it('loads bindings of declared facts', () => {
    loads([rule({ copy: { what: 'the {{ tool }} call ({{ fire_count }})' }, requires: TOOL })]);
  });
  it('rejects an undeclared identifier, naming it and its offset', () => {
    const d = rejects([rule({ copy: { what: 'x {{ nosuch }}' } })], 'OAR-COPY-2', 'nosuch');
    expect(d.offset).toBe(5);
    expect(d.path).toEqual(['copy', 'what']);
  });
  it('rejects an undeclared identifier in a conditional', () => {
    rejects([rule({ copy: { why: '{% if nosuch %}a{% endif %}' } })], 'OAR-COPY-2', 'nosuch');
  });
  it('rejects an observation function ([OAR-FACT-27])', () => {
    rejects([rule({ copy: { what: '{{ tool_arg_string }}' }, requires: TOOL })], 'OAR-COPY-2', 'tool_arg_string');
  });
});

describe('[OAR-COPY-3] a construct the grammar does not derive is rejected, naming it', () => {
  it('loads if, if not, and if/else', () => {
    loads([rule({ copy: { what: '{% if policy_denied %}denied{% else %}ok{% endif %}', why: '{%if not tool%}none{%endif%}' }, requires: TOOL })]);
  });
  for (const [text, construct] of [
    ['{% for x in tool %}{% endfor %}', '{% for x in tool %}'],
    ['{{ tool | upper }}', '{{ tool | upper }}'],
    ['{% if tool %}unterminated', '{% if tool %}'],
    ['{% endif %}', '{% endif %}'],
    ['{{ }}', '{{ }}'],
    ['{{ tool ', '{{ tool '],
  ] as const) {
    it(`rejects ${JSON.stringify(text)}`, () => {
      const d = rejects([rule({ copy: { what: text }, requires: TOOL })], 'OAR-COPY-3', construct);
      expect(typeof d.offset).toBe('number');
    });
  }
});

describe('[OAR-COPY-4] only string, bool, int, double and list<string> facts are interpolated', () => {
  it('loads each interpolable type', () => {
    loads([rule({ copy: { what: '{{ tool }} {{ policy_denied }} {{ content_length }} {{ acme.tags }} {{ fire_count }}' }, requires: { profiles: ['tool', 'content'], facts: ['acme.tags'] } })]);
  });
  it('rejects map, list<map> and map facts, naming them', () => {
    rejects([rule({ copy: { what: '{{ tool_args }}' }, requires: TOOL })], 'OAR-COPY-4', 'tool_args');
    rejects([rule({ copy: { what: '{{ secret_matches }}' }, requires: { profiles: ['secrets'] } })], 'OAR-COPY-4', 'secret_matches');
    rejects([rule({ copy: { what: '{{ acme.meta }}' }, requires: { facts: ['acme.meta'] } })], 'OAR-COPY-4', 'acme.meta');
  });
  it('a conditional may test a fact of any type', () => {
    loads([rule({ copy: { what: '{% if tool_args %}args{% endif %}' }, requires: TOOL })]);
  });
});

describe('[OAR-COPY-8] whitespace inside {{ }} and {% %} is insignificant', () => {
  it('{{tool}} and {{ tool }} are the same binding', () => {
    const tight = only(loads([rule({ copy: { what: 'a{{tool}}b' }, requires: TOOL })])).copy.what;
    const loose = only(loads([rule({ copy: { what: 'a{{ \t tool\n }}b' }, requires: TOOL })])).copy.what;
    expect(tight).toEqual(loose);
  });
  it('{%if tool%} and {%  if  tool  %} are the same conditional', () => {
    const tight = only(loads([rule({ copy: { what: '{%if tool%}x{%endif%}' }, requires: TOOL })])).copy.what;
    const loose = only(loads([rule({ copy: { what: '{%  if  tool  %}x{%  endif  %}' }, requires: TOOL })])).copy.what;
    expect(tight).toEqual(loose);
  });
});

// =============================================================================================
// Section 9 — configuration documents
// =============================================================================================

describe('[OAR-CFG-1] a configuration carries oar_config and any of disable and enforcement', () => {
  it('loads a configuration with all three, and an empty one', () => {
    loads([rule(), rule({ id: 'B' })], { configs: [config({ disable: ['A'], enforcement: { B: 'monitor' } }), config()] });
  });
  it('rejects any other member, naming it — x- members included', () => {
    for (const member of ['enable', 'x-note', 'rules']) {
      rejects([rule()], 'OAR-CFG-1', member, { configs: [config({ [member]: ['A'] })] });
    }
  });
  it('[OAR-CFG-6] rejects an attempt to alter what a rule means', () => {
    for (const member of ['anchor', 'selector', 'when', 'effect', 'on_fire', 'overrides', 'copy']) {
      rejects([rule()], 'OAR-CFG-1', member, { configs: [config({ [member]: { A: 'x' } })] });
    }
  });
  it('rejects an unsupported major, a greater minor, a malformed or a missing version', () => {
    for (const v of ['2.0', '1.1', '01.0', 1]) rejects([rule()], 'OAR-CFG-1', 'oar_config', { configs: [config({ oar_config: v })] });
    rejects([rule()], 'OAR-CFG-1', 'oar_config', { configs: [{ disable: ['A'] }] });
  });
  it('rejects a configuration that is not an object', () => {
    const errs = errorsOf(load([rule()], { configs: ['- A\n'] }));
    expect(errs.map((d) => d.clause)).toEqual(['OAR-CFG-1']);
  });
});

describe('[OAR-CFG-2] disable treats a rule as enforcement: off', () => {
  it('disables a listed rule', () => {
    expect(loads([rule()], { configs: [config({ disable: ['A'] })] }).enforcement.get('A')).toBe('off');
  });
  it('rejects a disable that is not a list of identifiers', () => {
    rejects([rule()], 'OAR-CFG-2', 'disable', { configs: [config({ disable: 'A' })] });
    rejects([rule()], 'OAR-CFG-2', 'a', { configs: [config({ disable: ['a'] })] });
  });
});

describe('[OAR-CFG-3] enforcement replaces a rule\'s declared enforcement', () => {
  it('applies each value', () => {
    const p = loads([rule({ id: 'A' }), rule({ id: 'B', enforcement: 'off' }), rule({ id: 'C', enforcement: 'monitor' })], {
      configs: [config({ enforcement: { A: 'monitor', B: 'enforce', C: 'off' } })],
    });
    expect(Object.fromEntries(p.enforcement)).toEqual({ A: 'monitor', B: 'enforce', C: 'off' });
  });
  it('rejects an unknown value and a non-object', () => {
    rejects([rule()], 'OAR-CFG-3', 'A', { configs: [config({ enforcement: { A: 'loud' } })] });
    rejects([rule()], 'OAR-CFG-3', 'enforcement', { configs: [config({ enforcement: ['A'] })] });
  });
});

describe('[OAR-CFG-4] / [OAR-CONF-7] a configuration naming a rule that is not loaded is rejected, naming it', () => {
  it('rejects in disable and in enforcement, bare and qualified', () => {
    rejects([rule()], 'OAR-CFG-4', 'NOPE', { configs: [config({ disable: ['NOPE'] })] });
    rejects([rule()], 'OAR-CFG-4', 'acme/A', { configs: [config({ enforcement: { 'acme/A': 'off' } })] });
  });
  it('a qualified reference does not fall back to another namespace', () => {
    rejects([rule({ namespace: 'acme' })], 'OAR-CFG-4', 'beta/A', { configs: [config({ disable: ['beta/A'] })] });
  });
});

describe('[OAR-CFG-5] / [OAR-OPS-7] / [OAR-CONF-7] a mandatory rule cannot be disabled or downgraded', () => {
  it('loads a configuration that leaves it enforced, or upgrades it', () => {
    loads([rule({ mandatory: true })], { configs: [config({ enforcement: { A: 'enforce' } })] });
    const p = loads([rule({ mandatory: true, enforcement: 'monitor' })], { configs: [config({ enforcement: { A: 'enforce' } })] });
    expect(p.enforcement.get('A')).toBe('enforce');
  });
  it('rejects disabling it, naming the rule', () => {
    rejects([rule({ mandatory: true, namespace: 'acme' })], 'OAR-CFG-5', 'acme/A', { configs: [config({ disable: ['acme/A'] })] });
    rejects([rule({ mandatory: true })], 'OAR-CFG-5', 'A', { configs: [config({ enforcement: { A: 'off' } })] });
  });
  it('rejects downgrading it to monitor', () => {
    rejects([rule({ mandatory: true })], 'OAR-CFG-5', 'A', { configs: [config({ enforcement: { A: 'monitor' } })] });
  });
  it('rejects disabling it even when it names the rule by its bare id across namespaces', () => {
    const d = rejects([rule({ mandatory: true, namespace: 'acme' })], 'OAR-CFG-5', 'A', { configs: [config({ disable: ['A'] })] });
    expect(d.message).toContain('acme/A');
  });
  it('rejects a `disable` of a mandatory rule even when it already declares itself off', () => {
    rejects([rule({ mandatory: true, enforcement: 'off' })], 'OAR-CFG-5', 'A', { configs: [config({ disable: ['A'] })] });
  });
  it('a later document cannot slip a downgrade past an earlier upgrade', () => {
    rejects([rule({ mandatory: true })], 'OAR-CFG-5', 'A', {
      configs: [config({ enforcement: { A: 'enforce' } }), config({ enforcement: { A: 'monitor' } })],
    });
  });
});

describe('[OAR-CFG-7] configuration documents apply in order; the last statement about a rule wins', () => {
  const rules = [rule({ id: 'A' }), rule({ id: 'B' })];
  it('disable then enforcement: the later document wins', () => {
    const p = loads(rules, { configs: [config({ disable: ['A'] }), config({ enforcement: { A: 'monitor' } })] });
    expect(p.enforcement.get('A')).toBe('monitor');
  });
  it('enforcement then disable: the later document wins', () => {
    const p = loads(rules, { configs: [config({ enforcement: { A: 'monitor' } }), config({ disable: ['A'] })] });
    expect(p.enforcement.get('A')).toBe('off');
  });
  it('statements about different rules accumulate', () => {
    const p = loads(rules, { configs: [config({ disable: ['A'] }), config({ enforcement: { B: 'monitor' } }), config({ enforcement: { A: 'enforce' } })] });
    expect(Object.fromEntries(p.enforcement)).toEqual({ A: 'enforce', B: 'monitor' });
  });
  it('a qualified and a bare spelling of one rule are statements about the same rule', () => {
    const p = loads([rule({ namespace: 'acme' })], { configs: [config({ disable: ['acme/A'] }), config({ enforcement: { A: 'monitor' } })] });
    expect(Object.fromEntries(p.enforcement)).toEqual({ 'acme/A': 'monitor' });
  });
  it('the key order of one JSON document does not decide anything', () => {
    const one = loads(rules, { configs: ['{"oar_config":"1.0","disable":["A"],"enforcement":{"A":"monitor"}}'] });
    const two = loads(rules, { configs: ['{"enforcement":{"A":"monitor"},"disable":["A"],"oar_config":"1.0"}'] });
    expect(Object.fromEntries(one.enforcement)).toEqual(Object.fromEntries(two.enforcement));
  });
});

describe('[OAR-CFG-8] a bare identifier resolves exactly first, then across namespaces', () => {
  it('an exact qualified match wins over rules sharing the id in other namespaces', () => {
    const p = loads([rule(), rule({ namespace: 'acme' }), rule({ namespace: 'beta' })], { configs: [config({ disable: ['A'] })] });
    expect(Object.fromEntries(p.enforcement)).toEqual({ A: 'off' });
  });
  it('with no exact match, a bare id matching one rule in any namespace names it', () => {
    const p = loads([rule({ namespace: 'acme' }), rule({ id: 'B' })], { configs: [config({ enforcement: { A: 'monitor' } })] });
    expect(Object.fromEntries(p.enforcement)).toEqual({ 'acme/A': 'monitor' });
  });
  it('with no exact match, a bare id matching several rules is rejected, naming them', () => {
    const d = rejects([rule({ namespace: 'acme' }), rule({ namespace: 'beta' })], 'OAR-CFG-8', 'A', { configs: [config({ disable: ['A'] })] });
    expect(d.message).toContain('acme/A');
    expect(d.message).toContain('beta/A');
  });
  it('the qualified form disambiguates', () => {
    const p = loads([rule({ namespace: 'acme' }), rule({ namespace: 'beta' })], { configs: [config({ disable: ['beta/A'] })] });
    expect(Object.fromEntries(p.enforcement)).toEqual({ 'beta/A': 'off' });
  });
});

// =============================================================================================
// One pass, printed positions
// =============================================================================================

describe('loading reports every error in one pass', () => {
  it('a set with five different errors yields five diagnostics', () => {
    const r = load([
      rule({ id: 'UNKNOWN_FIELD', colour: 'red' }),
      rule({ id: 'BAD_ANCHOR', anchor: 'tool.nowhere' }),
      rule({ id: 'BAD_WHEN', when: 'nosuch > 1' }),
      rule({ id: 'BAD_OVERRIDE', overrides: ['NOPE'] }),
      rule({ id: 'BAD_PROFILE', requires: { profiles: ['pii'] } }),
    ]);
    expect(errorsOf(r).map((d) => `${d.clause} ${d.token}`).sort()).toEqual([
      'OAR-DOC-12 tool.nowhere',
      'OAR-DOC-27 colour',
      'OAR-EVAL-13 NOPE',
      'OAR-FACT-19 pii',
      'OAR-FACT-3 nosuch',
    ]);
  });

  it('one rule with faults in several fields reports each — the rule-set checks included', () => {
    const r = load([rule({ anchor: 'nowhere', when: 'nosuch', selector: { bogus: ['x'] }, overrides: ['NOPE'], on_error: 'GONE', counter_scope: 'fire_count' })]);
    expect(errorsOf(r).map((d) => `${d.clause} ${d.token}`).sort()).toEqual([
      'OAR-DOC-12 nowhere',
      'OAR-EVAL-13 NOPE',
      'OAR-FACT-3 nosuch',
      'OAR-FIRE-10 fire_count',
      'OAR-OPS-5 GONE',
      'OAR-SEL-3 bogus',
    ]);
  });

  it('configuration errors are reported beside one another', () => {
    const r = load([rule({ mandatory: true }), rule({ id: 'B', namespace: 'acme' }), rule({ id: 'B', namespace: 'beta' })], {
      configs: [config({ disable: ['NOPE', 'A'] }), config({ enforcement: { B: 'off' } })],
    });
    expect(errorsOf(r).map((d) => `${d.clause} ${d.token}`).sort()).toEqual(['OAR-CFG-4 NOPE', 'OAR-CFG-5 A', 'OAR-CFG-8 B']);
  });
});

describe('one pass within a rule with a shape error', () => {
  it('checks the condition, selector and copy of a rule whose shape errors are in members the checks do not read', () => {
    const r = load([rule({ 'x-Foo': 1, mandatory: 'yes', kind: 'polcy', selector: { tol: ['bash'] }, when: 'tol == 1', copy: { what: '{{ tol }}' } })]);
    expect(errorsOf(r).map((d) => `${d.clause} ${d.token}`).sort()).toEqual(['OAR-COPY-2 tol', 'OAR-DOC-10 kind', 'OAR-DOC-17 mandatory', 'OAR-DOC-27 x-Foo', 'OAR-FACT-3 tol', 'OAR-SEL-3 tol']);
  });
  it('does not check a rule whose shape error is in a member the checks read (when: 5), and reports that error once', () => {
    const r = load([rule({ colour: 'red', when: 5 })]);
    const errors = errorsOf(r).map((d) => `${d.clause} ${String(d.path?.[0])}`);
    expect(errors).toContain('OAR-DOC-27 colour');
    expect(errors.filter((e) => e.endsWith(' when'))).toHaveLength(1);
  });
});

describe('one pass across rules and configurations', () => {
  it('a configuration error is reported beside a rule error', () => {
    const r = load([rule({ anchor: 'nowhere' })], { configs: [config({ disable: ['NOPE'] })] });
    expect(errorsOf(r).map((d) => `${d.clause} ${d.token}`).sort()).toEqual(['OAR-CFG-4 NOPE', 'OAR-DOC-12 nowhere']);
  });
  it('a configuration naming a rule that failed its own checks is not also reported as naming nothing', () => {
    const r = load([rule({ colour: 'red' }), rule({ id: 'B', namespace: 'acme', when: 'nosuch' })], {
      configs: [config({ disable: ['A', 'B', 'acme/B'] })],
    });
    expect(errorsOf(r).map((d) => `${d.clause} ${d.token}`).sort()).toEqual(['OAR-DOC-27 colour', 'OAR-FACT-3 nosuch']);
  });
  it('a rule that failed its own checks is still a loaded identity for the others', () => {
    // B's condition is wrong; A's reference to B is not, and is not reported.
    const r = load([rule({ overrides: ['B'], on_error: 'B', when: 'fire_count_of("B") > 1' }), rule({ id: 'B', when: 'nosuch' })]);
    expect(errorsOf(r).map((d) => `${d.clause} ${d.token}`)).toEqual(['OAR-FACT-3 nosuch']);
  });
});

describe('[OAR-EVAL-11] / [OAR-OPS-2] a rule that is off is still loaded, so its load errors are still reported', () => {
  it('loads a rule declaring enforcement: off', () => {
    expect(only(loads([rule({ enforcement: 'off', when: 'true' })])).enforcement).toBe('off');
  });
  it('rejects a rule declaring enforcement: off whose condition is wrong', () => {
    rejects([rule({ enforcement: 'off', when: 'nosuch' })], 'OAR-FACT-3', 'nosuch');
  });
  it('rejects a rule disabled by configuration whose condition is wrong', () => {
    rejects([rule({ when: 'nosuch' })], 'OAR-FACT-3', 'nosuch', { configs: [config({ disable: ['A'] })] });
  });
});

describe('[OAR-EXPR-17] the declared node limit, and the floor of 256', () => {
  // `!true` then 127 × `|| true`: 2 + 2 × 127 = 256 nodes; 129 plain literals: 2 × 129 − 1 = 257.
  const n256 = ['!true', ...Array(127).fill('true')].join(' || ');
  const n257 = Array(129).fill('true').join(' || ');
  it('loads a 256-node condition on a host declaring 256', () => {
    loads([rule({ when: n256 })], { capability: capability({ expression_nodes_max: 256 }) });
  });
  it('rejects a 257-node condition there, and loads it where the host declares more', () => {
    const r = load([rule({ when: n257 })], { capability: capability({ expression_nodes_max: 256 }) });
    expect(errorsOf(r).map((d) => d.clause)).toEqual(['OAR-EXPR-17']);
    loads([rule({ when: n257 })], { capability: capability({ expression_nodes_max: 257 }) });
  });
  it('rejects a capability declaring less than 256', () => {
    rejects([rule()], 'OAR-EXPR-17', 'expression_nodes_max', { capability: capability({ expression_nodes_max: 255 }) });
  });
});

describe('printed diagnostics: file:line:col: message [OAR-XXX-n], in YAML and in JSON (inside a condition or copy, the token\'s own position)', () => {
  const YAML_RULE = [
    'oar: "1.0"', //                      1
    'id: A', //                           2
    'kind: policy', //                    3
    'anchor: tool.nowhere', //            4
    'effect: transform', //               5
    'transform:', //                      6
    '  action: explode', //               7
    '  target: content', //               8
    'when: tool == "x"', //               9
    'colour: red', //                     10
    'copy:', //                           11
    '  what: "{{ nosuch }}"', //          12
    '',
  ].join('\n');
  const JSON_RULE = [
    '{', //                                1
    '  "oar": "1.0",', //                  2
    '  "id": "A",', //                     3
    '  "kind": "policy",', //              4
    '  "anchor": "tool.nowhere",', //      5
    '  "effect": "transform",', //         6
    '  "transform": {', //                 7
    '    "action": "explode",', //         8
    '    "target": "content"', //          9
    '  },', //                             10
    '  "when": "tool == \\"x\\"",', //     11
    '  "colour": "red",', //               12
    '  "copy": { "what": "{{ nosuch }}" }', // 13
    '}',
  ].join('\n');

  const printed = (text: string) => {
    const r = load([text]);
    expect(r.ok).toBe(false);
    return errorsOf(r).map(formatDiagnostic).sort();
  };

  it('schema errors in YAML', () => {
    expect(printed(YAML_RULE)).toEqual([
      expect.stringMatching(/^<rules 0>:10:1: .*`colour`.* \[OAR-DOC-27\]$/),
      expect.stringMatching(/^<rules 0>:7:3: .*transform\.action.* \[OAR-OPS-13\]$/),
    ]);
  });

  it('schema errors in JSON', () => {
    expect(printed(JSON_RULE)).toEqual([
      expect.stringMatching(/^<rules 0>:12:3: .*`colour`.* \[OAR-DOC-27\]$/),
      expect.stringMatching(/^<rules 0>:8:5: .*transform\.action.* \[OAR-OPS-13\]$/),
    ]);
  });

  const fixSchema = (text: string) => text.replace(/^.*colour.*\n/m, '').replace('explode', 'redact');

  it('rule errors in YAML', () => {
    expect(printed(fixSchema(YAML_RULE))).toEqual([
      expect.stringMatching(/^<rules 0>:11:13: .*nosuch.* \[OAR-COPY-2\]$/),
      expect.stringMatching(/^<rules 0>:4:1: .*tool\.nowhere.* \[OAR-DOC-12\]$/),
      expect.stringMatching(/^<rules 0>:9:7: .*tool.* \[OAR-FACT-20\]$/),
    ]);
  });

  it('rule errors in JSON', () => {
    const lines = printed(fixSchema(JSON_RULE));
    expect(lines).toHaveLength(3);
    expect(lines).toContainEqual(expect.stringMatching(/^<rules 0>:5:3: .*tool\.nowhere.* \[OAR-DOC-12\]$/));
    expect(lines).toContainEqual(expect.stringMatching(/^<rules 0>:11:12: .*tool.* \[OAR-FACT-20\]$/));
    expect(lines).toContainEqual(expect.stringMatching(/^<rules 0>:12:25: .*nosuch.* \[OAR-COPY-2\]$/));
  });

  it('rule-set and configuration errors', () => {
    const r = load(['oar: "1.0"\nid: A\nkind: policy\nanchor: tool.pre_invoke\neffect: block\noverrides:\n  - B\n  - NOPE\n'], {
      configs: ['oar_config: "1.0"\ndisable:\n  - GONE\n'],
    });
    expect(errorsOf(r).map(formatDiagnostic)).toEqual([
      expect.stringMatching(/^<rules 0>:7:5: .*B.* \[OAR-EVAL-13\]$/),
      expect.stringMatching(/^<rules 0>:8:5: .*NOPE.* \[OAR-EVAL-13\]$/),
      expect.stringMatching(/^<config 0>:3:5: .*GONE.* \[OAR-CFG-4\]$/),
    ]);
    const c = load([rule()], { configs: ['oar_config: "1.0"\ndisable:\n  - GONE\n'] });
    expect(errorsOf(c).map(formatDiagnostic)).toEqual([expect.stringMatching(/^<config 0>:3:5: .*GONE.* \[OAR-CFG-4\]$/)]);
    const j = load([rule()], { configs: ['{\n  "oar_config": "1.0",\n  "enforcement": {\n    "GONE": "off"\n  }\n}'] });
    expect(errorsOf(j).map(formatDiagnostic)).toEqual([expect.stringMatching(/^<config 0>:4:5: .*GONE.* \[OAR-CFG-4\]$/)]);
  });

  it('capability errors, in YAML and in JSON', () => {
    const yaml = `${stringify(capability()).trimEnd()}\ncolour: red\n`;
    const line = yaml.split('\n').length - 1;
    const y = load([rule()], { capability: yaml });
    expect(errorsOf(y).map(formatDiagnostic)).toEqual([expect.stringMatching(new RegExp(`^<capability>:${line}:1: .*colour.* \\[OAR-FACT-24\\]$`))]);
    const json = '{\n  "anchors": {\n    "core": {},\n    "bogus": []\n  }\n}';
    const j = load([rule()], { capability: json });
    expect(errorsOf(j).map(formatDiagnostic)).toContainEqual(expect.stringMatching(/^<capability>:4:5: .*bogus.* \[OAR-FACT-24\]$/));
  });

  it('files: the path is the file the rule came from', () => {
    const dir = mkdtempSync(join(tmpdir(), 'oarc-pos-'));
    try {
      const cap = join(dir, 'cap.yaml');
      writeFileSync(cap, stringify(capability()));
      writeFileSync(join(dir, 'a.yaml'), YAML_RULE);
      writeFileSync(join(dir, 'b.json'), JSON_RULE);
      const r = loadPackFiles({ capability: cap, rules: [join(dir, 'a.yaml'), join(dir, 'b.json')] });
      expect(r.ok).toBe(false);
      const out = (r.ok ? [] : r.diagnostics).map(formatDiagnostic);
      expect(out.some((l) => l.startsWith(`${join(dir, 'b.json')}:12:3: `) && l.endsWith('[OAR-DOC-27]'))).toBe(true);
      expect(out.some((l) => l.startsWith(`${join(dir, 'a.yaml')}:10:1: `) && l.endsWith('[OAR-DOC-27]'))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
