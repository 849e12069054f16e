/**
 * The fast reader for plain rule YAML (compiler/load/yaml-fast.ts) against its oracle, the full
 * `yaml` pipeline (`parseSource(…, { fullYaml: true })`): wherever the fast reader gives an answer,
 * it must be the full pipeline's — the same documents, values (key order, `-0`, big integers,
 * `__proto__` as data), indexes, collection flags and document positions, and the full pipeline
 * must have nothing to say about the text. Where it is unsure it must say so (undefined), and the
 * text is read as before. Checked on every YAML file in the repository, on generated packs, on
 * random documents printed in random styles, and on those documents mutated a character at a time.
 * Each check also counts what the fast reader accepted, so a reader that gave up on everything
 * (and so agreed vacuously) fails.
 *
 * Replay: OARC_PROPERTY_SEED / OARC_PROPERTY_RUNS, as the other property tests.
 */
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseSource, type ParseOptions } from '../../compiler/load/source.js';
import { fastYaml } from '../../compiler/load/yaml-fast.js';
import { generatePack, packTexts } from '../../bench/packs.js';
import { packageRoot } from '../../examples/root.js';

const RUNS = Number(process.env.OARC_PROPERTY_RUNS ?? 1000);
const SEED = process.env.OARC_PROPERTY_SEED === undefined ? undefined : Number(process.env.OARC_PROPERTY_SEED);

/** A value's exact form: types, `-0`, bigint, key order, own `__proto__`, plain prototypes. */
function canon(v: unknown): string {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'number':
      return Object.is(v, -0) ? '-0' : String(v);
    case 'bigint':
      return `${v}n`;
    case 'string':
      return JSON.stringify(v);
    case 'boolean':
      return String(v);
    case 'object':
      if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
      if (Object.getPrototypeOf(v) !== Object.prototype) return '<not a plain object>';
      return `{${Reflect.ownKeys(v)
        .map((k) => `${JSON.stringify(String(k))}:${canon((v as Record<string, unknown>)[k as string])}`)
        .join(',')}}`;
    default:
      return `<${typeof v}>`;
  }
}

interface Outcome {
  accepted: boolean;
}

/** Compares the two readers on `text`; throws (via expect) on any disagreement. */
function agree(text: string, file = 'doc.yaml', opts: ParseOptions = {}): Outcome {
  const fast = fastYaml(text, { maxDepth: opts.maxDepth ?? 64, bigInts: opts.bigInts === true, expand: opts.expandSequences !== false });
  if (fast === undefined) return { accepted: false };
  const full = parseSource(text, file, { ...opts, fullYaml: true });
  const context = `text:\n${text}`;
  expect(full.diagnostics, context).toEqual([]);
  expect(fast.length, context).toBe(full.docs.length);
  const viaFast = parseSource(text, file, opts);
  expect(viaFast.diagnostics, context).toEqual([]);
  fast.forEach((d, k) => {
    const f = full.docs[k]!;
    expect(canon(d.value), context).toBe(canon(f.value));
    expect([d.index, d.inCollection], context).toEqual([f.index, f.inCollection]);
    expect(viaFast.docs[k]!.locate([]), context).toEqual(f.locate([]));
  });
  return { accepted: true };
}

