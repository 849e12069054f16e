/** The decision log's masking and its policy when the sink is slower than the traffic. */
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
