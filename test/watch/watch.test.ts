/**
 * `--watch` (watch/): a run is repeated after a change to a file it read — including a save that
 * replaces the file by renaming over it, and a new file in a directory it read — and not after a
 * change to a file it did not read.
 */
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { rerunOnChange, watchInputs } from '../../watch/index.js';

const dir = mkdtempSync(join(tmpdir(), 'oarc-watch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Resolve with the path `watchInputs` reports, or `undefined` after `ms`. */
function firstChange(paths: string[], act: () => void, ms = 1500): Promise<string | undefined> {
  return new Promise((done) => {
    const timer = setTimeout(() => {
      stop();
      done(undefined);
    }, ms);
    const stop = watchInputs(paths, (p) => {
      clearTimeout(timer);
      stop();
      done(p);
    });
    act();
  });
}

describe('watchInputs', () => {
  const a = join(dir, 'a.yaml');
  const b = join(dir, 'b.yaml');
  writeFileSync(a, '1');
  writeFileSync(b, '1');

  it('reports a change to a watched file, and not one to a file beside it', async () => {
    expect(await firstChange([a], () => writeFileSync(b, '2'), 400)).toBeUndefined();
    expect(await firstChange([a], () => writeFileSync(a, '2'))).toBe(a);
  });

  it('survives an editor saving by rename', async () => {
    expect(await firstChange([a], () => {
      writeFileSync(`${a}.tmp`, '3');
      renameSync(`${a}.tmp`, a);
    })).toBe(a);
    expect(await firstChange([a], () => writeFileSync(a, '4'))).toBe(a);
  });

  it('reports a new file anywhere below a watched directory', async () => {
    const rules = join(dir, 'rules');
    mkdirSync(join(rules, 'deep'), { recursive: true });
    expect(await firstChange([rules], () => writeFileSync(join(rules, 'deep', 'new.yaml'), 'x'))).toBe(join(rules, 'deep', 'new.yaml'));
  });
});

describe('rerunOnChange', () => {
  it('runs once more for a change made while a run was reading the files', async () => {
    const f = join(dir, 'slow.yaml');
    writeFileSync(f, 'v1');
    const stop = new AbortController();
    const seen: string[] = [];
    await rerunOnChange(
      async () => {
        seen.push(readFileSync(f, 'utf8'));
        // A long run: the second save lands while the second run is still under way.
        if (seen.length === 1) setTimeout(() => writeFileSync(f, 'v2'), 50);
        if (seen.length === 2) {
          writeFileSync(f, 'v3');
          await new Promise((r) => setTimeout(r, 100));
        }
        if (seen.length === 3) setTimeout(() => stop.abort(), 50);
        return [f];
      },
      () => undefined,
      { signal: stop.signal, settleMs: 20 },
    );
    expect(seen).toEqual(['v1', 'v2', 'v3']);
  });

  it('stops when aborted during a run', async () => {
    const f = join(dir, 'abort.yaml');
    writeFileSync(f, 'v1');
    const stop = new AbortController();
    let runs = 0;
    await rerunOnChange(
      async () => {
        runs++;
        stop.abort();
        return [f];
      },
      () => undefined,
      { signal: stop.signal },
    );
    expect(runs).toBe(1);
  });

  it('runs, runs again after a change, and stops when aborted', async () => {
    const f = join(dir, 'pack.yaml');
    writeFileSync(f, 'v1');
    const stop = new AbortController();
    const announced: string[] = [];
    let runs = 0;
    await rerunOnChange(
      async () => {
        runs++;
        if (runs === 1) setTimeout(() => writeFileSync(f, 'v2'), 50);
        if (runs === 2) setTimeout(() => stop.abort(), 50);
        return [f];
      },
      (p) => announced.push(p),
      { signal: stop.signal, settleMs: 20 },
    );
    expect(runs).toBe(2);
    expect(announced).toEqual([f]);
  });
});
