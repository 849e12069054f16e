import { test } from 'vitest';
import { stringify } from 'yaml';
import { parseSource } from '../compiler/load/source.js';
import { validateRuleDocument } from '../compiler/load/schema.js';
test('edges', () => {
  const a = parseSource('- &a {id: A}\n- *a\n', 's.yaml');
  console.log(a.docs.map(d => [d.value, d.locate(['id'])]), a.diagnostics);
  const b = parseSource('&s\n- *s\n', 's.yaml');
  console.log(b.docs.length, b.diagnostics.map(d => d.message));
  const c = parseSource('oar: "1.0"\r\nid: A\r\nfoo: 1\r\n', 'c.yaml');
  console.log(c.docs[0].locate(['foo']));
  const rule = (i: number) => ({ oar: '1.0', id: `RULE_${i}`, namespace: 'acme.sec', kind: 'policy', anchor: 'tool.pre_invoke', selector: { tool: ['read', 'write'] }, requires: { profiles: ['tool'] }, when: `size(tool) > ${i}`, effect: 'warn', on_fire: ['increment_counter'], copy: { what: 'x', fix: 'y' } });
  for (const n of [1000, 5000]) {
    const rules = Array.from({ length: n }, (_, i) => rule(i));
    for (const [label, text, file] of [['json', JSON.stringify(rules, null, 2), 'p.json'], ['yaml-seq', stringify(rules), 'p.yaml'], ['yaml-stream', rules.map(r => stringify(r)).join('---\n'), 'p.yaml']] as const) {
      const t = performance.now(); const r = parseSource(text, file); const t2 = performance.now();
      let n2 = 0; for (const d of r.docs) n2 += validateRuleDocument(d).length;
      console.log(n, label, (text.length / 1024).toFixed(0) + 'KB', 'parse', (t2 - t).toFixed(0), 'ms validate', (performance.now() - t2).toFixed(0), 'ms', r.docs.length, n2);
    }
  }
});
