/**
 * The MCP SDK (`@modelcontextprotocol/sdk`) is an optional peer dependency, as ioredis is: it
 * brings an HTTP stack (express, hono, …) that a host embedding only the engine does not need, so
 * `oarc mcp` imports it when it runs and says how to install it when it is missing.
 */
import type { StdioClientTransport, StdioServerParameters } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export const SDK = '@modelcontextprotocol/sdk';

export interface Sdk {
  StdioClientTransport: new (p: StdioServerParameters) => StdioClientTransport;
  StdioServerTransport: new () => StdioServerTransport;
  Client: new (info: { name: string; version: string }) => Client;
  /** How the SDK's stdio transports read one line: JSON.parse, then its JSON-RPC message schema. */
  deserializeMessage: (line: string) => JSONRPCMessage;
}

export class SdkMissingError extends Error {
  override readonly name = 'SdkMissingError';
}

export async function importSdk(): Promise<Sdk> {
  try {
    const [client, server, core, stdio] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/stdio.js'),
      import('@modelcontextprotocol/sdk/server/stdio.js'),
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/shared/stdio.js'),
    ]);
    return { StdioClientTransport: client.StdioClientTransport, StdioServerTransport: server.StdioServerTransport, Client: core.Client, deserializeMessage: stdio.deserializeMessage };
  } catch (e) {
    // Only the SDK itself missing; a broken installation of it keeps its own error.
    if ((e as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' && (e as Error).message.includes(`'${SDK}`)) {
      throw new SdkMissingError(`oarc mcp needs ${SDK}, an optional peer dependency of oarc that is not installed: run \`npm install ${SDK}\``, { cause: e });
    }
    throw e;
  }
}
