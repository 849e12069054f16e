/**
 * The HTTP floor for bench/serve.ts: a minimal node:http server that reads the body, parses it as
 * JSON and answers a constant decision (given as argv[2], the same bytes the service returns), so
 * what separates it from `oarc serve` is deciding, not HTTP. It prints its port, then serves until
 * killed.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const decision = process.argv[2] ?? '{}';
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    // A batch gets one constant decision per occurrence, as the service gives one per occurrence.
    const out = Array.isArray(body) ? `[${body.map(() => decision).join(',')}]` : decision;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
    res.end(out);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
