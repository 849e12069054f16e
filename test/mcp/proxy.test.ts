/**
 * `oarc mcp` end to end: the example pack (examples/mcp) in front of the real filesystem MCP
 * server over a temp directory, driven by the SDK's own Client.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../support/build.js';
import { PACK, direct, sandbox, texts, throughProxy, type Connected } from './support.js';

const SECRET = 'sk-live0123456789abcdefghij';
let box: { root: string; workspace: string };
let proxied: Connected;
let log = '';

beforeAll(async () => {
  ensureBuilt(['bin', 'compiler', 'runtime', 'packtest', 'serve', 'mcp', 'injection']);
  box = sandbox();
  writeFileSync(join(box.workspace, 'notes.txt'), 'hello from the workspace\n');
  writeFileSync(join(box.workspace, 'config.env'), `API_KEY=${SECRET}\nMODE=prod\n`);
  writeFileSync(join(box.workspace, 'repeat.txt'), 'same again\n');
  log = join(box.root, 'decisions.jsonl');
  proxied = await throughProxy([...PACK, '--fact', `oarc.mcp.workspace=${box.workspace}/`, '--decision-log', log, '--verbose'], box.root);
}, 60_000);

afterAll(async () => {
  await proxied?.close();
  rmSync(box.root, { recursive: true, force: true });
});

const call = (c: Connected, name: string, args: Record<string, unknown>) => c.client.callTool({ name, arguments: args });

describe('oarc mcp in front of server-filesystem', () => {
  it('passes tools/list through as the server lists it', async () => {
    const d = await direct(box.root);
    try {
      expect((await proxied.client.listTools()).tools).toEqual((await d.client.listTools()).tools);
    } finally {
      await d.close();
    }
  });

  it('lets a read inside the directory through, unchanged', async () => {
    const r = await call(proxied, 'read_text_file', { path: join(box.workspace, 'notes.txt') });
    expect(r.isError ?? false).toBe(false);
    expect(texts(r)).toEqual(['hello from the workspace\n']);
    expect(r.structuredContent).toEqual({ content: 'hello from the workspace\n' });
  });

  it('lets a write inside the workspace through (the server does write)', async () => {
    const inside = join(box.workspace, 'inside.txt');
    const r = await call(proxied, 'write_file', { path: inside, content: 'written' });
    expect(r.isError ?? false).toBe(false);
    expect(readFileSync(inside, 'utf8')).toBe('written');
  });

  it('blocks a write outside the workspace before it reaches the server [OAR-PROF-10]', async () => {
    // Inside the directory the server allows, outside the workspace the pack allows.
    const outside = join(box.root, 'outside.txt');
    const r = await call(proxied, 'write_file', { path: outside, content: 'should never be written' });
    expect(r.isError).toBe(true);
    const [text] = texts(r);
    // [OAR-COPY-1] the rendered copy, bindings substituted.
    expect(text).toContain('Tool call blocked by rule oarc.mcp.fs/WRITE_OUTSIDE_WORKSPACE');
    expect(text).toContain('Write outside the workspace');
    expect(text).toContain(`The write_file call would change a file outside ${box.workspace}/.`);
    expect(existsSync(outside)).toBe(false);
    // A path climbing out of the workspace with `..` is outside it too.
    const climbing = await call(proxied, 'write_file', { path: `${box.workspace}/../climb.txt`, content: 'x' });
    expect(climbing.isError).toBe(true);
    expect(existsSync(join(box.root, 'climb.txt'))).toBe(false);
  });

  it('redacts a planted secret in a result before the client sees it [OAR-OPS-16]', async () => {
    const r = await call(proxied, 'read_text_file', { path: join(box.workspace, 'config.env') });
    expect(r.isError ?? false).toBe(false);
    expect(texts(r)).toEqual(['API_KEY=[REDACTED SECRET]\nMODE=prod\n']);
    // The structured form carries the same text, redacted the same way (the SDK client checks it against the outputSchema).
    expect(r.structuredContent).toEqual({ content: 'API_KEY=[REDACTED SECRET]\nMODE=prod\n' });
    expect(JSON.stringify(r)).not.toContain(SECRET);
  });

  it('nudges the third identical call, appending the advisory to the result', async () => {
    const args = { path: join(box.workspace, 'repeat.txt') };
    const first = await call(proxied, 'read_text_file', args);
    const second = await call(proxied, 'read_text_file', args);
    const third = await call(proxied, 'read_text_file', args);
    expect(texts(first)).toEqual(['same again\n']);
    expect(texts(second)).toEqual(['same again\n']);
    const [content, advisory] = texts(third);
    expect(content).toBe('same again\n');
    expect(advisory).toContain('[oarc] Nudge from rule oarc.mcp.loops/NUDGE_REPEAT');
    expect(advisory).toContain('This exact read_text_file call has been made twice already.');
    expect(advisory).toContain('Instead: Use the result you already have');
    expect(third.isError ?? false).toBe(false);
    // A different call is not a repeat.
    expect(texts(await call(proxied, 'read_text_file', { path: join(box.workspace, 'notes.txt'), head: 1 }))).toHaveLength(1);
  });

  it('writes each decision to the decision log in the oarc serve format, and in words with --verbose', async () => {
    // The log is written behind the responses: wait for the block to be in it.
    let lines: Record<string, unknown>[] = [];
    for (let i = 0; i < 50; i++) {
      lines = existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) : [];
      if (lines.some((l) => l.decision === 'block')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const block = lines.find((l) => l.decision === 'block');
    expect(block).toMatchObject({ anchor: 'tool.pre_invoke', rule: 'oarc.mcp.fs/WRITE_OUTSIDE_WORKSPACE', revision: expect.any(String), session: expect.any(String) });
    expect(block?.occurrence).toMatchObject({ tool_call: { name: 'write_file', arguments: { path: join(box.root, 'outside.txt') } } });
    expect(block?.applied).toContainEqual({ rule: 'oarc.mcp.fs/WRITE_OUTSIDE_WORKSPACE', outcome: 'fired' });
    expect(lines.some((l) => l.anchor === 'tool.post_invoke' && l.decision === 'transform')).toBe(true);
    // One MCP session for the whole connection.
    expect(new Set(lines.map((l) => l.session)).size).toBe(1);
    expect(proxied.stderr()).toContain('oarc mcp: tools/call write_file at tool.pre_invoke: block (oarc.mcp.fs/WRITE_OUTSIDE_WORKSPACE)');
    expect(proxied.stderr()).toContain('oarc mcp:   fired oarc.mcp.fs/WRITE_OUTSIDE_WORKSPACE');
  });
});

describe('--check-schemas', () => {
  it('flags a rule reading an argument the read tool does not have, with the nearest name', async () => {
    const bad = join(box.root, 'bad.yaml');
    writeFileSync(
      bad,
      [
        'oar: "1.0"', 'id: HEAD_TOO_BIG', 'namespace: t', 'kind: policy', 'anchor: tool.pre_invoke',
        'selector: { tool: [ read_text_file, read_fille ] }', 'requires: { profiles: [ tool ] }',
        `when: 'tool_arg_int("heads") > 100 || starts_with(tool_arg_string("Path"), "/etc")'`, 'effect: block', '',
      ].join('\n'),
    );
    const c = await throughProxy([...PACK, bad, '--fact', `oarc.mcp.workspace=${box.workspace}/`, '--check-schemas'], box.root);
    try {
      const err = c.stderr();
      expect(err).toContain('rule t/HEAD_TOO_BIG reads tool_arg_int("heads"), but tool read_text_file declares no argument "heads" (it takes path, tail, head) (did you mean `head`?)');
      expect(err).toContain('rule t/HEAD_TOO_BIG reads tool_arg_string("Path"), but tool read_text_file declares no argument "Path" (it takes path, tail, head) (did you mean `path`?)');
      expect(err).toContain('rule t/HEAD_TOO_BIG selects tool "read_fille", which the server does not list (did you mean `read_file`?)');
      expect(err).toMatch(/check-schemas: 6 rules against \d+ tools: 3 problems/);
      // The example pack's own rules name only what the server has.
      expect(err).not.toMatch(/rule oarc\.mcp/);
      // And the proxy then serves as usual.
      expect(texts(await call(c, 'read_text_file', { path: join(box.workspace, 'notes.txt') }))).toEqual(['hello from the workspace\n']);
    } finally {
      await c.close();
    }
  }, 60_000);
});
