/**
 * `oarc mcp` on the command line: help, usage errors and start-up failures are one line naming
 * what is wrong, with the exit statuses bin/errors.ts defines — never a hang or a stack trace.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../support/build.js';
import { CLI, EX, FS_SERVER, PACK } from './support.js';

const oarc = (args: string[]) => spawnSync(process.execPath, [CLI, 'mcp', ...args], { encoding: 'utf8', timeout: 30_000, input: '', env: { ...process.env, NO_COLOR: '1' } });

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
    expect(oarc([...PACK, '--fact', 'oarc.mcp.workspace', '--', 'x']).stderr).toContain('write it as <name>=<value>');
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
});
