import { describe, expect, it } from 'vitest';
import { checkCopy, compileCopyTemplate, parseCopy, type CopyNode } from '../compiler/copy/template.js';
import { interpolate, isZero, renderCopy, renderCopyObject, type CopyProgram } from '../runtime/copy.js';
import { ObjectFactReader, type FactReader } from '../runtime/facts.js';
import { Raise } from '../runtime/raise.js';
import { symbolTable, type FactType } from '../runtime/types.js';

const core = { kind: 'core' } as const;
const host = { kind: 'host' } as const;

const fact = (name: string, type: FactType, tier: typeof core | typeof host = core) =>
  ({ kind: 'fact', name, type, tier }) as const;

// Declared apart: `Omit` over the SymbolEntry union keeps only the shared keys, so an inline
// function literal would fail the excess-property check on `param`.
const observationFn = { kind: 'function', name: 'tool_arg_string', param: 'string', result: 'string', tier: core } as const;

const table = symbolTable([
  fact('tool', 'string'),
  fact('ok', 'bool'),
  fact('n', 'int'),
  fact('score', 'double'),
  fact('tags', 'list<string>'),
  fact('args', 'map'),
  fact('headers', 'map<string,string>'),
  fact('spans', 'list<map>'),
  fact('acme.team', 'string', host),
  fact('not', 'bool'),
  fact('a', 'string'),
  fact('b', 'string'),
  observationFn,
]);

function nodes(text: string): CopyNode[] {
  const r = parseCopy(text);
  if (!r.ok) throw new Error(`unexpected parse error: ${r.message}`);
  return r.nodes;
}

function rejection(text: string): { construct: string; offset: number; message: string } {
  const r = parseCopy(text);
  if (r.ok) throw new Error(`expected ${JSON.stringify(text)} to be rejected`);
  expect(r.message).toContain(r.construct); // [OAR-COPY-3] the message names the construct
  return r;
}

function program(text: string): CopyProgram {
  const ns = nodes(text);
  const { errors } = checkCopy(ns, table);
  expect(errors).toEqual([]);
  return compileCopyTemplate(ns, table);
}

function render(text: string, values: Record<string, unknown> = {}): string {
  return renderCopy(program(text), new ObjectFactReader(table, values));
}

/** A reader that records which slots were read and can fail on demand. */
class RecordingReader implements FactReader {
  readonly reads: string[] = [];
  constructor(
    private readonly values: Record<string, unknown>,
    private readonly failing: Record<string, Raise> = {},
  ) {}
  fact(slot: number): unknown {
    const name = table.symbols[slot]!.name;
    this.reads.push(name);
    const f = this.failing[name];
    if (f) throw f;
    return this.values[name];
  }
  call(): unknown {
    throw new Error('copy never calls an observation function');
  }
}

