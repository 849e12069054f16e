/**
 * Warnings for a rule author: packs that are valid OAR but almost certainly not what was meant.
 * They never keep a pack from loading (`oarc check --max-warnings 0` makes them fail a build), and
 * each carries an `oarc/…` code in place of a clause, since the specification allows what they
 * describe.
 *
 * - `oarc/counter-never-incremented`: copy or a condition reads the rule's own `fire_count` (or
 *   `breaker_count`), but its `on_fire` never increments it, so it reads 0 forever (5.3: it
 *   "counts declared increments, not firings").
 * - `oarc/never-selected`: a selector clause on `anchor` that excludes the rule's own anchor.
 * - `oarc/never-fires`: a condition that is the literal `false`.
 * - `oarc/monitor-overrides`: a `monitor` rule with `overrides`, which suppress nothing
 *   ([OAR-EVAL-10]).
 * - `oarc/on-error-other-anchor`: an `on_error` substitute bound to another anchor: the block
 *   carries the identifiers and copy of a rule that never runs here ([OAR-OPS-5] allows it).
 */
import { warning, type Diagnostic } from '../diagnostics.js';
import { COPY_MEMBERS, type CopyPart } from '../../runtime/copy.js';
import type { CheckedRule, Enforcement } from './model.js';
import type { Locator } from './rule.js';

const COUNTERS = [
  { fact: 'fire_count', increment: 'increment_counter' },
  { fact: 'breaker_count', increment: 'increment_breaker' },
] as const;

export function lintRules(rules: readonly CheckedRule[], locate: ReadonlyMap<string, Locator>, enforcement: ReadonlyMap<string, Enforcement>): Diagnostic[] {
  const out: Diagnostic[] = [];
  const byQid = new Map(rules.map((r) => [r.qid, r]));
  for (const r of rules) {
    const at = locate.get(r.qid);
    const warn = (code: string, message: string, path: (string | number)[], token?: string) =>
      out.push(warning(code, message, { rule: r.qid, path, ...(token === undefined ? {} : { token }), ...(at ? { source: at(path) } : {}) }));
    const mode = enforcement.get(r.qid) ?? r.enforcement;

    for (const c of COUNTERS) {
      if (!r.references.some((s) => s.name === c.fact) || r.onFire.includes(c.increment)) continue;
      const member = COPY_MEMBERS.find((m) => r.copy[m]?.some((part) => reads(part, r.references.find((s) => s.name === c.fact)?.slot)));
      const path = member === undefined ? ['when'] : ['copy', member];
      warn('oarc/counter-never-incremented', `rule ${r.qid} reads its own ${c.fact}, but its on_fire never applies ${c.increment}: ${c.fact} counts declared increments, not firings, so it is 0 every time`, path, c.fact);
    }

    const anchorClause = r.selector.find((s) => s.fact.name === 'anchor');
    if (anchorClause !== undefined && anchorClause.values.length > 0 && !anchorClause.values.includes(r.anchor)) {
      warn('oarc/never-selected', `rule ${r.qid} is bound to anchor ${r.anchor}, but its selector admits only anchor ${anchorClause.values.join(', ')}: it is never selected`, ['selector', 'anchor'], 'anchor');
    }

    if (r.when?.typed.k === 'lit' && r.when.typed.value === false) {
      warn('oarc/never-fires', `rule ${r.qid} has the condition false: it never fires`, ['when'], 'false');
    }

    if (mode === 'monitor' && r.overrides.length > 0) {
      warn('oarc/monitor-overrides', `rule ${r.qid} is in monitor mode, so its overrides suppress nothing ([OAR-EVAL-10]): ${r.overrides.join(', ')} still run`, ['overrides'], 'overrides');
    }

    if (r.onError.mode === 'substitute') {
      const sub = byQid.get(r.onError.rule);
      if (sub !== undefined && sub.localAnchor !== r.localAnchor) {
        warn('oarc/on-error-other-anchor', `rule ${r.qid} substitutes ${sub.qid} on error, which is bound to anchor ${sub.anchor}, not ${r.anchor}: the block carries the identifiers and copy of a rule that never runs here`, ['on_error'], r.onError.rule);
      }
    }
  }
  return out;
}

/** Whether a copy part binds or tests the fact in `slot`, at any depth. */
function reads(part: CopyPart, slot: number | undefined): boolean {
  if (slot === undefined || typeof part === 'string') return false;
  if ('slot' in part) return part.slot === slot;
  return part.test === slot || part.zero.some((p) => reads(p, slot)) || part.nonzero.some((p) => reads(p, slot));
}
