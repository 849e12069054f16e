/**
 * The one JSON form of occurrences and decisions — what the CLI reads and prints, what conformance
 * fixtures write ([OAR-CONF-18], [OAR-CONF-31], [OAR-CONF-40]), what a service speaks — and its
 * mapping to the TypeScript types `decide()` takes and returns. JSON members are spelled as the
 * spec's fixtures spell them (`tool_call`, `session_id`, `skipped_transforms`); TypeScript members
 * in camelCase (`toolCall`, `session`, `skippedTransforms`). Nothing else differs: values pass
 * through unchanged (a `bigint` from a JSON reader that keeps large integers exact stays one).
 *
 * | JSON                | TypeScript           |
 * | ------------------- | -------------------- |
 * | `session_id`        | `session`            |
 * | `tool_call`         | `toolCall`           |
 * | `detector_facts`    | `detectorFacts`      |
 * | `recent_activity`   | `recentActivity`     |
 * | `skipped_transforms`| `skippedTransforms`  |
 * | `on_fire`           | `onFire`             |
 */
import type { Decision } from './decision.js';
import { HostInputError, kindOf } from './host-input.js';
import type { Occurrence } from './occurrence.js';
import { didYouMean } from './suggest.js';

/** An occurrence in its JSON form. */
export interface OccurrenceJson {
  anchor: string;
  session_id?: string;
  facts?: Record<string, unknown>;
  detector_facts?: Record<string, unknown>;
  content?: string;
  tool_call?: { name: string; arguments?: Record<string, unknown> };
  recent_activity?: string[];
}

/** A decision in its JSON form: the `Decision`'s members, two of them snake-cased. */
export type DecisionJson = Omit<Decision, 'skippedTransforms' | 'onFire'> & {
  skipped_transforms: Decision['skippedTransforms'];
  on_fire: Decision['onFire'];
};

/** JSON member → TypeScript member, for the members whose spelling differs. */
const OCCURRENCE_MEMBERS: ReadonlyMap<string, keyof Occurrence> = new Map<string, keyof Occurrence>([
  ['anchor', 'anchor'],
  ['session_id', 'session'],
  ['facts', 'facts'],
  ['detector_facts', 'detectorFacts'],
  ['content', 'content'],
  ['tool_call', 'toolCall'],
  ['recent_activity', 'recentActivity'],
]);
const TS_TO_JSON: ReadonlyMap<string, string> = new Map([...OCCURRENCE_MEMBERS].map(([json, ts]) => [ts, json]));

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `, got …` for a member that must be a non-empty string, or nothing when it is absent. */
const gotInstead = (v: unknown): string => (v === undefined ? '' : `, got ${v === '' ? 'the empty string' : kindOf(v)}`);

/**
 * A path into an occurrence's TypeScript form (a `HostInputError`'s `path`) spelled as in its
 * JSON form, so a tool that read JSON can point at the member in the file.
 */
export function occurrencePathToJson(path: readonly (string | number)[]): (string | number)[] {
  const [head, ...rest] = path;
  if (head === undefined) return [];
  return [typeof head === 'string' ? (TS_TO_JSON.get(head) ?? head) : head, ...rest];
}

/**
 * The `Occurrence` of a JSON occurrence, checking its shape: an unknown member, or a member of the
 * wrong type, is a `HostInputError` whose `path` is in the JSON spelling. Whether the anchor and the
 * fact names exist is the engine's check, against its bundle (`decide()` throws the same error).
 */
