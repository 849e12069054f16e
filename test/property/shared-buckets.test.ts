/**
 * Decision procedures share one function among buckets of one shape (compiler/emit/procedure.ts):
 * the generated packs of packs.test.ts have a handful of rules, so nearly every bucket there has a
 * shape of its own and sharing goes untested. Here each generated pack is repeated for several
 * tenants — namespaces renamed, references rewritten, each tenant's rules selected by its own
 * `principal` — as real packs repeat their rule kinds, so most buckets share. Required on every
 * pack: each bucket's data holds, at every `R[k]` its function reads, a datum of the kind read
 * there (a closure called, a rule index passed, a string), and nothing more; and on every
 * occurrence the specialised procedures, the generic engine and the interpreter decide alike.
 *
 * Replay: OARC_PROPERTY_SEED / OARC_PROPERTY_RUNS / OARC_PROPERTY_PATH, as packs.test.ts.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import { parse as acornParse } from 'acorn';
import { stringify as yamlStringify } from 'yaml';
import { compile, compileToBundle, loadPackTexts, type Backend, type LoadedPack } from '../../compiler/index.js';
import { createEngine, type Engine } from '../../runtime/engine.js';
import { MemoryCounterStore } from '../../runtime/counters.js';
import { HostInputError } from '../../runtime/host-input.js';
import { packCaseArb } from './pack-generators.js';
import { propertyConfig, runProperty } from './run.js';

const CONFIG = propertyConfig(1107, 150);
const TENANTS = 3;
/** The generator's namespaces (pack-generators.ts NAMESPACES), as qualified references spell them. */
const NAMESPACES = ['acme.sec', 'acme', 'b-2'];

type Doc = Record<string, unknown>;

function retenant(v: unknown, t: number): unknown {
  if (typeof v === 'string') return NAMESPACES.reduce((s, ns) => s.split(`${ns}/`).join(`${ns}-t${t}/`), v);
  if (Array.isArray(v)) return v.map((x) => retenant(x, t));
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, retenant(x, t)]));
  return v;
}

function tenants(docs: readonly Doc[]): Doc[] {
  const out: Doc[] = [];
  for (let t = 0; t < TENANTS; t++) {
    for (const d of docs) {
      const e = retenant(d, t) as Doc;
      e.namespace = d.namespace === undefined ? `t${t}` : `${String(d.namespace)}-t${t}`;
      e.selector = { ...((e.selector as Doc | undefined) ?? {}), principal: [`p${t}`] };
      const requires = (e.requires as { profiles?: string[] } | undefined) ?? {};
      e.requires = { ...requires, profiles: [...new Set([...(requires.profiles ?? []), 'session'])] };
      out.push(e);
    }
  }
  return out;
}

interface Node {
  type: string;
  [k: string]: unknown;
}

function nodes(n: Node, visit: (node: Node, parent: Node | null, key: string | null) => void, parent: Node | null = null, key: string | null = null): void {
  visit(n, parent, key);
  for (const k of Object.keys(n)) {
    const v = n[k];
    for (const c of Array.isArray(v) ? v : [v]) if (c !== null && typeof c === 'object' && typeof (c as Node).type === 'string') nodes(c as Node, visit, n, k);
  }
}

