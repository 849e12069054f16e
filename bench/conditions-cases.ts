/**
 * The conditions the benchmark measures, each written three ways: the OAR source (compiled and
 * interpreted by oarc), the same condition in CEL for `@marcbachmann/cel-js`, and a hand-written
 * JavaScript function over the same fact reader.
 *
 * The hand-written functions are what a competent engineer would write directly against
 * `FactReader`: literal slots, native string methods where the literal operand makes UTF-16 and
 * code-point semantics coincide, the int64 fast path inline with the runtime's exact helper as the
 * cold path, own-property map lookups, and an observation read once when the condition uses it
 * twice in the same branch. They perform every check the semantics require and nothing more, and
 * read facts in the source's order, so a raise would be the same raise.
 *
 * CEL spells the string built-ins as members (`s.startsWith(p)`); `size()` and `in` are the same;
 * the observation functions (`fire_count_of`, `tool_arg_string`, `tool_arg_int`) are registered as
 * CEL functions (see ./cel.ts). cel-js's string methods work on UTF-16 units; every literal below is
 * ASCII, for which the two readings agree — the agreement check confirms it on non-BMP input.
 */
import type { FactReader } from '../runtime/facts.js';
import { cpLength } from '../runtime/strings.js';
import { iadd, idiv, imul, type Int } from '../runtime/int64.js';
import { Raise } from '../runtime/raise.js';
import type { ScenarioName } from './conditions-env.js';
import {
  SLOT_ARG_VALIDATION_ERRORS, SLOT_CONTENT_CONTAINS_UNTRUSTED, SLOT_CONTENT_LENGTH, SLOT_CONTENT_SEGMENT_COUNT,
  SLOT_CONTENT_TRUST_TIERS, SLOT_FIRE_COUNT_OF, SLOT_JAILBREAK_SCORE, SLOT_PATH_DENIED, SLOT_POLICY_DENIED,
  SLOT_PRINCIPAL_ROLES, SLOT_PROMPT_INJECTION_SCORE, SLOT_TOOL, SLOT_TOOL_ARGS, SLOT_TOOL_ARG_INT,
  SLOT_TOOL_ARG_STRING,
} from './conditions-env.js';

export interface ConditionCase {
  /** Short, stable name: the row label and the JSON key. */
  readonly id: string;
  /** The OAR condition (Appendix A). */
  readonly oar: string;
  /** The same condition in CEL, or null where CEL cannot express it. */
  readonly cel: string | null;
  readonly hand: (f: FactReader) => boolean;
  /** The occurrence the timed loop evaluates against. */
  readonly timed: ScenarioName;
}

type Obj = Readonly<Record<string, unknown>>;
type Args = Obj | ReadonlyMap<string, unknown>;

const hasOwn = Object.prototype.hasOwnProperty;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** Key presence by own property; hosts may hand a `Map` ([OAR-EXPR-12], DESIGN "Values"). */
function hasArg(a: Args, key: string): boolean {
  return a instanceof Map ? a.has(key) : hasOwn.call(a, key);
}

function nonFinite(): Raise {
  return new Raise('non_finite', 'double arithmetic produced a non-finite value');
}

const READ_ONLY_TOOLS = new Set(['read', 'glob', 'grep', 'ls', 'notebook_read', 'web_search', 'todo_read', 'view']);

