/**
 * The service's Prometheus text: counts exact, and series rendered in the order first counted
 * (the counters look series up through one Map per label, not a joined key).
 */
import { describe, expect, it } from 'vitest';
import type { Decision } from '../../runtime/index.js';
import { Metrics } from '../../serve/metrics.js';

const decision = (effect: Decision['decision'], applied: Decision['applied']): Decision => ({ decision: effect, code: null, rule: null, copy: null, advisories: [], transforms: [], skippedTransforms: [], applied, onFire: [], events: [], counters: {} }) as Decision;

describe('Metrics', () => {
  it('counts each series exactly, in the order first seen (not grouped by the first label), escaping label values', () => {
    const m = new Metrics([0.001]);
    m.decided('model.output', decision('none', []), 0.002);
    m.decided('tool.pre_invoke', decision('block', [{ rule: 'a/X', outcome: 'fired' }, { rule: 'a/Y', outcome: 'passed' }] as Decision['applied']), 0.0005);
    m.decided('tool.pre_invoke', decision('none', []), 0.0001);
    m.decided('tool.pre_invoke', decision('block', [{ rule: 'a/X', outcome: 'fired' }] as Decision['applied']), 0.0001);
    m.decided('say "hi"\n', decision('none', []), 0.0001);
    m.rejected(400);
    m.rejected(413);
    m.rejected(400);
    const text = m.render();
    const lines = (name: string) => text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
    expect(lines('oarc_decisions_total')).toEqual([
      'oarc_decisions_total{effect="none",anchor="model.output"} 1',
      'oarc_decisions_total{effect="block",anchor="tool.pre_invoke"} 2',
      'oarc_decisions_total{effect="none",anchor="tool.pre_invoke"} 1',
      'oarc_decisions_total{effect="none",anchor="say \\"hi\\"\\n"} 1',
    ]);
    expect(lines('oarc_rule_outcomes_total')).toEqual(['oarc_rule_outcomes_total{rule="a/X",outcome="fired"} 2']);
    expect(lines('oarc_requests_rejected_total')).toEqual(['oarc_requests_rejected_total{status="400"} 2', 'oarc_requests_rejected_total{status="413"} 1']);
    expect(lines('oarc_store_errors_total')).toEqual(['oarc_store_errors_total 0']);
    expect(text).toContain('oarc_decision_duration_seconds_bucket{le="0.001"} 4\noarc_decision_duration_seconds_bucket{le="+Inf"} 5');
    m.storeError();
    m.storeError();
    expect(m.render()).toContain('\noarc_store_errors_total 2\n');
  });
});
