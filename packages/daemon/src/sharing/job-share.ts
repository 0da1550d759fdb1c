/**
 * What a job with a slice gets (docs/behaviour.md §25.3): the sharing
 * library appended to its LD_PRELOAD, the limits in the variables its
 * vendor's library reads, and the files those variables name.
 *
 * Files, made by the daemon before the job starts and removed when it ends:
 * - per job, `<state>/share/<id>/` owned by the job's user, mode 0700, in a
 *   root-owned directory of mode 0711 (so nobody else can make, list or
 *   replace it), holding the private file (0600, the owner's) the library
 *   keeps its own accounting in;
 * - per Ascend card, `<shared_region_dir>/<card>_global_registry`, the
 *   region every slice of that card shares (0666: each slice's process must
 *   write it), in a root-owned directory of mode 0711 (users may open the
 *   region by its name, but neither list the directory nor make anything in
 *   it; extensions 28.1 and 28.8).
 * Every operation goes through safe-fs.ts, relative to the directory's
 * descriptor: files are opened without following links and created
 * exclusively; one left by someone else is removed and made again, so a job
 * never gets a file another user controls; the job's own directory, which
 * its user may fill with anything, is removed by descriptor (a link swapped
 * in mid-removal is removed, never followed).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Device } from '@xlurm/protocol';
import type { StoredJob } from '../store/store';
import type { SharingSettings, SharingVendor } from './settings';
import { SafeDir, isFile } from '../safe-fs';

const MIB = 1024 * 1024;

/** The private file's name in the job's directory, per vendor. */
const PRIVATE_NAME: Readonly<Record<string, string>> = { nvidia: 'vgpu.cache', ascend: 'vnpu.local' };

/**
 * The variables of a slice job (besides the visibility variables, set as
 * for whole devices). `privateFile`: its private file; `regionDir`: the
 * vendor's shared-region directory.
 */
export function shareEnv(job: Pick<StoredJob, 'spec' | 'devices'>, vendor: SharingVendor, privateFile: string, regionDir: string): Record<string, string> {
  const share = job.spec.share!;
  const mib = Math.max(1, Math.floor(share.mem / MIB));
  const submitted = job.spec.env.LD_PRELOAD;
  const env: Record<string, string> = {
    LD_PRELOAD: submitted ? `${submitted}:${vendor.library}` : vendor.library,
    XLURM_SHARE_MEM_MB: String(mib),
    XLURM_SHARE_COMPUTE: String(share.compute),
  };
  const kind = job.devices[0]?.kind;
  if (kind === 'ascend') {
    env.NPU_MEMORY_LIMIT_MB = String(mib);
    env.NPU_COMPUTE_LIMIT = String(share.compute);
    env.NPU_SCHED_POLICY = vendor.policy;
    env.NPU_GLOBAL_SHM_PATH = regionFile(regionDir, job.devices[0]!);
    env.NPU_LOCAL_SHM_PATH = privateFile;
  } else if (kind === 'nvidia') {
    job.devices.forEach((_, i) => {
      env[`CUDA_DEVICE_MEMORY_LIMIT_${i}`] = `${mib}m`;
      env[`CUDA_DEVICE_SM_LIMIT_${i}`] = String(share.compute);
    });
    env.CUDA_DEVICE_MEMORY_SHARED_CACHE = privateFile;
  }
  return env;
}

/** An Ascend card's shared region: one file per physical card, shared by every slice on it. */
export function regionFile(dir: string, d: Device): string {
  return path.join(dir, `${d.npu ?? d.id}_global_registry`);
}

export class JobShares {
  constructor(
    private readonly home: string,
    private readonly settings: () => SharingSettings | undefined,
    private readonly euid: number,
    private readonly log: (msg: string) => void,
  ) {}

  /** Where the per-job directories live. */
  get root(): string { return path.join(this.home, 'share'); }

