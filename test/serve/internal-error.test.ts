/**
 * [#18] A fault inside oarc while handling a request is a 500 problem whose id is also in the
 * service log, beside the stack — and the response carries neither the stack nor a decision. No
 * honest pack makes the real engine fail this way, so the service's decide is made to throw.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { handler } from '../../serve/http.js';
import { Metrics } from '../../serve/metrics.js';
import type { Service } from '../../serve/service.js';

let server: Server | undefined;
afterEach(() => new Promise<void>((done) => (server ? server.close(() => done()) : done())));

async function serve(service: unknown, say: (line: string) => void): Promise<string> {
  const metrics = new Metrics();
  server = createServer(handler({ service: service as Service, metrics, maxBodyBytes: 1 << 20, say }));
  await new Promise<void>((ok) => (server as Server).listen(0, '127.0.0.1', ok));
  return `http://127.0.0.1:${((server as Server).address() as AddressInfo).port}`;
}

describe('an internal error', () => {
  it('is a 500 problem with an id the log carries, with the stack, and no stack in the response', async () => {
    const logged: string[] = [];
    const fault = new TypeError('something inside oarc broke');
    const service = { take: () => ({}), decide: () => Promise.reject(fault) };
    const url = await serve(service, (l) => logged.push(l));
    const res = await fetch(`${url}/v1/decide`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ anchor: 'tool.pre_invoke', tool_call: { name: 'x', arguments: {} } }) });
    expect(res.status).toBe(500);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ type: 'urn:oarc:problem:internal', status: 500 });
    expect(body.id).toMatch(/^[0-9a-f]{12}$/);
    expect(body.detail).toContain(body.id as string);
    expect(JSON.stringify(body)).not.toContain('something inside oarc broke');
    expect(body).not.toHaveProperty('decision');
    const line = logged.find((l) => l.includes(body.id as string));
    expect(line).toBeDefined();
    expect(line).toContain('TypeError: something inside oarc broke');
    expect(line).toContain('internal-error.test.ts'); // the stack, in the log only
    // The service keeps serving after it.
    const health = await fetch(`${url}/v1/nowhere`);
    expect(health.status).toBe(404);
  });
});
