/**
 * The loader is bounded before it costs: what it reads, and what it parses, are limited before
 * anything proportional to the input is allocated — a FIFO or device is refused unopened, a read
 * stops at the byte limit, a YAML text with too many nodes is refused by one scan before the
 * parser (about 20 µs a node) sees it, and a JSON text by a count as it parses. Each case must end
 * in its error within a second (the tests' own timeout), on this shared machine included.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPackFiles, loadPackTexts, parseSource } from '../../compiler/index.js';
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_JSON_NODES, DEFAULT_MAX_YAML_NODES } from '../../compiler/load/source.js';
import { capability } from './fixtures.js';

const SECOND = 1000;
const dir = mkdtempSync(join(tmpdir(), 'oarc-bounds-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cap = join(dir, 'cap.json');
writeFileSync(cap, JSON.stringify(capability()));

const RULE = 'oar: "1.0"\nid: A\nkind: policy\nanchor: tool.pre_invoke\neffect: block\n';

function rejectsFile(path: string, message: RegExp): void {
  const r = loadPackFiles({ capability: cap, rules: [path] });
  expect(r.ok).toBe(false);
  if (!r.ok) expect(r.diagnostics.map((d) => d.message)).toEqual([expect.stringMatching(message)]);
}

describe('reading is bounded', () => {
  it('/dev/zero is refused as a character device, unread', () => {
    rejectsFile('/dev/zero', /`\/dev\/zero` is a character device, not a regular file/);
  }, SECOND);

  it('a FIFO is refused unopened, so nothing blocks waiting for a writer', () => {
    const fifo = join(dir, 'rules.yaml');
    execFileSync('mkfifo', [fifo]);
    rejectsFile(fifo, /is a FIFO, not a regular file/);
  }, SECOND);

  it('a file over the byte limit is refused by its size, unread', () => {
    const big = join(dir, 'big.yaml');
    writeFileSync(big, Buffer.alloc(DEFAULT_MAX_BYTES + 1, 0x20));
    rejectsFile(big, /is 16777217 bytes, more than the 16777216-byte limit/);
  }, SECOND);
});

describe('parsing is bounded', () => {
  // The case: a 16 MB YAML file holding one flow list of millions of numbers in an x- member.
  const flow = `${RULE}x-data: [${'1,'.repeat(7_900_000)}1]\n`;

  it('a YAML flow list of 7.9 million numbers in an x- member is refused before it is parsed (text)', () => {
    expect(flow.length).toBeLessThan(DEFAULT_MAX_BYTES);
    const r = loadPackTexts({ capability: JSON.stringify(capability()), rules: [flow] });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.diagnostics.map((d) => d.message)).toEqual([`\`<rules 0>\` has more than ${DEFAULT_MAX_YAML_NODES} lines and commas (a bound on its YAML nodes); it was not parsed: split it, or write it as JSON`]);
  }, SECOND);

  it('the same as a file', () => {
    const file = join(dir, 'flow.yaml');
    writeFileSync(file, flow);
    rejectsFile(file, /has more than 100000 lines and commas/);
  }, SECOND);

  it('a YAML block list is bounded the same way, and a file just under the bound still loads', () => {
    expect(parseSource(`${RULE}x-data:\n${'  - 1\n'.repeat(DEFAULT_MAX_YAML_NODES)}`, 'r.yaml').diagnostics).toEqual([expect.objectContaining({ severity: 'error', token: 'r.yaml' })]);
    const under = parseSource(`${RULE}x-data: [${'1,'.repeat(2_000)}1]\n`, 'r.yaml');
    expect(under.diagnostics).toEqual([]);
  }, SECOND);

  it('a JSON array of more values than the bound is refused as it is parsed', () => {
    const r = parseSource(`{"oar": "1.0", "x-data": [${'1,'.repeat(DEFAULT_MAX_JSON_NODES)}1]}`, 'r.json');
    expect(r.docs).toEqual([]);
    expect(r.diagnostics.map((d) => d.message)).toEqual([`document has more than ${DEFAULT_MAX_JSON_NODES} values; it was not parsed`]);
  }, SECOND);
});
