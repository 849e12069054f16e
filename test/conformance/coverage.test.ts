/**
 * Clause coverage (section 10.3): which clauses the spec defines, which are normative, and the
 * problems the check reports.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { extractClauses } from '../../conformance/clauses.js';
import { checkCoverage, checkCoverageFiles, defaultPaths, main, mentions, renderCoverage, type CoverageInput } from '../../conformance/coverage.js';

const SPEC = `# Title

Preamble mentioning [OAR-X-9] and the word MUST outside any clause.

- **[OAR-A-1]** An engine MUST do one thing.
- **[OAR-A-2]** An engine MAY do another, and SHOULD say so; it must be lower case here.
- **[OAR-A-3]** *(Retired)* Replaced by tooling. It MUST NOT count.
- **[OAR-A-4]** A clause whose keyword sits only in code: \`MUST\` is quoted.
- **[OAR-A-5]** A clause continued
  on a second line that says MUST NOT.

| table | MUST |
- **[OAR-B-10]** Another area; a rule MUST NOT be skipped.
`;

const fixture = (id: string, covers: unknown, file = `conformance/fixtures/${id}.json`) => ({ file, text: JSON.stringify({ id, covers }) });

function input(over: Partial<CoverageInput> = {}): CoverageInput {
  return {
    clauses: extractClauses(SPEC),
    fixtures: [fixture('a', ['OAR-A-1', 'OAR-A-5'])],
    exemptText: JSON.stringify({ 'OAR-B-10': { test: 'test/x.test.ts', why: 'verified by a unit test' } }),
    readTest: (p) => (p === 'test/x.test.ts' ? "it('[OAR-B-10] is verified', () => {})" : undefined),
    ...over,
  };
}

describe('extractClauses', () => {
  it('reads definitions only, with their continuation lines', () => {
    const cs = extractClauses(SPEC);
    expect(cs.map((c) => c.id)).toEqual(['OAR-A-1', 'OAR-A-2', 'OAR-A-3', 'OAR-A-4', 'OAR-A-5', 'OAR-B-10']);
    expect(cs[4]!.normative).toBe(true); // its MUST NOT is on the continuation line
    expect(cs[0]!.line).toBe(5);
  });

  it('normative = a capitalised MUST outside code spans; retired clauses are never normative', () => {
    const cs = new Map(extractClauses(SPEC).map((c) => [c.id, c]));
    expect([...cs.values()].filter((c) => c.normative).map((c) => c.id)).toEqual(['OAR-A-1', 'OAR-A-5', 'OAR-B-10']);
    expect(cs.get('OAR-A-3')!.retired).toBe(true);
    expect(cs.get('OAR-A-4')!.normative).toBe(false);
  });
});

describe('mentions', () => {
  it('matches a whole clause id, not a prefix of a longer one', () => {
    expect(mentions('see [OAR-CONF-2]', 'OAR-CONF-2')).toBe(true);
    expect(mentions('see OAR-CONF-22', 'OAR-CONF-2')).toBe(false);
    expect(mentions('XOAR-CONF-2', 'OAR-CONF-2')).toBe(false);
  });
});

describe('checkCoverage', () => {
  it('passes when every normative clause is covered or exempt', () => {
    const r = checkCoverage(input());
    expect(r.problems).toEqual([]);
    expect(r.uncovered).toEqual([]);
    expect(r.required).toEqual(['OAR-A-1', 'OAR-A-5', 'OAR-B-10']);
    expect(r.coveredBy.get('OAR-A-1')).toEqual(['a']);
    expect(renderCoverage(r).trimEnd().split('\n').pop()).toBe('coverage: ok');
  });

  it('fails on a normative clause neither covered nor exempt, listing it', () => {
    const r = checkCoverage(input({ fixtures: [fixture('a', ['OAR-A-1'])] }));
    expect(r.uncovered).toEqual(['OAR-A-5']);
    const text = renderCoverage(r);
    expect(text).toContain('OAR-A-5 (spec line 9)');
    expect(text.trimEnd().split('\n').pop()).toBe('coverage: FAILED');
  });

  it('fails on a fixture whose id is not its file stem, or whose covers names an unknown or retired clause', () => {
    const r = checkCoverage(
      input({
        fixtures: [
          fixture('a', ['OAR-A-1', 'OAR-A-5']),
          fixture('b', ['OAR-A-1'], 'conformance/fixtures/c.json'),
          fixture('d', ['OAR-Z-1', 'OAR-A-3']),
          fixture('e', []),
          { file: 'conformance/fixtures/f.json', text: '{' },
        ],
      }),
    );
    expect(r.problems).toEqual([
      'conformance/fixtures/c.json: fixture id "b" is not its file name stem `c` [OAR-CONF-17]',
      'conformance/fixtures/d.json: covers names OAR-Z-1, which the specification does not define',
      'conformance/fixtures/d.json: covers names OAR-A-3, which is retired',
      'conformance/fixtures/e.json: covers must be a non-empty list of clause identifiers [OAR-CONF-17]',
      expect.stringMatching(/^conformance\/fixtures\/f\.json: not valid JSON/),
    ]);
  });

  it('fails on an exemption whose test is missing, does not mention the clause, or that names no live clause', () => {
    const exempt = {
      'OAR-B-10': { test: 'test/x.test.ts', why: 'w' },
      'OAR-A-1': { test: 'test/missing.test.ts', why: 'w' },
      'OAR-A-5': { test: 'test/x.test.ts', why: 'w' },
      'OAR-A-3': { test: 'test/x.test.ts', why: 'w' },
      'OAR-Q-1': { test: 'test/x.test.ts', why: 'w' },
      'OAR-A-2': { test: 'test/x.test.ts' },
    };
    const r = checkCoverage(input({ fixtures: [], exemptText: JSON.stringify(exempt) }));
    expect(r.problems).toEqual([
      'exempt.json: OAR-A-1 names test test/missing.test.ts, which does not exist',
      'exempt.json: OAR-A-5 names test test/x.test.ts, which never mentions OAR-A-5',
      'exempt.json: the exemption list names OAR-A-3, which is retired',
      'exempt.json: the exemption list names OAR-Q-1, which the specification does not define',
      'exempt.json: OAR-A-2 must be { "test": "<test file>", "why": "<reason>" } with both non-empty',
    ]);
    expect(r.uncovered).toEqual(['OAR-A-1', 'OAR-A-5']);
    expect([...r.exempt.keys()]).toEqual(['OAR-B-10']);
  });
});

describe('the repository', () => {
  it('its fixtures and conformance/exempt.json raise no problems', () => {
    const r = checkCoverageFiles(defaultPaths());
    expect(r.problems).toEqual([]);
    for (const id of ['OAR-CONF-17', 'OAR-CONF-22', 'OAR-CONF-35', 'OAR-CONF-38']) expect(r.exempt.has(id), id).toBe(true);
    expect(r.coveredBy.get('OAR-CONF-29')).toContain('anchor-host-local-spelling');
  });

  it('main exits 1 listing uncovered clauses, 0 when all are covered, 2 on a usage error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'oarc-coverage-'));
    try {
      writeFileSync(join(dir, 'spec.md'), SPEC);
      writeFileSync(join(dir, 'only-may.md'), '- **[OAR-A-2]** An engine MAY do this.\n');
      mkdirSync(join(dir, 'fixtures'));
      let out = '';
      const args = ['--fixtures', join(dir, 'fixtures'), '--exempt', join(dir, 'none.json')];
      expect(main([join(dir, 'spec.md'), ...args], (s) => void (out += s))).toBe(1);
      expect(out).toContain('OAR-A-1 (spec line 5)');
      expect(out).toMatch(/3 normative MUST clauses: 0 covered by fixtures, 0 exempt, 3 uncovered\ncoverage: FAILED\n$/);
      out = '';
      expect(main([join(dir, 'only-may.md'), ...args], (s) => void (out += s))).toBe(0);
      expect(out.endsWith('coverage: ok\n')).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(main(['--fixtures'], () => {})).toBe(2);
    expect(main(['a.md', 'b.md'], () => {})).toBe(2);
  });
});
