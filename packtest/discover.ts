/** Finding test files: `*.test.yaml`, `*.test.yml` and `*.test.json` under the paths given. */
import { readdirSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_FILE } from './testfile.js';

export interface Discovered {
  /** Test files, sorted by path within each directory given, in the order the paths were given. */
  files: string[];
  /** Directories searched (a watcher re-runs when a test file appears in one). */
  directories: string[];
  /** Paths given that do not exist or cannot be read, with why. */
  unreadable: { path: string; reason: string }[];
}

/**
 * A file named on the command line is a test file whatever its name; a directory is searched
 * recursively, passing over `node_modules` and dot-directories (`.git`), which hold no pack's tests.
 */
export function discoverTestFiles(paths: readonly string[]): Discovered {
  const out: Discovered = { files: [], directories: [], unreadable: [] };
  const seen = new Set<string>();
  const add = (f: string) => {
    const key = realpathSync(f);
    if (!seen.has(key)) {
      seen.add(key);
      out.files.push(f);
    }
  };
  for (const p of paths) {
    let isDir: boolean;
    try {
      isDir = statSync(p).isDirectory();
    } catch {
      out.unreadable.push({ path: p, reason: 'no such file or directory' });
      continue;
    }
    if (!isDir) {
      add(p);
      continue;
    }
    const found: string[] = [];
    walk(p, found, out, new Set());
    found.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).forEach(add);
  }
  return out;
}

function walk(dir: string, found: string[], out: Discovered, visited: Set<string>): void {
  let entries;
  try {
    const real = realpathSync(dir);
    if (visited.has(real)) return; // a symlink cycle
    visited.add(real);
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    out.unreadable.push({ path: dir, reason: (e as Error).message });
    return;
  }
  out.directories.push(dir);
  for (const entry of entries) {
    const full = join(dir, entry.name);
    let isDir = entry.isDirectory();
    if (entry.isSymbolicLink()) {
      try {
        isDir = statSync(full).isDirectory();
      } catch {
        continue; // a dangling link is no test file
      }
    }
    if (isDir) {
      if (entry.name !== 'node_modules' && !entry.name.startsWith('.')) walk(full, found, out, visited);
    } else if (TEST_FILE.test(entry.name)) found.push(full);
  }
}
