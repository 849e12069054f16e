/**
 * How the proxy reads and rewrites tool results (mcp/result.ts): the content buffer, transforms
 * delivered faithfully or the result withheld ([OAR-PROF-10]), advisories appended.
 */
import { describe, expect, it } from 'vitest';
import { advisoryItems, blockedResult, contentBuffer, copyText, resultText, withAdvisories, withBuffer, withText, type ToolResult } from '../../mcp/result.js';

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

describe('structuredContent in the content buffer', () => {
  it('is left out when the text carries it (its JSON, or its every member is the text): the buffer is the text, as without it', () => {
    for (const r of [
      { content: [text('a'), text('b')] },
      { content: [text('x sk-1')], structuredContent: { content: 'x sk-1' } },
      { content: [text('x')], structuredContent: { a: ['x', { b: 'x' }], c: {} } },
      { content: [text('{"user":"ann","n":2}')], structuredContent: { n: 2, user: 'ann' } },
      { content: [text('x')], structuredContent: {} },
    ] as ToolResult[]) {
      expect(contentBuffer(r), JSON.stringify(r)).toEqual({ text: resultText(r), segments: resultText(r), hasText: true });
    }
  });

  it('is its canonical JSON, one more segment, when the text does not carry it', () => {
    expect(contentBuffer({ content: [text('done')], structuredContent: { key: 'sk-1' } }).text).toBe('done\n{"key":"sk-1"}');
    // Numbers and other strings are read too; keys sorted, numbers as binary64 ([OAR-COPY-10]),
    // control characters escaped (no raw newline).
    expect(contentBuffer({ content: [text('x')], structuredContent: { z: 'x', a: 4111111111111111, s: 'l1\nl2' } }).text).toBe('x\n{"a":4111111111111111.0,"s":"l1\\u000al2","z":"x"}');
    // Without a textual segment the buffer is the structured content alone.
    expect(contentBuffer({ content: [{ type: 'image', data: 'AA', mimeType: 'image/png' }], structuredContent: { k: 'sk-1' } }).text).toBe('{"k":"sk-1"}');
    expect(contentBuffer({ structuredContent: ['sk-1'] }).text).toBe('["sk-1"]');
  });

  it('maps a transform back: the text before the last newline, the structured content after it [OAR-OPS-16]', () => {
    const r: ToolResult = { content: [text('done sk-1'), { type: 'image', data: 'AA', mimeType: 'image/png' }], structuredContent: { key: 'sk-1', n: 1 }, _meta: { m: 1 } };
    const b = contentBuffer(r);
    expect(b.text).toBe('done sk-1\n{"key":"sk-1","n":1.0}');
    expect(withBuffer(r, b, b.text.replaceAll('sk-1', '[R]'))).toEqual({ content: [text('done [R]'), { type: 'image', data: 'AA', mimeType: 'image/png' }], structuredContent: { key: '[R]', n: 1 }, _meta: { m: 1 } });
    // Only the structured part changed; only the text changed.
    const only = { content: [text('done')], structuredContent: { key: 'sk-1' } };
    expect(withBuffer(only, contentBuffer(only), 'done\n{"key":"[R]"}')).toEqual({ content: [text('done')], structuredContent: { key: '[R]' } });
    expect(withBuffer(only, contentBuffer(only), 'DONE\n{"key":"sk-1"}')).toEqual({ content: [text('DONE')], structuredContent: { key: 'sk-1' } });
    const bare: ToolResult = { content: [], structuredContent: { key: 'sk-1' } };
    expect(withBuffer(bare, contentBuffer(bare), '{"key":"[R]"}')).toEqual({ content: [], structuredContent: { key: '[R]' } });
  });

  it('cannot deliver a transform that leaves the structured part no canonical JSON: the caller withholds [OAR-PROF-10]', () => {
    const r: ToolResult = { content: [text('done')], structuredContent: { key: 'sk-1' } };
    const b = contentBuffer(r);
    for (const t of ['done\n{"key":[R]}', 'done\n{ "key":"[R]" }', 'done [R]', 'done\n{"key":"a\nb"}']) {
      expect(withBuffer(r, b, t), t).toHaveProperty('unfaithful');
    }
  });

  it('throws when the structured content has no canonical JSON (the caller withholds the result)', () => {
    expect(() => contentBuffer({ content: [text('x')], structuredContent: { n: Infinity } })).toThrow(/finite/);
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
