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
      // Names that differ only in case, or by an escape that decodes to something else.
      '{"name":1,"Name":2,"n\\u0041me":3}',
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
