/**
 * The one JSON form of occurrences and decisions and its mapping to the TypeScript types
 * (runtime/wire.ts): both directions, values untouched, mistakes named in the JSON spelling.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  HostInputError,
  decisionFromJson,
  decisionToJson,
  occurrenceFromJson,
  occurrencePathToJson,
  occurrenceToJson,
  type Decision,
  type OccurrenceJson,
} from '../runtime/index.js';

const FULL: OccurrenceJson = {
  anchor: 'tool.pre_invoke',
  session_id: 's-1',
  facts: { 'acme.n': 9007199254740993n, tool: 'bash' },
  detector_facts: { prompt_injection_score: 0.5 },
  content: '😀 text',
  tool_call: { name: 'bash', arguments: { command: 'ls' } },
  recent_activity: ['read', 'grep'],
};

function fails(value: unknown): HostInputError {
  try {
    occurrenceFromJson(value);
  } catch (e) {
    expect(e).toBeInstanceOf(HostInputError);
    return e as HostInputError;
  }
  throw new Error(`accepted ${JSON.stringify(value)}`);
}

describe('occurrences', () => {
  it('maps every member, values untouched (a bigint stays one)', () => {
    const occ = occurrenceFromJson(FULL);
    expect(occ).toEqual({
      anchor: 'tool.pre_invoke',
      session: 's-1',
      facts: FULL.facts,
      detectorFacts: FULL.detector_facts,
      content: '😀 text',
      toolCall: { name: 'bash', arguments: { command: 'ls' } },
      recentActivity: ['read', 'grep'],
    });
    expect(occ.facts?.['acme.n']).toBe(9007199254740993n);
    expect(occurrenceToJson(occ)).toEqual(FULL);
  });

  it('round-trips any well-formed occurrence', () => {
    const member = fc.record(
      {
        session_id: fc.string(),
        facts: fc.dictionary(fc.string({ minLength: 1 }), fc.oneof(fc.string(), fc.integer(), fc.boolean())),
        content: fc.string(),
        tool_call: fc.record({ name: fc.string({ minLength: 1 }), arguments: fc.dictionary(fc.string(), fc.string()) }, { requiredKeys: ['name'] }),
        recent_activity: fc.array(fc.string()),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), member, (anchor, rest) => {
        const json = { anchor, ...rest } as OccurrenceJson;
        expect(occurrenceToJson(occurrenceFromJson(json))).toEqual(json);
      }),
      { seed: 12, numRuns: 300 },
    );
  });

  it('drops lazy providers, which have no JSON form', () => {
    expect(occurrenceToJson({ anchor: 'a', facts: { tool: () => 'bash', x: 1 } })).toEqual({ anchor: 'a', facts: { x: 1 } });
  });

  it('names a TypeScript spelling in JSON, a misspelling, and a wrong shape, by their JSON path', () => {
    expect(fails({ anchor: 'a', toolCall: { name: 'x' } }).message).toContain('unknown occurrence member `toolCall` (write `tool_call`: `toolCall` is the TypeScript spelling)');
    expect(fails({ anchor: 'a', session: 'x' }).message).toContain('(write `session_id`');
    expect(fails({ anchor: 'a', tool_cal: {} }).message).toContain('(did you mean `tool_call`?)');
    expect(fails({ anchor: 'a', content: 5 }).path).toEqual(['content']);
    expect(fails({ anchor: 'a', tool_call: { name: 'x', arguments: [] } }).path).toEqual(['tool_call', 'arguments']);
    expect(fails({ anchor: 'a', tool_call: { name: 'x', argument: {} } }).message).toContain('(did you mean `arguments`?)');
    expect(fails({ anchor: 'a', recent_activity: 'read' }).path).toEqual(['recent_activity']);
    expect(fails({ anchor: 'a', session_id: 1 }).path).toEqual(['session_id']);
    expect(fails({ anchor: 'a', facts: [] }).path).toEqual(['facts']);
    expect(fails({ content: 'x' }).message).toContain('needs an anchor');
    // A missing member is pointed at where it belongs; an element of a list, at the element.
    expect(fails({ content: 'x' }).path).toEqual(['anchor']);
    expect(fails({ anchor: 7 }).message).toContain('got a number');
    expect(fails({ anchor: 'a', tool_call: {} }).path).toEqual(['tool_call', 'name']);
    expect(fails({ anchor: 'a', recent_activity: ['read', 1] }).path).toEqual(['recent_activity', 1]);
    expect(fails({ anchor: 'a', recent_activity: ['read', 1] }).message).toContain('recent_activity[1] must be a tool name (a string), got a number');
    expect(fails({ anchor: 'a', recent_activity: ['read', , 'x'] }).path).toEqual(['recent_activity', 1]);
    expect(fails([FULL]).message).toContain('got an array');
  });

  it('spells a decide() error path in JSON', () => {
    expect(occurrencePathToJson(['toolCall', 'name'])).toEqual(['tool_call', 'name']);
    expect(occurrencePathToJson(['detectorFacts', 'x'])).toEqual(['detector_facts', 'x']);
    expect(occurrencePathToJson(['session'])).toEqual(['session_id']);
    expect(occurrencePathToJson(['facts', 'tool'])).toEqual(['facts', 'tool']);
    expect(occurrencePathToJson([])).toEqual([]);
  });
});

describe('decisions', () => {
  const d: Decision = {
    decision: 'transform',
    code: 'R',
    rule: 'x/R',
    copy: { what: 'w' },
    advisories: [],
    transforms: [{ rule: 'x/R', action: 'redact', target: 'content', replacement: '[REDACTED]' }],
    content: '[REDACTED]',
    skippedTransforms: [{ rule: 'x/S', start: 0, end: 1, reason: 'overlap' }],
    applied: [{ rule: 'x/R', outcome: 'fired' }],
    onFire: [{ rule: 'x/R', action: 'increment_counter' }],
    events: [],
    counters: { 'x/R': { fire_count: 1, breaker_count: 0 } },
  };

  it('snake-cases skipped_transforms and on_fire, keeps member order, and maps back', () => {
    const j = decisionToJson(d);
    expect(Object.keys(j)).toEqual(['decision', 'code', 'rule', 'copy', 'advisories', 'transforms', 'content', 'skipped_transforms', 'applied', 'on_fire', 'events', 'counters']);
    expect(j.skipped_transforms).toBe(d.skippedTransforms);
    expect(j.on_fire).toBe(d.onFire);
    expect(decisionFromJson(j)).toEqual(d);
    expect(decisionFromJson(JSON.parse(JSON.stringify(j)))).toEqual(d);
  });

  it('a decision without content has no content member', () => {
    const { content: _c, ...rest } = d;
    expect('content' in decisionToJson(rest)).toBe(false);
    expect('content' in decisionFromJson(decisionToJson(rest))).toBe(false);
  });
});