describe('copy grammar: accepted', () => {
  it('[OAR-COPY-8] accepts {{tool}} and {{ tool }} as the same binding', () => {
    const tight = nodes('{{tool}}');
    const loose = nodes('{{ tool }}');
    const wide = nodes('{{ \t\r\n tool\n\t }}');
    for (const ns of [tight, loose, wide]) {
      expect(ns).toHaveLength(1);
      expect(ns[0]).toMatchObject({ k: 'binding', name: 'tool' });
    }
    expect(render('{{tool}}', { tool: 'Bash' })).toBe(render('{{ tool }}', { tool: 'Bash' }));
  });

  it('[OAR-COPY-8] whitespace inside {% %} is insignificant, including none at all', () => {
    const a = nodes('{%if ok%}y{%else%}n{%endif%}');
    const b = nodes('{% if ok %}y{% else %}n{% endif %}');
    const c = nodes('{%\n  if\tok\r\n%}y{%\telse  %}n{%  endif\n%}');
    const strip = (ns: CopyNode[]) => JSON.parse(JSON.stringify(ns, (k, v) => (k === 'offset' ? undefined : v)));
    expect(strip(a)).toEqual(strip(b));
    expect(strip(c)).toEqual(strip(b));
  });

  it('[OAR-COPY-1] plain prose is one literal; the empty text is no nodes', () => {
    expect(nodes('Use the sandbox instead.')).toEqual([{ k: 'text', text: 'Use the sandbox instead.' }]);
    expect(nodes('')).toEqual([]);
  });

  it('[OAR-COPY-3] a lone {, }, %} or }} in literal text is literal', () => {
    for (const text of ['{', '}', '%}', '}}', 'a { b } c', '{ {', '{ %', '100%', 'x}}y%}z', 'ends with {', '{}', '%{']) {
      expect(nodes(text)).toEqual([{ k: 'text', text }]);
      expect(render(text)).toBe(text);
    }
  });

  it('[OAR-COPY-3] literals around and between bindings; a trailing } after a binding is literal', () => {
    expect(nodes('a{{tool}}}b')).toEqual([
      { k: 'text', text: 'a' },
      { k: 'binding', name: 'tool', offset: 3 },
      { k: 'text', text: '}b' },
    ]);
    expect(render('{{a}}{{b}}', { a: 'x', b: 'y' })).toBe('xy');
  });

  it('[OAR-EXPR-2] a dotted identifier is one name (a host-tier fact)', () => {
    expect(nodes('{{ acme.team }}')).toEqual([{ k: 'binding', name: 'acme.team', offset: 3 }]);
    expect(render('team {{acme.team}}', { 'acme.team': 'infra' })).toBe('team infra');
  });

  it('[OAR-COPY-3] if, if/else, if not, and nested conditionals parse', () => {
    expect(nodes('{% if ok %}yes{% endif %}')).toEqual([
      { k: 'if', name: 'ok', negate: false, offset: 6, then: [{ k: 'text', text: 'yes' }], else: [] },
    ]);
    expect(nodes('{% if not ok %}a{% else %}b{% endif %}')).toEqual([
      {
        k: 'if',
        name: 'ok',
        negate: true,
        offset: 10,
        then: [{ k: 'text', text: 'a' }],
        else: [{ k: 'text', text: 'b' }],
      },
    ]);
    const nested = nodes('{% if ok %}{% if not n %}zero{% else %}{{ n }}{% endif %}!{% endif %}');
    expect(nested).toHaveLength(1);
    const outer = nested[0] as Extract<CopyNode, { k: 'if' }>;
    expect(outer.then).toHaveLength(2);
    expect(outer.then[0]).toMatchObject({ k: 'if', name: 'n', negate: true });
    expect(outer.then[1]).toEqual({ k: 'text', text: '!' });
  });

  it('[OAR-COPY-3] "not" is a keyword only before an identifier; notx is one name (greedy lexing)', () => {
    expect(nodes('{% if notx %}{% endif %}')[0]).toMatchObject({ name: 'notx', negate: false });
    expect(nodes('{% if not\tx %}{% endif %}')[0]).toMatchObject({ name: 'x', negate: true });
    expect(nodes('{% if not %}{% endif %}')[0]).toMatchObject({ name: 'not', negate: false });
    expect(nodes('{% if not not %}{% endif %}')[0]).toMatchObject({ name: 'not', negate: true });
    expect(nodes('{% if not.x %}{% endif %}')[0]).toMatchObject({ name: 'not.x', negate: false });
  });

  it('[OAR-COPY-3] offsets are in code points, not UTF-16 units', () => {
    // 😀 and 𝄞 are each two UTF-16 units but one code point.
    expect(nodes('😀𝄞 {{ tool }}')).toEqual([
      { k: 'text', text: '😀𝄞 ' },
      { k: 'binding', name: 'tool', offset: 6 },
    ]);
    expect(nodes('\uD800{% if ok %}{% endif %}')[1]).toMatchObject({ offset: 7 }); // a lone surrogate counts once
  });
});

