/**
 * A decision as a person reads it: the decision, its rule and copy, then everything it did. Copy
 * carries rule text and the occurrence's facts (tool arguments, content), so it is printed inert:
 * escapes for control characters, never a cursor move or a line of its own.
 */
import { inert } from '../compiler/diagnostics.js';
import type { Decision, DecisionEffect, Outcome } from '../runtime/index.js';
import { toJson, type Paint, type Style } from './output.js';

const EFFECT_STYLE: Record<DecisionEffect, Style> = {
  block: 'red',
  transform: 'magenta',
  nudge: 'yellow',
  warn: 'yellow',
  none: 'green',
};

const OUTCOME_STYLE: Partial<Record<Outcome, Style>> = {
  fired: 'bold',
  errored: 'red',
  monitored_errored: 'red',
  suppressed: 'dim',
};

export function describeDecision(d: Decision, paint: Paint): string {
  const lines: string[] = [];
  const by = d.rule ? ` by ${paint('bold', d.rule)}` : '';
  lines.push(`decision: ${paint(EFFECT_STYLE[d.decision], d.decision)}${by}`);
  if (d.copy && Object.keys(d.copy).length > 0) {
    lines.push('copy:');
    for (const [member, text] of Object.entries(d.copy)) lines.push(`  ${member}: ${inert(text)}`);
  }
  if (d.advisories.length > 0) {
    lines.push('advisories:');
    for (const a of d.advisories) {
      // The deciding rule's copy is printed above; repeat only the others'.
      const copy = a.rule === d.rule ? '' : Object.entries(a.copy).map(([k, v]) => `${k}: ${inert(v)}`).join('; ');
      lines.push(`  ${a.rule}${copy ? ` — ${copy}` : ''}`);
    }
  }
  if (d.applied.length === 0) lines.push('trace: (no rule selected)');
  else {
    lines.push('trace:');
    for (const t of d.applied) {
      const style = OUTCOME_STYLE[t.outcome];
      const outcome = style ? paint(style, t.outcome) : t.outcome;
      const why = t.error ? ` (${t.error.code}: ${inert(t.error.message)} [${t.error.clause}])` : '';
      lines.push(`  ${t.rule}:${outcome}${why}`);
    }
  }
  if (d.onFire.length > 0) lines.push(`on_fire: ${d.onFire.map((s) => `${s.rule} ${s.action}`).join(', ')}`);
  const counters = Object.entries(d.counters);
  if (counters.length > 0) {
    lines.push('counters:');
    for (const [key, v] of counters) lines.push(`  ${key}: ${Object.entries(v).map(([k, n]) => `${k}=${String(n)}`).join(' ')}`);
  }
  if (d.events.length > 0) {
    lines.push('events:');
    for (const e of d.events) lines.push(`  ${toJson(e)}`);
  }
  if (d.transforms.length > 0) {
    lines.push('transforms:');
    for (const t of d.transforms) lines.push(`  ${t.rule} ${t.action} ${t.target}${t.replacement ? ` → ${JSON.stringify(t.replacement)}` : ''}`);
    if (d.content !== undefined) lines.push(`content: ${JSON.stringify(d.content)}`);
  }
  if (d.skippedTransforms.length > 0) {
    lines.push('skipped transforms:');
    for (const s of d.skippedTransforms) lines.push(`  ${toJson(s)}`);
  }
  return `${lines.join('\n')}\n`;
}
