/**
 * Operator configuration documents (section 9): `disable` and `enforcement`, applied in the order
 * given, the last statement about a rule winning ([OAR-CFG-7]). A configuration changes whether
 * and how loudly a rule runs, never what it means ([OAR-CFG-6]); it cannot touch a mandatory rule
 * ([OAR-CFG-5], [OAR-OPS-7]) or name a rule that is not loaded ([OAR-CFG-4]).
 */
import { error, type Diagnostic, type SourceLocation } from '../diagnostics.js';
import type { CheckedRule, Enforcement } from './model.js';
import type { JsonPath } from './capability.js';
import { closest, meantHint } from '../../runtime/suggest.js';

export interface ConfigDocument {
  oar_config: string;
  disable?: string[];
  enforcement?: Record<string, Enforcement>;
}

const RANK: Readonly<Record<Enforcement, number>> = { enforce: 2, monitor: 1, off: 0 };

/**
 * [OAR-CFG-8] a bare identifier names, first, the rule whose qualified identifier equals it;
 * only when there is none, any rule with that `id` in any namespace — and more than one is an error.
 */
export function resolveConfigRef(ref: string, rules: readonly CheckedRule[]): { rule?: CheckedRule; ambiguous?: CheckedRule[] } {
  const exact = rules.find((r) => r.qid === ref);
  if (exact || ref.includes('/')) return exact ? { rule: exact } : {};
  const byId = rules.filter((r) => r.id === ref);
  if (byId.length === 1) return { rule: byId[0] as CheckedRule };
  return byId.length > 1 ? { ambiguous: byId } : {};
}

/**
 * Apply configuration documents (already schema-checked) to the loaded rules. Returns the effective
 * enforcement of every rule that any document changed.
 */
export function applyConfigs(
  configs: readonly { doc: ConfigDocument; locate: (path: JsonPath) => SourceLocation }[],
  rules: readonly CheckedRule[],
  /**
   * Qualified identifiers of every rule document in the set, including those that failed their own
   * checks (and so are not in `rules`): a reference to one is not reported as unloaded, since the
   * rule's own errors already keep the pack from loading.
   */
  identities: ReadonlySet<string> = new Set(rules.map((r) => r.qid)),
): { enforcement: Map<string, Enforcement>; diagnostics: Diagnostic[] } {
  const failedElsewhere = (ref: string) =>
    identities.has(ref) || (!ref.includes('/') && [...identities].some((q) => q.endsWith(`/${ref}`)));
  const enforcement = new Map<string, Enforcement>();
  const diagnostics: Diagnostic[] = [];
  for (const { doc, locate } of configs) {
    const statements: { ref: string; value: Enforcement; path: JsonPath }[] = [
      ...(doc.disable ?? []).map((ref, i) => ({ ref, value: 'off' as const, path: ['disable', i] })),
      ...Object.entries(doc.enforcement ?? {}).map(([ref, value]) => ({ ref, value, path: ['enforcement', ref] })),
    ];
    for (const s of statements) {
      const fail = (clause: string, message: string, extra: { rule?: string; suggestion?: string } = {}) =>
        diagnostics.push(error(clause, message, { token: s.ref, path: s.path, source: locate(s.path), ...extra }));
      const { rule, ambiguous } = resolveConfigRef(s.ref, rules);
      if (ambiguous) {
        fail('OAR-CFG-8', `configuration names ${s.ref}, which matches more than one loaded rule: ${ambiguous.map((r) => r.qid).join(', ')}`);
        continue;
      }
      if (!rule) {
        if (failedElsewhere(s.ref)) continue;
        // The loaded rule probably meant: as written, qualified or bare.
        const meant = closest(s.ref, s.ref.includes('/') ? rules.map((r) => r.qid) : rules.map((r) => r.id));
        fail('OAR-CFG-4', `configuration ${s.path[0] as string} names ${s.ref}, which is not a loaded rule${meantHint(meant)}`, meant === undefined ? {} : { suggestion: meant });
        continue;
      }
      // [OAR-CFG-5], [OAR-OPS-7]: a mandatory rule cannot be disabled or downgraded. Setting it
      // `off` disables it even when the document already declares `off`: the configuration
      // "disables ... a rule whose mandatory is true", which [OAR-CFG-5] rejects without exception.
      if (rule.mandatory && (s.value === 'off' || RANK[s.value] < RANK[rule.enforcement])) {
        fail('OAR-CFG-5', `configuration ${s.value === 'off' ? 'disables' : 'downgrades'} ${rule.qid}, which is mandatory`, { rule: rule.qid });
        continue;
      }
      enforcement.set(rule.qid, s.value);
    }
  }
  return { enforcement, diagnostics };
}