describe('yaml-fast: agrees with the yaml package wherever it answers [OAR-DOC-1] [OAR-DOC-31]', () => {
  it('on every YAML file in the repository', () => {
    const files = execFileSync('git', ['ls-files', '*.yaml', '*.yml'], { cwd: packageRoot(), encoding: 'utf8' }).split('\n').filter(Boolean);
    expect(files.length).toBeGreaterThan(10);
    let accepted = 0;
    for (const f of files) {
      const text = readFileSync(`${packageRoot()}/${f}`, 'utf8').replace(/^\ufeff/, '');
      if (agree(text, f).accepted) accepted++;
    }
    // Most of the project's own rule files are plain YAML; the rest exercise what is not.
    expect(accepted).toBeGreaterThan(files.length / 2);
  });

  it('on generated gateway packs, which it reads whole (what the compile benchmark relies on)', () => {
    for (const seed of [1, 2, 3]) {
      const texts = packTexts(generatePack(60, seed));
      for (const [i, t] of [texts.capability, ...texts.rules].entries()) expect(agree(t, `r${i}.yaml`).accepted, t).toBe(true);
    }
  });

  it('positions other than a document’s own come from the full pipeline, on demand', () => {
    const text = ['# a rule', 'oar: "1.0"', 'id: A', 'when: "x > 1"', 'copy:', '  what: "hi {{ tool }}"', 'selector: { tool: [a, b] }', ''].join('\n');
    expect(fastYaml(text, { maxDepth: 64, bigInts: false, expand: true })).toBeDefined();
    const fast = parseSource(text, 'r.yaml').docs[0]!;
    const full = parseSource(text, 'r.yaml', { fullYaml: true }).docs[0]!;
    for (const path of [[], ['id'], ['copy', 'what'], ['selector', 'tool', 1], ['missing'], ['copy', 'nope']]) {
      expect(fast.locate(path), String(path)).toEqual(full.locate(path));
    }
    expect(fast.locateText(['when'], 2, 1)).toEqual(full.locateText(['when'], 2, 1));
    expect(fast.locateText(['copy', 'what'], 3, 8)).toEqual(full.locateText(['copy', 'what'], 3, 8));
  });

  it('answers for each form of the subset, and leaves each form outside it to the full reader', () => {
    const inSubset = [
      'a: 1\nb: -2.5e3\nc: .5\nd: +7\ne: 0x1F\nf: 0o17\ng: 007\nh: -0\ni: 1.\n',
      'a: null\nb: ~\nc: Null\nd: NULL\ne: nUll\nf: true\ng: False\nh: tRUE\ni:\n',
      'true: 1\nnull: 2\n1.0: 3\n0x1: 4\n~: 5\n__proto__: 6\n',
      'a: "esc \\" \\\\ \\n \\t \\x41 \\u00e9 \\U0001F600 \\/ \\_ \\N \\L \\P \\0 \\e"\nb: \'it\'\'s\'\n',
      'a: plain, with [brackets] and {braces}\nb: a:b\nc: a #comment\nd: a#b\n',
      'list:\n- a\n- b\nnext:\n  - c\n  -   d: 1\n      e: 2\n  - - x\n    - y\n',
      'a: |\n  line 1\n    more\n  line 3\nb: |-\n  x\nc: >\n  folded\n  text\nd: >-\n  y\n',
      'f: { a: [1, "2", \'3\', { b: c }], "k": v, \'q\': [] }\ng: []\nh: {}\n',
      '- oar: "1.0"\n  id: A\n- oar: "1.0"\n  id: B\n',
      '# lead\n---\na: 1\n---\nb: 2\n',
      'a: 9007199254740993\nb: -9007199254740993\nc: 1e400x\n',
      'a: é 日本\n"quoted key": 1\n\'single key\': 2\n',
      'a: |\n  # not a comment\n  x\n# a comment\nb: 1\n',
      '- a:\n  - x\n  b:\n    c: 1\n- |\n  text\n',
      'f: {"a":1, b: [ c d , "e"]}\n',
    ];
    for (const t of inSubset) expect(agree(t).accepted, t).toBe(true);
    expect(agree('a: 9007199254740993\n', 'd.yaml', { bigInts: true }).accepted).toBe(true);
    expect(agree('- a\n- b\n', 'd.yaml', { expandSequences: false }).accepted).toBe(true);
    const outside = [
      'a: 1\r\nb: 2\r\n', // CR
      'a:\t1\n', // tab
      'a: &x 1\nb: *x\n', // anchor, alias
      'a: !!str 1\n', // tag
      'a: multi\n  line\n', // multi-line plain
      'a: "multi\n  line"\n', // multi-line quoted
      'a: 1\na: 2\n', // duplicate key
      'a: .inf\n', // not finite
      'a: 1e400\n', // not finite either
      'a: b: c\n', // an error
      'a: |+\n  x\n', // keep chomping
      'a: |\n  x\n\n  y\n', // blank line inside
      'a: |2\n   x\n', // indentation indicator
      '%YAML 1.2\n---\na: 1\n', // directive
      'a: 1\n...\n', // document end
      'a: 1\n---\n', // empty document
      '', // nothing
      '# only a comment\n',
      '[a, b]\n', // flow at the root
      'a: [b,\n  c]\n', // multi-line flow
      'a: [b, ]\n', // trailing comma
      'a: "\\q"\n', // unknown escape
      'a: 😀\n', // astral characters (surrogates)
      '? a\n: b\n', // explicit key
      'a: 1\n  b: 2\n', // more indented
      '-\n  a: 1\n', // item on the next line
    ];
    for (const t of outside) expect(fastYaml(t, { maxDepth: 64, bigInts: false, expand: true }), JSON.stringify(t)).toBeUndefined();
  });

  it('refuses nesting past maxDepth, leaving the error to the full reader', () => {
    const deep = (n: number) => Array.from({ length: n }, (_, i) => `${' '.repeat(2 * i)}k${i}:`).join('\n') + ' 1\n';
    expect(fastYaml(deep(5), { maxDepth: 64, bigInts: false, expand: true })).toBeDefined();
    expect(fastYaml(deep(70), { maxDepth: 64, bigInts: false, expand: true })).toBeUndefined();
    // Called directly with no useful bound, it still gives way rather than overflow the stack.
    expect(fastYaml(deep(20_000), { maxDepth: Infinity, bigInts: false, expand: true })).toBeUndefined();
    expect(parseSource(deep(70), 'd.yaml').diagnostics.map((d) => d.message).join()).toMatch(/nests deeper than 64/);
  });
});

