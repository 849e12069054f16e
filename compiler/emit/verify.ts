/**
 * The compiler checks its own output (DESIGN: code generation rule 5). Every emitted program is
 * parsed back with acorn, and a walk over the tree proves that it references only its own locals,
 * the runtime helpers (`oarc/runtime/internal`), and a fixed allowlist of harmless globals — no
 * `eval`, `Function`, `globalThis`, `process`, `require`, `import()`, `this`, or `with`. A module
 * may import only helper names, under their own names, from the one runtime specifier it was
 * compiled for, and export only its default. A program that fails is a compiler bug and is
 * reported as one; it is never shipped or run.
 */
import { Parser } from 'acorn';
import { dataStatement, type DataStatement } from './data-statement.js';

/** About how many characters of statements `ProgramVerifier` parses at once. */
const BATCH_CHARS = 1 << 16;

/** Globals emitted code may name. */
const ALLOWED_GLOBALS: ReadonlySet<string> = new Set(['Set', 'Map', 'undefined']);

/**
 * The only property names emitted code reads: the fact reader's two methods, `Set.has`, `Map.get`,
 * an array's `length` and `push`, and the methods of a procedure's context (runtime/procedure.ts
 * `ProcedureRun`). Anything else — `f.constructor.constructor("…")()` reaches `Function` without
 * naming it — is a compiler bug. Computed member access is emitted only as an array element by a
 * non-negative integer literal (`R[3]`), which names no property of any prototype.
 */
const ALLOWED_MEMBERS: ReadonlySet<string> = new Set([
  'fact', 'call', 'has', 'get', 'length', 'push',
  'at', 'cx', 'sel', 'flow', 'det', 'sp', 'pre', 'fire', 'tf', 'changed', 'end',
]);