describe('copy grammar: rejected, naming the construct and its offset [OAR-COPY-3]', () => {
  const cases: [string, string, string, number][] = [
    ['an empty binding', 'x {{ }} y', '{{ }}', 2],
    ['two names in a binding', '{{ a b }}', '{{ a b }}', 0],
    ['a trailing dot', 'Hi {{ a.}}', '{{ a.}}', 3],
    ['a leading dot', '{{ .a }}', '{{ .a }}', 0],
    ['a double dot', '{{ a..b }}', '{{ a..b }}', 0],
    ['whitespace around a dot', '{{ a . b }}', '{{ a . b }}', 0],
    ['a name starting with a digit', '{{ 1a }}', '{{ 1a }}', 0],
    ['an expression', '{{ n + 1 }}', '{{ n + 1 }}', 0],
    ['a filter', '{{ tool | upper }}', '{{ tool | upper }}', 0],
    ['not in a binding', '{{ not ok }}', '{{ not ok }}', 0],
    ['a triple brace', '{{{ tool }}}', '{{{ tool }}', 0],
    ['a non-ASCII letter', '{{ café }}', '{{ café }}', 0],
    ['a no-break space (not ws)', '{{\u00a0tool }}', '{{\u00a0tool }}', 0],
    ['an unterminated binding', 'a {{ tool', '{{ tool', 2],
    ['a bare {{ at the end', 'a {{', '{{', 2],
    ['a binding closed by %}', '{{ tool %}', '{{ tool %}', 0],
    ['if without a name', '{% if %}', '{% if %}', 0],
    ['elif', '{% if ok %}a{% elif n %}b{% endif %}', '{% elif n %}', 12],
    ['an unknown tag', '{% for x in tags %}', '{% for x in tags %}', 0],
    ['a tag with no keyword', '{%%}', '{%%}', 0],
    ['an upper-case keyword', '{% IF ok %}{% ENDIF %}', '{% IF ok %}', 0],
    ['if glued to its name', '{%ifx%}{%endif%}', '{%ifx%}', 0],
    ['endif glued to a name', '{% if ok %}{% endifok %}', '{% endifok %}', 11],
    ['a call in a conditional', '{% if tool_arg_string("x") %}{% endif %}', '{% if tool_arg_string("x") %}', 0],
    ['two names in a conditional', '{% if ok n %}{% endif %}', '{% if ok n %}', 0],
    ['an unterminated tag', 'x {% if ok', '{% if ok', 2],
    ['a bare {% at the end', 'x {%', '{%', 2],
    ['else outside an if', 'a {% else %} b', '{% else %}', 2],
    ['endif without if', 'a {% endif %}', '{% endif %}', 2],
    ['endif after the conditional closed', '{% if ok %}{% endif %}{% endif %}', '{% endif %}', 22],
    ['a second else', '{% if ok %}a{% else %}b{% else %}c{% endif %}', '{% else %}', 23],
    ['a missing endif', 'a {% if ok %} b', '{% if ok %}', 2],
    ['a missing inner endif', '{% if ok %}{% if n %}x{% endif %}', '{% if ok %}', 0],
  ];
  for (const [what, text, construct, offset] of cases) {
    it(`[OAR-COPY-3] rejects ${what}: ${JSON.stringify(text)}`, () => {
      const r = rejection(text);
      expect(r.construct).toBe(construct);
      expect(r.offset).toBe(offset);
    });
  }

  it('[OAR-COPY-3] the offset of a rejected construct counts code points', () => {
    const r = rejection('😀😀 {{ }}');
    expect(r.offset).toBe(3);
    expect(r.construct).toBe('{{ }}');
  });

  it('[OAR-COPY-3] a very long unterminated construct is shortened in the message, not the offset', () => {
    const r = rejection('ok {{ tool ' + 'x'.repeat(500));
    expect(r.offset).toBe(3);
    expect(r.construct.startsWith('{{ tool xxx')).toBe(true);
    expect(r.construct.endsWith('…')).toBe(true);
    expect(r.message.length).toBeLessThan(300);
  });
});

