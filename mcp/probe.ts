/**
 * The tools a server lists, asked of a separate instance of it started for the question (the
 * `--check-schemas` report is made before the client connects, and the proxied connection is the
 * client's alone: the proxy sends nothing of its own on it).
 */
import type { ListedTool } from './schemas.js';
import type { Sdk } from './sdk.js';

export interface ServerCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

export async function listServerTools(sdk: Sdk, server: ServerCommand, timeoutMs = 15_000): Promise<ListedTool[]> {
  const transport = new sdk.StdioClientTransport({ ...server, stderr: 'ignore' });
  const client = new sdk.Client({ name: 'oarc-mcp-check-schemas', version: '1' });
  try {
    await client.connect(transport, { timeout: timeoutMs });
    const tools: ListedTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: timeoutMs });
      tools.push(...page.tools.map((t) => ({ name: t.name, inputSchema: t.inputSchema as ListedTool['inputSchema'] })));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return tools;
  } finally {
    await client.close().catch(() => undefined);
  }
}
