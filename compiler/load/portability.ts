/**
 * The portability report ([OAR-PROF-6] to [OAR-PROF-8]): for each rule, whether it is portable
 * and exactly what makes it not. A non-portable rule is legal; this is a report, never a load
 * failure ([OAR-PROF-8]).
 */
import type { CheckedRule } from './model.js';

export interface PortabilityEntry {
  rule: string;
  portable: boolean;
  /** What makes it non-portable: a host anchor, host-tier facts, facts reached outside requires.profiles. */
  reasons: string[];
  /** `flow` travels only between engines declaring the same activity window ([OAR-FACT-13]). */
  notes: string[];
}

export function portabilityReport(rules: readonly CheckedRule[]): PortabilityEntry[] {
  return rules.map((r) => {
    const reasons: string[] = [];
    if (!r.coreAnchor) reasons.push(`host-native anchor ${r.anchor}`);
    for (const sym of r.references) {
      if (sym.tier.kind === 'host') reasons.push(`host-tier ${sym.kind} ${sym.name}`);
      else if (sym.tier.kind === 'profile' && !r.requires.profiles.includes(sym.tier.profile)) {
        reasons.push(`${sym.kind} ${sym.name} of profile ${sym.tier.profile}, which requires.profiles does not name`);
      }
    }
    const notes = r.flow ? [`flow of ${r.flow.length} steps: portable only between engines declaring the same activity window`] : [];
    return { rule: r.qid, portable: reasons.length === 0, reasons, notes };
  });
}
