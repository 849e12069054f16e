/**
 * The JSON parser's syntax errors name what the text holds: `not json` is "unexpected `not`", not
 * "expected null" (the literal its first letter happened to start).
 */
import { describe, expect, it } from 'vitest';
import { JsonError, parseJson } from '../../compiler/load/json.js';

function errorOf(text: string): string {
  try {
    parseJson(text, { maxDepth: 100, bigInts: false });
  } catch (e) {
    if (e instanceof JsonError) return e.message;
    throw e;
  }
  throw new Error(`${text} parsed`);
}

const VALUE = 'a JSON value is an object, an array, a string in double quotes, a number, true, false or null';

describe('JSON syntax errors', () => {
  it('a bare word where a value should be is quoted whole, with what a value is', () => {
    expect(errorOf('not json')).toBe(`unexpected \`not\` where a value should be; ${VALUE}`);
    expect(errorOf('{"anchor": yes}')).toBe(`unexpected \`yes\` where a value should be; ${VALUE}`);
  });

  it('a misspelt literal gets a did-you-mean', () => {
    expect(errorOf('[nul]')).toBe(`unexpected \`nul\` where a value should be (did you mean \`null\`?); ${VALUE}`);
    expect(errorOf('True')).toContain('(did you mean `true`?)');
  });
});
