/** A symbol environment for condition tests: a little of every type, core and profile facts. */
import { symbolTable, type SymbolTable } from '../../runtime/types.js';
import { ObjectFactReader } from '../../runtime/facts.js';
import {
  checkConditionSource, interpret, loadCondition, type ConditionError, type EvalResult,
} from '../../compiler/expr/index.js';
import { Raise } from '../../runtime/raise.js';

const core = { kind: 'core' } as const;
const tool = { kind: 'profile', profile: 'tool' } as const;
const host = { kind: 'host' } as const;

export const SYMBOLS: SymbolTable = symbolTable([
  { kind: 'fact', name: 'anchor', type: 'string', tier: core },
  { kind: 'fact', name: 'fire_count', type: 'int', tier: core },
  { kind: 'function', name: 'fire_count_of', param: 'string', result: 'int', tier: core },
  { kind: 'function', name: 'breaker_count_of', param: 'string', result: 'int', tier: core },
  { kind: 'fact', name: 'tool', type: 'string', tier: tool },
  { kind: 'fact', name: 'tool_args', type: 'map', tier: tool },
  { kind: 'fact', name: 'arg_validation_errors', type: 'list<string>', tier: tool },
  { kind: 'function', name: 'tool_arg_string', param: 'string', result: 'string', tier: tool },
  { kind: 'function', name: 'tool_arg_int', param: 'string', result: 'int', tier: tool },
  { kind: 'fact', name: 'b', type: 'bool', tier: host },
  { kind: 'fact', name: 'c', type: 'bool', tier: host },
  { kind: 'fact', name: 'i', type: 'int', tier: host },
  { kind: 'fact', name: 'j', type: 'int', tier: host },
  { kind: 'fact', name: 'd', type: 'double', tier: host },
  { kind: 'fact', name: 'e', type: 'double', tier: host },
  { kind: 'fact', name: 's', type: 'string', tier: host },
  { kind: 'fact', name: 't', type: 'string', tier: host },
  { kind: 'fact', name: 'ls', type: 'list<string>', tier: host },
  { kind: 'fact', name: 'lm', type: 'list<map>', tier: host },
  { kind: 'fact', name: 'm', type: 'map', tier: host },
  { kind: 'fact', name: 'ms', type: 'map<string,string>', tier: host },
  { kind: 'fact', name: 'acme.tier', type: 'string', tier: host },
  { kind: 'function', name: 'acme.score', param: 'string', result: 'double', tier: host },
]);

export type Outcome = { value: unknown } | { raise: string } | { error: ConditionError[] };

/** Check, then evaluate on both back ends; throws if they disagree. */
export function run(src: string, facts: Record<string, unknown> = {}, requireBool = false): Outcome {
  const c = checkConditionSource(src, SYMBOLS, { requireBool });
  if (!c.ok) return { error: c.errors };
  const interpreted = interpret(c.condition.typed, new ObjectFactReader(SYMBOLS, facts));
  const compiled = evalCompiled(src, facts);
  const a = summarize(interpreted);
  const b = compiled;
  if (JSON.stringify(a, big) !== JSON.stringify(b, big)) {
    throw new Error(`back ends disagree on ${src}: interpreter ${JSON.stringify(a, big)} compiled ${JSON.stringify(b, big)}`);
  }
  return a;
}

export function evalCompiled(src: string, facts: Record<string, unknown>): Outcome {
  const c = checkConditionSource(src, SYMBOLS, { requireBool: false });
  if (!c.ok) return { error: c.errors };
  const fn = loadCondition(c.condition.typed);
  try {
    return { value: fn(new ObjectFactReader(SYMBOLS, facts)) };
  } catch (e) {
    if (e instanceof Raise) return { raise: e.code };
    throw e;
  }
}

function summarize(r: EvalResult): Outcome {
  return r.ok ? { value: r.value } : { raise: r.raise.code };
}

export function big(_k: string, v: unknown): unknown {
  return typeof v === 'bigint' ? `${v}n` : v;
}

export function value(src: string, facts: Record<string, unknown> = {}): unknown {
  const o = run(src, facts);
  if (!('value' in o)) throw new Error(`${src}: expected a value, got ${JSON.stringify(o, big)}`);
  return o.value;
}

export function raises(src: string, facts: Record<string, unknown> = {}): string {
  const o = run(src, facts);
  if (!('raise' in o)) throw new Error(`${src}: expected a raise, got ${JSON.stringify(o, big)}`);
  return o.raise;
}

export function rejects(src: string, requireBool = false): ConditionError {
  const c = checkConditionSource(src, SYMBOLS, { requireBool });
  if (c.ok) throw new Error(`${src}: expected a load error`);
  return c.errors[0] as ConditionError;
}