// ---------------------------------------------------------------------------------------------
// Random documents in random styles, and their one-character mutations

type Tree = null | boolean | number | string | Tree[] | { [k: string]: Tree };

const TRICKY = [
  '', ' ', 'a', 'a b', 'a  ', ' a', '1', '-1', '+1', '-0', '0.0', '1.', '.5', '-.5', '1e3', '1E-3', '0x1F', '0o17', '007', '1_000',
  '9007199254740993', '.inf', '-.Inf', '.nan', 'null', 'Null', 'NULL', 'nUll', '~', 'true', 'True', 'TRUE', 'tRue', 'false', 'yes',
  'a: b', 'a:b', 'a:', ':a', 'a #b', 'a#b', '#a', '- a', '-a', '-1x', '?a', '? a', '[a]', 'a]', 'a, b', '{a}', 'a}', '"q"', "'",
  "it's", 'x"y', '\\', '\\n', 'é', '日本', '2001-12-14', '@a', '`a`', '%a', '!a', '&a', '*a', '|', '>', '<<', '---', '...', '__proto__',
  'line1\nline2', 'line1\n  line2\n', 'trail\n', '\n', 'a\u0085b', 'a\u00a0b',
];
const PLAIN = ['alpha', 'tool.pre_invoke', 'rm -rf', 'The {{ tool }} call', 'a, b', '/workspace/', 'x > 1 && y', 'block', 'detector://fixture', 'Don’t', 'size(x) > 0'];
const KEYS = ['a', 'b', 'id', 'oar', 'when', 'copy', 'x-vendor', 'a.b', 'a-b', 'a_b', '1', 'true', 'null', '~', '1.0', '__proto__', 'é', 'a b', 'a:b', '"k"', '-k', 'k#'];

const tree: fc.Arbitrary<Tree> = fc.letrec<{ t: Tree }>((tie) => ({
  t: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom<Tree>(...PLAIN),
    fc.constantFrom<Tree>(...PLAIN),
    fc.constantFrom<Tree>(...TRICKY),
    fc.constantFrom<Tree>(null, true, false, 0, -0, 1, -7, 2.5, 1e21, 9007199254740993, -1e-7),
    fc.string({ maxLength: 6 }),
    fc.array(tie('t'), { minLength: 1, maxLength: 4 }),
    fc.dictionary(fc.constantFrom(...KEYS), tie('t'), { minKeys: 1, maxKeys: 4 }),
  ),
})).t;

/** Printing choices, drawn per node from a stream of numbers. */
type Pick = (n: number) => number;

