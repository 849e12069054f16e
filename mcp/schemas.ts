/**
 * `--check-schemas`: the pack against the tools the server lists. A rule whose selector names a
 * tool the server does not have is never selected ([OAR-SEL-2]); a rule reading an argument the
 * tool's `inputSchema` does not declare reads its zero ([OAR-FACT-25]) and quietly never fires.
 * Both load and run without complaint, so the proxy reports them, with the nearest name.
 */
import type { Expr } from '../compiler/expr/ast.js';
import type { LoadedPack } from '../compiler/index.js';
import type { Bundle } from '../runtime/index.js';
import { closest, meantHint } from '../runtime/suggest.js';

export interface ListedTool {
  name: string;
  inputSchema?: { properties?: Record<string, unknown> } | undefined;
}

/** What a rule says about tools: the tools its selector names (undefined: every tool), the arguments it reads. */
export interface RuleToolUse {
  rule: string;
  source: string;
  tools: string[] | undefined;
  args: { name: string; via: string }[];
}

export interface SchemaProblem {
  rule: string;
  source: string;
  message: string;
}

const ARG_FUNCTIONS = new Set(['tool_arg_string', 'tool_arg_int', 'tool_arg_bool']);

/** The argument names a condition reads: `tool_arg_*("x")` and `"x" in tool_args` (a map's members cannot be indexed). */
export function argReads(e: Expr | undefined, out: { name: string; via: string }[] = []): { name: string; via: string }[] {
  if (e === undefined) return out;
  switch (e.type) {
    case 'call':
      if (ARG_FUNCTIONS.has(e.callee) && e.args[0]?.type === 'string') out.push({ name: e.args[0].value, via: `${e.callee}("${e.args[0].value}")` });
      for (const a of e.args) argReads(a, out);
      break;
    case 'binary':
      if (e.op === 'in' && e.left.type === 'string' && e.right.type === 'ident' && e.right.name === 'tool_args') out.push({ name: e.left.value, via: `"${e.left.value}" in tool_args` });
      argReads(e.left, out);
      argReads(e.right, out);
      break;
    case 'index':
      argReads(e.object, out);
      argReads(e.index, out);
      break;
    case 'unary':
      argReads(e.operand, out);
      break;
    case 'ternary':
      argReads(e.test, out);
      argReads(e.consequent, out);
      argReads(e.alternate, out);
      break;
    case 'list':
      for (const m of e.elements) argReads(m, out);
      break;
    default:
      break;
  }
  return out;
}

/** From rule documents: selectors and argument reads. */
export function usesOfPack(pack: LoadedPack): RuleToolUse[] {
  return pack.rules.map((r) => {
    const clause = r.selector.find((c) => c.fact.name === 'tool');
    const src = `${r.source.file}:${r.source.line}:${r.source.column}`;
    return { rule: r.qid, source: src, tools: clause === undefined ? undefined : [...clause.values], args: argReads(r.when?.ast) };
  });
}

/** From a compiled bundle: selectors only — its conditions are code, their argument reads not recoverable. */
export function usesOfBundle(bundle: Bundle): RuleToolUse[] {
  return bundle.rules.map((r) => {
    const clause = r.selector.find((c) => bundle.symbols[c.slot]?.name === 'tool');
    return { rule: r.qid, source: r.source, tools: clause === undefined ? undefined : [...clause.values], args: [] };
  });
}

const hint = meantHint;

export function checkSchemas(uses: readonly RuleToolUse[], tools: readonly ListedTool[]): SchemaProblem[] {
  const byName = new Map(tools.map((t) => [t.name, Object.keys(t.inputSchema?.properties ?? {})]));
  const everyArg = new Set([...byName.values()].flat());
  const problems: SchemaProblem[] = [];
  for (const u of uses) {
    const say = (message: string) => problems.push({ rule: u.rule, source: u.source, message });
    const present: string[] = [];
    for (const t of u.tools ?? []) {
      if (byName.has(t)) present.push(t);
      else say(`selects tool "${t}", which the server does not list${hint(closest(t, byName.keys()))}`);
    }
    const seen = new Set<string>();
    for (const a of u.args) {
      if (seen.has(a.name)) continue;
      seen.add(a.name);
      if (u.tools === undefined) {
        if (!everyArg.has(a.name)) say(`reads ${a.via}, an argument no tool of the server declares${hint(closest(a.name, everyArg))}`);
        continue;
      }
      for (const t of present) {
        const props = byName.get(t) as string[];
        if (!props.includes(a.name)) say(`reads ${a.via}, but tool ${t} declares no argument "${a.name}" (it takes ${props.length === 0 ? 'none' : props.join(', ')})${hint(closest(a.name, props))}`);
      }
    }
  }
  return problems;
}
