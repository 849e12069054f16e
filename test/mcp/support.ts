/**
 * The built `oarc mcp` in front of the real @modelcontextprotocol/server-filesystem, driven by the
 * SDK's own Client over stdio — what an MCP client application does.
 */
import { mkdirSync, mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ROOT } from '../support/build.js';

export const CLI = join(ROOT, 'dist', 'bin', 'oarc.js');
export const EX = join(ROOT, 'examples', 'mcp');
export const PACK = [join(EX, 'rules.yaml'), '--capability', join(EX, 'capability.yaml'), '--detectors', join(EX, 'detectors.mjs')];
/** The server's bin, from node_modules: no npx, no network. */
export const FS_SERVER = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');

/** A temp directory the server may use, with a workspace inside it (real paths: the server resolves symlinks). */
export function sandbox(): { root: string; workspace: string } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'oarc-mcp-')));
  const workspace = join(root, 'workspace');
  mkdirSync(workspace);
  return { root, workspace };
}

export interface Connected {
  client: Client;
  /** What the proxy wrote on stderr so far. */
  stderr(): string;
  close(): Promise<void>;
}

const env = (): Record<string, string> => Object.fromEntries(Object.entries({ ...process.env, NO_COLOR: '1' }).filter((e): e is [string, string] => e[1] !== undefined));

async function connect(command: string, args: string[]): Promise<Connected> {
  const transport = new StdioClientTransport({ command, args, env: env(), stderr: 'pipe', cwd: ROOT });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const client = new Client({ name: 'oarc-mcp-test', version: '1' });
  try {
    await client.connect(transport);
  } catch (e) {
    throw new Error(`could not connect: ${String(e)}\nstderr:\n${err}`);
  }
  return { client, stderr: () => err, close: () => client.close() };
}

/** The SDK client connected to `oarc mcp <oarcArgs> -- node <server bin> <root>`. */
export function throughProxy(oarcArgs: readonly string[], root: string): Promise<Connected> {
  return connect(process.execPath, [CLI, 'mcp', ...oarcArgs, '--', process.execPath, FS_SERVER, root]);
}

/** The SDK client connected to the server itself. */
export function direct(root: string): Promise<Connected> {
  return connect(process.execPath, [FS_SERVER, root]);
}

/** The text items of a tool result's content. */
export function texts(result: unknown): string[] {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.filter((c) => c.type === 'text').map((c) => c.text as string);
}
