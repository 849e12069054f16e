/**
 * mcp/line-breaks.ts: a line the proxy writes holds nothing a server's line reader splits at
 * (a raw CR, LF, U+0085, U+2028, U+2029), and is the same JSON value as the text it came from.
 */
import { describe, expect, it } from 'vitest';
import { parseJson } from '../../compiler/load/json.js';
import { lineBreakInSerialised, withoutLineBreaks } from '../../mcp/line-breaks.js';

const BREAK = /[\r\n\u0085\u2028\u2029]/;
const exact = (t: string) => parseJson(t, { maxDepth: 64, bigInts: true }).value;

describe('withoutLineBreaks', () => {
  it('respells CR/LF whitespace as a space and U+0085/U+2028/U+2029 in strings as escapes, keeping the value', () => {
    const texts = [
      '{"a":\r{"jsonrpc":"2.0","id":4,"method":"tools/call"}\r}',
      '\r\n{ "k" :\r\n[1,\r2]\n}\r',
      '{"s":"a\u2028b\u2029c\u0085d","\u2028key":"\\u2028 already escaped","n":12345678901234567890}',
      '"\u2028"',
      '{"back":"\\\\\u2028"}',
      JSON.stringify({ s: 'x\u2028y', t: 'line\r\nbreak' }),
    ];
    for (const t of texts) {
      const out = withoutLineBreaks(t);
      expect(out, JSON.stringify(t)).not.toMatch(BREAK);
      expect(JSON.parse(out)).toEqual(JSON.parse(t));
      expect(exact(out)).toEqual(exact(t));
    }
    expect(withoutLineBreaks('{"a":"\u2028"}')).toBe('{"a":"\\u2028"}');
    expect(withoutLineBreaks('{"a":\r1}')).toBe('{"a": 1}');
    // Text without them is left as it is.
    const plain = '{ "a" : "b\\r\\n" , "c":[1.50] }';
    expect(withoutLineBreaks(plain)).toBe(plain);
  });
});

describe('lineBreakInSerialised', () => {
  it('names the first U+0085/U+2028/U+2029 in JSON.stringify output (which escapes CR and LF)', () => {
    expect(lineBreakInSerialised(JSON.stringify({ a: 'x\r\ny' }))).toBeUndefined();
    expect(lineBreakInSerialised(JSON.stringify({ a: 'x\u2029y\u2028' }))).toBe('U+2029 (PARAGRAPH SEPARATOR)');
    expect(lineBreakInSerialised(JSON.stringify({ a: '\u0085' }))).toBe('U+0085 (NEXT LINE)');
  });
});