describe('copy load-time checks', () => {
  it('[OAR-COPY-2] rejects an undeclared name, naming it at its offset', () => {
    const { errors } = checkCopy(nodes('Tool {{ tool_nme }} failed'), table);
    expect(errors).toEqual([
      { clause: 'OAR-COPY-2', message: expect.stringContaining('tool_nme'), token: 'tool_nme', offset: 8 },
    ]);
  });

  it('[OAR-COPY-2] rejects an undeclared name in a conditional, and in a nested branch', () => {
    const { errors } = checkCopy(nodes('{% if missing %}{% else %}{% if not ok %}{{ also }}{% endif %}{% endif %}'), table);
    expect(errors.map((e) => [e.clause, e.token])).toEqual([
      ['OAR-COPY-2', 'missing'],
      ['OAR-COPY-2', 'also'],
    ]);
  });

  it('[OAR-COPY-2] a reserved word of the condition language is not a fact either', () => {
    const { errors } = checkCopy(nodes('{{ true }}'), table);
    expect(errors).toMatchObject([{ clause: 'OAR-COPY-2', token: 'true' }]);
  });

  it('[OAR-FACT-27] an observation function name is not a fact, in a binding or a conditional', () => {
    const { errors, facts } = checkCopy(nodes('{{ tool_arg_string }}{% if tool_arg_string %}{% endif %}'), table);
    expect(errors).toHaveLength(2);
    for (const e of errors) {
      expect(e.clause).toBe('OAR-COPY-2');
      expect(e.token).toBe('tool_arg_string');
      expect(e.message).toContain('tool_arg_string');
      expect(e.message).toContain('function');
    }
    expect(facts).toEqual([]);
  });

  it('[OAR-COPY-4] rejects a binding of a map, map<string,string> or list<map> fact, naming it', () => {
    for (const name of ['args', 'headers', 'spans']) {
      const { errors } = checkCopy(nodes(`x {{ ${name} }}`), table);
      expect(errors).toEqual([
        { clause: 'OAR-COPY-4', message: expect.stringContaining(name), token: name, offset: 5 },
      ]);
    }
  });

  it('[OAR-COPY-4] accepts a binding of every interpolable type', () => {
    const { errors } = checkCopy(nodes('{{tool}}{{ok}}{{n}}{{score}}{{tags}}'), table);
    expect(errors).toEqual([]);
  });

  it('[OAR-FACT-25] a conditional may test a fact of any type, maps included', () => {
    const { errors } = checkCopy(nodes('{% if args %}{% endif %}{% if headers %}{% endif %}{% if not spans %}{% endif %}'), table);
    expect(errors).toEqual([]);
  });

  it('[OAR-COPY-5] lists every referenced fact once, in first-occurrence order, from every branch', () => {
    const ns = nodes('{{ tool }} {% if ok %}{{ n }}{% else %}{{ acme.team }}{{ tool }}{% endif %}{% if not args %}{{ n }}{% endif %}');
    const { facts, errors } = checkCopy(ns, table);
    expect(errors).toEqual([]);
    expect(facts.map((f) => f.name)).toEqual(['tool', 'ok', 'n', 'acme.team', 'args']);
    expect(facts[3]).toMatchObject({ kind: 'fact', tier: { kind: 'host' }, type: 'string' });
  });

  it('[OAR-COPY-5] a fact with a rejected binding is still a reference', () => {
    const { facts, errors } = checkCopy(nodes('{{ args }}'), table);
    expect(errors).toHaveLength(1);
    expect(facts.map((f) => f.name)).toEqual(['args']);
  });

  it('[OAR-COPY-2] compiling an unchecked template is a compiler bug and throws', () => {
    expect(() => compileCopyTemplate(nodes('{{ nope }}'), table)).toThrow(/nope/);
    expect(() => compileCopyTemplate(nodes('{{ args }}'), table)).toThrow(/args/);
  });
});

