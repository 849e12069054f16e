/**
 * Shared documents for the loader tests: one capability document that exercises every member, a
 * rule builder, and thin wrappers over the public `loadPackTexts` so every test goes through the
 * full loader (parse → capability → schema → rule → rule set → configuration).
 */
import { expect } from 'vitest';
import { loadPackTexts, type Diagnostic, type LoadedPack, type PackResult } from '../../compiler/index.js';

export type Doc = Record<string, unknown>;

/**
 * A host that maps `model.input` to the local spelling `content.input`, leaves `agent.finalize`
 * unsupported, catalogues one host anchor, claims six profiles (one detector-backed), tracks three
 * steps of activity, mutates content, and publishes host facts of every interesting shape.
 */
export function capability(over: Doc = {}): Doc {
  return {
    oar_capability_version: '1.0',
    host: 'acme.gateway',
    anchors: {
      core: {
        'tool.pre_invoke': 'tool.pre_invoke',
        'tool.handler': 'tool.handler',
        'tool.post_invoke': 'tool.post_invoke',
        'agent.post_turn': 'agent.post_turn',
        'model.input': 'content.input',
        'model.output': 'model.output',
        'model.tool_result': 'model.tool_result',
      },
      unsupported: ['agent.finalize'],
      host: ['gateway.pre_render'],
    },
    profiles: ['tool', 'session', 'filesystem', 'content', 'secrets', 'mcp'],
    activity_window: 3,
    supports_transform: true,
    expression_nodes_max: 1024,
    host_facts: [
      { name: 'acme.tenant_tier', type: 'string' },
      { name: 'acme.spans', type: 'list<map>' },
      { name: 'acme.tags', type: 'list<string>' },
      { name: 'acme.meta', type: 'map' },
      { name: 'acme.count', type: 'int' },
      { name: 'acme.lookup', type: '(string) -> int' },
    ],
    detectors: ['detector://noop', 'detector://presidio'],
    ...over,
  };
}

/** A minimal valid rule; a member set to `undefined` is removed. */
export function rule(over: Doc = {}): Doc {
  const doc: Doc = { oar: '1.0', id: 'A', kind: 'policy', anchor: 'tool.pre_invoke', effect: 'block', ...over };
  for (const [k, v] of Object.entries(doc)) if (v === undefined) delete doc[k];
  return doc;
}

export interface LoadOptions {
  capability?: Doc | string;
  configs?: readonly (Doc | string)[];
}

const text = (d: Doc | string): string => (typeof d === 'string' ? d : JSON.stringify(d, null, 2));

/** Each rule is its own text (a string is passed through verbatim: YAML, a JSON array, a stream). */
export function load(rules: readonly (Doc | string)[], opts: LoadOptions = {}): PackResult {
  return loadPackTexts({
    capability: text(opts.capability ?? capability()),
    rules: rules.map(text),
    configs: (opts.configs ?? []).map(text),
  });
}

export const errorsOf = (r: PackResult): Diagnostic[] => (r.ok ? [] : r.diagnostics.filter((d) => d.severity === 'error'));

const show = (ds: readonly Diagnostic[]) => JSON.stringify(ds.map((d) => `${d.clause} ${d.token ?? '-'}: ${d.message}`), null, 1);

/** The pack must load, with no error (warnings allowed). */
export function loads(rules: readonly (Doc | string)[], opts: LoadOptions = {}): LoadedPack {
  const r = load(rules, opts);
  if (!r.ok) expect.fail(`expected the pack to load, got:\n${show(r.diagnostics)}`);
  expect(r.pack.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  return r.pack;
}

/** A diagnostic that names `token`: the token field, and verbatim in the message. */
export function expectNamed(d: Diagnostic, clause: string, token: string): Diagnostic {
  expect(d.severity).toBe('error');
  expect(d.clause).toBe(clause);
  expect(d.token).toBe(token);
  expect(d.message).toContain(token);
  expect(d.source?.line).toBeGreaterThanOrEqual(1);
  expect(d.source?.column).toBeGreaterThanOrEqual(1);
  return d;
}

/** The pack must be rejected with exactly one error, under `clause`, naming `token`. */
export function rejects(rules: readonly (Doc | string)[], clause: string, token: string, opts: LoadOptions = {}): Diagnostic {
  const r = load(rules, opts);
  expect(r.ok, 'expected the pack to be rejected').toBe(false);
  const errs = errorsOf(r);
  expect(errs, show(errs)).toHaveLength(1);
  return expectNamed(errs[0]!, clause, token);
}

/** The pack must be rejected with (at least) an error under `clause` naming `token`. */
export function rejectsWith(rules: readonly (Doc | string)[], clause: string, token: string, opts: LoadOptions = {}): Diagnostic {
  const r = load(rules, opts);
  expect(r.ok, 'expected the pack to be rejected').toBe(false);
  const errs = errorsOf(r);
  const hit = errs.find((d) => d.clause === clause && d.token === token);
  if (!hit) expect.fail(`no ${clause} naming ${token} among:\n${show(errs)}`);
  return expectNamed(hit, clause, token);
}
