/**
 * How the proxy reads and rewrites tool results (mcp/result.ts): the content buffer, transforms
 * delivered faithfully or the result withheld ([OAR-PROF-10]), advisories appended.
 */
import { describe, expect, it } from 'vitest';
import { advisoryItems, blockedResult, copyText, resultText, withAdvisories, withText, type ToolResult } from '../../mcp/result.js';

const text = (t: string) => ({ type: 'text', text: t });

describe('the content buffer', () => {
  it('is the text items and embedded resource text, in order, joined by newlines; other items are not text', () => {
    const r: ToolResult = {
      content: [text('a'), { type: 'image', data: 'AAAA', mimeType: 'image/png' }, { type: 'resource', resource: { uri: 'file:///x', text: 'b' } }, { type: 'resource', resource: { uri: 'file:///y', blob: 'AAAA' } }, text('c')],
    };
    expect(resultText(r)).toBe('a\nb\nc');
    expect(resultText({})).toBe('');
  });
});

describe('delivering a transformed buffer [OAR-OPS-16]', () => {
  it('rewrites a single text item in place and keeps every other member', () => {
    const r: ToolResult = { content: [{ type: 'text', text: 'key sk-1', annotations: { audience: ['user'] } }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }], _meta: { m: 1 } };
    expect(withText(r, 'key sk-1', 'key [R]')).toEqual({ content: [{ type: 'text', text: 'key [R]', annotations: { audience: ['user'] } }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }], _meta: { m: 1 } });
  });

  it('rewrites embedded resource text in place', () => {
    const r: ToolResult = { content: [{ type: 'resource', resource: { uri: 'file:///x', text: 'sk-1' } }] };
    expect(withText(r, 'sk-1', '[R]')).toEqual({ content: [{ type: 'resource', resource: { uri: 'file:///x', text: '[R]' } }] });
  });

  it('replaces several textual segments by one text item at the first one, keeping non-text items', () => {
    const img = { type: 'image', data: 'AAAA', mimeType: 'image/png' };
    const r: ToolResult = { content: [img, text('a sk-1'), text('b')] };
    expect(withText(r, 'a sk-1\nb', 'a [R]\nb')).toEqual({ content: [img, text('a [R]\nb')] });
  });

  it('rewrites structuredContent whose string member is the text', () => {
    const r: ToolResult = { content: [text('sk-1')], structuredContent: { content: 'sk-1', lines: 1 } };
    expect(withText(r, 'sk-1', '[R]')).toEqual({ content: [text('[R]')], structuredContent: { content: '[R]', lines: 1 } });
  });

  it('rewrites structuredContent whose JSON the text is', () => {
    const structured = { user: 'ann', token: 'sk-1' };
    const original = JSON.stringify(structured, null, 2);
    const redacted = original.replace('sk-1', '[R]');
    expect(withText({ content: [text(original)], structuredContent: structured }, original, redacted)).toEqual({ content: [text(redacted)], structuredContent: { user: 'ann', token: '[R]' } });
    // A transform that breaks the JSON cannot be delivered as structured content.
    expect(withText({ content: [text(original)], structuredContent: structured }, original, '[R]')).toHaveProperty('unfaithful');
  });

  it('refuses structuredContent holding text the buffer does not account for [OAR-PROF-10]', () => {
    const r: ToolResult = { content: [text('summary')], structuredContent: { summary: 'summary', secret: 'sk-1' } };
    expect(withText(r, 'summary', 'summ[R]')).toEqual({ unfaithful: expect.stringContaining('structuredContent') });
  });
});

describe('blocks and advisories', () => {
  const copy = { title: 'T', what: 'W', fix: 'F', instead: 'I' };
  it('renders a block as a tool error result carrying the copy [OAR-COPY-1]', () => {
    expect(blockedResult({ decision: 'block', rule: 'ns/R', copy, advisories: [] }, 'call')).toEqual({
      content: [text('[oarc] Tool call blocked by rule ns/R.\nT\nW\nFix: F\nInstead: I')],
      isError: true,
    });
    expect(copyText('h', null)).toBe('h');
  });

  it('appends one text item per advisory, in order [OAR-EVAL-20]', () => {
    const d = { decision: 'nudge' as const, rule: 'ns/A', copy: null, advisories: [{ code: 'A', rule: 'ns/A', copy: { what: 'one' } }, { code: 'B', rule: 'ns/B', copy: { what: 'two' } }] };
    const r = withAdvisories({ content: [text('out')], structuredContent: { x: 1 } }, advisoryItems(d));
    expect(r).toEqual({ content: [text('out'), text('[oarc] Nudge from rule ns/A:\none'), text('[oarc] Nudge from rule ns/B:\ntwo')], structuredContent: { x: 1 } });
    const r0 = { content: [text('out')] };
    expect(withAdvisories(r0, [])).toBe(r0);
  });
});
