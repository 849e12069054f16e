/**
 * The lexer of Appendix A.1. Names are lexed greedily — the longest run of letters, digits and `_`
 * — so `international` and `insize` are identifiers and only a whole `in`, `true` or `false` is a
 * reserved word ([OAR-EXPR-24]). A dotted name is one identifier token ([OAR-EXPR-2]).
 * Whitespace separates tokens and is otherwise insignificant.
 */
import { ExprSyntaxError } from './syntax-error.js';

export type TokenKind =
  | 'ident' | 'int' | 'double' | 'string' | 'true' | 'false' | 'in'
  | '(' | ')' | '[' | ']' | ',' | '?' | ':'
  | '!' | '-' | '+' | '*' | '/' | '%'
  | '<' | '<=' | '>' | '>=' | '==' | '!='
  | '&&' | '||' | 'eof';

export interface Token {
  readonly kind: TokenKind;
  /** Source text of the token (for strings, the decoded value is in `value`). */
  readonly text: string;
  readonly value?: string;
  /** Code-point offset of the token's first character. */
  readonly offset: number;
}

const RESERVED: ReadonlySet<string> = new Set(['true', 'false', 'in']);

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isLetter = (c: number) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isNameStart = (c: number) => isLetter(c) || c === 0x5f;
const isNameChar = (c: number) => isNameStart(c) || isDigit(c);
const isHex = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;

const TWO_CHAR: ReadonlySet<string> = new Set(['<=', '>=', '==', '!=', '&&', '||']);
const ONE_CHAR: ReadonlySet<string> = new Set('()[],?:!-+*/%<>'.split(''));

export class Lexer {
  private pos = 0; // UTF-16 index
  private cp = 0; // code-point offset of `pos`

  constructor(private readonly src: string) {}

  /** Advance one code unit, keeping the code-point offset (a surrogate pair counts once). */
  private step(): void {
    const c = this.src.charCodeAt(this.pos);
    this.pos++;
    if (!(isLowSurrogate(c) && this.pos >= 2 && isHighSurrogate(this.src.charCodeAt(this.pos - 2)))) this.cp++;
  }

  next(): Token {
    const src = this.src;
    while (this.pos < src.length && isSpace(src.charCodeAt(this.pos))) this.step();
    const offset = this.cp;
    if (this.pos >= src.length) return { kind: 'eof', text: '', offset };
    const start = this.pos;
    const c = src.charCodeAt(start);

    if (isNameStart(c)) return this.name(start, offset);
    if (isDigit(c)) return this.number(start, offset);
    if (c === 0x22 || c === 0x27) return this.string(start, offset, c);

    const two = src.slice(start, start + 2);
    if (two === '//' || two === '/*') {
      throw new ExprSyntaxError('comment', offset, 'comments are not part of the condition language', 'OAR-EXPR-6');
    }
    if (TWO_CHAR.has(two)) {
      this.step();
      this.step();
      return { kind: two as TokenKind, text: two, offset };
    }
    const one = src[start] as string;
    if (ONE_CHAR.has(one)) {
      this.step();
      return { kind: one as TokenKind, text: one, offset };
    }
    if (one === '.') {
      throw new ExprSyntaxError('.', offset, 'field selection is not part of the condition language; a dotted name is a single identifier', 'OAR-EXPR-2');
    }
    if (one === '=' || one === '&' || one === '|') {
      throw new ExprSyntaxError(one, offset, `unexpected '${one}' (did you mean '${one}${one}'?)`, 'OAR-EXPR-1');
    }
    const ch = String.fromCodePoint(src.codePointAt(start) as number);
    throw new ExprSyntaxError(ch, offset, `unexpected character ${JSON.stringify(ch)}`, 'OAR-EXPR-1');
  }

