import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  capabilitySymbols,
  coreToLocal,
  isBaselineCapability,
  loadCapability,
  localToCore,
  parseDeclaredType,
  type Capability,
} from '../compiler/load/capability.js';
import {
  CORE_ANCHORS,
  CORE_FACTS,
  DETECTOR_BACKED_PROFILES,
  DETECTOR_REF_PATTERN,
  NAMESPACE_PATTERN,
  RESERVED_DETECTORS,
  RESERVED_WORDS,
  STANDARD_PROFILES,
  STANDARD_PROFILE_NAMES,
  declaredType,
} from '../compiler/load/vocabulary.js';
import type { Diagnostic } from '../compiler/diagnostics.js';
import type { SymbolEntry, SymbolTable } from '../runtime/types.js';

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

type Doc = Record<string, unknown>;

/** A minimal valid capability: identity anchor map, nothing claimed. */
function base(over: Doc = {}): Doc {
  return {
    oar_capability_version: '1.0',
    host: 'oar.test',
    anchors: { core: Object.fromEntries(CORE_ANCHORS.map((a) => [a, a])), unsupported: [], host: [] },
    profiles: [],
    activity_window: 0,
    supports_transform: false,
    expression_nodes_max: 256,
    host_facts: [],
    detectors: [],
    ...over,
  };
}

/** `base()` with host facts declared under host `acme.gateway`. */
function withHostFacts(facts: unknown[], over: Doc = {}): Doc {
  return base({ host: 'acme.gateway', host_facts: facts, ...over });
}

function errors(ds: readonly Diagnostic[]): Diagnostic[] {
  return ds.filter((d) => d.severity === 'error');
}

function accepts(doc: unknown): { capability: Capability; symbols: SymbolTable; diagnostics: Diagnostic[] } {
  const r = loadCapability(doc);
  expect(errors(r.diagnostics)).toEqual([]);
  expect(r.capability).toBeDefined();
  expect(r.symbols).toBeDefined();
  return r as { capability: Capability; symbols: SymbolTable; diagnostics: Diagnostic[] };
}

/** The document is refused, and one diagnostic carries `clause` and names `token` in its message. */
function rejects(doc: unknown, clause: string, token: string): Diagnostic {
  const r = loadCapability(doc);
  expect(r.capability).toBeUndefined();
  expect(r.symbols).toBeUndefined();
  const hit = r.diagnostics.find((d) => d.severity === 'error' && d.clause === clause && d.token === token);
  expect(hit, `expected ${clause} naming ${token}; got ${JSON.stringify(r.diagnostics)}`).toBeDefined();
  expect(hit!.message).toContain(token);
  return hit!;
}

function describeSymbol(s: SymbolEntry): string {
  return s.kind === 'fact' ? `${s.name}: ${s.type}` : `${s.name}: (${s.param}) -> ${s.result}`;
}

const EXAMPLE_8_2 = `
oar_capability_version: "1.0"
host: acme.gateway
anchors:
  core:
    tool.pre_invoke: tool.pre_invoke
    tool.post_invoke: tool.post_invoke
    model.input: content.input
    model.output: content.output
  unsupported:
    - tool.handler
    - agent.post_turn
    - agent.finalize
    - model.tool_result
  host:
    - gateway.pre_render
profiles: [tool, content, secrets, mcp]
activity_window: 16
supports_transform: true
expression_nodes_max: 1024
host_facts:
  - name: acme.tenant_tier
    type: string
detectors:
  - detector://presidio
`;

// ---------------------------------------------------------------------------------------------
// The spec's example and the document shape
// ---------------------------------------------------------------------------------------------