function scalarText(v: Tree, pick: Pick, indent: number): string {
  if (v === null) return ['null', '~', '', 'Null'][pick(4)]!;
  if (typeof v === 'boolean') return [String(v), v ? 'True' : 'FALSE'][pick(2)]!;
  if (typeof v === 'number') return [String(v), Object.is(v, -0) ? '-0' : String(v), JSON.stringify(String(v))][pick(3)]!;
  const s = v as string;
  switch (pick(5)) {
    case 0:
      // Plain: what a plain scalar may be most of the time, anything now and then.
      return /^[A-Za-z][\w .\/-]*\w$/.test(s) || pick(4) === 0 ? s : JSON.stringify(s);
    case 1:
      return JSON.stringify(s);
    case 2:
      return `'${s.replace(/'/g, "''")}'`;
    case 3: {
      if (!s.includes('\n')) return `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
      const pad = ' '.repeat(indent + 2);
      const header = ['|', '|-', '>', '>-'][pick(4)]!;
      return `${header}\n${s.split('\n').map((l) => pad + l).join('\n')}`;
    }
    default:
      return JSON.stringify(s).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  }
}

function flowText(v: Tree, pick: Pick): string {
  if (Array.isArray(v)) return `[${v.map((x) => flowText(x, pick)).join(pick(4) === 0 ? ',' : ', ')}]`;
  if (v !== null && typeof v === 'object') {
    const inner = Object.entries(v).map(([k, x]) => `${keyText(k, pick)}: ${flowText(x, pick)}`);
    return pick(2) === 0 ? `{ ${inner.join(', ')} }` : `{${inner.join(',')}}`;
  }
  return scalarText(v, pick, 0).split('\n')[0]!;
}

function keyText(k: string, pick: Pick): string {
  if (/[\s:#"'-]/.test(k) && pick(4) !== 0) return JSON.stringify(k);
  return [k, JSON.stringify(k), `'${k}'`][pick(3)]!;
}

/** Block YAML for `v` at `indent`, as the lines after a `key:` or `-`, or inline after it. */
function blockText(v: Tree, pick: Pick, indent: number): { inline?: string; lines?: string[] } {
  const pad = ' '.repeat(indent);
  if (Array.isArray(v) || (v !== null && typeof v === 'object')) {
    if (pick(4) === 0) return { inline: flowText(v, pick) };
    const lines: string[] = [];
    const entries: [string | undefined, Tree][] = Array.isArray(v) ? v.map((x) => [undefined, x]) : Object.entries(v);
    for (const [k, x] of entries) {
      const head = k === undefined ? `${pad}-${' '.repeat(1 + pick(2))}` : `${pad}${keyText(k, pick)}:`;
      const child = blockText(x, pick, indent + 2);
      if (child.inline !== undefined) {
        lines.push(k === undefined ? head + child.inline : `${head} ${child.inline}`);
      } else if (k === undefined && pick(2) === 0 && child.lines![0]!.startsWith(' '.repeat(indent + 2))) {
        lines.push(head + child.lines![0]!.trimStart(), ...child.lines!.slice(1)); // `- key: …` compact
      } else {
        lines.push(head, ...child.lines!);
      }
      if (pick(8) === 0) lines.push(`${' '.repeat(pick(6))}# a comment`);
      if (pick(10) === 0) lines.push('');
    }
    return { lines };
  }
  const text = scalarText(v, pick, indent - 2);
  return text.includes('\n') ? { inline: text } : { inline: text + (pick(6) === 0 ? '  # note' : '') };
}

function documentText(v: Tree, pick: Pick): string {
  const body = blockText(v, pick, 0);
  return `${body.lines ? body.lines.join('\n') : (body.inline ?? '')}\n`;
}

/** A root is a collection, mostly a mapping, as a rule document is. */
const root: fc.Arbitrary<Tree> = fc.oneof(
  { weight: 4, arbitrary: fc.dictionary(fc.constantFrom(...KEYS), tree, { minKeys: 1, maxKeys: 6 }) },
  { weight: 1, arbitrary: fc.array(tree, { minLength: 1, maxLength: 4 }) },
);

const printed = fc.tuple(fc.array(root, { minLength: 1, maxLength: 3 }), fc.array(fc.nat(1000), { minLength: 64, maxLength: 64 })).map(([docs, choices]) => {
  let i = 0;
  const pick: Pick = (n) => choices[i++ % choices.length]! % n;
  return docs.map((d, k) => (k > 0 || pick(5) === 0 ? '---\n' : '') + documentText(d, pick)).join('');
});

const MUTATIONS = [' ', ':', '-', '#', "'", '"', '[', ']', '{', '}', ',', '|', '>', '\n', '\\', '.', '0', 'e', '~', '&', '*', '!', '?'];

describe('yaml-fast: random documents [OAR-DOC-1]', () => {
  it('agree with the yaml package when printed in random styles', () => {
    let accepted = 0;
    let total = 0;
    fc.assert(
      fc.property(printed, (text) => {
        total++;
        if (agree(text).accepted) accepted++;
      }),
      { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }) },
    );
    // A reader that gave up on everything would agree vacuously.
    expect(accepted).toBeGreaterThan(total / 10);
  });

  it('agree with the yaml package after one-character edits', () => {
    let accepted = 0;
    let total = 0;
    fc.assert(
      fc.property(printed, fc.nat(), fc.constantFrom(...MUTATIONS), fc.nat(2), (text, at, ch, op) => {
        const i = at % (text.length + 1);
        const edited = op === 0 ? text.slice(0, i) + ch + text.slice(i) : op === 1 ? text.slice(0, i) + text.slice(i + 1) : text.slice(0, i) + ch + text.slice(i + 1);
        total++;
        if (agree(edited).accepted) accepted++;
      }),
      { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }) },
    );
    expect(accepted).toBeGreaterThan(total / 20);
  });
});
