/**
 * `oarc mcp` as a library: load the pack as `oarc serve` does (serve/pack.ts, serve/service.ts —
 * the same engine, counters, decision log), start the MCP server as a child over stdio, and proxy
 * the client's stdio to it through the pack (proxy.ts). bin/commands/mcp.ts adds the flags.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { loadPackFiles } from '../compiler/index.js';
import { occurrenceToJson, type Bundle, type Occurrence } from '../runtime/index.js';
import { didYouMean } from '../runtime/suggest.js';
import { checkValue } from '../runtime/values.js';
import { DecisionLog, type MaskPath } from '../serve/decision-log.js';
import { DEFAULT_BUCKETS, Metrics } from '../serve/metrics.js';
import type { PackSource } from '../serve/pack.js';
import { Service } from '../serve/service.js';
import { connectRedis, unresolvedWrites, type RedisConnect, type SharedStore } from '../serve/store.js';
import { listServerTools, type ServerCommand } from './probe.js';
import { McpProxy, type Anchors } from './proxy.js';
import { checkSchemas, usesOfBundle, usesOfPack, type SchemaProblem } from './schemas.js';
import { importSdk } from './sdk.js';
import { schemaProblem } from './schema-problem.js';
import { serverLineWriter, tapClientLines } from './lines.js';
import { plural } from '../runtime/plural.js';

export { McpProxy, type Anchors } from './proxy.js';
export { checkSchemas, type SchemaProblem } from './schemas.js';

/** Start-up problems the operator fixes: the message says what and how. */
export class McpStartError extends Error {
  override readonly name = 'McpStartError';
}

export interface McpOptions {
  source: PackSource;
  server: ServerCommand;
  /** `--fact name=value`, each a host fact of the capability. */
  facts?: readonly string[];
  redis?: RedisConnect;
  /** A file appended to, or `-` for stderr: stdout carries the protocol. */
  decisionLog?: string;
  /** Members of each logged occurrence replaced by `"***"` (`--log-mask`, as for oarc serve). */
  logMask?: readonly MaskPath[];
  verbose?: boolean;
  checkSchemas?: boolean;
  /** One line for stderr. */
  say: (line: string) => void;
  /** The client's side; default this process's stdin and stdout. */
  clientTransport?: Transport;
}

export interface RunningProxy {
  problems: SchemaProblem[];
  /** Resolves when either side has closed: `client` when the client went away, `server` when the server did. */
  closed: Promise<'client' | 'server'>;
  close(): Promise<void>;
}

/** The local anchors the capability maps `tool.pre_invoke`, `tool.post_invoke` and `model.tool_result` to. */
export function proxyAnchors(bundle: Bundle): Anchors {
  const core = bundle.capability.coreAnchors;
  const pre = core['tool.pre_invoke'];
  const results = [...new Set([core['tool.post_invoke'], core['model.tool_result']].filter((a): a is string => a !== undefined))];
  return { ...(pre === undefined ? {} : { pre }), results };
}

/** `name=value` for each host fact; the value is the text for a `string` fact, JSON for any other. */
export function parseFacts(bundle: Bundle, given: readonly string[]): Record<string, unknown> {
  const hostFacts = bundle.symbols.filter((s) => s.tier === 'host' && s.kind === 'fact');
  const facts: Record<string, unknown> = {};
  for (const g of given) {
    const eq = g.indexOf('=');
    if (eq <= 0) throw new McpStartError(`--fact ${g}: write it as <name>=<value>, e.g. --fact ${hostFacts[0]?.name ?? 'acme.workspace'}=/srv/work/`);
    const name = g.slice(0, eq);
    const sym = hostFacts.find((s) => s.name === name);
    if (sym === undefined || sym.kind !== 'fact') {
      const names = hostFacts.map((s) => s.name);
      throw new McpStartError(`--fact ${name}: the capability declares no host fact ${name}${didYouMean(name, names)}${names.length === 0 ? '' : `; its host facts are ${names.join(', ')}`}`);
    }
    const text = g.slice(eq + 1);
    try {
      facts[name] = sym.type === 'string' ? text : checkValue(sym.type, JSON.parse(text), `fact ${name}`);
    } catch (e) {
      throw new McpStartError(`--fact ${name}: a ${sym.type} written as JSON, not \`${text}\` (${e instanceof Error ? e.message : String(e)})`);
    }
  }
  return facts;
}

