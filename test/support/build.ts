/**
 * Tests that run the built package (the CLI, replica processes) need `dist/` no older than the
 * sources: build once when it is stale, and fail with the build's output if that did not help.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Sources under `dirs` whose compiled output is missing or older than they are. */
export function staleOutputs(dirs: readonly string[]): string[] {
  const stale: string[] = [];
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
        const out = join(ROOT, 'dist', relative(ROOT, full)).replace(/\.ts$/, '.js');
        if (!existsSync(out) || statSync(out).mtimeMs < statSync(full).mtimeMs) stale.push(relative(ROOT, full));
      }
    }
  };
  for (const d of dirs) walk(join(ROOT, d));
  return stale;
}

/** Run `npm run build` if any output of `dirs` is stale; throw if it stays stale. */
export function ensureBuilt(dirs: readonly string[]): void {
  if (staleOutputs(dirs).length === 0) return;
  const r = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8', timeout: 300_000 });
  // tsc emits even when some other file fails to type-check; what matters is these outputs.
  const still = staleOutputs(dirs);
  if (still.length > 0) throw new Error(`npm run build left dist/ stale (${still.slice(0, 5).join(', ')}):\n${r.stdout}\n${r.stderr}`);
}
