// Which library a vendor backend opens (docs/behaviour.md §9.2), the same rule for every vendor:
// an absolute override variable, else the vendor's search list in order. Shared by the unit test
// of each backend in test/unit/daemon/devices/.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BackendFactory } from '../../packages/daemon/src/devices/backend';
import { skip, type Tap } from './tap';

/** The native addon the backends load; the backend tests plan nothing without it. */
export const ADDON_BUILT = fs.existsSync(path.resolve(__dirname, '../../native/build/Release/xlurm_native.node'));

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * `env` must be absolute (`relative` is refused, naming it), an absolute one is used alone (no
 * search), and without it every entry of `search` is tried, in order, each named in the error.
 */
export function checkLibraryChoice(t: Tap, factory: BackendFactory, env: string, search: readonly string[], relative: string): void {
  const quiet = () => undefined;
  t.throws(() => factory({ env: { [env]: relative }, log: quiet }), { message: `${env} must be an absolute path: ${relative}` });
  const missing = `/nonexistent/${path.basename(relative)}`;
  t.throws(() => factory({ env: { [env]: missing }, log: quiet }),
    { message: new RegExp(`^cannot load library: ${escape(missing)}: cannot open shared object file: No such file or directory$`) },
    'the override only: no search');
  if (search.some((p) => path.isAbsolute(p) && fs.existsSync(p))) {
    skip(t, 'this host has the vendor library on the search list');
    return;
  }
  let why: string | undefined;
  try { factory({ env: {}, log: quiet }).close(); } catch (e) { why = (e as Error).message; }
  if (why === undefined) skip(t, 'this host has the vendor library on the search list');
  else t.equal(why, `cannot load library: ${search.map((p) => `${p}: cannot open shared object file: No such file or directory`).join('; ')}`);
}