export function occurrenceFromJson(value: unknown): Occurrence {
  const fail = (path: (string | number)[], message: string): never => {
    throw new HostInputError(path, message);
  };
  if (!isObject(value)) return fail([], `an occurrence must be a JSON object { "anchor": …, … }, got ${kindOf(value)}`);
  for (const key of Object.keys(value)) {
    if (OCCURRENCE_MEMBERS.has(key)) continue;
    const json = TS_TO_JSON.get(key);
    fail([key], `unknown occurrence member \`${key}\`${json !== undefined ? ` (write \`${json}\`: \`${key}\` is the TypeScript spelling)` : didYouMean(key, OCCURRENCE_MEMBERS.keys())}`);
  }
  const v = value as Record<string, unknown>;
  if (typeof v.anchor !== 'string' || v.anchor === '') {
    // A missing member is pointed at where it belongs, as the engine's own check does.
    return fail(['anchor'], `the occurrence needs an anchor: the host-local anchor identifier, a non-empty string${gotInstead(v.anchor)}`);
  }
  const occ: Occurrence = { anchor: v.anchor };
  if (v.session_id !== undefined) {
    if (typeof v.session_id !== 'string') fail(['session_id'], `session_id must be a string, got ${kindOf(v.session_id)}`);
    occ.session = v.session_id as string;
  }
  if (v.facts !== undefined) {
    if (!isObject(v.facts)) fail(['facts'], `facts must be an object mapping fact names to values, got ${kindOf(v.facts)}`);
    occ.facts = v.facts as Record<string, unknown>;
  }
  if (v.detector_facts !== undefined) {
    if (!isObject(v.detector_facts)) fail(['detector_facts'], `detector_facts must be an object mapping fact names to values, got ${kindOf(v.detector_facts)}`);
    occ.detectorFacts = v.detector_facts as Record<string, unknown>;
  }
  if (v.content !== undefined) {
    if (typeof v.content !== 'string') fail(['content'], `content must be a string, got ${kindOf(v.content)}`);
    occ.content = v.content as string;
  }
  if (v.tool_call !== undefined) occ.toolCall = toolCallFromJson(v.tool_call);
  if (v.recent_activity !== undefined) {
    const a = v.recent_activity;
    if (!Array.isArray(a)) fail(['recent_activity'], `recent_activity must be a list of tool names, got ${kindOf(a)}`);
    const i = (a as unknown[]).findIndex((s) => typeof s !== 'string');
    if (i >= 0) fail(['recent_activity', i], `recent_activity[${i}] must be a tool name (a string), got ${kindOf((a as unknown[])[i])}`);
    occ.recentActivity = a as string[];
  }
  return occ;
}

function toolCallFromJson(t: unknown): NonNullable<Occurrence['toolCall']> {
  if (!isObject(t)) throw new HostInputError(['tool_call'], `tool_call must be an object { "name": …, "arguments": { … } }, got ${kindOf(t)}`);
  for (const key of Object.keys(t)) {
    if (key !== 'name' && key !== 'arguments') throw new HostInputError(['tool_call', key], `unknown tool_call member \`${key}\`${didYouMean(key, ['name', 'arguments'])}`);
  }
  if (typeof t.name !== 'string' || t.name === '') {
    throw new HostInputError(['tool_call', 'name'], `tool_call.name must be a non-empty string${gotInstead(t.name)}`);
  }
  if (t.arguments === undefined) return { name: t.name };
  if (!isObject(t.arguments)) throw new HostInputError(['tool_call', 'arguments'], `tool_call.arguments must be a JSON object, got ${kindOf(t.arguments)}`);
  return { name: t.name, arguments: t.arguments };
}

/** The JSON form of an occurrence (lazy providers, being functions, have none and are dropped). */
export function occurrenceToJson(occ: Occurrence): OccurrenceJson {
  const out: OccurrenceJson = { anchor: occ.anchor };
  if (occ.session !== undefined) out.session_id = occ.session;
  if (occ.facts !== undefined) out.facts = withoutFunctions(occ.facts);
  if (occ.detectorFacts !== undefined) out.detector_facts = { ...occ.detectorFacts };
  if (occ.content !== undefined) out.content = occ.content;
  if (occ.toolCall !== undefined) out.tool_call = occ.toolCall.arguments === undefined ? { name: occ.toolCall.name } : { name: occ.toolCall.name, arguments: occ.toolCall.arguments };
  if (occ.recentActivity !== undefined) out.recent_activity = [...occ.recentActivity];
  return out;
}

function withoutFunctions(facts: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(facts)) if (typeof v !== 'function') out[k] = v;
  return out;
}

/** The JSON form of a decision: the same members, `skipped_transforms` and `on_fire` snake-cased. */
export function decisionToJson(d: Decision): DecisionJson {
  const out: DecisionJson = {
    decision: d.decision,
    code: d.code,
    rule: d.rule,
    copy: d.copy,
    advisories: d.advisories,
    transforms: d.transforms,
    ...(d.content !== undefined ? { content: d.content } : {}),
    skipped_transforms: d.skippedTransforms,
    applied: d.applied,
    on_fire: d.onFire,
    events: d.events,
    counters: d.counters,
  };
  return out;
}

/** The `Decision` of a decision's JSON form (as `decisionToJson` writes it). */
export function decisionFromJson(j: DecisionJson): Decision {
  const out: Decision = {
    decision: j.decision,
    code: j.code,
    rule: j.rule,
    copy: j.copy,
    advisories: j.advisories,
    transforms: j.transforms,
    ...(j.content !== undefined ? { content: j.content } : {}),
    skippedTransforms: j.skipped_transforms,
    applied: j.applied,
    onFire: j.on_fire,
    events: j.events,
    counters: j.counters,
  };
  return out;
}