  /**
   * Make a slice job's files; the variables to add to its environment, or
   * null for a job without a slice. Throws (with the reason) when a file
   * cannot be made safely: the job must not run with a slice it cannot have.
   */
  setup(job: StoredJob): Record<string, string> | null {
    const share = job.spec.share;
    if (!share || job.devices.length === 0) return null;
    const kind = job.devices[0]!.kind;
    const vendor = this.settings()?.vendors.get(kind);
    if (!vendor) throw new Error(`sharing is not available for ${kind} devices`);
    const regionDir = vendor.sharedRegionDir ?? path.join(this.home, 'hami');
    const name = String(job.id);
    const root = ownedDir(this.root, 0o711, this.euid);
    let privateFile: string;
    try {
      root.removeTree(name); // a directory left by an earlier daemon for this id
      root.mkdir(name, 0o700);
      const dir = root.openDir(name);
      try {
        const file = PRIVATE_NAME[kind] ?? 'share';
        const fd = dir.createFile(file, 0o600);
        try {
          if (this.euid === 0) fs.fchownSync(fd, job.owner.uid, job.owner.gid);
        } finally { fs.closeSync(fd); }
        if (this.euid === 0) dir.chown('', job.owner.uid, job.owner.gid);
        privateFile = dir.pathOf(file);
      } finally { dir.close(); }
    } finally { root.close(); }
    if (kind === 'ascend') {
      const region = ownedDir(regionDir, 0o711, this.euid);
      try {
        for (const d of job.devices) sharedFile(region, path.basename(regionFile(regionDir, d)), this.euid);
      } finally { region.close(); }
    }
    return shareEnv(job, vendor, privateFile, regionDir);
  }

  /** Remove a job's private files (at its end, or before a retry); the shared regions stay for the card's other slices. */
  remove(id: number): void {
    let root: SafeDir;
    try { root = SafeDir.open(this.root); } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') this.log(`job ${id}: cannot remove its share files: ${(e as Error).message}`);
      return;
    }
    try {
      root.removeTree(String(id));
    } catch (e) {
      this.log(`job ${id}: cannot remove its share files: ${(e as Error).message}`);
    } finally { root.close(); }
  }
}

/**
 * A directory the daemon owns with `mode` (root's group for a root daemon),
 * made if missing, held open: one that is a link or someone else's is
 * refused (never used, never followed). Its path is the daemon's own (its
 * state directory, or `shared_region_dir`, whose parent config/dirs.ts
 * holds to 28.1's rule), so creating the missing parents by path is safe.
 */
function ownedDir(dir: string, mode: number, euid: number): SafeDir {
  // Missing parents get ordinary modes; only the directory itself gets `mode`.
  fs.mkdirSync(path.dirname(dir), { recursive: true, mode: 0o755 });
  try { fs.mkdirSync(dir, { mode }); } catch (e) { if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e; }
  let d: SafeDir;
  try { d = SafeDir.open(dir); } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOOP' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') throw new Error(`${dir} is not a directory of the daemon's own`);
    throw e;
  }
  try {
    const st = d.stat()!;
    if (st.uid !== euid) throw new Error(`${dir} is not a directory of the daemon's own`);
    if (euid === 0 && st.gid !== 0) d.chown('', 0, 0);
    if ((st.mode & 0o7777) !== mode) d.chmod('', mode);
    return d;
  } catch (e) { d.close(); throw e; }
}

/** A card's shared region `name` in `dir`, the daemon's own, mode 0666; anything else at its name is replaced. */
function sharedFile(dir: SafeDir, name: string, euid: number): void {
  const c = fs.constants;
  let fd: number;
  try {
    fd = dir.open(name, c.O_RDWR | c.O_CREAT | c.O_NONBLOCK, 0o666);
  } catch (e) {
    // A link or something that is no file: not ours, replaced.
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'ELOOP' && code !== 'EISDIR' && code !== 'ENXIO') throw e;
    dir.removeTree(name);
    fd = dir.createFile(name, 0o666);
  }
  try {
    const st = dir.stat(name);
    const own = fs.fstatSync(fd);
    if (!own.isFile() || own.uid !== euid || own.nlink !== 1 || !st || !isFile(st) || st.ino !== own.ino) {
      // Made by someone else: replaced by the daemon's own.
      fs.closeSync(fd);
      fd = -1;
      dir.removeTree(name);
      fd = dir.createFile(name, 0o666);
    } else if ((own.mode & 0o777) !== 0o666) fs.fchmodSync(fd, 0o666);
  } finally {
    if (fd >= 0) fs.closeSync(fd);
  }
}