/** Each `B<n> = [T<m>, …]` holds, at each `R[k]` that `T<m>` reads, the kind of datum read there. */
function checkLayout(code: string): { shapes: number; buckets: number } {
  const program = acornParse(code, { ecmaVersion: 2022, sourceType: 'module' }) as unknown as { body: Node[] };
  const reads = new Map<string, Map<number, string>>();
  const buckets: { name: string; fn: string; elements: Node[] }[] = [];
  for (const st of program.body) {
    if (st.type !== 'VariableDeclaration') continue;
    const d = (st.declarations as Node[])[0] as Node;
    const name = (d.id as Node).name as string;
    const init = d.init as Node;
    if (/^T\d+$/.test(name)) {
      const uses = new Map<number, string>();
      nodes(init, (n, parent, key) => {
        if (n.type !== 'MemberExpression' || n.computed !== true || (n.object as Node).name !== 'R') return;
        const k = (n.property as Node).value as number;
        const kind = parent?.type === 'CallExpression' ? (key === 'callee' ? 'closure' : 'number') : 'string';
        expect(uses.get(k) ?? kind, `${name} reads R[${k}] as two kinds`).toBe(kind);
        uses.set(k, kind);
      });
      reads.set(name, uses);
    } else if (/^B\d+$/.test(name)) {
      const elements = init.elements as Node[];
      buckets.push({ name, fn: (elements[0] as Node).name as string, elements });
    }
  }
  for (const b of buckets) {
    const uses = reads.get(b.fn);
    expect(uses, `${b.name} names ${b.fn}, which is not a bucket function`).toBeDefined();
    for (const [k, kind] of uses as Map<number, string>) {
      const e = b.elements[k] as Node | undefined;
      expect(e === undefined ? 'missing' : e.type === 'Identifier' ? 'closure' : typeof e.value, `${b.name} R[${k}]`).toBe(kind);
    }
    expect(b.elements.length - 1, `${b.name} holds only what ${b.fn} reads`).toBe(Math.max(0, ...(uses as Map<number, string>).keys()));
  }
  return { shapes: reads.size, buckets: buckets.length };
}

function decide(e: Engine, occ: Parameters<Engine['decide']>[0]): unknown {
  try {
    return e.decide(occ);
  } catch (x) {
    if (x instanceof HostInputError) return { refused: x.message };
    throw x;
  }
}

describe('[OAR-EVAL-1] [OAR-EVAL-6] [OAR-EVAL-18] decision procedures: buckets sharing a function decide as the generic engine and the interpreter', () => {
  it(`tenant-repeated packs: every bucket's data fits its function, and three back ends agree (seed ${CONFIG.seed})`, () => {
    let sharing = 0;
    let procedures = 0;
    const engine = (p: LoadedPack, b: Backend) => createEngine(compileToBundle(p, b), { counters: new MemoryCounterStore() });
    const arb = packCaseArb.chain((c) =>
      fc.array(fc.constantFrom(...Array.from({ length: TENANTS }, (_, t) => `p${t}`), 'nobody'), { minLength: c.occurrences.length, maxLength: c.occurrences.length }).map((who) => ({ c, who })),
    );
    runProperty(CONFIG, 'shared buckets', arb, ({ c, who }) => {
      const docs = tenants(c.pack.docs);
      const rules = docs.map((d) => yamlStringify(d));
      const r = loadPackTexts({ capability: c.pack.capability, rules });
      if (!r.ok) throw new Error(`a tenant-repeated pack does not load: ${r.diagnostics.slice(0, 3).map((d) => d.message).join('; ')}`);
      const layout = checkLayout(compile(r.pack));
      if (layout.buckets > layout.shapes) sharing++;
      const specialised = engine(r.pack, 'specialised');
      const generic = engine(r.pack, 'compiled');
      const interpreter = engine(r.pack, 'interpreter');
      c.occurrences.forEach((occ0, k) => {
        const occ = { ...occ0, facts: { ...(occ0.facts ?? {}), principal: who[k] } };
        const fallbacks = (specialised as unknown as { procedureFallbacks: number }).procedureFallbacks;
        const [a, b, i] = [decide(specialised, occ), decide(generic, occ), decide(interpreter, occ)];
        if (!isDeepStrictEqual(b, i) || !isDeepStrictEqual(a, b)) {
          throw new Error(`back ends differ at occurrence ${k}\nspecialised ${JSON.stringify(a)}\ngeneric     ${JSON.stringify(b)}\ninterpreter ${JSON.stringify(i)}\n${rules.join('---\n')}`);
        }
        if ((specialised as unknown as { procedureFallbacks: number }).procedureFallbacks === fallbacks) procedures++;
      });
    }, CONFIG.runs, 'npx vitest run test/property/shared-buckets.test.ts');
    // The property is about sharing: most packs must share, and most decisions come from procedures.
    expect(sharing).toBeGreaterThan(CONFIG.runs / 2);
    expect(procedures).toBeGreaterThan(0);
  }, 600_000);
});