describe('capability document (section 8.2)', () => {
  it('[OAR-FACT-21] loads the spec\'s own 8.2 example', () => {
    const { capability: c, symbols } = accepts(parse(EXAMPLE_8_2));
    expect(c.version).toBe('1.0');
    expect(c.host).toBe('acme.gateway');
    expect([...c.coreAnchors]).toEqual([
      ['tool.pre_invoke', 'tool.pre_invoke'],
      ['tool.post_invoke', 'tool.post_invoke'],
      ['model.input', 'content.input'],
      ['model.output', 'content.output'],
    ]);
    expect([...c.unsupportedAnchors]).toEqual(['tool.handler', 'agent.post_turn', 'agent.finalize', 'model.tool_result']);
    expect([...c.hostAnchors]).toEqual(['gateway.pre_render']);
    expect([...c.profiles]).toEqual(['tool', 'content', 'secrets', 'mcp']);
    expect(c.activityWindow).toBe(16);
    expect(c.supportsTransform).toBe(true);
    expect(c.expressionNodesMax).toBe(1024);
    expect(c.hostFacts).toEqual([{ name: 'acme.tenant_tier', type: 'string' }]);
    expect([...c.detectors]).toEqual(['detector://presidio']);
    expect(symbols.lookup('acme.tenant_tier')).toMatchObject({ kind: 'fact', type: 'string', tier: { kind: 'host' } });
    expect(symbols.lookup('secret_matches')).toMatchObject({ type: 'list<map>', tier: { kind: 'profile', profile: 'secrets' } });
    expect(symbols.lookup('session_posture')).toBeUndefined();
  });

  it('[OAR-CONF-29] [OAR-PROF-4] maps host-local spellings to core anchors, host anchors to themselves', () => {
    const { capability: c } = accepts(parse(EXAMPLE_8_2));
    expect(localToCore(c, 'content.input')).toBe('model.input');
    expect(localToCore(c, 'tool.pre_invoke')).toBe('tool.pre_invoke');
    expect(localToCore(c, 'gateway.pre_render')).toBe('gateway.pre_render');
    expect(localToCore(c, 'model.input')).toBeUndefined(); // a core id is not a local spelling here
    expect(localToCore(c, 'nope')).toBeUndefined();
    expect(coreToLocal(c, 'model.output')).toBe('content.output');
    expect(coreToLocal(c, 'gateway.pre_render')).toBe('gateway.pre_render');
    expect(coreToLocal(c, 'tool.handler')).toBeUndefined();
  });

  it('[OAR-FACT-21] rejects a document that is not an object', () => {
    for (const v of [null, [], 'cap', 3]) {
      const r = loadCapability(v);
      expect(r.capability).toBeUndefined();
      expect(r.diagnostics.map((d) => d.clause)).toEqual(['OAR-FACT-21']);
    }
  });

  it('[OAR-FACT-21] rejects a document missing `anchors`, naming it', () => {
    const doc = base();
    delete doc.anchors;
    rejects(doc, 'OAR-FACT-21', 'anchors');
  });

  it('[OAR-FACT-21] [OAR-CONF-36] reads an absent member as its empty declaration', () => {
    const doc = base();
    for (const m of ['oar_capability_version', 'host', 'profiles', 'activity_window', 'supports_transform', 'expression_nodes_max', 'host_facts', 'detectors']) delete doc[m];
    delete (doc.anchors as Doc).host;
    const c = accepts(doc).capability;
    expect(c.version).toBe('1.0');
    expect(c.profiles.size).toBe(0);
    expect(c.activityWindow).toBe(0);
    expect(c.supportsTransform).toBe(false);
    expect(c.expressionNodesMax).toBe(1024);
    expect(c.hostFacts).toEqual([]);
    expect(c.detectors.size).toBe(0);
    expect(c.hostAnchors.size).toBe(0);
  });

  it('[OAR-FACT-21] rejects `anchors` missing `core`, naming it', () => {
    const doc = base();
    delete (doc.anchors as Doc).core;
    rejects(doc, 'OAR-FACT-21', 'core');
  });

  it('[OAR-PROF-2] an absent `unsupported` still requires every core anchor in `core`', () => {
    const doc = base({ anchors: { core: { 'tool.pre_invoke': 'tool.pre_invoke' } } });
    rejects(doc, 'OAR-PROF-2', 'tool.handler');
    accepts(base({ anchors: { core: Object.fromEntries(CORE_ANCHORS.map((a) => [a, a])) } }));
  });

  it('[OAR-OPS-22] a detector-backed profile with no `detectors` member at all is rejected', () => {
    const doc = base({ profiles: ['secrets'] });
    delete doc.detectors;
    rejects(doc, 'OAR-OPS-22', 'secrets');
  });

  it('[OAR-FACT-21] rejects a host fact missing `name` or `type`', () => {
    rejects(withHostFacts([{ type: 'string' }]), 'OAR-FACT-21', 'name');
    rejects(withHostFacts([{ name: 'acme.tier' }]), 'OAR-FACT-21', 'type');
    rejects(withHostFacts(['acme.tier']), 'OAR-FACT-21', 'host_facts');
    rejects(base({ anchors: [] }), 'OAR-FACT-21', 'anchors');
  });

  it('[OAR-FACT-24] [OAR-DOC-27] rejects an unknown member by name, and ignores `x-` members', () => {
    rejects(base({ activity_windw: 16 }), 'OAR-FACT-24', 'activity_windw');
    rejects(base({ anchors: { ...(base().anchors as Doc), catalogue: [] } }), 'OAR-FACT-24', 'catalogue');
    rejects(withHostFacts([{ name: 'acme.tier', type: 'string', doc: 'x' }]), 'OAR-FACT-24', 'doc');
    rejects(base({ x_vendor: 1 }), 'OAR-FACT-24', 'x_vendor');
    accepts(base({ 'x-vendor': { any: 1 }, anchors: { ...(base().anchors as Doc), 'x-note': 'n' } }));
    accepts(withHostFacts([{ name: 'acme.tier', type: 'string', 'x-doc': 'tier' }]));
  });

  it('[OAR-FACT-21] rejects a non-boolean `supports_transform`', () => {
    rejects(base({ supports_transform: 'yes' }), 'OAR-FACT-21', 'supports_transform');
    expect(accepts(base({ supports_transform: true })).capability.supportsTransform).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// Version
// ---------------------------------------------------------------------------------------------

describe('oar_capability_version', () => {
  it('[OAR-DOC-3] rejects a version not of the form <major>.<minor> without leading zeros', () => {
    for (const v of ['01.0', '1.00', '1', '1.0.0', 'v1.0', 1, 1.0]) {
      rejects(base({ oar_capability_version: v }), 'OAR-DOC-3', 'oar_capability_version');
    }
  });

  it('[OAR-DOC-4] rejects an unsupported major version', () => {
    const d = rejects(base({ oar_capability_version: '2.0' }), 'OAR-DOC-4', 'oar_capability_version');
    expect(d.message).toContain('2.0');
    rejects(base({ oar_capability_version: '0.9' }), 'OAR-DOC-4', 'oar_capability_version');
  });

  it('[OAR-DOC-5] rejects a minor greater than this engine implements, and accepts 1.0', () => {
    rejects(base({ oar_capability_version: '1.1' }), 'OAR-DOC-5', 'oar_capability_version');
    expect(accepts(base({ oar_capability_version: '1.0' })).capability.version).toBe('1.0');
  });

  it('[OAR-CONF-2] stops at an unsupported version: later members may mean what this engine cannot judge', () => {
    const r = loadCapability(base({ oar_capability_version: '1.7', new_member: true, activity_window: -1 }));
    expect(r.diagnostics.map((d) => d.clause)).toEqual(['OAR-DOC-5']);
  });
});

// ---------------------------------------------------------------------------------------------
// Anchors
// ---------------------------------------------------------------------------------------------

function anchors(core: Doc, unsupported: unknown[] = [], host: unknown[] = []): Doc {
  return base({ anchors: { core, unsupported, host } });
}
const identity = (except: string[] = []): Doc =>
  Object.fromEntries(CORE_ANCHORS.filter((a) => !except.includes(a)).map((a) => [a, a]));

describe('anchor profile map', () => {
  it('[OAR-PROF-2] accepts every core anchor declared exactly once across `core` and `unsupported`', () => {
    const { capability: c } = accepts(anchors(identity(['tool.handler', 'agent.finalize']), ['agent.finalize', 'tool.handler']));
    // Canonical 8.1 order, whatever order the document used.
    expect([...c.unsupportedAnchors]).toEqual(['tool.handler', 'agent.finalize']);
    expect(c.coreAnchors.size).toBe(6);
  });

  it('[OAR-PROF-2] rejects a map that omits a core anchor, naming it', () => {
    rejects(anchors(identity(['model.tool_result'])), 'OAR-PROF-2', 'model.tool_result');
  });

  it('[OAR-PROF-2] rejects a core anchor declared twice, naming it', () => {
    rejects(anchors(identity(), ['tool.handler']), 'OAR-PROF-2', 'tool.handler');
    rejects(anchors(identity(['tool.handler']), ['tool.handler', 'tool.handler']), 'OAR-PROF-2', 'tool.handler');
  });

  it('[OAR-PROF-2] rejects an unknown core anchor, naming it', () => {
    rejects(anchors({ ...identity(), 'tool.preinvoke': 'x' }), 'OAR-PROF-2', 'tool.preinvoke');
    rejects(anchors(identity(['agent.finalize']), ['agent.finalize', 'agent.final']), 'OAR-PROF-2', 'agent.final');
  });

  it('[OAR-PROF-2] rejects a core anchor mapped to something other than a non-empty string', () => {
    rejects(anchors({ ...identity(), 'model.input': '' }), 'OAR-PROF-2', 'model.input');
    rejects(anchors({ ...identity(), 'model.input': 3 }), 'OAR-PROF-2', 'model.input');
    rejects(base({ anchors: { core: [], unsupported: [], host: [] } }), 'OAR-PROF-2', 'core');
    rejects(base({ anchors: { core: identity(), unsupported: 'none', host: [] } }), 'OAR-PROF-2', 'unsupported');
  });

  it('[OAR-PROF-2] rejects two core anchors implemented by the same local anchor (ambiguous `anchor` fact)', () => {
    rejects(anchors({ ...identity(), 'model.input': 'content', 'model.output': 'content' }), 'OAR-PROF-2', 'content');
  });

  it('[OAR-CONF-29] accepts a local spelling that is another core identifier: it is read only through the map', () => {
    const { capability: c } = accepts(anchors({ ...identity(), 'model.input': 'model.output', 'model.output': 'model.input' }));
    expect(localToCore(c, 'model.output')).toBe('model.input');
    expect(localToCore(c, 'model.input')).toBe('model.output');
  });

  it('[OAR-PROF-5] accepts a host anchor catalogue', () => {
    const { capability: c } = accepts(anchors(identity(), [], ['gateway.pre_render', 'gateway.audit']));
    expect(c.hostAnchors.has('gateway.audit')).toBe(true);
    expect(localToCore(c, 'gateway.audit')).toBe('gateway.audit');
  });

  it('[OAR-PROF-5] rejects a host anchor colliding with a core anchor identifier, naming it', () => {
    rejects(anchors(identity(), [], ['tool.handler']), 'OAR-PROF-5', 'tool.handler');
    // Even when that core anchor is unsupported: the identifiers are fixed by [OAR-PROF-1].
    rejects(anchors(identity(['tool.handler']), ['tool.handler'], ['tool.handler']), 'OAR-PROF-5', 'tool.handler');
  });

  it('[OAR-PROF-5] rejects a duplicated host anchor, naming it', () => {
    rejects(anchors(identity(), [], ['gateway.x', 'gateway.x']), 'OAR-PROF-5', 'gateway.x');
    rejects(anchors(identity(), [], ['']), 'OAR-PROF-5', 'host');
  });

  it('[OAR-PROF-5] rejects a host anchor that is also the local anchor of a core anchor', () => {
    rejects(anchors({ ...identity(), 'model.input': 'content.input' }, [], ['content.input']), 'OAR-PROF-5', 'content.input');
  });
});

// ---------------------------------------------------------------------------------------------
// Profiles and detectors
// ---------------------------------------------------------------------------------------------

describe('profiles', () => {
  it('[OAR-FACT-16] accepts every standard profile by name, kept in the spec\'s order', () => {
    const reversed = [...STANDARD_PROFILE_NAMES].reverse();
    const { capability: c } = accepts(base({ profiles: reversed, detectors: ['detector://presidio'] }));
    expect([...c.profiles]).toEqual(STANDARD_PROFILE_NAMES);
  });

  it('[OAR-FACT-16] rejects a name that is not a whole standard profile, naming it', () => {
    rejects(base({ profiles: ['tools'] }), 'OAR-FACT-16', 'tools');
    rejects(base({ profiles: ['tool.tool_arg_string'] }), 'OAR-FACT-16', 'tool.tool_arg_string');
    rejects(base({ profiles: ['Tool'] }), 'OAR-FACT-16', 'Tool');
    rejects(base({ profiles: 'tool' }), 'OAR-FACT-16', 'profiles');
  });

  it('[OAR-FACT-24] rejects a profile claimed twice, naming it', () => {
    rejects(base({ profiles: ['tool', 'session', 'tool'] }), 'OAR-FACT-24', 'tool');
  });

  it.each(DETECTOR_BACKED_PROFILES)('[OAR-OPS-22] rejects `%s` claimed with an empty `detectors` list, naming it', (profile) => {
    rejects(base({ profiles: [profile], detectors: [] }), 'OAR-OPS-22', profile);
    accepts(base({ profiles: [profile], detectors: ['detector://classifier'] }));
  });

  it('[OAR-OPS-22] names every detector-backed profile claimed without a detector, and only those', () => {
    const r = loadCapability(base({ profiles: ['tool', 'pii', 'moderation', 'content'], detectors: [] }));
    expect(r.diagnostics.map((d) => [d.clause, d.token])).toEqual([
      ['OAR-OPS-22', 'pii'],
      ['OAR-OPS-22', 'moderation'],
    ]);
    accepts(base({ profiles: ['tool', 'session', 'filesystem', 'content-provenance', 'content', 'mcp'], detectors: [] }));
  });
});

describe('detectors', () => {
  it('[OAR-OPS-12] accepts detector://<name> references', () => {
    const refs = ['detector://presidio', 'detector://a', 'detector://0', 'detector://pii-v2', ...RESERVED_DETECTORS];
    expect(accepts(base({ detectors: refs })).capability.detectors.size).toBe(refs.length);
  });

  it.each(['detector://Presidio', 'detector://-x', 'detector://x-', 'detector://a_b', 'detector://', 'http://presidio', 'detector:/x'])(
    '[OAR-OPS-12] rejects the reference %s, naming it',
    (ref) => {
      rejects(base({ detectors: [ref] }), 'OAR-OPS-12', ref);
    },
  );

  it('[OAR-OPS-12] rejects a duplicated reference and a non-list', () => {
    rejects(base({ detectors: ['detector://a', 'detector://a'] }), 'OAR-OPS-12', 'detector://a');
    rejects(base({ detectors: 'detector://a' }), 'OAR-OPS-12', 'detectors');
  });
});

// ---------------------------------------------------------------------------------------------
// Host facts
// ---------------------------------------------------------------------------------------------

describe('host facts', () => {
  it('[OAR-FACT-18] accepts a fact under the host\'s namespace, an enclosing one, or one within it', () => {
    const { capability: c } = accepts(
      withHostFacts([
        { name: 'acme.gateway.tier', type: 'string' },
        { name: 'acme.tenant_tier', type: 'string' },
        { name: 'acme.gateway.billing.plan', type: 'string' },
        { name: 'acme.gateway._Mixed9', type: 'int' },
      ]),
    );
    expect(c.hostFacts.map((f) => f.name)).toEqual([
      'acme.gateway._Mixed9',
      'acme.gateway.billing.plan',
      'acme.gateway.tier',
      'acme.tenant_tier',
    ]);
  });

  it('[OAR-FACT-18] rejects a bare (unnamespaced) host fact, naming it', () => {
    rejects(withHostFacts([{ name: 'tenant_tier', type: 'string' }]), 'OAR-FACT-18', 'tenant_tier');
  });

  it('[OAR-FACT-18] rejects a namespace outside the [OAR-DOC-7] grammar, naming the fact', () => {
    for (const name of ['Acme.tier', 'acme..tier', '.tier', 'acme-.tier', 'acme_co.tier']) {
      rejects(withHostFacts([{ name, type: 'string' }], { host: 'acme' }), 'OAR-FACT-18', name);
    }
  });

  it('[OAR-FACT-18] rejects a fact segment the condition language cannot name', () => {
    for (const name of ['acme.tier-x', 'acme.9tier', 'acme.', 'acme.gateway.t!er']) {
      rejects(withHostFacts([{ name, type: 'string' }]), 'OAR-FACT-18', name);
    }
  });

  it('[OAR-FACT-18] rejects a fact under a namespace the host does not own', () => {
    const d = rejects(withHostFacts([{ name: 'other.tier', type: 'string' }]), 'OAR-FACT-18', 'other.tier');
    expect(d.path).toEqual(['host_facts', 0, 'name']);
    rejects(withHostFacts([{ name: 'acmex.tier', type: 'string' }]), 'OAR-FACT-18', 'acmex.tier');
    rejects(withHostFacts([{ name: 'acme.gate.tier', type: 'string' }]), 'OAR-FACT-18', 'acme.gate.tier');
  });

  it('[OAR-FACT-18] rejects a `host` outside the namespace grammar, naming it', () => {
    rejects(base({ host: 'Acme.Gateway' }), 'OAR-FACT-18', 'Acme.Gateway');
    rejects(base({ host: 7 }), 'OAR-FACT-18', 'host');
  });

  it('[OAR-EXPR-2] accepts, with a warning, a namespace the condition grammar cannot spell', () => {
    const r = accepts(withHostFacts([{ name: 'acme-corp.tier', type: 'string' }], { host: 'acme-corp' }));
    expect(r.diagnostics).toHaveLength(1);
    expect(r.diagnostics[0]).toMatchObject({ severity: 'warning', clause: 'OAR-EXPR-2', token: 'acme-corp.tier' });
    expect(r.symbols.lookup('acme-corp.tier')).toBeDefined();
  });

  it('[OAR-FACT-22] accepts each of the eight fact types', () => {
    const types = ['bool', 'int', 'double', 'string', 'list<string>', 'map<string,string>', 'list<map>', 'map'];
    const { symbols } = accepts(withHostFacts(types.map((type, i) => ({ name: `acme.f${i}`, type }))));
    types.forEach((type, i) => expect(symbols.lookup(`acme.f${i}`)).toMatchObject({ kind: 'fact', type, tier: { kind: 'host' } }));
  });

  it.each(['float', 'list<int>', 'map<string, string>', 'List<string>', 'string ', '', 'null'])(
    '[OAR-FACT-22] rejects the fact type %j, naming it',
    (type) => {
      rejects(withHostFacts([{ name: 'acme.tier', type }]), 'OAR-FACT-22', type);
    },
  );

  it('[OAR-FACT-22] rejects a non-string type', () => {
    rejects(withHostFacts([{ name: 'acme.tier', type: ['string'] }]), 'OAR-FACT-22', 'type');
  });

  it('[OAR-FACT-27] accepts a scalar signature with flexible whitespace, stored canonically', () => {
    const { capability: c, symbols } = accepts(
      withHostFacts([
        { name: 'acme.a', type: '(string) -> int' },
        { name: 'acme.b', type: '(string)->bool' },
        { name: 'acme.c', type: ' ( double )   ->\tstring ' },
        { name: 'acme.d', type: '(int) -> double' },
      ]),
    );
    expect(c.hostFacts.map((f) => f.type)).toEqual(['(string) -> int', '(string) -> bool', '(double) -> string', '(int) -> double']);
    expect(symbols.lookup('acme.c')).toMatchObject({ kind: 'function', param: 'double', result: 'string', tier: { kind: 'host' } });
  });

  it.each(['(map) -> bool', '(string) -> list<string>', '(string, string) -> bool', '() -> int', '(string) ->', 'string -> int', '(string) => int'])(
    '[OAR-FACT-27] rejects the signature %j, naming it',
    (type) => {
      rejects(withHostFacts([{ name: 'acme.f', type }]), 'OAR-FACT-27', type);
    },
  );

  it('[OAR-FACT-2] rejects two host declarations under one name, fact or function alike', () => {
    rejects(
      withHostFacts([
        { name: 'acme.tier', type: 'string' },
        { name: 'acme.tier', type: '(string) -> string' },
      ]),
      'OAR-FACT-2',
      'acme.tier',
    );
  });

  it('[OAR-FACT-17] rejects a host fact taking a core or profile name, claimed or not', () => {
    rejects(withHostFacts([{ name: 'fire_count', type: 'int' }]), 'OAR-FACT-17', 'fire_count');
    rejects(withHostFacts([{ name: 'tool', type: 'string' }]), 'OAR-FACT-17', 'tool');
    rejects(withHostFacts([{ name: 'tool', type: 'string' }], { profiles: ['tool'] }), 'OAR-FACT-17', 'tool');
    // A subset of a profile cannot be smuggled in as host facts ([OAR-FACT-16]).
    rejects(withHostFacts([{ name: 'secret_matches', type: 'list<map>' }]), 'OAR-FACT-17', 'secret_matches');
  });

  it.each(RESERVED_WORDS)('[OAR-EXPR-24] rejects a fact named by the reserved word `%s`', (word) => {
    rejects(withHostFacts([{ name: word, type: 'bool' }]), 'OAR-EXPR-24', word);
  });

  it('[OAR-EXPR-24] accepts a dotted name with a reserved-word segment: a dotted identifier is one name', () => {
    const { symbols } = accepts(
      withHostFacts(
        [
          { name: 'acme.in', type: 'bool' },
          { name: 'acme.true', type: 'bool' },
        ],
        { host: 'acme' },
      ),
    );
    expect(symbols.lookup('acme.in')).toBeDefined();
  });

  it('[OAR-FACT-21] rejects a non-list `host_facts`', () => {
    rejects(base({ host_facts: {} }), 'OAR-FACT-21', 'host_facts');
  });
});

// ---------------------------------------------------------------------------------------------
// Limits
// ---------------------------------------------------------------------------------------------

describe('limits', () => {
  it('[OAR-PROF-3] accepts a non-negative integer activity window', () => {
    expect(accepts(base({ activity_window: 0 })).capability.activityWindow).toBe(0);
    expect(accepts(base({ activity_window: 16 })).capability.activityWindow).toBe(16);
  });

  it.each([-1, 1.5, '16', null, Number.MAX_SAFE_INTEGER + 1])('[OAR-PROF-3] rejects the activity window %j', (w) => {
    rejects(base({ activity_window: w }), 'OAR-PROF-3', 'activity_window');
  });

  it('[OAR-EXPR-17] accepts an expression limit of at least 256 nodes', () => {
    expect(accepts(base({ expression_nodes_max: 256 })).capability.expressionNodesMax).toBe(256);
    expect(loadCapability(base({ expression_nodes_max: 100000 }), undefined, { engineMaxNodes: Infinity }).capability?.expressionNodesMax).toBe(100000);
  });

  it.each([255, 0, 256.5, '1024'])('[OAR-EXPR-17] rejects the expression limit %j', (n) => {
    rejects(base({ expression_nodes_max: n }), 'OAR-EXPR-17', 'expression_nodes_max');
  });
});

// ---------------------------------------------------------------------------------------------
// One pass, all problems
// ---------------------------------------------------------------------------------------------

describe('reporting', () => {
  it('[OAR-FACT-24] reports every problem in one pass', () => {
    const doc = base({
      host: 'acme',
      anchors: { core: identity(['tool.handler']), unsupported: [], host: ['model.input'] },
      profiles: ['tool', 'secrets', 'nope'],
      detectors: [],
      activity_window: -3,
      expression_nodes_max: 64,
      host_facts: [
        { name: 'tier', type: 'string' },
        { name: 'acme.size', type: 'float' },
      ],
      bogus: true,
    });
    doc.supports_transform = 'yes';
    const r = loadCapability(doc);
    expect(r.capability).toBeUndefined();
    const found = r.diagnostics.map((d) => `${d.clause} ${d.token}`).sort();
    expect(found).toEqual(
      [
        'OAR-EXPR-17 expression_nodes_max',
        'OAR-FACT-16 nope',
        'OAR-FACT-18 tier',
        'OAR-FACT-21 supports_transform',
        'OAR-FACT-22 float',
        'OAR-FACT-24 bogus',
        'OAR-OPS-22 secrets',
        'OAR-PROF-2 tool.handler',
        'OAR-PROF-3 activity_window',
        'OAR-PROF-5 model.input',
      ].sort(),
    );
    for (const d of r.diagnostics) expect(d.message).toContain(d.token);
  });

  it('locates each diagnostic through the caller\'s source map, by JSON path', () => {
    const seen: (string | number)[][] = [];
    const r = loadCapability(base({ detectors: ['detector://ok', 'bad'] }), (path) => {
      seen.push(path);
      return { file: 'cap.yaml', line: 10 + path.length, column: 3 };
    });
    expect(r.diagnostics).toHaveLength(1);
    expect(r.diagnostics[0]).toMatchObject({ path: ['detectors', 1], source: { file: 'cap.yaml', line: 12, column: 3 } });
    expect(seen).toEqual([['detectors', 1]]);
  });
});

// ---------------------------------------------------------------------------------------------
// The symbol environment
// ---------------------------------------------------------------------------------------------

/** Section 5.3 and 5.4, transcribed independently of compiler/load/vocabulary.ts. */
const SPEC_TABLES: Record<string, string[]> = {
  core: ['anchor: string', 'fire_count: int', 'breaker_count: int', 'fire_count_of: (string) -> int', 'breaker_count_of: (string) -> int'],
  tool: [
    'tool: string',
    'tool_args: map',
    'tool_args_fingerprint: string',
    'arg_validation_errors: list<string>',
    'arg_validation_reason: string',
    'arg_validation_field: string',
    'permission_profile: string',
    'policy_denied: bool',
    'tool_arg_string: (string) -> string',
    'tool_arg_int: (string) -> int',
    'tool_arg_bool: (string) -> bool',
  ],
  session: ['session_posture: string', 'principal: string', 'principal_roles: list<string>'],
  filesystem: ['is_directory: bool', 'not_found: bool', 'path_denied: bool', 'path_outside_scope: (string) -> bool'],
  'content-provenance': [
    'content_roles: list<string>',
    'content_origins: list<string>',
    'content_authorities: list<string>',
    'content_trust_tiers: list<string>',
    'content_sources: list<string>',
    'content_segment_count: int',
    'content_contains_untrusted: bool',
  ],
  content: ['content_length: int'],
  secrets: ['secret_matches: list<map>'],
  pii: ['pii_entities: list<map>'],
  'prompt-injection': ['prompt_injection_score: double'],
  jailbreak: ['jailbreak_score: double'],
  moderation: ['moderation_categories: list<string>', 'moderation_score: (string) -> double'],
  mcp: [
    'mcp_provider_id: string',
    'mcp_tool_name: string',
    'mcp_qualified_tool: string',
    'mcp_provider_configured: bool',
    'mcp_provider_enabled: bool',
    'mcp_call_ok: bool',
    'mcp_error_code: string',
    'mcp_schema_matched: bool',
    'mcp_provider_configured_for: (string) -> bool',
    'mcp_provider_enabled_for: (string) -> bool',
    'mcp_has_field: (string) -> bool',
    'mcp_field_bool: (string) -> bool',
    'mcp_field_string: (string) -> string',
    'mcp_field_int: (string) -> int',
  ],
};

const ALL_PROFILES = { profiles: STANDARD_PROFILE_NAMES, detectors: ['detector://presidio'] };

describe('symbol environment', () => {
  it('[OAR-FACT-15] [OAR-FACT-1] a baseline capability declares exactly the core tier, in 5.3 order', () => {
    const { symbols } = accepts(base());
    expect(symbols.symbols.map(describeSymbol)).toEqual(SPEC_TABLES.core);
    expect(symbols.symbols.map((s) => s.slot)).toEqual([0, 1, 2, 3, 4]);
    expect(symbols.symbols.every((s) => s.tier.kind === 'core')).toBe(true);
  });

  it.each(Object.keys(SPEC_TABLES).filter((p) => p !== 'core'))(
    '[OAR-FACT-16] profile `%s` provides every fact and function with the spec\'s type',
    (profile) => {
      const { symbols } = accepts(base({ profiles: [profile], detectors: ['detector://presidio'] }));
      const declared = symbols.symbols.filter((s) => s.tier.kind === 'profile');
      expect(declared.map(describeSymbol)).toEqual(SPEC_TABLES[profile]);
      expect(declared.every((s) => s.tier.kind === 'profile' && s.tier.profile === profile)).toBe(true);
    },
  );

  it('[OAR-FACT-16] spot-checks a fact and a function per profile against the spec', () => {
    const { symbols } = accepts(base(ALL_PROFILES));
    const spot: [string, string][] = [
      ['tool_args', 'map'],
      ['tool_arg_int', '(string) -> int'],
      ['principal_roles', 'list<string>'],
      ['path_denied', 'bool'],
      ['path_outside_scope', '(string) -> bool'],
      ['content_segment_count', 'int'],
      ['content_length', 'int'],
      ['secret_matches', 'list<map>'],
      ['pii_entities', 'list<map>'],
      ['prompt_injection_score', 'double'],
      ['jailbreak_score', 'double'],
      ['moderation_categories', 'list<string>'],
      ['moderation_score', '(string) -> double'],
      ['mcp_error_code', 'string'],
      ['mcp_field_int', '(string) -> int'],
      ['fire_count_of', '(string) -> int'],
    ];
    for (const [name, type] of spot) expect(describeSymbol(symbols.lookup(name)!)).toBe(`${name}: ${type}`);
  });

  it('[OAR-FACT-2] [OAR-FACT-14] no name belongs to two tiers, and no reserved word is a name', () => {
    const names = [...CORE_FACTS, ...[...STANDARD_PROFILES.values()].flat()].map((d) => d.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names.filter((n) => RESERVED_WORDS.includes(n))).toEqual([]);
    const { symbols } = accepts(base(ALL_PROFILES));
    expect(symbols.symbols).toHaveLength(names.length);
  });

  it('[OAR-FACT-27] host facts follow core and profiles, one entry each, sorted by name', () => {
    const { symbols } = accepts(
      withHostFacts([
        { name: 'acme.zeta', type: 'string' },
        { name: 'acme.alpha', type: '(string) -> bool' },
      ], { profiles: ['content'] }),
    );
    expect(symbols.symbols.map((s) => `${s.slot} ${s.name} ${s.tier.kind}`)).toEqual([
      '0 anchor core',
      '1 fire_count core',
      '2 breaker_count core',
      '3 fire_count_of core',
      '4 breaker_count_of core',
      '5 content_length profile',
      '6 acme.alpha host',
      '7 acme.zeta host',
    ]);
  });

  it('[OAR-FACT-1] the same capability always yields the same slots, whatever order it lists things in', () => {
    const facts = [
      { name: 'acme.b', type: 'int' },
      { name: 'acme.a', type: '(int) -> int' },
      { name: 'acme.gateway.c', type: 'map' },
    ];
    const one = accepts(withHostFacts(facts, { profiles: ['mcp', 'tool', 'pii'], detectors: ['detector://x', 'detector://noop'] }));
    const again = accepts(withHostFacts(facts, { profiles: ['mcp', 'tool', 'pii'], detectors: ['detector://x', 'detector://noop'] }));
    const shuffled = accepts(withHostFacts([...facts].reverse(), { profiles: ['pii', 'mcp', 'tool'], detectors: ['detector://noop', 'detector://x'] }));
    const slots = (t: SymbolTable) => JSON.stringify(t.symbols);
    expect(slots(again.symbols)).toBe(slots(one.symbols));
    expect(slots(shuffled.symbols)).toBe(slots(one.symbols));
    expect([...shuffled.capability.profiles]).toEqual(['tool', 'pii', 'mcp']);
    expect([...shuffled.capability.detectors]).toEqual([...one.capability.detectors]);
    expect(slots(capabilitySymbols(one.capability))).toBe(slots(one.symbols));
  });
});

// ---------------------------------------------------------------------------------------------
// Vocabulary constants and helpers
// ---------------------------------------------------------------------------------------------

describe('vocabulary', () => {
  it('[OAR-PROF-1] fixes the eight core anchors of 8.1', () => {
    expect(CORE_ANCHORS).toEqual([
      'tool.pre_invoke',
      'tool.handler',
      'tool.post_invoke',
      'agent.post_turn',
      'agent.finalize',
      'model.input',
      'model.output',
      'model.tool_result',
    ]);
  });

  it('[OAR-OPS-22] names the five detector-backed profiles, all standard', () => {
    expect(DETECTOR_BACKED_PROFILES).toEqual(['secrets', 'pii', 'prompt-injection', 'jailbreak', 'moderation']);
    for (const p of DETECTOR_BACKED_PROFILES) expect(STANDARD_PROFILES.has(p)).toBe(true);
  });

  it('[OAR-CONF-25] reserves three detector references, each well-formed under [OAR-OPS-12]', () => {
    expect(RESERVED_DETECTORS).toEqual(['detector://noop', 'detector://error', 'detector://fixture']);
    for (const d of RESERVED_DETECTORS) expect(DETECTOR_REF_PATTERN.test(d)).toBe(true);
  });

  it('[OAR-EXPR-24] reserves true, false and in', () => {
    expect(RESERVED_WORDS).toEqual(['true', 'false', 'in']);
  });

  it('[OAR-DOC-7] namespace grammar', () => {
    for (const ok of ['acme', 'acme.gateway', 'a-b.c0', '0', 'oar.test']) expect(NAMESPACE_PATTERN.test(ok)).toBe(true);
    for (const bad of ['', 'Acme', 'a-', '-a', 'a..b', 'a.', 'a_b', 'a/b']) expect(NAMESPACE_PATTERN.test(bad)).toBe(false);
  });

  it('[OAR-FACT-27] declaredType and parseDeclaredType agree on the spec\'s spellings', () => {
    for (const d of [...CORE_FACTS, ...[...STANDARD_PROFILES.values()].flat()]) {
      const parsed = parseDeclaredType(declaredType(d));
      expect('invalid' in parsed).toBe(false);
    }
    expect(parseDeclaredType('map<string,string>')).toEqual({ kind: 'fact', type: 'map<string,string>' });
    expect(parseDeclaredType('(bool)->bool')).toEqual({ kind: 'function', param: 'bool', result: 'bool' });
    expect(parseDeclaredType('(list<map>) -> int')).toEqual({ invalid: 'OAR-FACT-27' });
    expect(parseDeclaredType('decimal')).toEqual({ invalid: 'OAR-FACT-22' });
  });
});

// ---------------------------------------------------------------------------------------------
// Baseline
// ---------------------------------------------------------------------------------------------

describe('baseline capability', () => {
  it('[OAR-CONF-35] a capability claiming nothing beyond the reserved detectors is baseline', () => {
    expect(isBaselineCapability(accepts(base()).capability)).toBe(true);
    expect(isBaselineCapability(accepts(base({ detectors: [...RESERVED_DETECTORS] })).capability)).toBe(true);
    // Anchors are not a capability [OAR-CONF-35] lists.
    expect(isBaselineCapability(accepts(parse(EXAMPLE_8_2)).capability)).toBe(false);
    expect(isBaselineCapability(accepts(anchors(identity(['tool.handler']), ['tool.handler'], ['h.x'])).capability)).toBe(true);
  });

  it.each<[string, Doc]>([
    ['a profile', { profiles: ['content'] }],
    ['a host fact', { host_facts: [{ name: 'oar.test.tier', type: 'string' }] }],
    ['an activity window', { activity_window: 1 }],
    ['content mutation', { supports_transform: true }],
    ['a detector beyond the reserved three', { detectors: ['detector://noop', 'detector://presidio'] }],
  ])('[OAR-CONF-35] a capability claiming %s is not baseline', (_what, over) => {
    expect(isBaselineCapability(accepts(base(over)).capability)).toBe(false);
  });
});

describe('[OAR-EXPR-17] [OAR-FACT-24] the engine limit', () => {
  it('rejects an expression_nodes_max above what this engine can compile, naming it', () => {
    const r = loadCapability({ anchors: { core: Object.fromEntries(CORE_ANCHORS.map((a) => [a, a])) }, expression_nodes_max: 2048 });
    expect(r.capability).toBeUndefined();
    expect(r.diagnostics.map((d) => `${d.clause} ${d.token}`)).toEqual(['OAR-EXPR-17 expression_nodes_max']);
    expect(loadCapability({ anchors: { core: Object.fromEntries(CORE_ANCHORS.map((a) => [a, a])) }, expression_nodes_max: 1024 }).capability).toBeDefined();
  });
});
