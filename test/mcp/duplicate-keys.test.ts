/**
 * The duplicate-member scanner (mcp/duplicate-keys.ts) over raw JSON text: names compared as
 * decoded, at any depth, with strings that hold quotes, escapes and braces stepped over.
 */
import { describe, expect, it } from 'vitest';
import { pathText, scanDuplicateKeys } from '../../mcp/duplicate-keys.js';

const dup = (text: string) => {
  // Every case is text JSON.parse accepts: the scanner's question is one JSON.parse cannot answer.
  JSON.parse(text);
  const r = scanDuplicateKeys(text);
  return 'duplicate' in r ? r.duplicate : r;
};

describe('scanDuplicateKeys', () => {
  it('accepts JSON without a repeated member name, at any depth', () => {
    for (const t of [
      '{}',
      '[]',
      '"just a string"',
      '12.5e-3',
      'null',
      ' { "a" : 1 , "b" : [ 1 , { "a" : 2 } , [] , {} ] , "c" : { "a" : { "a" : true } } } ',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"name":"y","arguments":{}}}}',
      // The same name in sibling objects is not a repeat.
      '[{"k":1},{"k":2}]',
      // Names that differ by an escape that decodes to something else than case.
      '{"name":1,"n\\u0041mf":3}',
    ]) {
      expect(dup(t), t).toEqual({ ok: true });
    }
  });

  it('finds a repeat at the top level, and names the path of a nested one', () => {
    expect(dup('{"id":1,"id":2}')).toEqual({ key: 'id', path: [] });
    expect(dup('{"params":{"name":"safe","name":"rm"}}')).toEqual({ key: 'name', path: ['params'] });
    expect(dup('{"params":{"name":"t","arguments":{"a":{"b":[0,{"c":1,"d":2,"c":3}]}}}}')).toEqual({ key: 'c', path: ['params', 'arguments', 'a', 'b', 1] });
    expect(dup('{"params":{"arguments":{"p":"/tmp"},"arguments":{"p":"/etc"}}}')).toEqual({ key: 'arguments', path: ['params'] });
    // After a nested object closes, the outer object's names still count.
    expect(dup('{"a":{"x":1},"b":[{"y":2}],"a":3}')).toEqual({ key: 'a', path: [] });
  });

  it('compares names as decoded: \\u escapes spell the same name', () => {
    expect(dup('{"params":{"name":"safe","n\\u0061me":"rm"}}')).toEqual({ key: 'name', path: ['params'] });
    expect(dup('{"\\u006e\\u0061\\u006D\\u0065":1,"name":2}')).toEqual({ key: 'name', path: [] });
    expect(dup('{"a\\/b":1,"a/b":2}')).toEqual({ key: 'a/b', path: [] });
    expect(dup('{"tab\\t":1,"tab\\u0009":2}')).toEqual({ key: 'tab\t', path: [] });
    // A surrogate pair written as escapes is the character written as itself.
    expect(dup('{"\\ud83d\\ude00":1,"😀":2}')).toEqual({ key: '😀', path: [] });
    expect(dup('{"é":1,"\\u00e9":2}')).toEqual({ key: 'é', path: [] });
  });

  it('counts names that differ only in case as one, as Go\'s encoding/json matches them, and says both spellings', () => {
    expect(dup('{"name":1,"Name":2}')).toEqual({ key: 'Name', earlier: 'name', path: [] });
    expect(dup('{"params":{"arguments":{"path":"/ok","PATH":"/evil"}}}')).toEqual({ key: 'PATH', earlier: 'path', path: ['params', 'arguments'] });
    expect(dup('{"params":{"name":"read_text_file","arguments":{},"Name":"write_file"}}')).toEqual({ key: 'Name', earlier: 'name', path: ['params'] });
    // Decoded first: N\u0041ME is NAME.
    expect(dup('{"name":1,"N\\u0041ME":2}')).toEqual({ key: 'NAME', earlier: 'name', path: [] });
    // Unicode simple folding: KELVIN SIGN U+212A is k, LONG S U+017F is s (bytes.EqualFold).
    expect(dup('{"key":1,"\u212aey":2}')).toEqual({ key: '\u212aey', earlier: 'key', path: [] });
    expect(dup('{"\\u212aey":1,"KEY":2}')).toEqual({ key: 'KEY', earlier: '\u212aey', path: [] });
    expect(dup('{"ask":1,"a\u017fk":2}')).toEqual({ key: 'a\u017fk', earlier: 'ask', path: [] });
    // Greek final sigma folds with sigma; the micro sign with mu.
    expect(dup('{"\u03c3":1,"\u03c2":2}')).toEqual({ key: '\u03c2', earlier: '\u03c3', path: [] });
    expect(dup('{"\u00b5":1,"\u03bc":2}')).toEqual({ key: '\u03bc', earlier: '\u00b5', path: [] });
    // Over-refused, on purpose: the full upper-casing of ß is SS.
    expect(dup('{"stra\u00dfe":1,"STRASSE":2}')).toEqual({ key: 'STRASSE', earlier: 'stra\u00dfe', path: [] });
    // Siblings and different names are still not repeats.
    expect(dup('[{"k":1},{"K":2}]')).toEqual({ ok: true });
    expect(dup('{"a":1,"b":2,"\u00e9":3,"e":4}')).toEqual({ ok: true });
  });

  it('steps over strings holding quotes, backslashes, braces and things that look like members', () => {
    expect(dup('{"a":"\\"a\\":1, {\\"a\\":2}","b":"\\\\","c":"}{][,:"}')).toEqual({ ok: true });
    expect(dup('{"a":"x\\\\","a":1}')).toEqual({ key: 'a', path: [] });
    // A name ending in an escaped backslash, then its repeat.
    expect(dup('{"k\\\\":1,"k\\u005c":2}')).toEqual({ key: 'k\\', path: [] });
    // A quote inside a name.
    expect(dup('{"say \\"hi\\"":1,"say \\u0022hi\\u0022":2}')).toEqual({ key: 'say "hi"', path: [] });
  });

  it('is not stopped by deep nesting (no recursion)', () => {
    const deep = `${'['.repeat(100_000)}{"a":1,"a":2}${']'.repeat(100_000)}`;
    const r = scanDuplicateKeys(deep);
    expect('duplicate' in r && r.duplicate.key).toBe('a');
    expect('duplicate' in r && r.duplicate.path.length).toBe(100_000);
  });

  it('says malformed rather than guessing on text that is not JSON', () => {
    for (const t of ['', '{', '{"a":1', '{"a" 1}', '{"a":1,}', '{a:1}', '[1,]', '"open', '{"a":"\\x"}', '{"a":"\\u12"}', '{} {}', '{"a":\u0001}', '{"a":"\u0001"}']) {
      const r = scanDuplicateKeys(t);
      expect('malformed' in r, t).toBe(true);
    }
  });
});

describe('pathText', () => {
  it('writes a path as a reader would', () => {
    expect(pathText([])).toBe('');
    expect(pathText(['params', 'arguments', 'opts'])).toBe('params.arguments.opts');
    expect(pathText(['params', 'arguments', 'list', 2, 'x'])).toBe('params.arguments.list[2].x');
    expect(pathText(['params', 'arguments', 'a b'])).toBe('params.arguments["a b"]');
  });
});
