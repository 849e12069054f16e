/**
 * `pushAll` appends a list of any length: the lists it appends (a bundle's constants, a pack's
 * diagnostics) grow with the pack, and `push(...items)` of a 100,000-rule pack's constants made
 * `oarc compile` fail with "Maximum call stack size exceeded".
 */
import { describe, expect, it } from 'vitest';
import { pushAll } from '../compiler/arrays.js';

describe('pushAll', () => {
  const many = Array.from({ length: 1_000_000 }, (_, i) => i);

  it('appends a million items in order, where a spread call overflows the stack', () => {
    // The reason it exists: on this Node, the spread form fails at this size.
    expect(() => [0].push(...many)).toThrow(RangeError);
    const target = [-1];
    pushAll(target, many);
    expect(target.length).toBe(1_000_001);
    expect(target[0]).toBe(-1);
    expect(target[1]).toBe(0);
    expect(target[1_000_000]).toBe(999_999);
  });

  it('appends nothing for an empty list', () => {
    const target = [1, 2];
    pushAll(target, []);
    expect(target).toEqual([1, 2]);
  });
});