export async function startMcpProxy(o: McpOptions): Promise<RunningProxy> {
  const sdk = await importSdk();
  const metrics = new Metrics(DEFAULT_BUCKETS);
  let shared: SharedStore | undefined;
  let log: DecisionLog | undefined;
  const cleanup = async () => {
    await log?.close();
    const left = (await shared?.close()) ?? 0;
    if (left > 0) o.say(unresolvedWrites(left));
  };
  try {
    if (o.redis) shared = await connectRedis(o.redis, undefined, () => metrics.storeError());
    if (o.decisionLog !== undefined) log = new DecisionLog({ target: o.decisionLog === '-' ? process.stderr : o.decisionLog });
    const service = new Service({
      source: o.source,
      metrics,
      say: o.say,
      ...(shared ? { store: shared.store } : {}),
      ...(log ? { log } : {}),
      ...(o.logMask && o.logMask.length > 0 ? { mask: o.logMask } : {}),
    });
    const loaded = await service.load();
    const serving = service.take();
    if (!loaded.ok || serving === undefined) throw new McpStartError('the pack did not load (see above)');
    const anchors = proxyAnchors(serving.bundle);
    if (anchors.pre === undefined && anchors.results.length === 0) {
      throw new McpStartError('the capability maps none of tool.pre_invoke, tool.post_invoke, model.tool_result, so no rule could decide a tool call: map them under anchors.core');
    }
    const facts = parseFacts(serving.bundle, o.facts ?? []);

    let problems: SchemaProblem[] = [];
    if (o.checkSchemas) {
      let uses;
      if (o.source.kind === 'rules') {
        const r = loadPackFiles({ capability: o.source.capability, rules: o.source.rules, configs: o.source.configs });
        uses = r.ok ? usesOfPack(r.pack) : usesOfBundle(serving.bundle);
      } else {
        uses = usesOfBundle(serving.bundle);
        o.say('check-schemas: a compiled bundle keeps its selectors but not its conditions; give the rule documents to check the arguments they read too');
      }
      let tools;
      try {
        tools = await listServerTools(sdk, o.server);
      } catch (e) {
        throw new McpStartError(`check-schemas: could not list the server's tools: ${e instanceof Error ? e.message : String(e)}`);
      }
      problems = checkSchemas(uses, tools);
      for (const p of problems) o.say(`check-schemas: ${p.source}: rule ${p.rule} ${p.message}`);
      o.say(`check-schemas: ${plural(uses.length, 'rule')} against ${plural(tools.length, 'tool')}: ${problems.length === 0 ? 'no problems' : plural(problems.length, 'problem')}`);
    }

    const decide = async (occ: Occurrence, what: string) => {
      // The engine current now: a decision never straddles two packs (there is no reload yet, but the service allows one).
      const d = await service.decide(serving, occ, occurrenceToJson(occ));
      if (o.verbose) {
        o.say(`${what} at ${occ.anchor}: ${d.decision}${d.rule === null ? '' : ` (${d.rule})`}`);
        for (const t of d.applied) o.say(`  ${t.outcome} ${t.rule}${t.error ? `: ${t.error.message}` : ''}`);
      }
      return d;
    };

    const server = new sdk.StdioClientTransport({ ...o.server, stderr: 'inherit' });
    const client = o.clientTransport ?? new sdk.StdioServerTransport();
    const proxy = new McpProxy(client, server, { anchors, decide, facts, say: o.say, verbose: o.verbose ?? false });
    let side: ((s: 'client' | 'server') => void) | undefined;
    const closed = new Promise<'client' | 'server'>((r) => (side = r));
    server.onclose = () => side?.('server');
    client.onclose = () => side?.('client');
    // One line each: the SDK hands over its schema's errors whole, the issue tree as JSON.
    server.onerror = (e) => o.say(`server: ${schemaProblem(e)}`);
    client.onerror = (e) => o.say(`client: ${schemaProblem(e)}`);
    try {
      await server.start();
    } catch (e) {
      throw new McpStartError(`cannot start the server \`${[o.server.command, ...o.server.args].join(' ')}\`: ${e instanceof Error ? e.message : String(e)}`);
    }
    // Allowed tools/call go to the server as the client's own lines when both SDK transports let
    // the proxy reach them (lines.ts); otherwise re-serialised, and --verbose says which.
    const lineOf = tapClientLines(client, sdk.deserializeMessage);
    const writeLine = serverLineWriter(server);
    if (lineOf !== undefined && writeLine !== undefined) proxy.forwardLines({ lineOf, send: writeLine });
    if (o.verbose) {
      o.say(
        proxy.forwarding === 'lines'
          ? 'forwarding each allowed tools/call as the line the client wrote'
          : 'forwarding each allowed tools/call re-serialised from the message decided on (the transports do not give the client\'s lines)',
      );
    }
    await client.start();
    // The stdio server transport does not notice the end of stdin: the client closing it ends the session.
    if (o.clientTransport === undefined) process.stdin.once('end', () => side?.('client'));
    let closing: Promise<void> | undefined;
    const close = () =>
      (closing ??= (async () => {
        // As a client closing a stdio server does: end its stdin, and relay what it still answers
        // until it exits (the SDK's close: SIGTERM after 2 s, SIGKILL after 2 more); then stop.
        await proxy.settled();
        await server.close().catch(() => undefined);
        await proxy.settled();
        await client.close().catch(() => undefined);
        await cleanup();
      })());
    void closed.then(close);
    return { problems, closed, close };
  } catch (e) {
    await cleanup();
    throw e;
  }
}
