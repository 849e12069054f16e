/**
 * `--check-schemas` (mcp/schemas.ts): what a rule says about tools, from its documents or a
 * compiled bundle, against the tools a server lists.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileToBundle, loadPackFiles, type LoadedPack } from '../../compiler/index.js';
import { checkSchemas, usesOfBundle, usesOfPack } from '../../mcp/schemas.js';
import { ROOT } from '../support/build.js';

const tmp = mkdtempSync(join(tmpdir(), 'oarc-mcp-schemas-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function pack(rules: string): LoadedPack {
  const file = join(tmp, `r${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, rules);
  const r = loadPackFiles({ capability: join(ROOT, 'examples', 'mcp', 'capability.yaml'), rules: [file] });
  if (!r.ok) throw new Error(r.diagnostics.map((d) => d.message).join('\n'));
  return r.pack;
}

const rule = (id: string, selector: string, when: string) =>
  ['oar: "1.0"', `id: ${id}`, 'kind: policy', 'anchor: tool.pre_invoke', ...(selector ? [`selector: { tool: [ ${selector} ] }`] : []), 'requires: { profiles: [ tool ] }', `when: '${when}'`, 'effect: block', ''].join('\n');

const TOOLS = [
  { name: 'read_text_file', inputSchema: { properties: { path: {}, head: {}, tail: {} } } },
  { name: 'move_file', inputSchema: { properties: { source: {}, destination: {} } } },
  { name: 'list_allowed_directories', inputSchema: {} },
];

describe('check-schemas', () => {
  it('finds the arguments a condition reads, by `in` and by the tool_arg_* functions', () => {
    const p = pack(rule('R', 'read_text_file', '"paht" in tool_args || tool_arg_int("tial") > 1 || tool_arg_bool("hed") || tool_arg_string("path") == ""'));
    expect(usesOfPack(p)[0]?.args.map((a) => a.via)).toEqual(['"paht" in tool_args', 'tool_arg_int("tial")', 'tool_arg_bool("hed")', 'tool_arg_string("path")']);
    expect(checkSchemas(usesOfPack(p), TOOLS).map((x) => x.message)).toEqual([
      'reads "paht" in tool_args, but tool read_text_file declares no argument "paht" (it takes path, head, tail) (did you mean `path`?)',
      'reads tool_arg_int("tial"), but tool read_text_file declares no argument "tial" (it takes path, head, tail) (did you mean `tail`?)',
      'reads tool_arg_bool("hed"), but tool read_text_file declares no argument "hed" (it takes path, head, tail) (did you mean `head`?)',
    ]);
  });

  it('checks every selected tool, and a rule selecting none against all of them', () => {
    const p = pack(rule('SEL', 'read_text_file, move_file, list_allowed_directory', 'tool_arg_string("path") == "/"') + '---\n' + rule('ALL', '', 'tool_arg_string("destinaton") == "/" || tool_arg_string("source") == ""'));
    expect(checkSchemas(usesOfPack(p), TOOLS).map((x) => `${x.rule}: ${x.message}`)).toEqual([
      'ALL: reads tool_arg_string("destinaton"), an argument no tool of the server declares (did you mean `destination`?)',
      'SEL: selects tool "list_allowed_directory", which the server does not list (did you mean `list_allowed_directories`?)',
      'SEL: reads tool_arg_string("path"), but tool move_file declares no argument "path" (it takes source, destination)',
    ]);
  });

  it('reports nothing for the example pack against the filesystem server\'s tools', () => {
    const example = loadPackFiles({ capability: join(ROOT, 'examples', 'mcp', 'capability.yaml'), rules: [join(ROOT, 'examples', 'mcp', 'rules.yaml')] });
    expect(example.ok).toBe(true);
    if (!example.ok) return;
    const fs = [
      ...['write_file', 'edit_file', 'create_directory', 'read_text_file'].map((name) => ({ name, inputSchema: { properties: { path: {} } } })),
      { name: 'move_file', inputSchema: { properties: { source: {}, destination: {} } } },
    ];
    expect(checkSchemas(usesOfPack(example.pack), fs)).toEqual([]);
  });

  it('checks a compiled bundle\'s selectors (its conditions are code)', () => {
    const p = pack(rule('B', 'read_txt_file', 'tool_arg_string("nope") == ""'));
    const uses = usesOfBundle(compileToBundle(p));
    expect(uses[0]).toMatchObject({ rule: 'B', tools: ['read_txt_file'], args: [] });
    expect(checkSchemas(uses, TOOLS).map((x) => x.message)).toEqual(['selects tool "read_txt_file", which the server does not list (did you mean `read_text_file`?)']);
  });
});