const FORBIDDEN_NODES: ReadonlySet<string> = new Set([
  'ThisExpression', 'WithStatement', 'ImportExpression', 'MetaProperty', 'DebuggerStatement',
  'TaggedTemplateExpression', 'TemplateLiteral', 'ClassDeclaration', 'ClassExpression', 'Super',
  // A pattern reads properties past the member allowlist (`({ constructor: F } = Set)`) and binds
  // names the scope walk would have to follow through defaults; emitted code binds only identifiers.
  'ObjectPattern', 'ArrayPattern', 'AssignmentPattern', 'RestElement',
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
  const v = new ProgramVerifier(allowed, imports);
  v.check(parseProgram(code, imports !== undefined, ''));
  v.finish();
}

/**
 * The same check, given the program as its top-level statements one by one (each the text astring
 * printed for it), so a 10,000-rule bundle is never held as one acorn tree: a tree of 17 MB of code
 * costs more in collection than in parsing, and acorn's top-level scope checks are linear in the
 * names already declared, so one program of 30,000 constants is quadratic.
 *
 * Why the statements' parses are the program's parse: each statement's text must parse (alone, or
 * joined with others by "\n" as astring prints a program) as exactly one statement that ends with
 * its own `;` token — so no automatic semicolon insertion or token can join it to the next, and the
 * next begins where a program begins (a `/` starts a regular expression either way). A program is
 * its statement list; what the grammar checks across statements — one binding per top-level name,
 * one default export, directives — is checked here.
 */
export class ProgramVerifier {
  private readonly topLevel = new Set<string>();
  /** Each referenced name and where it is first referenced. */
  private readonly referenced = new Map<string, string>();
  private defaultExports = 0;
  private where = '';
  private pending: string[] = [];
  private pendingChars = 0;

  constructor(private readonly allowed: ReadonlySet<string>, private readonly imports?: ModuleImports) {}

  /**
   * One top-level statement's text. Statements may be checked in any order (a bundle's constants are
   * checked as they are made, before the shared ones that precede them); positions in a message are
   * within the statement, which the message quotes. They are parsed in batches of about
   * `BATCH_CHARS`: one parse per statement spent more in acorn's per-parse set-up than in parsing.
   */
  statement(text: string): void {
    const data = this.imports === undefined && text.startsWith('export ') ? undefined : dataStatement(text);
    if (data !== undefined) return this.dataStatement(data, text);
    this.pending.push(text);
    this.pendingChars += text.length + 1;
    if (this.pendingChars >= BATCH_CHARS) this.flush();
  }

  /**
   * The pending statements, joined as the program joins them, in one parse whose statements must be
   * exactly the texts (each one statement ended by its own `;`). On any failure the batch is checked
   * again one text at a time by a fresh verifier, so the message names the statement.
   */
  private flush(): void {
    const texts = this.pending;
    if (texts.length === 0) return;
    this.pending = [];
    this.pendingChars = 0;
    try {
      const ast = parseProgram(texts.join('\n'), this.imports !== undefined, '');
      requireStatements(ast, texts, '');
      this.check(ast);
    } catch (e) {
      const alone = new ProgramVerifier(this.allowed, this.imports);
      for (const t of texts) alone.single(t);
      throw e;
    }
  }

  /**
   * A statement data-statement.ts read as data: what acorn and the walk would have made of it —
   * the name it declares, the default export, the names it references.
   */
  private dataStatement(d: DataStatement, text: string): void {
    const where = inStatement(text);
    if (d.exportsDefault && ++this.defaultExports > 1) throw new CompilerBug('generated code has two default exports');
    if (d.declares !== undefined) {
      if (this.topLevel.has(d.declares)) throw new CompilerBug(`generated code declares '${d.declares}' twice${where}`);
      this.topLevel.add(d.declares);
    }
    for (const [name, at] of d.references) if (!this.referenced.has(name)) this.referenced.set(name, `${at}${where}`);
  }

  /** One statement's text in a parse of its own, its message naming it. */
  private single(text: string): void {
    const where = inStatement(text);
    const ast = parseProgram(text, this.imports !== undefined, where);
    requireStatements(ast, [text], where);
    this.where = where;
    this.check(ast);
    this.where = '';
  }

  /** A line of the program that must be a comment: it parses to no statement at all. */
  comment(text: string): void {
    if ((parseProgram(text, this.imports !== undefined, '').body as AnyNode[]).length !== 0 || /[\n\r\u2028\u2029]/.test(text)) {
      throw new CompilerBug(`generated line is not a comment: ${text.slice(0, 60)}`);
    }
  }

  /** Every referenced name is local, allowed, or an allowed global. */
  finish(): void {
    this.flush();
    for (const [name, pos] of this.referenced) {
      if (!this.topLevel.has(name) && !this.allowed.has(name) && !ALLOWED_GLOBALS.has(name)) {
        throw new CompilerBug(`generated code references '${name}' at ${pos}, which is neither local nor a runtime export`);
      }
    }
  }

  /** A parsed program (or one statement of one): the checks of each top-level statement, and the walk. */
  check(ast: AnyNode): void {
    for (const statement of ast.body as AnyNode[]) {
      // Emitted programs are declarations (and a module's import and export, a script's return).
      // A top-level expression could be a directive, which only its position tells ("use strict";
      // first in one batch, not in another), or a write to a global.
      if (statement.type === 'ExpressionStatement') {
        throw new CompilerBug(`generated code contains a top-level expression at ${statement.start as number}${this.where}`);
      }
      if (statement.type === 'ExportDefaultDeclaration' && ++this.defaultExports > 1) throw new CompilerBug('generated code has two default exports');
      checkModuleStatement(statement, this.imports, this.where);
      for (const name of topLevelNames(statement)) {
        if (this.topLevel.has(name)) throw new CompilerBug(`generated code declares '${name}' twice${this.where}`);
        this.topLevel.add(name);
      }
    }
    walk(ast, null, null, null, this.referenced, this.where);
  }
}

/** Where a message about one statement points: its first line, up to 60 characters. */
function inStatement(text: string): string {
  return ` in the statement \`${text.slice(0, 60).split('\n')[0]}…\``;
}

/** The parse of `texts` joined by "\n" has exactly one statement per text, each ended by its own `;`. */
function requireStatements(ast: AnyNode, texts: readonly string[], where: string): void {
  const body = ast.body as AnyNode[];
  let at = 0;
  texts.forEach((t, k) => {
    const n = body[k];
    if (n === undefined || n.start !== at || n.end !== at + t.length || !t.endsWith(';')) {
      throw new CompilerBug(`generated code is not one statement ended by its own ';'${where}`);
    }
    at += t.length + 1;
  });
  if (body.length !== texts.length) throw new CompilerBug(`generated code is not one statement ended by its own ';'${where}`);
}

/**
 * Members of an object or array literal the walk has nothing to check in: a Literal (the walk
 * stops at one), a literal left empty by this pruning, and a plain `key: value` member whose value
 * (and computed key) is one of those — a key that is not computed names no binding.
 */
function inert(n: AnyNode | null): boolean {
  if (n === null || n.type === 'Literal') return true;
  if (n.type === 'ObjectExpression') return (n.properties as AnyNode[]).length === 0;
  if (n.type === 'ArrayExpression') return (n.elements as AnyNode[]).length === 0;
  return n.type === 'Property' && inert(n.value as AnyNode) && (n.computed !== true || inert(n.key as AnyNode));
}

type FinishNode = (this: unknown, node: AnyNode, type: string) => AnyNode;

/**
 * acorn, dropping the inert members of each object and array literal as it finishes the literal
 * (its members are finished before it, so they are pruned already): a bundle's data is most of
 * its nodes, and its 10,000-rule tree, held whole until the walk, was as costly to collect as to
 * parse. The walk's result is the same, as it would have found nothing in what is dropped; acorn
 * still reads every token, so the grammar is checked whole. acorn looks into a finished literal
 * again only to reinterpret it as a destructuring pattern, and the walk rejects every pattern.
 */
const PruningParser = Parser.extend((Base) => {
  const finishNode = (Base.prototype as unknown as { finishNode: FinishNode }).finishNode;
  class Pruning extends Base {}
  (Pruning.prototype as unknown as { finishNode: FinishNode }).finishNode = function (node, type) {
    const n = finishNode.call(this, node, type);
    if (type === 'ObjectExpression') n.properties = (n.properties as AnyNode[]).filter((p) => !inert(p));
    else if (type === 'ArrayExpression') n.elements = (n.elements as (AnyNode | null)[]).filter((e) => !inert(e));
    return n;
  };
  return Pruning;
});

function parseProgram(code: string, module: boolean, where: string): AnyNode {
  try {
    return PruningParser.parse(code, { ecmaVersion: 2022, sourceType: module ? 'module' : 'script', allowReturnOutsideFunction: true }) as unknown as AnyNode;
  } catch (e) {
    throw new CompilerBug(`generated code does not parse${where}: ${(e as Error).message}`);
  }
}

/** The names a top-level statement binds in the program's scope. */
function topLevelNames(statement: AnyNode): string[] {
  if (statement.type === 'VariableDeclaration') {
    return (statement.declarations as AnyNode[]).map((d) => ((d.id as AnyNode).type === 'Identifier' ? ((d.id as AnyNode).name as string) : ''));
  }
  if (statement.type === 'FunctionDeclaration' && statement.id) return [(statement.id as AnyNode).name as string];
  if (statement.type === 'ImportDeclaration') return (statement.specifiers as AnyNode[]).map((s) => (s.local as AnyNode).name as string);
  return [];
}

const MODULE_STATEMENTS: ReadonlySet<string> = new Set(['ImportDeclaration', 'ExportNamedDeclaration', 'ExportAllDeclaration', 'ExportDefaultDeclaration']);

/** Imports name only runtime helpers from the runtime specifier; the one export is the default. */
function checkModuleStatement(node: AnyNode, imports: ModuleImports | undefined, where: string): void {
  if (!MODULE_STATEMENTS.has(node.type) || node.type === 'ExportDefaultDeclaration') return;
  if (node.type !== 'ImportDeclaration' || imports === undefined) throw new CompilerBug(`generated code contains ${node.type} at ${node.start as number}${where}`);
  const from = (node.source as AnyNode).value;
  if (from !== imports.from) throw new CompilerBug(`generated code imports from ${JSON.stringify(from)}, not the runtime ${JSON.stringify(imports.from)}`);
  for (const s of node.specifiers as AnyNode[]) {
    const imported = s.type === 'ImportSpecifier' ? (s.imported as AnyNode).name : undefined;
    if (typeof imported !== 'string' || !imports.names.has(imported) || (s.local as AnyNode).name !== imported) {
      throw new CompilerBug(`generated code imports something other than a runtime helper under its own name at ${s.start as number}${where}`);
    }
  }
}

/**
 * A lexical scope of the walk: the names bound in it. References resolve through the chain; what
 * no function or block binds is free — a top-level name of the program, a runtime helper or an
 * allowed global, checked once every statement is in (`finish`). Every scope is kept apart: a
 * parameter named `Function` in one function makes `Function` no less free everywhere else.
 */
interface Scope {
  readonly names: ReadonlySet<string>;
  readonly up: Scope | null;
}

const FUNCTIONS: ReadonlySet<string> = new Set(['FunctionExpression', 'FunctionDeclaration', 'ArrowFunctionExpression']);
const BLOCKS: ReadonlySet<string> = new Set(['BlockStatement', 'SwitchStatement', 'ForStatement', 'ForInStatement', 'ForOfStatement', 'CatchClause']);

function bound(scope: Scope | null, name: string): boolean {
  for (let s = scope; s !== null; s = s.up) if (s.names.has(name)) return true;
  return false;
}

/** The `var` declarations of a function body, through its blocks but not into nested functions. */
function collectVars(node: AnyNode, out: Set<string>): void {
  if (FUNCTIONS.has(node.type)) return;
  if (node.type === 'VariableDeclaration' && node.kind === 'var') {
    for (const d of node.declarations as AnyNode[]) out.add((d.id as AnyNode).name as string);
  }
  for (const k in node) {
    const child = node[k];
    if (child === null || typeof child !== 'object') continue;
    if (Array.isArray(child)) {
      for (const c of child) if (c && typeof c === 'object' && typeof (c as AnyNode).type === 'string') collectVars(c as AnyNode, out);
    } else if (typeof (child as AnyNode).type === 'string') collectVars(child as AnyNode, out);
  }
}

/** The lexical declarations (`let`, `const`, functions) directly in a statement list. */
function collectLexical(statements: readonly AnyNode[], out: Set<string>): void {
  for (const st of statements) {
    if (st.type === 'VariableDeclaration' && st.kind !== 'var') for (const d of st.declarations as AnyNode[]) out.add((d.id as AnyNode).name as string);
    else if (st.type === 'FunctionDeclaration' && st.id) out.add((st.id as AnyNode).name as string);
  }
}

/** The scope a function or block node opens, or undefined for any other node. */
function scopeOf(node: AnyNode, up: Scope | null): Scope | undefined {
  // Most nodes open no scope: decide that before allocating a set for every one of them.
  const isFunction = FUNCTIONS.has(node.type);
  if (!isFunction && !BLOCKS.has(node.type)) return undefined;
  const names = new Set<string>();
  if (isFunction) {
    for (const p of node.params as AnyNode[]) names.add(p.name as string);
    if (node.type === 'FunctionExpression' && node.id) names.add((node.id as AnyNode).name as string);
    const body = node.body as AnyNode;
    if (body.type === 'BlockStatement') {
      collectVars(body, names);
      collectLexical(body.body as AnyNode[], names);
    }
    return { names, up };
  }
  if (node.type === 'BlockStatement') collectLexical(node.body as AnyNode[], names);
  else if (node.type === 'SwitchStatement') for (const c of node.cases as AnyNode[]) collectLexical(c.consequent as AnyNode[], names);
  else if (node.type === 'CatchClause') {
    if (node.param) names.add((node.param as AnyNode).name as string);
  } else {
    const head = (node.type === 'ForStatement' ? node.init : node.left) as AnyNode | null;
    if (head) collectLexical([head], names);
  }
  return { names, up };
}

/** The identifier an assignment or update writes, if it writes one. */
function written(node: AnyNode): AnyNode | undefined {
  return (node.type === 'AssignmentExpression' ? node.left : node.type === 'UpdateExpression' ? node.argument : undefined) as AnyNode | undefined;
}

function walk(node: AnyNode, parent: AnyNode | null, key: string | null, scope: Scope | null, free: Map<string, string>, where: string): void {
  const type = node.type;
  if (FORBIDDEN_NODES.has(type)) throw new CompilerBug(`generated code contains ${type} at ${node.start as number}${where}`);
  if (type === 'Identifier') {
    const name = node.name as string;
    if (!isDeclaration(parent, key) && isReference(parent, key) && !bound(scope, name) && !free.has(name)) free.set(name, `${node.start as number}${where}`);
    return;
  }
  if (type === 'Literal') return;
  // Most of a bundle's nodes are its data's object members. A member opens no scope and writes
  // nothing; a key that is not computed is a Literal or an Identifier naming no binding (so
  // `isReference` would skip it), and the other fields are not nodes — only the value, and a
  // computed key, are walked.
  if (type === 'Property') {
    if (node.computed === true) walk(node.key as AnyNode, node, 'key', scope, free, where);
    walk(node.value as AnyNode, node, 'value', scope, free, where);
    return;
  }
  if (type === 'MemberExpression') {
    const property = node.property as AnyNode;
    // An element by a constant index of a local array (a procedure's bucket data, `R[3]`; a
    // lookup-table entry, `h[0]`) reaches nothing else.
    const element = node.computed === true && (node.object as AnyNode).type === 'Identifier' && property.type === 'Literal' && Number.isSafeInteger(property.value) && (property.value as number) >= 0;
    if (!element && (node.computed !== false || property.type !== 'Identifier' || !ALLOWED_MEMBERS.has(property.name as string))) {
      throw new CompilerBug(`generated code reads a property it never emits (${node.computed ? 'computed access' : String(property.name)}) at ${node.start as number}${where}`);
    }
  }
  // Only a function's own locals are written: never a global, a helper or a top-level constant.
  const target = written(node);
  if (target !== undefined && (target.type !== 'Identifier' || !bound(scope, target.name as string))) {
    const what = target.type === 'Identifier' ? `'${target.name as string}', which is not a local` : `a ${target.type}`;
    throw new CompilerBug(`generated code assigns to ${what}, at ${node.start as number}${where}`);
  }
  const inner = scopeOf(node, scope) ?? scope;
  // acorn's nodes carry their children as own properties; `for…in` visits them without the
  // array `Object.keys` would allocate at each of a large bundle's millions of nodes.
  for (const k in node) {
    if (k === 'type' || k === 'start' || k === 'end' || k === 'loc' || k === 'range') continue;
    const child = node[k];
    if (child === null || typeof child !== 'object') continue;
    if (Array.isArray(child)) {
      for (const c of child) if (c && typeof c === 'object' && typeof (c as AnyNode).type === 'string') walk(c as AnyNode, node, k, inner, free, where);
    } else if (typeof (child as AnyNode).type === 'string') {
      walk(child as AnyNode, node, k, inner, free, where);
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