export const CASES: readonly ConditionCase[] = [
  {
    id: 'tool_eq',
    oar: 'tool == "bash"',
    cel: 'tool == "bash"',
    hand: (f) => f.fact(SLOT_TOOL) === 'bash',
    timed: 'shell',
  },
  {
    id: 'tool_in_3',
    oar: 'tool in ["read", "write", "edit"]',
    cel: 'tool in ["read", "write", "edit"]',
    hand: (f) => {
      const t = f.fact(SLOT_TOOL);
      return t === 'read' || t === 'write' || t === 'edit';
    },
    timed: 'shell',
  },
  {
    id: 'tool_in_8',
    oar: 'tool in ["read", "glob", "grep", "ls", "notebook_read", "web_search", "todo_read", "view"]',
    cel: 'tool in ["read", "glob", "grep", "ls", "notebook_read", "web_search", "todo_read", "view"]',
    hand: (f) => READ_ONLY_TOOLS.has(f.fact(SLOT_TOOL) as string),
    timed: 'read',
  },
  {
    id: 'not_in_list',
    oar: '!(tool in ["read", "glob", "grep"])',
    cel: '!(tool in ["read", "glob", "grep"])',
    hand: (f) => {
      const t = f.fact(SLOT_TOOL);
      return !(t === 'read' || t === 'glob' || t === 'grep');
    },
    timed: 'shell',
  },
  {
    id: 'arg_prefix',
    oar: 'starts_with(tool_arg_string("path"), "/etc/")',
    cel: 'tool_arg_string("path").startsWith("/etc/")',
    // "/etc/" ends in an ASCII unit, so a UTF-16 prefix match cannot split a surrogate pair.
    hand: (f) => (f.call(SLOT_TOOL_ARG_STRING, 'path') as string).startsWith('/etc/'),
    timed: 'shell',
  },
  {
    id: 'arg_suffix',
    oar: 'ends_with(tool_arg_string("path"), ".pem")',
    cel: 'tool_arg_string("path").endsWith(".pem")',
    hand: (f) => (f.call(SLOT_TOOL_ARG_STRING, 'path') as string).endsWith('.pem'),
    timed: 'shell',
  },
  {
    id: 'arg_contains',
    oar: 'contains(tool_arg_string("command"), "rm -rf")',
    cel: 'tool_arg_string("command").contains("rm -rf")',
    hand: (f) => (f.call(SLOT_TOOL_ARG_STRING, 'command') as string).includes('rm -rf'),
    timed: 'shell',
  },
  {
    id: 'guarded_eq',
    oar: '"path" in tool_args && tool_arg_string("path") == "/etc/passwd"',
    cel: '"path" in tool_args && tool_arg_string("path") == "/etc/passwd"',
    hand: (f) => hasArg(f.fact(SLOT_TOOL_ARGS) as Args, 'path') && f.call(SLOT_TOOL_ARG_STRING, 'path') === '/etc/passwd',
    timed: 'bigints',
  },
  {
    id: 'guarded_not_prefix',
    oar: '"url" in tool_args && !starts_with(tool_arg_string("url"), "https://")',
    cel: '"url" in tool_args && !tool_arg_string("url").startsWith("https://")',
    hand: (f) =>
      hasArg(f.fact(SLOT_TOOL_ARGS) as Args, 'url') && !(f.call(SLOT_TOOL_ARG_STRING, 'url') as string).startsWith('https://'),
    timed: 'fetch',
  },
  {
    id: 'role_member',
    oar: '"admin" in principal_roles',
    cel: '"admin" in principal_roles',
    hand: (f) => (f.fact(SLOT_PRINCIPAL_ROLES) as readonly string[]).includes('admin'),
    timed: 'shell',
  },
  {
    id: 'not_role_and_tool',
    oar: '!("admin" in principal_roles) && tool == "bash"',
    cel: '!("admin" in principal_roles) && tool == "bash"',
    hand: (f) => !(f.fact(SLOT_PRINCIPAL_ROLES) as readonly string[]).includes('admin') && f.fact(SLOT_TOOL) === 'bash',
    timed: 'shell',
  },
  {
    id: 'fire_count_of',
    oar: 'fire_count_of("warn_shell") >= 3',
    cel: 'fire_count_of("warn_shell") >= 3',
    // An int is a number or, outside ±(2^53−1), a bigint; `>=` compares the two exactly.
    hand: (f) => (f.call(SLOT_FIRE_COUNT_OF, 'warn_shell') as Int) >= 3,
    timed: 'shell',
  },
  {
    id: 'content_length',
    oar: 'content_length > 10000',
    cel: 'content_length > 10000',
    hand: (f) => (f.fact(SLOT_CONTENT_LENGTH) as Int) > 10000,
    timed: 'shell',
  },
  {
    id: 'injection_score',
    oar: 'prompt_injection_score > 0.8',
    cel: 'prompt_injection_score > 0.8',
    hand: (f) => (f.fact(SLOT_PROMPT_INJECTION_SCORE) as number) > 0.8,
    timed: 'fetch',
  },
  {
    id: 'validation_errors',
    oar: 'size(arg_validation_errors) > 0',
    cel: 'size(arg_validation_errors) > 0',
    hand: (f) => (f.fact(SLOT_ARG_VALIDATION_ERRORS) as readonly string[]).length > 0,
    timed: 'shell',
  },
  {
    id: 'or_chain',
    oar: 'policy_denied || path_denied || size(arg_validation_errors) > 0',
    cel: 'policy_denied || path_denied || size(arg_validation_errors) > 0',
    hand: (f) =>
      f.fact(SLOT_POLICY_DENIED) === true ||
      f.fact(SLOT_PATH_DENIED) === true ||
      (f.fact(SLOT_ARG_VALIDATION_ERRORS) as readonly string[]).length > 0,
    timed: 'shell',
  },
  {
    id: 'int_arith',
    oar: '(tool_arg_int("offset") + tool_arg_int("limit")) * 2 > content_length',
    cel: '(tool_arg_int("offset") + tool_arg_int("limit")) * 2 > content_length',
    hand: (f) => {
      // [OAR-EXPR-15]: plain arithmetic, one safe-integer guard, exact helpers only when it fails.
      // One guard suffices: an inexact a + b is already ≥ 2^53, and doubling keeps it there.
      const a = f.call(SLOT_TOOL_ARG_INT, 'offset') as Int;
      const b = f.call(SLOT_TOOL_ARG_INT, 'limit') as Int;
      let r: Int;
      if (typeof a === 'number' && typeof b === 'number' && (r = (a + b) * 2) <= MAX_SAFE && r >= -MAX_SAFE) {
        // fast path: r is exact
      } else {
        r = imul(iadd(a, b), 2);
      }
      return r > (f.fact(SLOT_CONTENT_LENGTH) as Int);
    },
    timed: 'shell',
  },
  {
    id: 'int_div',
    oar: 'content_segment_count > 0 && content_length / content_segment_count > 2000',
    cel: 'content_segment_count > 0 && content_length / content_segment_count > 2000',
    hand: (f) => {
      const n = f.fact(SLOT_CONTENT_SEGMENT_COUNT) as Int;
      if (!(n > 0)) return false;
      const l = f.fact(SLOT_CONTENT_LENGTH) as Int;
      // Truncating division, exact for safe integers; n > 0 was just tested, so no zero check.
      const q = typeof l === 'number' && typeof n === 'number' ? (l - (l % n)) / n : idiv(l, n);
      return q > 2000;
    },
    timed: 'shell',
  },
  {
    id: 'double_arith',
    oar: 'prompt_injection_score * 2.0 + jailbreak_score > 1.5',
    cel: 'prompt_injection_score * 2.0 + jailbreak_score > 1.5',
    hand: (f) => {
      // [OAR-EXPR-14] each operation refuses a non-finite result; checking the product before
      // reading jailbreak_score keeps the interpreter's order of raises.
      const a = (f.fact(SLOT_PROMPT_INJECTION_SCORE) as number) * 2;
      if (a - a !== 0) throw nonFinite();
      const r = a + (f.fact(SLOT_JAILBREAK_SCORE) as number);
      if (r - r !== 0) throw nonFinite();
      return r > 1.5;
    },
    timed: 'fetch',
  },
  {
    id: 'ternary_int',
    oar: 'content_length > (tool == "write" ? 100000 : 10000)',
    cel: 'content_length > (tool == "write" ? 100000 : 10000)',
    hand: (f) => (f.fact(SLOT_CONTENT_LENGTH) as Int) > (f.fact(SLOT_TOOL) === 'write' ? 100000 : 10000),
    timed: 'shell',
  },
  {
    id: 'ternary_bool',
    oar: 'tool == "bash" ? fire_count_of("warn_shell") >= 2 : fire_count_of("warn_shell") >= 5',
    cel: 'tool == "bash" ? fire_count_of("warn_shell") >= 2 : fire_count_of("warn_shell") >= 5',
    hand: (f) => {
      const bash = f.fact(SLOT_TOOL) === 'bash'; // the test is read first, as in the source
      return (f.call(SLOT_FIRE_COUNT_OF, 'warn_shell') as Int) >= (bash ? 2 : 5);
    },
    timed: 'shell',
  },
  {
    id: 'size_string',
    oar: 'size(tool_arg_string("command")) > 200',
    cel: 'size(tool_arg_string("command")) > 200',
    hand: (f) => {
      const s = f.call(SLOT_TOOL_ARG_STRING, 'command') as string;
      // Code points ≤ UTF-16 units: only a string longer than 200 units needs counting.
      return s.length > 200 && cpLength(s) > 200;
    },
    timed: 'shell',
  },
  {
    id: 'string_order',
    oar: 'tool_arg_string("version") < "2.0.0"',
    cel: 'tool_arg_string("version") < "2.0.0"',
    // Every unit of the literal is below U+D800, where UTF-16 order and code-point order agree.
    hand: (f) => (f.call(SLOT_TOOL_ARG_STRING, 'version') as string) < '2.0.0',
    timed: 'shell',
  },
  {
    id: 'map_size',
    oar: 'size(tool_args) > 3',
    cel: 'size(tool_args) > 3',
    hand: (f) => {
      const a = f.fact(SLOT_TOOL_ARGS) as Args;
      return (a instanceof Map ? a.size : Object.keys(a).length) > 3;
    },
    timed: 'shell',
  },
  {
    id: 'untrusted_segments',
    oar: 'size(content_trust_tiers) > 0 && "untrusted" in content_trust_tiers',
    cel: 'size(content_trust_tiers) > 0 && "untrusted" in content_trust_tiers',
    hand: (f) => {
      const tiers = f.fact(SLOT_CONTENT_TRUST_TIERS) as readonly string[];
      return tiers.length > 0 && tiers.includes('untrusted');
    },
    timed: 'shell',
  },
  {
    id: 'composite_shell',
    oar:
      'tool in ["bash", "shell"] && "command" in tool_args && ' +
      '(contains(tool_arg_string("command"), "rm -rf") || contains(tool_arg_string("command"), "curl ")) && ' +
      '!("admin" in principal_roles) && fire_count_of("warn_shell") < 5',
    cel:
      'tool in ["bash", "shell"] && "command" in tool_args && ' +
      '(tool_arg_string("command").contains("rm -rf") || tool_arg_string("command").contains("curl ")) && ' +
      '!("admin" in principal_roles) && fire_count_of("warn_shell") < 5',
    hand: (f) => {
      const t = f.fact(SLOT_TOOL);
      if (t !== 'bash' && t !== 'shell') return false;
      if (!hasArg(f.fact(SLOT_TOOL_ARGS) as Args, 'command')) return false;
      const cmd = f.call(SLOT_TOOL_ARG_STRING, 'command') as string;
      if (!cmd.includes('rm -rf') && !cmd.includes('curl ')) return false;
      if ((f.fact(SLOT_PRINCIPAL_ROLES) as readonly string[]).includes('admin')) return false;
      return (f.call(SLOT_FIRE_COUNT_OF, 'warn_shell') as Int) < 5;
    },
    timed: 'shell',
  },
  {
    id: 'composite_exfil',
    oar:
      'tool == "web_fetch" && "url" in tool_args && !starts_with(tool_arg_string("url"), "https://internal.") && ' +
      '(content_contains_untrusted || prompt_injection_score > 0.5)',
    cel:
      'tool == "web_fetch" && "url" in tool_args && !tool_arg_string("url").startsWith("https://internal.") && ' +
      '(content_contains_untrusted || prompt_injection_score > 0.5)',
    hand: (f) =>
      f.fact(SLOT_TOOL) === 'web_fetch' &&
      hasArg(f.fact(SLOT_TOOL_ARGS) as Args, 'url') &&
      !(f.call(SLOT_TOOL_ARG_STRING, 'url') as string).startsWith('https://internal.') &&
      (f.fact(SLOT_CONTENT_CONTAINS_UNTRUSTED) === true || (f.fact(SLOT_PROMPT_INJECTION_SCORE) as number) > 0.5),
    timed: 'fetch',
  },
];
