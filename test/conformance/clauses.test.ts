/**
 * `conformance/clauses.json`: what the tests and the coverage check read from the specification,
 * committed so that a clone needs nothing outside itself. How it is extracted (on a small text
 * whose every part is known), that the committed file reads back, and — when `OARC_SPEC` names the
 * specification (`.ci/run` sets it when the text is beside the clone) — that the committed file is
 * exactly what the extractor reads from that text today.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultSpecDataFile, extractSpecData, formatSpecData, main, readSpecData } from '../../conformance/clauses.js';
import { specNotice, specToCompare } from '../support/spec.js';

const TOY = `# Toy

**Version 1.0** · Status: draft

- **[OAR-DOC-1]** \`kind\` MUST be one of \`a\`, \`b\`, or \`c\`.
- **[OAR-OPS-2]** An action is one of \`x\` or \`y\`, and \`target\` names where; a later
  sentence has a closed vocabulary: \`p\`, \`q\`.
- **[OAR-OPS-3]** *(Retired)* It MUST NOT count, and is one of those clauses with no list.

### 5.3 Core facts

| Name | Type | Observation | |------|------|-------------|
| \`anchor\` | \`string\` | The moment. |
| \`fire_count_of\` | \`(string) -> int\` | A count. |

### 5.4 Standard profiles

**Profile \`tool\`** — tools.

| \`tool\` | \`string\` | The tool. |

**Profile \`session\`** — sessions.

| \`principal\` | \`string\` | Who. |
| \`principal_roles\` | \`list<string>\` | Roles. |

## 8. Portability

### 8.1 Core anchors

| Core anchor | Lifecycle moment | |---|---| | \`tool.pre_invoke\` | Before. |
| \`model.output\` | After. |

## Appendix B — Change log

| Version | Change |
|---------|--------|
| 1.0 | First. |
`;

const withTempDir = (f: (dir: string) => void) => {
  const dir = mkdtempSync(join(tmpdir(), 'oarc-clauses-'));
  try {
    f(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

describe('extractSpecData', () => {
  it('reads the version, change log, fact tables, profiles, core anchors and clauses', () => {
    const d = extractSpecData(TOY);
    expect(d.version).toBe('1.0');
    expect(d.changeLog).toEqual(['1.0']);
    expect(d.coreFacts).toEqual([['anchor', 'string'], ['fire_count_of', '(string) -> int']]);
    expect(d.profiles).toEqual([
      { name: 'tool', facts: [['tool', 'string']] },
      { name: 'session', facts: [['principal', 'string'], ['principal_roles', 'list<string>']] },
    ]);
    expect(d.coreAnchors).toEqual(['tool.pre_invoke', 'model.output']);
    expect(d.clauses).toEqual([
      { id: 'OAR-DOC-1', line: 5, retired: false, normative: true, enumerations: [['a', 'b', 'c']] },
      // ", and `target`" begins the next member of the sentence; a continuation line is read too.
      { id: 'OAR-OPS-2', line: 6, retired: false, normative: false, enumerations: [['x', 'y'], ['p', 'q']] },
      { id: 'OAR-OPS-3', line: 8, retired: true, normative: false, enumerations: [] },
    ]);
  });

  it('refuses a text lacking a part, naming it', () => {
    const without = (from: string, to: string) => TOY.slice(0, TOY.indexOf(from)) + TOY.slice(TOY.indexOf(to));
    expect(() => extractSpecData(TOY.replace('**Version 1.0**', 'Version 1.0'))).toThrow('declares no version');
    expect(() => extractSpecData(without('### 5.3', '### 5.4'))).toThrow('no section "### 5.3 Core facts"');
    expect(() => extractSpecData(TOY.replace('| 1.0 | First. |', ''))).toThrow('no versions in its change log (Appendix B)');
    expect(() => extractSpecData(TOY.replace("| `tool` | `string` | The tool. |", ''))).toThrow('no facts for profile tool (5.4)');
    expect(() => extractSpecData(without('- **[OAR-DOC-1]**', '### 5.3'))).toThrow('lists no clauses');
  });
});

describe('formatSpecData and readSpecData', () => {
  it('write one item a line and read back what was written', () => {
    withTempDir((dir) => {
      const d = extractSpecData(TOY);
      const text = formatSpecData(d);
      expect(text).toContain('\n    {"id":"OAR-DOC-1","line":5,"retired":false,"normative":true,"enumerations":[["a","b","c"]]},\n');
      writeFileSync(join(dir, 'c.json'), text);
      expect(readSpecData(join(dir, 'c.json'))).toEqual(d);
    });
  });

  it('refuse a file that is not the data, naming the file and member', () => {
    withTempDir((dir) => {
      const f = join(dir, 'c.json');
      expect(() => readSpecData(f)).toThrow(`${f}: cannot read the specification data`);
      writeFileSync(f, '[]');
      expect(() => readSpecData(f)).toThrow('is a JSON object');
      const good = JSON.parse(formatSpecData(extractSpecData(TOY))) as Record<string, unknown>;
      writeFileSync(f, JSON.stringify({ ...good, clauses: [{ id: 'OAR-DOC-1', line: 5, retired: false, normative: 'yes', enumerations: [] }] }));
      expect(() => readSpecData(f)).toThrow(`${f}: clauses must be a list of { id, line, retired, normative, enumerations }`);
      writeFileSync(f, JSON.stringify({ ...good, profiles: undefined }));
      expect(() => readSpecData(f)).toThrow(`${f}: profiles must be`);
    });
  });
});

describe('the clauses command', () => {
  it('writes the data from --spec or OARC_SPEC, and refuses to guess a specification', () => {
    withTempDir((dir) => {
      const spec = join(dir, 'spec.md');
      const file = join(dir, 'out.json');
      writeFileSync(spec, TOY);
      let out = '';
      const say = (s: string) => void (out += s);
      expect(main(['--spec', spec, '--out', file], {}, say)).toBe(0);
      expect(out).toBe(`clauses: ${file}: version 1.0, 3 clauses (1 normative, 1 retired), 2 profiles\n`);
      expect(readFileSync(file, 'utf8')).toBe(formatSpecData(extractSpecData(TOY)));
      rmSync(file);
      expect(main(['--out', file], { OARC_SPEC: spec }, () => {})).toBe(0);
      expect(existsSync(file)).toBe(true);

      out = '';
      expect(main(['--out', file], {}, say)).toBe(2);
      expect(out).toContain('no specification given: pass --spec <spec.md> or set OARC_SPEC');
      out = '';
      expect(main(['--spec', join(dir, 'missing.md'), '--out', file], {}, say)).toBe(1);
      expect(out).toContain('missing.md does not exist');
      writeFileSync(spec, TOY.replace('**Version 1.0**', ''));
      out = '';
      expect(main(['--spec', spec, '--out', file], {}, say)).toBe(1);
      expect(out).toContain('declares no version');
      expect(main(['--spec'], {}, () => {})).toBe(2);
      expect(main(['spec.md'], {}, () => {})).toBe(2);
    });
  });
});

describe('the committed conformance/clauses.json', () => {
  const data = readSpecData(defaultSpecDataFile());

  it('is OAR 1.0: 221 clauses, each defined once, OAR-CONF-27 and OAR-CONF-28 retired', () => {
    expect(data.version).toBe('1.0');
    expect(data.clauses).toHaveLength(221);
    expect(new Set(data.clauses.map((c) => c.id)).size).toBe(221);
    expect(data.clauses.filter((c) => c.retired).map((c) => c.id)).toEqual(['OAR-CONF-27', 'OAR-CONF-28']);
    const byId = new Map(data.clauses.map((c) => [c.id, c]));
    expect(byId.get('OAR-CONF-22')!.normative).toBe(true);
    expect(byId.get('OAR-SEL-1')!.normative).toBe(false); // no MUST in its text
    expect(byId.get('OAR-CONF-26')!.normative).toBe(false);
  });
});

const SPEC = specToCompare();

describe('conformance/clauses.json against the specification text', () => {
  it('is what the extractor reads from the text named by OARC_SPEC (regenerate: npm run clauses -- --spec <spec.md>)', (ctx) => {
    if (SPEC === undefined) return ctx.skip(specNotice());
    // Named but missing is a mistake, not a reason to skip.
    expect(existsSync(SPEC), `OARC_SPEC=${SPEC} does not exist`).toBe(true);
    const text = readFileSync(SPEC, 'utf8');
    expect(readFileSync(defaultSpecDataFile(), 'utf8'), `conformance/clauses.json is stale: npm run clauses -- --spec ${SPEC}`).toBe(
      formatSpecData(extractSpecData(text)),
    );
    // Every definition line of the text is one clause: the extractor's pattern misses none.
    expect(text.match(/^- \*\*\[OAR-[A-Z]+-\d+\]\*\*/gm)).toHaveLength(readSpecData(defaultSpecDataFile()).clauses.length);
  });
});
