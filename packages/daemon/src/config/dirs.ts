/**
 * Extensions 28.1's directory rule, in one place for the daemon's start, every
 * reload and `xlurm config check` (all three read the file through
 * load.ts's readConfigFile, which calls this): a directory the daemon writes
 * into on its own behalf must be root-owned and not writable by group or
 * others, else a user could plant a link or swap an entry there. The
 * directories: `accounting.metrics_file`'s, and `shared_region_dir` itself
 * and its parent (the daemon makes the region directory and its files).
 * The default region directory lies in the state directory, which is the
 * daemon's own. A non-root daemon accepts its own directories too.
 */
import * as path from 'node:path';
import type { ConfigFile } from './schema';
import { lineOf } from './lines';
import { notOwnedProblem, ownedByDaemonNotWritable } from '../safe-fs';

/** A problem as load.ts reports it (its ConfigProblem; not imported: load.ts imports this file). */
export interface DirProblem { file: string; line?: number; key: string; problem: string }

/** Each directory the rule covers that breaks it: one problem per key (its first such directory). */
export function daemonDirProblems(file: string, settings: ConfigFile, lines: ReadonlyMap<string, number>, euid = process.geteuid?.() ?? 0): DirProblem[] {
  const checks: Array<{ key: string; dirs: string[] }> = [];
  const metrics = settings.accounting?.metrics_file;
  if (typeof metrics === 'string' && path.isAbsolute(metrics)) checks.push({ key: 'accounting.metrics_file', dirs: [path.dirname(metrics)] });
  const sharing = settings.sharing as Record<string, { shared_region_dir?: unknown } | unknown> | undefined;
  for (const vendor of ['ascend', 'nvidia']) {
    const dir = (sharing?.[vendor] as { shared_region_dir?: unknown } | undefined)?.shared_region_dir;
    if (typeof dir === 'string' && path.isAbsolute(dir)) {
      const resolved = path.resolve(dir);
      checks.push({ key: `sharing.${vendor}.shared_region_dir`, dirs: [path.dirname(resolved), resolved] });
    }
  }
  const problems: DirProblem[] = [];
  for (const { key, dirs } of checks) {
    const bad = dirs.find((d) => !ownedByDaemonNotWritable(d, euid));
    if (bad !== undefined) problems.push({ file, line: lineOf(lines, key), key, problem: notOwnedProblem(bad, euid) });
  }
  return problems;
}
