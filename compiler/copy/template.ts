/**
 * The copy-template language of Appendix C: parser, load-time checks, and lowering to the
 * `CopyProgram` data the runtime renders (runtime/copy.ts).
 *
 *   copy_text   = { literal | binding | conditional } ;
 *   binding     = "{{" ws identifier ws "}}" ;
 *   conditional = "{%" ws "if" ws [ "not" ws ] identifier ws "%}" copy_text
 *                 [ "{%" ws "else" ws "%}" copy_text ] "{%" ws "endif" ws "%}" ;
 *   identifier  = name { "." name } ;
 *   name        = ( letter | "_" ) { letter | digit | "_" } ;
 *   ws          = { " " | "\t" | "\n" | "\r" } ;
 *
 * Readings of the grammar this file commits to (each is where the EBNF alone is ambiguous):
 *
 * - Delimiters are found by scanning left to right: every `{{` or `{%` opens a construct where it
 *   begins. A literal "does not begin `{{` or `{%`", and read as a bare string property that would
 *   let `a{{b` be one literal, which would make every template a literal; the only reading that
 *   gives bindings any meaning is that a literal stops where a delimiter begins. So `{{{x}}}` is a
 *   binding whose identifier is missing — rejected — not `{` + `{{x}}` + `}`.
 * - Keywords and names are lexed greedily, as [OAR-EXPR-24] prescribes for Appendix A (the only
 *   lexical rule the spec states). `ws` may be empty, so `{%ifx%}` would otherwise derive both as
 *   `if x` and as the unknown tag `ifx`, and `{% if notx %}` both as `not x` and as the fact `notx`.
 *   Greedy lexing resolves both: `ifx` is one word, not `if`, and the construct is rejected;
 *   `notx` is an identifier. Empty `ws` is still fine where no name follows: `{%if x%}`, `{{x}}`.
 * - `not` is a keyword only when an identifier follows it: `{% if not %}` derives with `not` as the
 *   identifier (the `[ "not" ws ]` option absent), so it parses and the checker then rejects it as
 *   an undeclared fact unless a fact is really named `not`.
 * - `letter` and `digit` are not defined by the spec; they are read as ASCII `A`–`Z`, `a`–`z` and
 *   `0`–`9`, matching the condition language's names. Whitespace is exactly the four `ws` code
 *   points; a no-break space inside a delimiter is not whitespace.
 * - A node's `offset` is the code-point offset of its identifier, so a load error about a name
 *   points at the name. Parse errors point at the `{{` or `{%` that opens the bad construct.
 */
import type { FactSymbol, SymbolTable } from '../../runtime/types.js';
import { isCopyType, type CopyPart, type CopyProgram } from '../../runtime/copy.js';
import { closest, meantHint } from '../../runtime/suggest.js';

export type CopyNode =
  | { k: 'text'; text: string }
  | { k: 'binding'; name: string; offset: number }
  | { k: 'if'; name: string; negate: boolean; offset: number; then: CopyNode[]; else: CopyNode[] };

/** A template the grammar does not derive ([OAR-COPY-3]): the construct verbatim and its offset. */
export interface CopyParseError {
  ok: false;
  message: string;
  construct: string;
  offset: number;
}

export type CopyParseResult = { ok: true; nodes: CopyNode[] } | CopyParseError;

export interface CopyCheckError {
  clause: string;
  message: string;
  token: string;
  offset: number;
  /** The declared fact the name was probably meant to be. */
  suggestion?: string;
}

/** The deepest nesting of `{% if %}` conditionals accepted ([OAR-COPY-3]). */
export const MAX_COPY_NESTING = 64;

/** A construct longer than this is shortened in messages; the offset still locates it exactly. */
const MAX_CONSTRUCT = 60;

function isWs(c: string | undefined): boolean {
  return c === ' ' || c === '\t' || c === '\n' || c === '\r';
}
function isNameStart(c: string | undefined): boolean {
  return c !== undefined && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_');
}
function isNameChar(c: string | undefined): boolean {
  return isNameStart(c) || (c !== undefined && c >= '0' && c <= '9');
}

/** Thrown inside the parser only; `parseCopy` turns it into a `CopyParseError`. */
class Reject {
  constructor(
    readonly reason: string,
    readonly start: number,
    /** Where the construct's text ends, when it is not simply "the next closing delimiter". */
    readonly end?: number,
  ) {}
}

/** An open `{% if %}` while its body is being parsed. */
interface Frame {
  node: Extract<CopyNode, { k: 'if' }>;
  inElse: boolean;
  start: number;
  end: number;
}

/**
 * The parser works on an array of code points, so every index is already a code-point offset
 * (a non-BMP character counts once, as [OAR-FACT-23] counts string length).
 */
class Parser {
  private pos = 0;
  private readonly root: CopyNode[] = [];
  private readonly stack: Frame[] = [];

  constructor(private readonly cps: readonly string[]) {}

