/**
 * `check` ≡ `compile`: whatever the loader accepts, the emitter compiles and the bundle runs — at
 * the limits the loader enforces, and just past them, where the loader must be the one to refuse.
 * A copy template has no limit but the file size, so its emitted concatenation must not nest as
 * deep as it is long (astring and acorn recurse over the tree).
 */
import { describe, expect, it } from 'vitest';
import { compile, compileToBundle, createEngine, loadPackTexts, type LoadedPack } from '../compiler/index.js';
import { capability, rule } from './load/fixtures.js';

function load(over: Record<string, unknown>): ReturnType<typeof loadPackTexts> {
  return loadPackTexts({ capability: JSON.stringify(capability()), rules: [JSON.stringify(rule({ requires: { profiles: ['tool'] }, ...over }))] });
}

function loaded(over: Record<string, unknown>): LoadedPack {
  const r = load(over);
  if (!r.ok) throw new Error(r.diagnostics.map((d) => d.message).join('\n'));
  return r.pack;
}

const decide = (pack: LoadedPack, backend: 'compiled' | 'interpreter' = 'compiled') =>
  createEngine(compileToBundle(pack, backend)).decide({ anchor: 'tool.pre_invoke', facts: { policy_denied: true }, toolCall: { name: 'bash', arguments: {} } });

describe('check ≡ compile: a copy of any length compiles', () => {
  it('[OAR-COPY-4] a copy with 10,000 bindings compiles to a module and renders every binding', () => {
    const pack = loaded({ copy: { what: 'x {{ tool }}'.repeat(10_000) } });
    expect(compile(pack).length).toBeGreaterThan(10_000);
    expect(decide(pack).copy?.what).toBe('x bash'.repeat(10_000));
    expect(decide(pack, 'interpreter').copy?.what).toBe('x bash'.repeat(10_000));
  });

  it('short copy keeps its one left-to-right chain', () => {
    const text = compile(loaded({ copy: { what: 'a {{ tool }} b {{ tool }} c' } }));
    expect(text).toContain('"a " + copyString(f.fact(');
    expect(text).not.toMatch(/\+ \(/);
  });
});

describe('check ≡ compile: conditions at the limits of [OAR-EXPR-17]', () => {
  const or = (k: number) => Array.from({ length: k }, () => 'policy_denied').join(' || ');

  it('1,024 nodes (the most a host may declare) load, compile and decide; 1,025 are refused by the loader', () => {
    const at = loaded({ when: `!${or(512)}` }); // 512 identifiers, 511 `||`, one `!`
    expect(at.rules[0]?.when?.nodes).toBe(1024);
    expect(() => compile(at)).not.toThrow();
    expect(decide(at).decision).toBe('block');
    const over = load({ when: or(513) });
    expect(over.ok).toBe(false);
    if (!over.ok) expect(over.diagnostics.map((d) => d.clause)).toEqual(['OAR-EXPR-17']);
  });

  it('the deepest nesting the parser allows (255 ternaries in parentheses, 512 levels) compiles and decides; one more is refused', () => {
    const nest = (n: number) => {
      let when = 'policy_denied';
      for (let i = 0; i < n; i++) when = `policy_denied ? (${when}) : false`;
      return when;
    };
    const pack = loaded({ when: nest(255) });
    expect(() => compile(pack)).not.toThrow();
    expect(decide(pack).decision).toBe('block');
    expect(decide(pack, 'interpreter').decision).toBe('block');
    const over = load({ when: nest(256) });
    expect(over.ok).toBe(false);
    if (!over.ok) expect(over.diagnostics.map((d) => d.clause)).toEqual(['OAR-EXPR-17']);
  });
});

describe('compileToBundle: the backend argument', () => {
  const pack = () => loaded({});
  it('a misspelt backend from JavaScript is an error naming it, the accepted ones and the one meant', () => {
    expect(() => compileToBundle(pack(), 'interpeter' as never)).toThrow(
      'compileToBundle: unknown backend "interpeter" (did you mean `interpreter`?); pass one of specialised, compiled, interpreter, or leave it out for specialised',
    );
    expect(() => compileToBundle(pack(), 'fast' as never)).toThrow('compileToBundle: unknown backend "fast"; pass one of specialised, compiled, interpreter');
  });
  it('each accepted backend, and none, still compiles', () => {
    for (const b of ['specialised', 'compiled', 'interpreter', undefined] as const) expect(compileToBundle(pack(), b).rules.length).toBe(1);
  });
});
