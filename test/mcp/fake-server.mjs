// A stand-in MCP server over stdio for the tests: it appends every byte it receives on stdin to
// the file named by its first argument, unparsed, so a test can tell exactly what reached it, and
// answers each request line: initialize, tools/list, and a tools/call with a text item holding the
// call as it read it (or, when its arguments have structuredContent, "done" and that). No SDK: what it records is the bytes, not a parse of them. It splits lines as
// the most eager reader does — Python's universal newlines (a lone CR) and str.splitlines (U+0085,
// U+2028, U+2029) — so a line that smuggles a second message past the proxy gets it run here.
import { appendFileSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

const record = process.argv[2];
if (!record) {
  process.stderr.write('usage: fake-server.mjs <record file>\n');
  process.exit(2);
}
const TOOLS = [
  { name: 'read_text_file', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } },
  { name: 'write_file', inputSchema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } } },
];
const answer = (m) => {
  switch (m.method) {
    case 'initialize':
      return { protocolVersion: m.params?.protocolVersion ?? '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'fake', version: '1' } };
    case 'tools/list':
      return { tools: TOOLS };
    case 'tools/call':
      // A call asking for it gets a result whose text says only "done", the rest being structured.
      if (m.params?.arguments?.structuredContent !== undefined) return { content: [{ type: 'text', text: 'done' }], structuredContent: m.params.arguments.structuredContent };
      return { content: [{ type: 'text', text: JSON.stringify({ name: m.params?.name, arguments: m.params?.arguments }) }] };
    default:
      return undefined;
  }
};

const BREAK = /[\n\r\u0085\u2028\u2029]/;
let pending = '';
const decoder = new StringDecoder('utf8');
process.stdin.on('data', (chunk) => {
  appendFileSync(record, chunk);
  pending += decoder.write(chunk);
  let nl;
  while ((nl = pending.search(BREAK)) >= 0) {
    const line = pending.slice(0, nl);
    pending = pending.slice(nl + (pending.startsWith('\r\n', nl) ? 2 : 1));
    let m;
    try {
      m = JSON.parse(line);
    } catch {
      continue;
    }
    if (m.id === undefined) continue;
    const result = answer(m);
    process.stdout.write(`${JSON.stringify(result === undefined ? { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `no method ${m.method}` } } : { jsonrpc: '2.0', id: m.id, result })}\n`);
  }
});
process.stdin.on('end', () => process.exit(0));