describe('copy rendering: interpolation [OAR-COPY-4]', () => {
  it('[OAR-COPY-4] a string as itself', () => {
    expect(render('tool={{ tool }}', { tool: 'Bash' })).toBe('tool=Bash');
  });

  it('[OAR-COPY-4] a bool as true or false', () => {
    expect(render('{{ ok }}', { ok: true })).toBe('true');
    expect(render('{{ ok }}', { ok: false })).toBe('false');
  });

  it('[OAR-COPY-4] an int as a base-10 integer, number or bigint', () => {
    expect(render('{{ n }}', { n: 42 })).toBe('42');
    expect(render('{{ n }}', { n: -7 })).toBe('-7');
    expect(render('{{ n }}', { n: 9007199254740991 })).toBe('9007199254740991');
    expect(render('{{ n }}', { n: 2n ** 63n - 1n })).toBe('9223372036854775807');
    expect(render('{{ n }}', { n: -(2n ** 63n) })).toBe('-9223372036854775808');
    expect(interpolate('int', 9007199254740993n)).toBe('9007199254740993');
    expect(interpolate('int', -0)).toBe('0');
    // A non-canonical integral number beyond 2^53 is exact, and never printed in exponent form.
    expect(interpolate('int', 1e21)).toBe('1000000000000000000000');
  });

  it('[OAR-COPY-10] a double in canonical decimal form', () => {
    const cases: [number, string][] = [
      [1e21, '1000000000000000000000.0'],
      [1e-7, '0.0000001'],
      [-0, '0.0'],
      [0, '0.0'],
      [2.5, '2.5'],
      [-2.5, '-2.5'],
      [1, '1.0'],
      [0.1, '0.1'],
    ];
    for (const [x, s] of cases) {
      expect(render('{{ score }}', { score: x })).toBe(s);
      expect(interpolate('double', x)).toBe(s);
    }
  });

  it('[OAR-COPY-4] a list<string> joined by ", "; the empty list is the empty string', () => {
    expect(render('[{{ tags }}]', { tags: ['a', 'b', 'c'] })).toBe('[a, b, c]');
    expect(render('[{{ tags }}]', { tags: ['only'] })).toBe('[only]');
    expect(render('[{{ tags }}]', { tags: [] })).toBe('[]');
    expect(render('[{{ tags }}]', { tags: ['', ''] })).toBe('[, ]');
  });

  it('[OAR-COPY-7] a fact the host did not report renders as its zero value', () => {
    expect(render('{{ tool }}|{{ ok }}|{{ n }}|{{ score }}|{{ tags }}')).toBe('|false|0|0.0|');
  });
});

