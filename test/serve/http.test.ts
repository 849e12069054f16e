/**
 * The HTTP layer on a server of the test's own, for what the e2e service cannot show quickly: a
 * request that is not received in time is a problem 408 written on the raw socket (node's parser
 * refuses it; serveOn's clientError listener answers), then the connection closed.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { serveOn } from '../../serve/http.js';
import { Metrics } from '../../serve/metrics.js';
import type { Service } from '../../serve/service.js';
import { exchange } from '../support/raw-http.js';

let server: Server | undefined;
afterEach(() => new Promise<void>((done) => (server ? server.close(() => done()) : done())));

async function listen(s: Server): Promise<number> {
  server = s;
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  return (s.address() as AddressInfo).port;
}

const notReady = { take: () => undefined, bundleInfo: undefined, lastLoad: undefined } as unknown as Service;

describe('serveOn', () => {
  it('answers a request not received in time with a problem 408, then closes the connection', async () => {
    const metrics = new Metrics();
    const s = createServer({ headersTimeout: 200, requestTimeout: 300, connectionsCheckingInterval: 50 });
    serveOn(s, { service: notReady, metrics, maxBodyBytes: 1024, say: () => undefined });
    const port = await listen(s);
    // Half a head, and then nothing.
    const r = await exchange(port, (c) => void c.write('GET /v1/health HTTP/1.1\r\nhost: x\r\n'));
    expect(r.closed).toBe(true);
    expect(r.responses).toHaveLength(1);
    const [res] = r.responses;
    expect(res?.status).toBe(408);
    expect(res?.headers.get('content-type')).toEqual(['application/problem+json']);
    expect(res?.headers.get('connection')).toEqual(['close']);
    expect(res?.json).toMatchObject({ type: 'urn:oarc:problem:request-timeout', status: 408, title: 'Request timeout', detail: expect.any(String) });
    expect(metrics.render()).toMatch(/oarc_requests_rejected_total\{status="408"\} 1/);
  });

  it('runs `each` before every request it answers, 100-continue ones included', async () => {
    const seen: string[] = [];
    const s = createServer();
    serveOn(s, { service: notReady, metrics: new Metrics(), maxBodyBytes: 1024, say: () => undefined }, (req) => seen.push(`${req.method} ${req.url}`));
    const port = await listen(s);
    const r = await exchange(port, (c) => void c.write('GET /v1/health HTTP/1.1\r\nhost: x\r\n\r\nPOST /v1/decide HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 2\r\nexpect: 100-continue\r\nconnection: close\r\n\r\n{}'));
    expect(r.responses.map((x) => x.status)).toEqual([503, 100, 503]);
    expect(seen).toEqual(['GET /v1/health', 'POST /v1/decide']);
  });
});
