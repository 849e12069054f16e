/**
 * The compiler checks its own output (DESIGN: code generation rule 5). Every emitted program is
 * parsed back with acorn, and a walk over the tree proves that it references only its own locals,
 * the runtime's exports, and a fixed allowlist of harmless globals — no `eval`, `Function`,
 * `globalThis`, `process`, `require`, `import()`, `this`, or `with`. A program that fails is a
 * compiler bug and is reported as one; it is never shipped or run.
 */
import { parse } from 'acorn';

/** Globals emitted code may name. */
const ALLOWED_GLOBALS: ReadonlySet<string> = new Set(['Set', 'undefined']);

/**
 * The only property names emitted code reads: the fact reader's two methods, `Set.has` and an
 * array's `length`. Anything else — `f.constructor.constructor("…")()` reaches `Function` without
 * naming it — is a compiler bug. Computed member access is never emitted at all.
 */
const ALLOWED_MEMBERS: ReadonlySet<string> = new Set(['fact', 'call', 'has', 'length']);

const FORBIDDEN_NODES: ReadonlySet<string> = new Set([
  'ThisExpression', 'WithStatement', 'ImportExpression', 'MetaProperty', 'DebuggerStatement',
  'TaggedTemplateExpression', 'TemplateLiteral', 'ClassDeclaration', 'ClassExpression', 'Super',
]);

export class CompilerBug extends Error {
  constructor(message: string) {
    super(`oarc compiler bug: ${message}`);
    this.name = 'CompilerBug';
  }
}

interface AnyNode {
  type: string;
  [key: string]: unknown;
}

/**
 * Verify generated JavaScript. `allowed` are the names the program may reference without
 * declaring them (the runtime's exports, or the parameters of an in-process wrapper).
 */
export function verifyGenerated(code: string, allowed: ReadonlySet<string>, sourceType: 'module' | 'script' = 'script'): void {
  let ast: AnyNode;
  try {
    ast = parse(code, { ecmaVersion: 2022, sourceType, allowReturnOutsideFunction: true }) as unknown as AnyNode;
  } catch (e) {
    throw new CompilerBug(`generated code does not parse: ${(e as Error).message}`);
  }
  const declared = new Set<string>();
  const referenced: { name: string; pos: number }[] = [];
  walk(ast, null, null, declared, referenced);
  for (const r of referenced) {
    if (!declared.has(r.name) && !allowed.has(r.name) && !ALLOWED_GLOBALS.has(r.name)) {
      throw new CompilerBug(`generated code references '${r.name}' at ${r.pos}, which is neither local nor a runtime export`);
    }
  }
}

function walk(node: AnyNode, parent: AnyNode | null, key: string | null, declared: Set<string>, referenced: { name: string; pos: number }[]): void {
  if (FORBIDDEN_NODES.has(node.type)) throw new CompilerBug(`generated code contains ${node.type}`);
  if (node.type === 'MemberExpression') {
    const property = node.property as AnyNode;
    if (node.computed !== false || property.type !== 'Identifier' || !ALLOWED_MEMBERS.has(property.name as string)) {
      throw new CompilerBug(`generated code reads a property it never emits (${node.computed ? 'computed access' : String(property.name)}) at ${node.start as number}`);
    }
  }
  if (node.type === 'Identifier') {
    const name = node.name as string;
    if (isDeclaration(parent, key)) declared.add(name);
    else if (isReference(parent, key)) referenced.push({ name, pos: node.start as number });
    return;
  }
  for (const k of Object.keys(node)) {
    if (k === 'type' || k === 'start' || k === 'end' || k === 'loc' || k === 'range') continue;
    const child = node[k];
    if (Array.isArray(child)) {
      for (const c of child) if (c && typeof c === 'object' && typeof (c as AnyNode).type === 'string') walk(c as AnyNode, node, k, declared, referenced);
    } else if (child && typeof child === 'object' && typeof (child as AnyNode).type === 'string') {
      walk(child as AnyNode, node, k, declared, referenced);
    }
  }
}

function isDeclaration(parent: AnyNode | null, key: string | null): boolean {
  if (!parent) return false;
  if (parent.type === 'VariableDeclarator' && key === 'id') return true;
  if ((parent.type === 'FunctionExpression' || parent.type === 'FunctionDeclaration' || parent.type === 'ArrowFunctionExpression') && (key === 'params' || key === 'id')) return true;
  if ((parent.type === 'ImportSpecifier' || parent.type === 'ImportNamespaceSpecifier' || parent.type === 'ImportDefaultSpecifier') && key === 'local') return true;
  return false;
}

function isReference(parent: AnyNode | null, key: string | null): boolean {
  if (!parent) return true;
  if (parent.type === 'MemberExpression' && key === 'property' && parent.computed === false) return false;
  if (parent.type === 'Property' && key === 'key' && parent.computed === false) return false;
  if (parent.type === 'ImportSpecifier' && key === 'imported') return false;
  if ((parent.type === 'ExportSpecifier') && key === 'exported') return false;
  return true;
}
