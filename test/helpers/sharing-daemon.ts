/**
 * A root daemon with card sharing on over one fake NVIDIA card, its sharing library (the fake
 * HAMi-core preload) where every account can load it: what the multi-user sharing test and the
 * security suite's removal race both start from.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Daemon } from './daemon';
import { NO_VENDOR_LIBRARIES } from './devices';
import { buildFakePreload, fakeLibrary } from './fixtures';
import { rootDaemon, sharedDir } from './multiuser';
import type { Scope as Tap } from './tap';

export async function sharingRootDaemon(t: Tap, prefix: string): Promise<Daemon> {
  const libDir = sharedDir(t, 0o755, prefix);
  const lib = path.join(libDir, 'libfake-share.so');
  fs.copyFileSync(buildFakePreload(), lib);
  fs.chmodSync(lib, 0o755);
  const fake = fakeLibrary(t, 'nvidia', ['device 0 GPU-5a4ed000-0000-4000-8000-000000000000 "Fake L4 16GB"', 'mem 0 16384 0']);
  const config = path.join(libDir, 'xlurm.toml');
  fs.writeFileSync(config, `[sharing]\nenabled = true\n[sharing.nvidia]\nlibrary = "${lib}"\n`);
  return rootDaemon(t, { backend: 'nvidia', env: { ...NO_VENDOR_LIBRARIES, ...fake.env }, args: ['--config', config] });
}
