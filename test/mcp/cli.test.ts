/**
 * `oarc mcp` on the command line: help, usage errors and start-up failures are one line naming
 * what is wrong, with the exit statuses bin/errors.ts defines — never a hang or a stack trace.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../support/build.js';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { CLI, EX, FS_SERVER, PACK, sandbox } from './support.js';

const FAKE = join(import.meta.dirname, 'fake-server.mjs');
const oarc = (args: string[], input = '') => spawnSync(process.execPath, [CLI, 'mcp', ...args], { encoding: 'utf8', timeout: 30_000, input, env: { ...process.env, NO_COLOR: '1' } });

beforeAll(() => ensureBuilt(['bin', 'compiler', 'runtime', 'packtest', 'serve', 'mcp', 'injection']));

describe('oarc mcp', () => {
  it('prints its help, and is listed in the top-level help', () => {
    const r = oarc(['--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Usage: oarc mcp /);
    expect(r.stdout).toContain('--check-schemas');
    const top = spawnSync(process.execPath, [CLI, '--help'], { encoding: 'utf8' });
    expect(top.stdout).toMatch(/\n {2}mcp {10}put a pack in front of an MCP server/);
  });

  it('needs the server command after --', () => {
    const r = oarc(PACK);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('oarc mcp: no server command: give it after `--`');
    expect(oarc([...PACK, '--']).stderr).toContain('no server command after `--`');
  });

  it('needs --capability with rule documents, and names an unknown flag', () => {
    expect(oarc([join(EX, 'rules.yaml'), '--', 'x']).stderr).toContain('missing --capability <file>');
    const r = oarc([...PACK, '--verbos', '--', 'x']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('unknown option --verbos (did you mean `--verbose`?)');
  });

  it('refuses a --fact the capability does not declare, with the nearest name', () => {
    const r = oarc([...PACK, '--fact', 'oarc.mcp.workspce=/w/', '--', process.execPath, FS_SERVER, '/tmp']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('oarc mcp: --fact oarc.mcp.workspce: the capability declares no host fact oarc.mcp.workspce (did you mean `oarc.mcp.workspace`?)');
  });

  it('takes a --fact without `=` for the usage error it is (exit 2), naming the syntax', () => {
    const r = oarc([...PACK, '--fact', 'oarc.mcp.workspace', '--', 'x']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('oarc mcp: --fact oarc.mcp.workspace: write it as --fact name=value, e.g. --fact oarc.mcp.workspace=<value>');
    const empty = oarc([...PACK, '--fact', '=x', '--', 'x']);
    expect(empty.status).toBe(2);
    expect(empty.stderr).toContain('oarc mcp: --fact =x: write it as --fact name=value');
  });

  it('--log-mask keeps what the pack protects out of the decision log, as oarc serve\'s does', () => {
    const box = sandbox();
    try {
      const log = join(box.root, 'decisions.jsonl');
      const secret = 'sk-demo0123456789abcdefgh';
      // The fake server echoes the call in its result: the secret is in the arguments and in the content.
      const lines = [
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}',
        `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/w/a","token":"${secret}"}}}`,
      ];
      const args = [...PACK, '--fact', 'oarc.mcp.workspace=/w/', '--decision-log', log, '--log-mask', '/content', '--log-mask', '/tool_call/arguments/token'];
      const r = oarc([...args, '--', process.execPath, FAKE, join(box.root, 'received')], `${lines.join('\n')}\n`);
      expect(r.status, r.stderr).toBe(0);
      // The client gets the redacted result; the log has neither the secret nor the redacted text.
      expect(r.stdout).toContain('[REDACTED SECRET]');
      expect(r.stdout).not.toContain(secret);
      const logged = readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { anchor: string; occurrence: Record<string, unknown> });
      expect(logged.map((l) => l.anchor)).toEqual(['tool.pre_invoke', 'tool.post_invoke']);
      expect(logged[0]?.occurrence.tool_call).toEqual({ name: 'read_text_file', arguments: { path: '/w/a', token: '***' } });
      expect(logged[1]?.occurrence.content).toBe('***');
      expect(readFileSync(log, 'utf8')).not.toContain(secret);

      // Usage errors, as for oarc serve.
      const noLog = oarc([...PACK, '--log-mask', '/content', '--', 'x']);
      expect(noLog.status).toBe(2);
      expect(noLog.stderr).toContain('--log-mask applies to the decision log: give --decision-log <file|-> too');
      const bad = oarc([...PACK, '--decision-log', '-', '--log-mask', 'content', '--', 'x']);
      expect(bad.status).toBe(2);
      expect(bad.stderr).toContain('--log-mask: `content` is not a path');
    } finally {
      rmSync(box.root, { recursive: true, force: true });
    }
  });

  it('says when the server cannot be started', () => {
    const r = oarc([...PACK, '--', join(EX, 'no-such-server')]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/oarc mcp: cannot start the server `.*no-such-server`: .*ENOENT/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('exits 1 with the diagnostics when the pack does not load', () => {
    const r = oarc([join(EX, 'rules.yaml'), '--capability', join(EX, 'detectors.mjs'), '--', 'x']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('oarc mcp: load failed; no pack is being served');
  });

  it('exits 0 when the client closes its end', () => {
    const r = oarc([...PACK, '--fact', 'oarc.mcp.workspace=/w/', '--', process.execPath, FS_SERVER, '/tmp']);
    expect(r.stderr).toContain('loaded revision');
    expect(r.status).toBe(0);
  });

  it('answers what a client sent before closing its end, then exits 0 (raw JSON-RPC lines on stdio)', () => {
    const box = sandbox();
    try {
      writeFileSync(join(box.workspace, 'a.txt'), 'token sk-abcdefghijklmnopqrstuvwxyz\n');
      const lines = [
        { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'write_file', arguments: { path: join(box.root, 'evil.txt'), content: 'x' } } },
        { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'read_text_file', arguments: { path: join(box.workspace, 'a.txt') } } },
      ];
      const r = oarc([...PACK, '--fact', `oarc.mcp.workspace=${box.workspace}/`, '--', process.execPath, FS_SERVER, box.root], lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
      expect(r.status, r.stderr).toBe(0);
      const out = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: number; result: { content: { text: string }[]; isError?: boolean } });
      expect(out.map((m) => m.id).sort()).toEqual([1, 2, 3]);
      expect(out.find((m) => m.id === 2)?.result.isError).toBe(true);
      expect(out.find((m) => m.id === 3)?.result.content[0]?.text).toBe('token [REDACTED SECRET]\n');
      expect(existsSync(join(box.root, 'evil.txt'))).toBe(false);
    } finally {
      rmSync(box.root, { recursive: true, force: true });
    }
  });
});
