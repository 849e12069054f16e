/**
 * "Did you mean": the nearest declared name within a third of its length in edits (runtime/suggest.ts).
 */
import { describe, expect, it } from 'vitest';
import { closest, didYouMean } from '../runtime/suggest.js';

describe('closest', () => {
  it('finds one edit, a swap of neighbours, and a case or separator difference', () => {
    expect(closest('tool.pre_invok', ['tool.post_invoke', 'tool.pre_invoke'])).toBe('tool.pre_invoke');
    expect(closest('tool.pre_invoek', ['tool.pre_invoke'])).toBe('tool.pre_invoke');
    expect(closest('tool_call', ['toolCall', 'content'])).toBe('toolCall');
    expect(closest('Session', ['session'])).toBe('session');
    expect(closest('acme.coder.workspce_root', ['acme.coder.workspace_root', 'acme.coder.tier'])).toBe('acme.coder.workspace_root');
  });

  it('offers nothing far away, nothing for the name itself, and the first of equals', () => {
    expect(closest('verdict', ['anchor', 'session', 'facts'])).toBeUndefined();
    expect(closest('ab', ['xy'])).toBeUndefined();
    expect(closest('tool', ['tool'])).toBeUndefined();
    expect(closest('cat', ['bat', 'hat'])).toBe('bat');
    expect(closest('', ['a'])).toBe('a');
  });

  it('counts code points, not UTF-16 units', () => {
    expect(closest('😀bc', ['abc'])).toBe('abc');
  });

  it('didYouMean wraps the suggestion, or says nothing', () => {
    expect(didYouMean('toool', ['tool'])).toBe(' (did you mean `tool`?)');
    expect(didYouMean('zzzzzz', ['tool'])).toBe('');
  });
});
