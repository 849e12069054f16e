/**
 * The canonical field order of a rule document. The specification writes one whole rule, the
 * example of section 2.1 — `oar`, `id`, `namespace`, `kind`, `anchor`, `selector`, `requires`,
 * `when`, `effect`, `on_error`, `copy` — and that order is kept. The fields it does not carry go
 * with the ones they belong to: what the rule needs beside `requires` (`detector`,
 * `counter_scope`), the other half of its condition beside `when` (`flow`), how its effect is
 * applied after `effect` (`transform`, `enforcement`, `mandatory`, `on_error`, `on_fire`,
 * `overrides`), and what never affects a decision last (`copy`, then `status`, `references`,
 * `related` — [OAR-DOC-24], [OAR-DOC-25], [OAR-DOC-29], [OAR-DOC-30]). Extension (`x-`) and
 * unknown fields follow, in the order written: an unknown field is the loader's to reject
 * ([OAR-DOC-27]), and moving it would only hide where it was.
 */
export const RULE_FIELDS: readonly string[] = [
  'oar', 'id', 'namespace', 'kind',
  'anchor', 'selector', 'requires', 'detector', 'counter_scope',
  'flow', 'when',
  'effect', 'transform', 'enforcement', 'mandatory', 'on_error', 'on_fire', 'overrides',
  'copy', 'status', 'references', 'related',
];

/** Member order inside the rule's own objects: as their clauses list the members. */
export const NESTED_FIELDS: Readonly<Record<string, readonly string[]>> = {
  requires: ['profiles', 'facts'], // [OAR-DOC-21]
  transform: ['action', 'target', 'replacement'], // [OAR-OPS-13]
  detector: ['ref'], // [OAR-DOC-23]
  copy: ['title', 'what', 'cause', 'why', 'fix', 'instead'], // [OAR-DOC-24]
};

/** Members of each `related` item ([OAR-DOC-30]). */
export const RELATED_FIELDS: readonly string[] = ['id', 'type'];

/**
 * `keys` in canonical order: those `order` lists by their place in it, then the rest in the order
 * given. Returns the permutation as indices into `keys`.
 */
export function canonicalOrder(keys: readonly string[], order: readonly string[]): number[] {
  const rank = (k: string) => {
    const i = order.indexOf(k);
    return i < 0 ? order.length : i;
  };
  return keys.map((k, i) => ({ i, r: rank(k) })).sort((a, b) => a.r - b.r || a.i - b.i).map((x) => x.i);
}

/** A parsed document is a rule document when it is a mapping carrying `oar` ([OAR-DOC-3]). */
export const RULE_MARKER = 'oar';