  parse(): CopyNode[] {
    const cps = this.cps;
    let textStart = 0;
    while (this.pos < cps.length) {
      const c = cps[this.pos];
      const d = cps[this.pos + 1];
      if (c === '{' && (d === '{' || d === '%')) {
        this.flushText(textStart, this.pos);
        if (d === '{') this.binding();
        else this.tag();
        textStart = this.pos;
      } else {
        this.pos++;
      }
    }
    this.flushText(textStart, this.pos);
    const open = this.stack[this.stack.length - 1];
    if (open) throw new Reject('conditional is missing its {% endif %}', open.start, open.end);
    return this.root;
  }

  private get children(): CopyNode[] {
    const top = this.stack[this.stack.length - 1];
    return top === undefined ? this.root : top.inElse ? top.node.else : top.node.then;
  }

  private flushText(from: number, to: number): void {
    if (to > from) this.children.push({ k: 'text', text: this.cps.slice(from, to).join('') });
  }

  private skipWs(): void {
    while (isWs(this.cps[this.pos])) this.pos++;
  }

  /** Expect the two-code-point closing delimiter at the cursor. */
  private close(delim: '}}' | '%}', start: number, after: string): void {
    if (this.cps[this.pos] === delim[0] && this.cps[this.pos + 1] === delim[1]) {
      this.pos += 2;
      return;
    }
    throw new Reject(
      this.pos >= this.cps.length ? `unterminated: no closing ${delim}` : `expected ${delim} after ${after}`,
      start,
    );
  }

  /** A greedy word of name characters: a tag keyword or `not`. Empty when none starts here. */
  private word(): string {
    const from = this.pos;
    while (isNameChar(this.cps[this.pos])) this.pos++;
    return this.cps.slice(from, this.pos).join('');
  }

  /** `identifier = name { "." name }`, read greedily; `what` says what it follows, for errors. */
  private identifier(start: number, what: string): { name: string; offset: number } {
    const offset = this.pos;
    if (!isNameStart(this.cps[this.pos])) {
      throw new Reject(
        this.pos >= this.cps.length ? 'unterminated: expected an identifier' : `expected an identifier after ${what}`,
        start,
      );
    }
    for (;;) {
      while (isNameChar(this.cps[this.pos])) this.pos++;
      if (this.cps[this.pos] !== '.') break;
      this.pos++;
      if (!isNameStart(this.cps[this.pos])) throw new Reject('a "." in an identifier must be followed by a name', start);
    }
    return { name: this.cps.slice(offset, this.pos).join(''), offset };
  }

  /** `"{{" ws identifier ws "}}"` — exactly one identifier, nothing else ([OAR-COPY-2], [OAR-COPY-8]). */
  private binding(): void {
    const start = this.pos;
    this.pos += 2;
    this.skipWs();
    const { name, offset } = this.identifier(start, '{{');
    this.skipWs();
    this.close('}}', start, `the identifier ${name}`);
    this.children.push({ k: 'binding', name, offset });
  }

  /** `{% if [not] x %}`, `{% else %}` or `{% endif %}` ([OAR-COPY-3]). */
  private tag(): void {
    const start = this.pos;
    this.pos += 2;
    this.skipWs();
    const kw = this.word();
    if (kw === 'if') return this.openIf(start);
    if (kw === 'else' || kw === 'endif') {
      this.skipWs();
      this.close('%}', start, kw);
      const top = this.stack[this.stack.length - 1];
      if (top === undefined) throw new Reject(`{% ${kw} %} without a matching {% if %}`, start, this.pos);
      if (kw === 'endif') this.stack.pop();
      else if (top.inElse) throw new Reject('a conditional has at most one {% else %}', start, this.pos);
      else top.inElse = true;
      return;
    }
    if (kw === '' && this.pos >= this.cps.length) throw new Reject('unterminated: no closing %}', start);
    throw new Reject(kw === '' ? 'expected if, else or endif after {%' : `unknown tag ${kw}: expected if, else or endif`, start);
  }

  private openIf(start: number): void {
    this.skipWs();
    let { name, offset } = this.identifier(start, 'if');
    let negate = false;
    this.skipWs();
    // `not` is the keyword only when another identifier follows; greedy lexing guarantees the
    // whitespace between them was non-empty (otherwise both would have been one word).
    if (name === 'not' && isNameStart(this.cps[this.pos])) {
      negate = true;
      ({ name, offset } = this.identifier(start, 'not'));
      this.skipWs();
    }
    this.close('%}', start, `the identifier ${name}`);
    // Checking, compiling and rendering walk the tree recursively: bound its depth so a hostile
    // template ends in an error, never a stack overflow. No real copy nests 64 conditionals.
    if (this.stack.length >= MAX_COPY_NESTING) {
      throw new Reject(`conditionals are nested more than ${MAX_COPY_NESTING} deep`, start);
    }
    const node: Frame['node'] = { k: 'if', name, negate, offset, then: [], else: [] };
    this.children.push(node);
    this.stack.push({ node, inElse: false, start, end: this.pos });
  }
}

