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
 *   write it), in a root-owned directory of mode 1733 (users may not list it
 *   or remove each other's files).
 * Every file is opened without following links, created exclusively; one
 * left by someone else is removed and made again, so a job never gets a file
 * another user controls.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Device } from '@xlurm/protocol';
import type { StoredJob } from '../store/store';
import type { SharingSettings, SharingVendor } from './settings';

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

  private dirOf(id: number): string { return path.join(this.root, String(id)); }

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
    ownedDir(this.root, 0o711, this.euid, this.euid === 0 ? 0 : -1);
    const dir = this.dirOf(job.id);
    this.remove(job.id); // a directory left by an earlier daemon for this id
    fs.mkdirSync(dir, { mode: 0o700 });
    const privateFile = path.join(dir, PRIVATE_NAME[kind] ?? 'share');
    const fd = fs.openSync(privateFile, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600);
    try {
      if (this.euid === 0) { fs.fchownSync(fd, job.owner.uid, job.owner.gid); }
    } finally { fs.closeSync(fd); }
    if (this.euid === 0) fs.chownSync(dir, job.owner.uid, job.owner.gid);
    fs.chmodSync(dir, 0o700);
    if (kind === 'ascend') {
      ownedDir(regionDir, 0o1733, this.euid, this.euid === 0 ? 0 : -1);
      for (const d of job.devices) sharedFile(regionFile(regionDir, d), this.euid);
    }
    return shareEnv(job, vendor, privateFile, regionDir);
  }

  /** Remove a job's private files (at its end, or before a retry); the shared regions stay for the card's other slices. */
  remove(id: number): void {
    try {
      fs.rmSync(this.dirOf(id), { recursive: true, force: true });
    } catch (e) {
      this.log(`job ${id}: cannot remove its share files: ${(e as Error).message}`);
    }
  }
}

/**
 * A directory the daemon owns with `mode`: made if missing; one that is a
 * link or someone else's is refused (never used, never followed).
 */
function ownedDir(dir: string, mode: number, euid: number, gid: number): void {
  // Missing parents get ordinary modes; only the directory itself gets `mode`.
  fs.mkdirSync(path.dirname(dir), { recursive: true, mode: 0o755 });
  try { fs.mkdirSync(dir, { mode }); } catch (e) { if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e; }
  const st = fs.lstatSync(dir);
  if (!st.isDirectory() || st.uid !== euid) throw new Error(`${dir} is not a directory of the daemon's own`);
  if (gid >= 0 && st.gid !== gid) fs.chownSync(dir, euid, gid);
  if ((st.mode & 0o7777) !== mode) fs.chmodSync(dir, mode);
}

/** A card's shared region, the daemon's own, mode 0666; anything else at its name is replaced. */
function sharedFile(file: string, euid: number): void {
  const flags = fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW;
  let fd: number;
  try {
    fd = fs.openSync(file, flags | fs.constants.O_NONBLOCK, 0o666);
  } catch (e) {
    // A link or something that is no file: not ours, replaced.
    if ((e as NodeJS.ErrnoException).code !== 'ELOOP' && (e as NodeJS.ErrnoException).code !== 'EISDIR') throw e;
    fs.rmSync(file, { recursive: true, force: true });
    fd = fs.openSync(file, flags | fs.constants.O_EXCL, 0o666);
  }
  try {
    let st = fs.fstatSync(fd);
    if (!st.isFile() || st.uid !== euid || st.nlink !== 1) {
      // Made by a user (the directory lets anyone create): replaced by the daemon's own.
      fs.closeSync(fd);
      fd = -1;
      fs.unlinkSync(file);
      fd = fs.openSync(file, flags | fs.constants.O_EXCL, 0o666);
      st = fs.fstatSync(fd);
    }
    if ((st.mode & 0o777) !== 0o666) fs.fchmodSync(fd, 0o666);
  } finally {
    if (fd >= 0) fs.closeSync(fd);
  }
}
