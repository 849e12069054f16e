/**
 * `--watch`: run a command, then run it again whenever a file it read changes.
 *
 * Each file is watched through its directory (`fs.watch` on the directory, filtered by name), not
 * by its own inode: editors save by writing a new file and renaming it over the old one, which
 * ends a watch on the old inode after the first save. A directory given as input (a rules
 * directory, a directory searched for tests) is watched with every directory below it, so a new
 * rule or test file is noticed too. One watcher per directory is what `recursive: true` does on
 * Linux anyway; walking the tree here lets it pass over node_modules and dot-directories.
 */
import { existsSync, readdirSync, statSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

/** Directories below `dir`, itself included (dot-directories and node_modules passed over). */
function treeOf(dir: string, out: Set<string>): void {
  if (out.has(dir)) return;
  out.add(dir);
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) if (e.isDirectory() && e.name !== 'node_modules' && !e.name.startsWith('.')) treeOf(join(dir, e.name), out);
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Watch `paths` (files and directories); call `onChange` with the changed path at every change,
 * until the returned function is called. A file that does not exist yet is watched for through its
 * directory, so creating it counts as a change.
 */
export function watchInputs(paths: readonly string[], onChange: (path: string) => void): () => void {
  const whole = new Set<string>(); // directories in which any change counts
  const named = new Map<string, Set<string>>(); // directory → names of watched files in it
  for (const p of paths.map((x) => resolve(x))) {
    if (isDirectory(p)) treeOf(p, whole);
    else {
      const dir = dirname(p);
      const names = named.get(dir) ?? new Set<string>();
      names.add(basename(p));
      named.set(dir, names);
    }
  }
  const watchers: FSWatcher[] = [];
  let stopped = false;
  const stop = () => {
    stopped = true;
    for (const w of watchers.splice(0)) w.close();
  };
  for (const dir of new Set([...whole, ...named.keys()])) {
    if (!existsSync(dir)) continue;
    try {
      const w = watch(dir, (_event, name) => {
        const file = name === null ? dir : join(dir, name.toString());
        const relevant = whole.has(dir) || name === null || (named.get(dir)?.has(name.toString()) ?? false);
        if (relevant && !stopped) onChange(file);
      });
      w.on('error', () => undefined); // a directory removed while watched: the next run says so
      watchers.push(w);
    } catch {
      // An unreadable directory: nothing in it could be read by the run either.
    }
  }
  return stop;
}

/**
 * Run `run` (which returns the paths it read), then again after each change to one of them, until
 * `signal` aborts. Changes within `settleMs` of each other (an editor's write-and-rename, a
 * `git checkout`) cause one re-run; `announce` is told which file changed before it starts.
 *
 * The inputs stay watched while the next run reads them: a file saved again while a run is under
 * way (a long pack, a second quick save) makes one more run after it, rather than leaving the
 * result of a file that is no longer on disk until something else changes.
 */
export async function rerunOnChange(
  run: () => Promise<readonly string[]>,
  announce: (path: string) => void,
  opts: { signal?: AbortSignal; settleMs?: number } = {},
): Promise<void> {
  const settle = opts.settleMs ?? 100;
  let changed: string | undefined;
  let wake: (() => void) | undefined;
  let stopWatching = () => undefined as void;
  const onAbort = () => wake?.();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    while (!opts.signal?.aborted) {
      const inputs = await run();
      // The new inputs are watched before the old watch ends, so no change falls between them.
      const stopOld = stopWatching;
      stopWatching = watchInputs(inputs, (path) => {
        changed ??= path;
        wake?.();
      });
      stopOld();
      if (changed === undefined && !opts.signal?.aborted) await new Promise<void>((r) => (wake = r));
      wake = undefined;
      if (opts.signal?.aborted) return;
      // Let the rest of a burst of changes arrive; they are all read by the one run that follows.
      await new Promise((r) => setTimeout(r, settle));
      announce(changed as string);
      changed = undefined;
    }
  } finally {
    stopWatching();
    opts.signal?.removeEventListener('abort', onAbort);
  }
}
