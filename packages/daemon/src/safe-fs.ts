/**
 * The one module through which the daemon touches a path a user can
 * influence (extensions 28.1; docs/security.md "Races on user-named paths and
 * recursive removal"). It works relative to directory descriptors: a
 * `SafeDir` is opened once from a trusted path (a directory root owns), and
 * every later operation names one entry of it, through the addon's
 * descriptor-relative calls (native/src/addon/safe-fs.cc) that never follow
 * a link. Whatever a user renames or swaps under the directory meanwhile, root
 * acts on entries of that directory only, or fails with an error.
 *
 * - new files are created O_EXCL (never a file someone planted);
 * - replacing a file goes through a temporary name with 72 random bits,
 *   created O_EXCL in the target's own directory, then renamed over it;
 * - removal is unlinkat on the holding directory's descriptor; a tree is
 *   removed by descriptor (no link followed, no mount crossed, bounded);
 * - chown/chmod act on the entry itself, never on a link's target.
 *
 * `ownedByDaemonNotWritable` is 28.1's rule for a directory the daemon writes
 * into on its own behalf (config/dirs.ts applies it at start and reload).
 * test/unit/daemon/no-path-removal.ts fails on a path-based recursive removal
 * anywhere else in the daemon, the CLI or the addon.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  AT_REMOVEDIR, RENAME_NOREPLACE, safeFchmodat, safeFchownat, safeFstatat, safeMkdirat, safeOpenat, safeRemoveTree,
  safeRenameat, safeUnlinkat, type EntryStat,
} from '@xlurm/native';

export type { EntryStat };

const { O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
const S_IFMT = fs.constants.S_IFMT;

/** Bounds of removeTree: deeper or larger trees fail (ELOOP, E2BIG) and stay, so a user's huge tree cannot hold the daemon. */
export const TREE_MAX_DEPTH = 32;
export const TREE_MAX_ENTRIES = 10000;

export function isDir(st: EntryStat): boolean { return (st.mode & S_IFMT) === fs.constants.S_IFDIR; }
export function isFile(st: EntryStat): boolean { return (st.mode & S_IFMT) === fs.constants.S_IFREG; }

function writeAsync(fd: number, buf: Buffer, at: number, length: number): Promise<number> {
  return new Promise((resolve, reject) => fs.write(fd, buf, at, length, null, (err, n) => (err ? reject(err) : resolve(n))));
}

function code(e: unknown): string | undefined { return (e as NodeJS.ErrnoException).code; }

/** A directory held open by descriptor; close it when done (or use `withDir`). */
export class SafeDir {
  private constructor(readonly fd: number, readonly path: string) {}

  /**
   * Open a directory from a trusted path (one whose every component only
   * root, or the daemon's own user, can change). Its last component is not
   * followed if it is a link (ELOOP).
   */
  static open(dir: string): SafeDir {
    // libuv adds O_CLOEXEC to every open.
    return new SafeDir(fs.openSync(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW), dir);
  }

  /** A directory beneath this one (`name` may have several components; no link is followed in any). */
  openDir(name: string): SafeDir {
    return new SafeDir(safeOpenat(this.fd, name, O_RDONLY | O_DIRECTORY), path.join(this.path, name));
  }

  close(): void { fs.closeSync(this.fd); }

  /** The path of an entry, for messages only (never opened by it). */
  pathOf(name: string): string { return path.join(this.path, name); }

  /** The entry's status, a link's own; '' is this directory. null: no such entry. */
  stat(name = ''): EntryStat | null {
    try { return safeFstatat(this.fd, name); } catch (e) {
      if (code(e) === 'ENOENT') return null;
      throw e;
    }
  }

  /** Open an entry (flags as for open(2); O_NOFOLLOW is always added): a descriptor. */
  open(name: string, flags: number, mode = 0o600): number { return safeOpenat(this.fd, name, flags, mode); }

  /** A new file, created exclusively (EEXIST when anything has the name): a descriptor open O_RDWR. */
  createFile(name: string, mode: number): number {
    const fd = safeOpenat(this.fd, name, O_RDWR | O_CREAT | O_EXCL, mode);
    try { fs.fchmodSync(fd, mode); } catch (e) { fs.closeSync(fd); throw e; } // the umask took bits off
    return fd;
  }

  /**
   * Append to a regular file, created 0600 when missing: a descriptor, or
   * null when the name is something else (a FIFO, a device planted there:
   * nothing is written to it). A link under the name: ELOOP.
   */
  openAppend(name: string, mode = 0o600): number | null {
    const fd = safeOpenat(this.fd, name, O_WRONLY | fs.constants.O_APPEND | O_CREAT | O_NONBLOCK, mode);
    if (!fs.fstatSync(fd).isFile()) { fs.closeSync(fd); return null; }
    return fd;
  }

  /** Make a directory (EEXIST when the name is taken: then nothing is changed). */
  mkdir(name: string, mode: number): void {
    safeMkdirat(this.fd, name, mode);
    this.chmod(name, mode); // the umask took bits off
  }

