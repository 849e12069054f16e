/**
 * The compiler checks its own output (DESIGN: code generation rule 5). Every emitted program is
 * parsed back with acorn, and a walk over the tree proves that it references only its own locals,
 * the runtime helpers (`oarc/runtime/internal`), and a fixed allowlist of harmless globals — no
 * `eval`, `Function`, `globalThis`, `process`, `require`, `import()`, `this`, or `with`. A module
 * may import only helper names, under their own names, from the one runtime specifier it was
 * compiled for, and export only its default. A program that fails is a compiler bug and is
 * reported as one; it is never shipped or run.
 */
import { parse } from 'acorn';

/** Globals emitted code may name. */
const ALLOWED_GLOBALS: ReadonlySet<string> = new Set(['Set', 'Map', 'undefined']);

/**
 * The only property names emitted code reads: the fact reader's two methods, `Set.has`, `Map.get`,
 * an array's `length` and `push`, and the methods of a procedure's context (runtime/procedure.ts
 * `ProcedureRun`). Anything else — `f.constructor.constructor("…")()` reaches `Function` without
 * naming it — is a compiler bug. Computed member access is never emitted at all.
 */
const ALLOWED_MEMBERS: ReadonlySet<string> = new Set([
  'fact', 'call', 'has', 'get', 'length', 'push',
  'at', 'cx', 'sel', 'flow', 'det', 'sp', 'pre', 'fire', 'tf', 'changed', 'end',
]);

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

/** What a bundle module may import: these names, from this specifier. */
export interface ModuleImports {
  from: string;
  names: ReadonlySet<string>;
}

/**
 * Verify generated JavaScript: a script whose free names must be in `allowed` (the parameters of
 * an in-process wrapper), or — given `imports` — a module whose imports must be among them.
 */
export function verifyGenerated(code: string, allowed: ReadonlySet<string>, imports?: ModuleImports): void {
  let ast: AnyNode;
  try {
    ast = parse(code, { ecmaVersion: 2022, sourceType: imports ? 'module' : 'script', allowReturnOutsideFunction: true }) as unknown as AnyNode;
  } catch (e) {
    throw new CompilerBug(`generated code does not parse: ${(e as Error).message}`);
  }
  for (const statement of ast.body as AnyNode[]) checkModuleStatement(statement, imports);
  const declared = new Set<string>();
  const referenced: { name: string; pos: number }[] = [];
  walk(ast, null, null, declared, referenced);
  for (const r of referenced) {
    if (!declared.has(r.name) && !allowed.has(r.name) && !ALLOWED_GLOBALS.has(r.name)) {
      throw new CompilerBug(`generated code references '${r.name}' at ${r.pos}, which is neither local nor a runtime export`);
    }
  }
}

const MODULE_STATEMENTS: ReadonlySet<string> = new Set(['ImportDeclaration', 'ExportNamedDeclaration', 'ExportAllDeclaration', 'ExportDefaultDeclaration']);

/** Imports name only runtime helpers from the runtime specifier; the one export is the default. */
function checkModuleStatement(node: AnyNode, imports: ModuleImports | undefined): void {
  if (!MODULE_STATEMENTS.has(node.type) || node.type === 'ExportDefaultDeclaration') return;
  if (node.type !== 'ImportDeclaration' || imports === undefined) throw new CompilerBug(`generated code contains ${node.type} at ${node.start as number}`);
  const from = (node.source as AnyNode).value;
  if (from !== imports.from) throw new CompilerBug(`generated code imports from ${JSON.stringify(from)}, not the runtime ${JSON.stringify(imports.from)}`);
  for (const s of node.specifiers as AnyNode[]) {
    const imported = s.type === 'ImportSpecifier' ? (s.imported as AnyNode).name : undefined;
    if (typeof imported !== 'string' || !imports.names.has(imported) || (s.local as AnyNode).name !== imported) {
      throw new CompilerBug(`generated code imports something other than a runtime helper under its own name at ${s.start as number}`);
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
  // A statement label (a procedure's short-circuit `break r`) names no binding.
  if ((parent.type === 'LabeledStatement' || parent.type === 'BreakStatement' || parent.type === 'ContinueStatement') && key === 'label') return false;
  if (parent.type === 'MemberExpression' && key === 'property' && parent.computed === false) return false;
  if (parent.type === 'Property' && key === 'key' && parent.computed === false) return false;
  if (parent.type === 'ImportSpecifier' && key === 'imported') return false;
  if ((parent.type === 'ExportSpecifier') && key === 'exported') return false;
  return true;
}
