/**
 * The service's own log lines (stderr of `oarc serve` and `oarc mcp`): counts agree with their
 * nouns, so a pack of one rule says "1 rule".
 */
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../serve/metrics.js';
import { Service } from '../../serve/service.js';

const CAPABILITY = 'examples/gateway/capability.yaml';

async function loadLines(rules: string, detectors?: string): Promise<string[]> {
  const said: string[] = [];
  const source = { kind: 'rules' as const, rules: [rules], capability: CAPABILITY, configs: [], ...(detectors ? { detectors } : {}) };
  const service = new Service({ source, metrics: new Metrics(), say: (l) => said.push(l) });
  const r = await service.load();
  expect(r.ok, JSON.stringify(r)).toBe(true);
  return said;
}

describe('the service log', () => {
  it('says "1 rule" for a pack of one rule, "9 rules" for nine', async () => {
    expect(await loadLines('test/e2e/fixtures/bigint-rules.yaml')).toEqual([expect.stringMatching(/^loaded revision [0-9a-f]{16}: 1 rule$/)]);
    expect(await loadLines('examples/gateway/rules.yaml', 'examples/gateway/detectors.mjs')).toEqual([expect.stringMatching(/^loaded revision [0-9a-f]{16}: 9 rules$/)]);
  });
});