describe('copy rendering: conditionals [OAR-COPY-3]', () => {
  it('[OAR-COPY-3] if without else, with and without not', () => {
    expect(render('a{% if ok %}b{% endif %}c', { ok: true })).toBe('abc');
    expect(render('a{% if ok %}b{% endif %}c', { ok: false })).toBe('ac');
    expect(render('a{% if not ok %}b{% endif %}c', { ok: false })).toBe('abc');
    expect(render('a{% if not ok %}b{% endif %}c', { ok: true })).toBe('ac');
  });

  it('[OAR-COPY-3] if with else, with and without not', () => {
    const t = '{% if ok %}yes{% else %}no{% endif %}';
    const f = '{% if not ok %}yes{% else %}no{% endif %}';
    expect(render(t, { ok: true })).toBe('yes');
    expect(render(t, {})).toBe('no');
    expect(render(f, { ok: true })).toBe('no');
    expect(render(f, {})).toBe('yes');
  });

  it('[OAR-COPY-3] nested conditionals with bindings', () => {
    const t = '{% if ok %}{% if not n %}none{% else %}{{ n }} calls{% endif %} by {{ tool }}{% else %}off{% endif %}.';
    expect(render(t, { ok: true, n: 0, tool: 'Bash' })).toBe('none by Bash.');
    expect(render(t, { ok: true, n: 3, tool: 'Bash' })).toBe('3 calls by Bash.');
    expect(render(t, { ok: false, n: 3 })).toBe('off.');
  });

  it('[OAR-FACT-25] zero values take the else branch; everything else takes the if branch', () => {
    const cases: [string, unknown, boolean][] = [
      ['ok', false, false],
      ['ok', true, true],
      ['n', 0, false],
      ['n', -0, false],
      ['n', 1, true],
      ['n', -1, true],
      ['n', 2n ** 62n, true],
      ['score', 0, false],
      ['score', -0, false],
      ['score', 0.5, true],
      ['score', -1e-300, true],
      ['tool', '', false],
      ['tool', ' ', true],
      ['tags', [], false],
      ['tags', [''], true],
      ['args', {}, false],
      ['args', { k: 1 }, true],
      ['args', Object.create({ inherited: 1 }), false],
      ['args', new Map(), false],
      ['args', new Map([['k', 1]]), true],
      ['headers', {}, false],
      ['headers', { k: 'v' }, true],
      ['headers', new Map([['k', 'v']]), true],
      ['spans', [], false],
      ['spans', [{ start: 0, end: 1 }], true],
    ];
    for (const [name, value, nonzero] of cases) {
      const out = render(`{% if ${name} %}Y{% else %}N{% endif %}`, { [name]: value });
      expect(out, `${name} = ${String(value)}`).toBe(nonzero ? 'Y' : 'N');
      expect(isZero(value)).toBe(!nonzero);
    }
  });

  it('[OAR-COPY-3] not is compiled away by swapping branches', () => {
    const slot = table.lookup('ok')!.slot;
    expect(program('{% if not ok %}a{% else %}b{% endif %}')).toEqual([{ test: slot, nonzero: ['b'], zero: ['a'] }]);
  });

  it('[OAR-FACT-11] a fact named only in the untaken branch is not read', () => {
    const p = program('{% if ok %}{{ tool }}{% else %}{{ n }}{% endif %}');
    const reader = new RecordingReader({ ok: true, tool: 'x' }, { n: new Raise('provider_failure', 'n is broken') });
    expect(renderCopy(p, reader)).toBe('x');
    expect(reader.reads).toEqual(['ok', 'tool']);
  });
});