  /**
   * Replace `name` with `data` in one step: written to an unpredictable
   * temporary name created O_EXCL in this directory, given `mode` (and
   * `owner`), optionally synced, then renamed over `name` (a link there is
   * replaced, never followed). `temp`: the temporary name, where the
   * directory has a naming rule for them (it must be as unpredictable: see
   * randomDigits). Throws, leaving no temporary file, on failure.
   */
  writeAtomic(name: string, data: string | Buffer, mode: number, opts: { owner?: { uid: number; gid: number }; sync?: boolean; temp?: string } = {}): void {
    const tmp = opts.temp ?? `.${name}.${randomBytes(9).toString('base64url')}.tmp`;
    let renamed = false;
    const fd = this.createFile(tmp, mode);
    try {
      const buf = typeof data === 'string' ? Buffer.from(data) : data;
      for (let at = 0; at < buf.length;) at += fs.writeSync(fd, buf, at, buf.length - at);
      if (opts.owner) fs.fchownSync(fd, opts.owner.uid, opts.owner.gid);
      if (opts.sync) fs.fsyncSync(fd);
      fs.closeSync(fd);
      safeRenameat(this.fd, tmp, this.fd, name);
      renamed = true;
      if (opts.sync) fs.fsyncSync(this.fd);
    } finally {
      try { fs.closeSync(fd); } catch { /* closed above */ }
      if (!renamed) this.remove(tmp);
    }
  }

  /** writeAtomic's asynchronous form, for larger texts (the metrics file): the same steps, the writes off the event loop. */
  async writeAtomicAsync(name: string, data: string, mode: number): Promise<void> {
    const tmp = `.${name}.${randomBytes(9).toString('base64url')}.tmp`;
    let renamed = false;
    const fd = this.createFile(tmp, mode);
    try {
      const buf = Buffer.from(data);
      for (let at = 0; at < buf.length;) at += await writeAsync(fd, buf, at, buf.length - at);
      fs.closeSync(fd);
      safeRenameat(this.fd, tmp, this.fd, name);
      renamed = true;
    } finally {
      try { fs.closeSync(fd); } catch { /* closed above */ }
      if (!renamed) this.remove(tmp);
    }
  }

  /** Rename an entry of this directory (`noReplace`: EEXIST rather than replace `to`). */
  rename(from: string, to: string, noReplace = false): void {
    safeRenameat(this.fd, from, this.fd, to, noReplace ? RENAME_NOREPLACE : 0);
  }

  /** Remove a non-directory entry (a link itself, never its target); false when there was none. */
  remove(name: string): boolean {
    try { safeUnlinkat(this.fd, name); return true; } catch (e) {
      if (code(e) === 'ENOENT') return false;
      throw e;
    }
  }

  /** Remove an empty directory; false when there was none. */
  removeDir(name: string): boolean {
    try { safeUnlinkat(this.fd, name, AT_REMOVEDIR); return true; } catch (e) {
      if (code(e) === 'ENOENT') return false;
      throw e;
    }
  }

  /** Remove an entry and, for a directory, everything in it, by descriptor (see the addon); the number removed (0: none). */
  removeTree(name: string, limits: { maxDepth?: number; maxEntries?: number } = {}): number {
    return safeRemoveTree(this.fd, name, limits.maxDepth ?? TREE_MAX_DEPTH, limits.maxEntries ?? TREE_MAX_ENTRIES);
  }

  /** chown of the entry itself ('' is this directory). */
  chown(name: string, uid: number, gid: number): void { safeFchownat(this.fd, name, uid, gid); }

  /** chmod of the entry itself, a regular file or a directory ('' is this directory; a link: ELOOP). */
  chmod(name: string, mode: number): void { safeFchmodat(this.fd, name, mode); }
}

/** `n` random decimal digits (crypto), for temporary names that must match a digits-only pattern. */
export function randomDigits(n = 18): string {
  let out = '';
  while (out.length < n) out += randomBytes(8).readBigUInt64BE().toString().slice(1, 16);
  return out.slice(0, n);
}

/** Run `fn` with `dir` open, closing it after. */
export function withDir<T>(dir: string, fn: (d: SafeDir) => T): T {
  const d = SafeDir.open(dir);
  try { return fn(d); } finally { d.close(); }
}

/**
 * 28.1's rule for a directory the daemon writes into on its own behalf: it
 * is owned by root (a non-root, development daemon: by root or its own user
 * instead) and not writable by group or others, so no user can plant or swap entries
 * in it. A missing directory passes (the daemon makes it itself, as its own);
 * one that cannot be examined for another reason fails.
 */
export function ownedByDaemonNotWritable(dir: string, euid = process.geteuid?.() ?? 0): boolean {
  let st: fs.Stats;
  try { st = fs.lstatSync(dir); } catch (e) { return code(e) === 'ENOENT'; }
  return st.isDirectory() && (st.uid === 0 || st.uid === euid) && (st.mode & 0o022) === 0;
}

/** The rule's message after `<dotted.key>: ` (the key is the caller's). */
export function notOwnedProblem(dir: string, euid = process.geteuid?.() ?? 0): string {
  return euid === 0
    ? `${dir} must be owned by root and not writable by others`
    : `${dir} must be owned by root or the daemon's user (uid ${euid}) and not writable by others`;
}
