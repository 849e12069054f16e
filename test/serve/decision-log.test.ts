/** The decision log's masking and its policy when the sink is slower than the traffic. */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { DecisionLog, MASKED, mask, parseMaskPath } from '../../serve/decision-log.js';

const paths = (...p: string[]) => p.map((x) => parseMaskPath(x) as string[]);

describe('mask', () => {
  const occ = { anchor: 'a', tool_call: { name: 'http', arguments: { token: 't', url: 'u', 'a/b': 1, headers: [{ v: 1 }, { v: 2 }] } }, facts: { x: 1, y: 2 } };

  it('replaces the value at each path, copying, never touching the original', () => {
    const before = JSON.stringify(occ);
    expect(mask(occ, paths('/tool_call/arguments/token', '/facts/*', '/tool_call/arguments/headers/*/v', '/tool_call/arguments/a~1b'))).toEqual({
      anchor: 'a',
      tool_call: { name: 'http', arguments: { token: MASKED, url: 'u', 'a/b': MASKED, headers: [{ v: MASKED }, { v: MASKED }] } },
      facts: { x: MASKED, y: MASKED },
    });
    expect(JSON.stringify(occ)).toBe(before);
  });

  it('leaves an occurrence without the path as it is', () => {
    expect(mask(occ, paths('/content', '/tool_call/arguments/headers/7/v', '/anchor/deeper'))).toEqual(occ);
  });

  it('refuses a path that is not a pointer', () => {
    expect(parseMaskPath('tool_call.arguments')).toMatch(/is not a path/);
    expect(parseMaskPath('/')).toMatch(/is not a path/);
  });
});

/** A sink that accepts one write and then holds every later one until `release()`. */
class SlowSink extends Writable {
  readonly chunks: string[] = [];
  private held: (() => void)[] = [];
  constructor() {
    super({ highWaterMark: 1 });
  }
  override _write(chunk: Buffer, _enc: string, done: () => void): void {
    this.chunks.push(chunk.toString());
    this.held.push(done);
  }
  release(): void {
    for (const d of this.held.splice(0)) d();
  }
}

describe('a sink slower than the traffic', () => {
  it('drops the lines beyond the buffer, counts them, and says so in the log once it catches up', async () => {
    const sink = new SlowSink();
    let drops = 0;
    const log = new DecisionLog({ target: sink, bufferBytes: 100, onDrop: () => drops++ });
    log.write({ n: 0 }); // handed to the sink at once, which then stalls
    for (let i = 1; i <= 20; i++) log.write({ n: i, pad: 'x'.repeat(20) }); // 35 bytes each: two fit
    expect(drops).toBe(18);
    const closed = log.close();
    for (let i = 0; i < 10; i++) {
      await new Promise((r) => setImmediate(r));
      sink.release();
    }
    await closed;
    const lines = sink.chunks.join('').trimEnd().split('\n').map((l) => JSON.parse(l) as { n?: number; dropped?: number });
    expect(lines.map((l) => l.n)).toEqual([0, 1, 2, undefined]);
    expect(lines[3]).toMatchObject({ dropped: 18 });
  });
});

/** A sink that keeps what it is given. */
class MemorySink extends Writable {
  readonly chunks: string[] = [];
  override _write(chunk: Buffer, _enc: string, done: () => void): void {
    this.chunks.push(chunk.toString());
    done();
  }
}

describe('a record or a sink that fails', () => {
  it('a record JSON cannot write (a cycle, a throwing toJSON) is dropped and counted, said at most once a minute; the next line is written', async () => {
    const sink = new MemorySink();
    let drops = 0;
    const said: string[] = [];
    const log = new DecisionLog({ target: sink, onDrop: () => drops++, say: (l) => said.push(l) });
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => log.write({ cycle })).not.toThrow();
    expect(() => log.write({ bad: { toJSON: () => { throw new Error('no'); } } })).not.toThrow();
    log.write({ n: 3 });
    await log.close();
    expect(drops).toBe(2);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/cannot be written as JSON/);
    const lines = sink.chunks.join('').trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toEqual({ n: 3 });
    expect(lines[1]).toMatchObject({ dropped: 2 });
  });

  it('writes an exact integer beyond ±(2^53−1) (a bigint, as oarc mcp reads one) as its digits [OAR-FACT-23]', async () => {
    const sink = new MemorySink();
    let drops = 0;
    const log = new DecisionLog({ target: sink, onDrop: () => drops++ });
    log.write({ occurrence: { tool_call: { name: 'pay', arguments: { amount: 9223372036854775807n, list: [-9007199254740993n, 1.5, null], skip: undefined, at: new Date(0) } } } });
    await log.close();
    expect(drops).toBe(0);
    expect(sink.chunks.join('')).toBe('{"occurrence":{"tool_call":{"name":"pay","arguments":{"amount":9223372036854775807,"list":[-9007199254740993,1.5,null],"at":"1970-01-01T00:00:00.000Z"}}}}\n');
  });

  it('a file that cannot be opened is refused when the log opens, naming the path', async () => {
    const missing = join(tmpdir(), `oarc-no-such-dir-${process.pid}`, 'log.jsonl');
    await expect(DecisionLog.open({ target: missing })).rejects.toThrow(`cannot open the decision log ${missing}: ENOENT`);
    await expect(DecisionLog.open({ target: tmpdir() })).rejects.toThrow(/cannot open the decision log .*EISDIR/);
  });

  it('a file opened is appended to, and closed by close()', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'oarc-log-'));
    const file = join(dir, 'log.jsonl');
    writeFileSync(file, '{"before":true}\n');
    const log = await DecisionLog.open({ target: file });
    log.write({ n: 1 });
    await log.close();
    expect(readFileSync(file, 'utf8')).toBe('{"before":true}\n{"n":1}\n');
  });

  it('a sink that fails is said once, and every later line is dropped and counted', async () => {
    const sink = new Writable({ write: (_c, _e, done) => done(new Error('disk full')) });
    let drops = 0;
    const said: string[] = [];
    const log = new DecisionLog({ target: sink, onDrop: () => drops++, say: (l) => said.push(l) });
    log.write({ n: 1 });
    await new Promise((r) => setTimeout(r, 20));
    for (let i = 0; i < 5; i++) log.write({ n: i });
    expect(drops).toBe(5);
    expect(said).toEqual([expect.stringMatching(/decision log failed.*disk full/)]);
    await log.close();
  });
});