describe('copy rendering: failures propagate [OAR-FACT-26] [OAR-COPY-11]', () => {
  it('[OAR-FACT-26] a wrong-typed fact value raises wrong_type, in a binding and in a conditional', () => {
    const bind = program('{{ n }}');
    const cond = program('{% if tags %}x{% endif %}');
    for (const [p, values] of [
      [bind, { n: 'seven' }],
      [bind, { n: 1.5 }],
      [cond, { tags: 'a, b' }],
      [cond, { tags: [1] }],
    ] as const) {
      let thrown: unknown;
      try {
        renderCopy(p, new ObjectFactReader(table, values));
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(Raise);
      expect((thrown as Raise).code).toBe('wrong_type');
    }
  });

  it('[OAR-FACT-26] interpolate never coerces a value of the wrong shape', () => {
    const bad: [Parameters<typeof interpolate>[0], unknown][] = [
      ['string', 5],
      ['string', null],
      ['bool', 'true'],
      ['bool', 0],
      ['int', 1.5],
      ['int', '3'],
      ['double', Number.NaN],
      ['double', Number.POSITIVE_INFINITY],
      ['double', '2.5'],
      ['list<string>', 'a'],
      ['list<string>', ['a', 1]],
      ['list<string>', ['a', null]],
    ];
    for (const [type, value] of bad) {
      expect(() => interpolate(type, value), `${type} ${String(value)}`).toThrow(Raise);
    }
    expect(() => isZero(null)).toThrow(Raise);
    expect(() => isZero(undefined)).toThrow(Raise);
  });

  it('[OAR-COPY-11] a provider failure propagates as the same Raise, never a zero', () => {
    const failure = new Raise('provider_failure', 'detector down');
    const reader = new RecordingReader({}, { score: failure });
    let thrown: unknown;
    try {
      renderCopyObject({ title: program('Blocked'), why: program('score {{ score }}') }, reader);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBe(failure);
  });
});

describe('copy objects [OAR-COPY-7]', () => {
  it('[OAR-COPY-7] renders the members the rule wrote and leaves the rest absent', () => {
    const out = renderCopyObject(
      { why: program('{{ n }} calls'), title: program('Stop {{ tool }}'), fix: program('') },
      new ObjectFactReader(table, { tool: 'Bash', n: 4 }),
    );
    expect(out).toEqual({ title: 'Stop Bash', why: '4 calls', fix: '' });
    expect(Object.keys(out)).toEqual(['title', 'why', 'fix']); // the closed member order of [OAR-DOC-24]
    expect('what' in out).toBe(false);
    expect('instead' in out).toBe(false);
  });

  it('[OAR-COPY-7] a rule without copy members renders an empty object', () => {
    expect(renderCopyObject({}, new ObjectFactReader(table, {}))).toEqual({});
  });

  it('[OAR-COPY-9] rendering is independent per call: each render reads its own environment', () => {
    const p = program('{{ tool }}');
    expect(renderCopyObject({ title: p }, new ObjectFactReader(table, { tool: 'A' }))).toEqual({ title: 'A' });
    expect(renderCopyObject({ title: p }, new ObjectFactReader(table, { tool: 'B' }))).toEqual({ title: 'B' });
  });
});

describe('copy text is data, never code', () => {
  const hostile = [
    '</script><script>alert(1)</script>',
    'line\u2028separator\u2029paragraph',
    'back\\slash \\n \\u0041 \\',
    '${process.exit(1)} `tick` ${}',
    '"double" \'single\' \u0000 nul',
    '😀 non-BMP 𝄞 and combining é',
  ];

  it('[OAR-COPY-1] hostile literal text renders verbatim', () => {
    for (const text of hostile) expect(render(text)).toBe(text);
    const all = hostile.join(' {{ tool }} ');
    expect(render(all, { tool: '' })).toBe(hostile.join('  '));
  });

  it('[OAR-COPY-4] hostile fact values interpolate verbatim, never re-parsed as template', () => {
    for (const v of [...hostile, '{{ tool }}', '{% if ok %}']) {
      expect(render('<{{ tool }}>', { tool: v })).toBe(`<${v}>`);
      expect(render('{{ tags }}', { tags: [v, v] })).toBe(`${v}, ${v}`);
    }
  });

  it('[OAR-COPY-1] a compiled program survives JSON round-tripping (it is embedded as a literal)', () => {
    const text = hostile.join('{% if ok %}{{ n }}{% else %}{{ tags }}{% endif %}');
    const p = program(text);
    const copy = JSON.parse(JSON.stringify(p)) as CopyProgram;
    expect(copy).toEqual(p);
    const values = { ok: true, n: 3, tags: ['x'] };
    expect(renderCopy(copy, new ObjectFactReader(table, values))).toBe(renderCopy(p, new ObjectFactReader(table, values)));
    expect(renderCopy(copy, new ObjectFactReader(table, values))).toBe(hostile.join('3'));
  });

  it('[OAR-COPY-4] non-BMP text around a binding is preserved', () => {
    expect(render('😀{{ tool }}𝄞', { tool: '🚀' })).toBe('😀🚀𝄞');
  });
});