/** The construct's text: from its opener to its closing delimiter, or to the end of the text. */
function constructText(cps: readonly string[], r: Reject): string {
  let end = r.end;
  if (end === undefined) {
    const closer = cps[r.start + 1] === '%' ? '%' : '}';
    end = cps.length;
    for (let i = r.start + 2; i + 1 < cps.length; i++) {
      if (cps[i] === closer && cps[i + 1] === '}') {
        end = i + 2;
        break;
      }
    }
  }
  if (end - r.start > MAX_CONSTRUCT) return cps.slice(r.start, r.start + MAX_CONSTRUCT).join('') + '…';
  return cps.slice(r.start, end).join('');
}

/**
 * Parse a copy member ([OAR-COPY-3], [OAR-COPY-8]). Any `{{` or `{%` construct the grammar does not
 * derive is rejected with the construct verbatim and its code-point offset; the first one found
 * ends the parse.
 */
export function parseCopy(text: string): CopyParseResult {
  const cps = Array.from(text);
  try {
    return { ok: true, nodes: new Parser(cps).parse() };
  } catch (e) {
    if (!(e instanceof Reject)) throw e;
    const construct = constructText(cps, e);
    return {
      ok: false,
      message: `copy construct ${construct} at offset ${e.start} is not an Appendix C binding or conditional: ${e.reason}`,
      construct,
      offset: e.start,
    };
  }
}

/** Every binding and conditional name, in the order they appear in the text. */
function* names(nodes: readonly CopyNode[]): Generator<Exclude<CopyNode, { k: 'text' }>> {
  for (const n of nodes) {
    if (n.k === 'text') continue;
    yield n;
    if (n.k === 'if') {
      yield* names(n.then);
      yield* names(n.else);
    }
  }
}

/**
 * Load-time checks of a parsed copy member against the symbol environment ([OAR-FACT-27]).
 *
 * `facts` is every declared fact the template names, deduplicated, in first-occurrence order: each
 * is *referenced* by the rule for laziness, `requires` and portability ([OAR-COPY-5]), whichever
 * branch it sits in. Errors name the identifier: a name that is not a declared fact — including an
 * observation function, which copy cannot name ([OAR-COPY-2], [OAR-FACT-27]) — and a binding whose
 * fact type cannot be interpolated ([OAR-COPY-4]). A conditional may test any fact type, since every
 * type has a zero value ([OAR-FACT-25]).
 */
export function checkCopy(nodes: readonly CopyNode[], symbols: SymbolTable): { facts: FactSymbol[]; errors: CopyCheckError[] } {
  const facts: FactSymbol[] = [];
  const seen = new Set<string>();
  const errors: CopyCheckError[] = [];
  for (const n of names(nodes)) {
    const sym = symbols.lookup(n.name);
    if (sym === undefined) {
      const meant = closest(n.name, symbols.symbols.filter((x) => x.kind === 'fact').map((x) => x.name));
      errors.push({
        clause: 'OAR-COPY-2',
        message: `copy names ${n.name}, which is not a declared fact${meantHint(meant)}`,
        token: n.name,
        offset: n.offset,
        ...(meant === undefined ? {} : { suggestion: meant }),
      });
      continue;
    }
    if (sym.kind === 'function') {
      errors.push({
        clause: 'OAR-COPY-2',
        message: `copy names ${n.name}, which is an observation function; copy can name only facts (OAR-FACT-27)`,
        token: n.name,
        offset: n.offset,
      });
      continue;
    }
    if (!seen.has(sym.name)) {
      seen.add(sym.name);
      facts.push(sym);
    }
    if (n.k === 'binding' && !isCopyType(sym.type)) {
      errors.push({
        clause: 'OAR-COPY-4',
        message: `copy binding ${n.name} has type ${sym.type}, which cannot be interpolated; only bool, int, double, string and list<string> can`,
        token: n.name,
        offset: n.offset,
      });
    }
  }
  return { facts, errors };
}

/**
 * Lower a checked template to the runtime's data form. Facts are referenced by slot; `not` is
 * compiled away by swapping branches; adjacent literals are already merged by the parser. Calling
 * this on a template `checkCopy` rejected is a compiler bug and throws.
 */
export function compileCopyTemplate(nodes: readonly CopyNode[], symbols: SymbolTable): CopyProgram {
  const out: CopyPart[] = [];
  for (const n of nodes) {
    if (n.k === 'text') {
      out.push(n.text);
      continue;
    }
    const sym = symbols.lookup(n.name);
    if (sym === undefined || sym.kind !== 'fact') throw new Error(`copy names ${n.name}, which is not a fact; run checkCopy first`);
    if (n.k === 'binding') {
      if (!isCopyType(sym.type)) throw new Error(`copy binding ${n.name} of type ${sym.type}; run checkCopy first`);
      out.push({ slot: sym.slot, type: sym.type });
    } else {
      const yes = compileCopyTemplate(n.then, symbols);
      const no = compileCopyTemplate(n.else, symbols);
      out.push({ test: sym.slot, nonzero: n.negate ? no : yes, zero: n.negate ? yes : no });
    }
  }
  return out;
}