  private name(start: number, offset: number): Token {
    const src = this.src;
    for (;;) {
      while (this.pos < src.length && isNameChar(src.charCodeAt(this.pos))) this.step();
      // identifier = name { "." name }: a dot continues the identifier only when a name follows.
      if (src.charCodeAt(this.pos) === 0x2e) {
        if (this.pos + 1 < src.length && isNameStart(src.charCodeAt(this.pos + 1))) {
          this.step();
          continue;
        }
        const partial = src.slice(start, this.pos + 1);
        throw new ExprSyntaxError(partial, this.cp, `'${partial}' is not an identifier: a '.' must be followed by a name (there is no field selection)`, 'OAR-EXPR-2');
      }
      break;
    }
    const text = src.slice(start, this.pos);
    const kind: TokenKind = RESERVED.has(text) ? (text as TokenKind) : 'ident';
    return { kind, text, offset };
  }

  private number(start: number, offset: number): Token {
    const src = this.src;
    while (this.pos < src.length && isDigit(src.charCodeAt(this.pos))) this.step();
    if (src.charCodeAt(this.pos) === 0x2e) {
      // double = digit { digit } "." digit { digit }: a fraction needs at least one digit.
      if (!isDigit(src.charCodeAt(this.pos + 1))) {
        throw new ExprSyntaxError(src.slice(start, this.pos + 1), offset, `malformed number '${src.slice(start, this.pos + 1)}': a double needs digits after the '.'`, 'OAR-EXPR-1');
      }
      this.step();
      while (this.pos < src.length && isDigit(src.charCodeAt(this.pos))) this.step();
      return { kind: 'double', text: src.slice(start, this.pos), offset };
    }
    return { kind: 'int', text: src.slice(start, this.pos), offset };
  }

  private string(start: number, offset: number, quote: number): Token {
    const src = this.src;
    this.step(); // opening quote
    let out = '';
    let runStart = this.pos;
    for (;;) {
      if (this.pos >= src.length) {
        // Name the quote that opened it, single or double ([OAR-EXPR-1]).
        throw new ExprSyntaxError(String.fromCharCode(quote), offset, 'unterminated string literal', 'OAR-EXPR-1');
      }
      const c = src.charCodeAt(this.pos);
      if (c === quote) {
        out += src.slice(runStart, this.pos);
        this.step();
        return { kind: 'string', text: src.slice(start, this.pos), value: out, offset };
      }
      if (c === 0x0a || c === 0x0d) {
        throw new ExprSyntaxError('line break', this.cp, 'a string literal cannot contain a line break (write \\n)', 'OAR-EXPR-1');
      }
      if (c !== 0x5c) {
        this.step();
        continue;
      }
      // An escape ([OAR-EXPR-3]): exactly \\ \" \' \n \r \t and \u with four hex digits.
      out += src.slice(runStart, this.pos);
      const escOffset = this.cp;
      const e = src[this.pos + 1];
      let decoded: string | undefined;
      let len = 2;
      switch (e) {
        case '\\': decoded = '\\'; break;
        case '"': decoded = '"'; break;
        case "'": decoded = "'"; break;
        case 'n': decoded = '\n'; break;
        case 'r': decoded = '\r'; break;
        case 't': decoded = '\t'; break;
        case 'u': {
          const hex = src.slice(this.pos + 2, this.pos + 6);
          if (hex.length === 4 && [0, 1, 2, 3].every((i) => isHex(hex.charCodeAt(i)))) {
            // Consecutive \u escapes of a surrogate pair form one code point, as in JSON.
            decoded = String.fromCharCode(parseInt(hex, 16));
            len = 6;
          }
          break;
        }
      }
      if (decoded === undefined) {
        // Name the escape as written: for a short `\u` only its hex digits, not the quote after them.
        const shown = e === undefined ? '\\' : e === 'u' ? '\\u' + /^[0-9A-Fa-f]{0,3}/.exec(src.slice(this.pos + 2, this.pos + 5))![0] : '\\' + String.fromCodePoint(src.codePointAt(this.pos + 1) as number);
        throw new ExprSyntaxError(shown, escOffset, `invalid escape ${JSON.stringify(shown)} in string literal`, 'OAR-EXPR-3');
      }
      out += decoded;
      for (let i = 0; i < len; i++) this.step();
      runStart = this.pos;
    }
  }
}
