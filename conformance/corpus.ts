/**
 * What a conformance run measured: the corpus's identity in the report, and the fixtures its
 * manifest lists.
 *
 * Identity. Two reports can be compared only if they measured the same fixtures, so the report
 * carries the paths given, the number of fixture files, and a SHA-256 digest over every fixture
 * file (and each `manifest.json` read): for each, sorted by relative path in code-unit order (ties,
 * which only several paths given can make, by content), the relative path in UTF-8 with `/`
 * separators, a NUL, the length in bytes in decimal, a NUL, and the bytes. A file under a directory
 * given is named relative to that directory, a file given itself by its base name — so the digest
 * does not depend on where the corpus sits or where the runner was started.
 *
 * Manifest. A corpus directory may publish `manifest.json` ([OAR-CONF-35]). When it lists fixture
 * ids — `{"fixtures": ["id", …]}` or `{"fixtures": [{"id": …}, …]}` — a listed id with no fixture
 * file under that directory is a case that could not be run, so the total is the manifest's count
 * and a fixture lost from a copy of the corpus is seen, not silently absent. A manifest without
 * `fixtures` (one that only marks baselines, say) changes nothing.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CaseResult, CorpusIdentity } from './result.js';

export const MANIFEST = 'manifest.json';

/** One file of the corpus, by its path and its name relative to the path given. */
export interface CorpusFile {
  file: string;
  rel: string;
}

export function corpusIdentity(paths: readonly string[], fixtures: readonly CorpusFile[], manifests: readonly ManifestRead[]): CorpusIdentity {
  const records = [...fixtures, ...manifests.map((m) => ({ file: m.file, rel: MANIFEST }))].map((f) => {
    let bytes: Buffer | undefined;
    try {
      bytes = readFileSync(f.file);
    } catch {
      bytes = undefined; // recorded as unreadable: the case says why
    }
    return { rel: f.rel.split('\\').join('/'), bytes };
  });
  const key = (r: { bytes: Buffer | undefined }) => (r.bytes === undefined ? '' : createHash('sha256').update(r.bytes).digest('hex'));
  records.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  const hash = createHash('sha256');
  for (const r of records) {
    hash.update(Buffer.from(r.rel, 'utf8'));
    hash.update(r.bytes === undefined ? '\0-\0' : `\0${r.bytes.length}\0`);
    if (r.bytes !== undefined) hash.update(r.bytes);
  }
  const listed = manifests.filter((m) => m.ids !== undefined);
  return {
    paths: [...paths],
    fixture_files: fixtures.length,
    sha256: hash.digest('hex'),
    ...(listed.length > 0 ? { manifests: listed.map((m) => ({ file: m.file, fixtures: (m.ids as string[]).length })) } : {}),
  };
}

/** A directory's manifest as read: the ids it lists (absent when it lists none), or why it cannot be used. */
export interface ManifestRead {
  dir: string;
  file: string;
  ids?: string[];
  problem?: string;
}

/** The `manifest.json` of a corpus directory, if it has one. */
export function readManifest(dir: string): ManifestRead | undefined {
  const file = join(dir, MANIFEST);
  if (!existsSync(file)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    return { dir, file, problem: `the corpus manifest ${file} cannot be read: ${e instanceof Error ? e.message : String(e)}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, 'fixtures')) return { dir, file };
  const list = (value as { fixtures: unknown }).fixtures;
  const ids: string[] = [];
  const bad: number[] = [];
  if (!Array.isArray(list)) return { dir, file, problem: `the corpus manifest ${file} has "fixtures" that is not a list of fixture ids` };
  list.forEach((item, i) => {
    const id = typeof item === 'string' ? item : typeof item === 'object' && item !== null && typeof (item as { id?: unknown }).id === 'string' ? (item as { id: string }).id : undefined;
    if (id === undefined || id === '') bad.push(i);
    else ids.push(id);
  });
  if (bad.length > 0) {
    return { dir, file, problem: `the corpus manifest ${file} lists fixtures[${bad.slice(0, 5).join('], [')}] that is neither a fixture id nor an object with one ("id")` };
  }
  return { dir, file, ids: [...new Set(ids)] };
}

/**
 * The cases a manifest adds: each listed id no case under its directory has (errored: no file), or
 * one errored case for a manifest that cannot be used — its list cannot be checked.
 */
export function manifestCases(m: ManifestRead, found: ReadonlySet<string>): CaseResult[] {
  if (m.problem !== undefined) {
    return [{ id: 'manifest', file: m.file, verdict: 'errored', reason: `${m.problem}; the fixtures it lists cannot be checked against the files [OAR-CONF-35]` }];
  }
  return (m.ids ?? [])
    .filter((id) => !found.has(id))
    .map((id) => ({ id, file: join(m.dir, `${id}.json`), verdict: 'errored', reason: `listed in ${m.file}, no file: no fixture with this id was found under ${m.dir}` }));
}
