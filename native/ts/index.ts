/**
 * Typed facade over the native addon (xlurm_native.node) and the path of the
 * xlurm-stepd supervisor. This is the only module that loads the .node file.
 * Arguments are validated here (TypeError) before C++ is reached.
 */
import * as path from 'node:path';
import * as fs from 'node:fs';

/** Peer credentials of a connected Unix socket, from SO_PEERCRED (socket(7)). */
export interface PeerCred { pid: number; uid: number; gid: number }

/** A passwd entry (getpwuid_r(3)). */
export interface Account { name: string; uid: number; gid: number; dir: string; shell: string }

/**
 * A device found by a vendor library at discovery (vendor-neutral).
 * `uuid` is the stable identity the daemon shows as `visible`; `error` is set
 * (and the other fields may be empty) when the device was seen but could not
 * be identified: the daemon leaves it out of the inventory and logs why.
 */
export interface RawDevice {
  id: number; uuid: string; name: string; npu: number | null; chip: number | null; error: string | null;
  /** The device group from the library's topology (0, 1, …); absent where the library reports none. */
  group?: number;
  /** The device's own node files (/dev/nvidia3, …; docs/behaviour.md §24.8); absent where the library names none. */
  nodes?: string[];
  /** The device's PCI address as sysfs names it ("0000:3b:00.0"), for its NUMA node; absent where the library names none. */
  pci?: string;
}

/**
 * One device's answer to a probe (vendor-neutral). `error` set: some query
 * failed, timed out or gave an invalid answer ("<query>: <driver text> (<code>)",
 * "<query> timed out after N ms"); the device is then unknown. Otherwise
 * `uuid` is its identity now, `processes` the host PIDs of compute processes
 * on it (null: not established), `health` the library's verdict (null: the
 * library has no health query).
 */
export interface ProbeRow {
  id: number;
  uuid: string | null;
  processes: number[] | null;
  health: 'ok' | 'unhealthy' | null;
  /** Utilisation in percent and memory in use in bytes, only where the library reports them (docs/behaviour.md §26.2). */
  utilization?: number;
  memory_used?: number;
  /** Total and free device memory in bytes, where the library reports them (card sharing, docs/behaviour.md §25.2). */
  memory_total?: number;
  memory_free?: number;
  error: string | null;
}

/** An opened vendor library (a number the addon maps to the library and its worker thread). */
export type DeviceHandle = number & { readonly __deviceHandle: unique symbol };

/** The contract with C++: every export of xlurm_native.node. */
export interface XlurmNative {
  peerCred(fd: number): PeerCred;
  /** flock(fd, LOCK_EX|LOCK_NB); true when taken, false when held elsewhere (EWOULDBLOCK). */
  flockExclusive(fd: number): boolean;
  /** flock(fd, LOCK_UN). */
  flockUnlock(fd: number): void;
  /** getpwuid_r; null when the uid has no account. */
  accountByUid(uid: number): Account | null;
  /** getgrouplist(name, gid): the account's supplementary groups with gid included. */
  groupList(name: string, gid: number): number[];
  memfd(name: string): number;
  /** getrlimit for RLIMIT_NOFILE: [soft, hard]. */
  getNofileLimit(): [number, number];
  /** dlopen the first loadable path, resolve symbols, initialise; bounded; throws Error(reason). */
  deviceOpen(kind: string, paths: string[], timeoutMs: number): number;
  /** Enumerate devices (bounded, synchronous); throws Error(reason). */
  deviceDiscover(handle: number, timeoutMs: number): RawDevice[];
  /** Query devices on the library's own thread; resolves (never rejects) by the deadline. */
  deviceProbe(handle: number, ids: number[], deadlineMs: number): Promise<ProbeRow[]>;
  /** Shut the library down (bounded; skipped while a call is hung); the handle is invalid afterwards. */
  deviceClose(handle: number, timeoutMs: number): void;
  /** cgroup v2 device isolation (device-filter.cc): deny flat [type, major, minor] triples. */
  deviceFilterAttach(cgroupDir: string, deny: number[]): void;
  deviceFilterCount(cgroupDir: string): number;
  deviceFilterSupported(): string;
  /** posix_spawn `file` as a supervisor on the thread pool, watched on the loop; see spawnSupervisorAsync below. */
  spawnSupervisorAsync(file: string, fds: number[], onSpawned: (err: Error | null, pid?: number) => void,
    onExit: (code: number | null, signal: string | null) => void): void;
  /** pidfd_open(2) and the C library's spawn extensions are available. */
  canSpawnSupervisor(): boolean;
  launcherPair(): [number, number];
  launcherWatch(fd: number, onMessage: (op: number, tag: number, value: number) => void): LauncherHandle;
  launcherSpawn(handle: LauncherHandle, tag: number, fds: number[]): void;
  launcherSignal(handle: LauncherHandle, tag: number, signal: number): void;
  launcherClose(handle: LauncherHandle): void;
  unixConnect(path: string): number;
  unixExchange(fd: number, frame: Buffer, idleMs: number, onEvent: (kind: number, value?: Buffer | number) => void): ExchangeHandle;
  unixClose(handle: ExchangeHandle): void;
  /** Descriptor-relative file operations (src/addon/safe-fs.cc, extensions 28.1); see the wrappers below. */
  safeOpenat(dirfd: number, name: string, flags: number, mode: number): number;
  safeMkdirat(dirfd: number, name: string, mode: number): void;
  safeUnlinkat(dirfd: number, name: string, flags: number): void;
  safeRenameat(olddirfd: number, oldname: string, newdirfd: number, newname: string, flags: number): void;
  safeFchownat(dirfd: number, name: string, uid: number, gid: number): void;
  safeFchmodat(dirfd: number, name: string, mode: number): void;
  safeFstatat(dirfd: number, name: string): EntryStat;
  safeRemoveTree(dirfd: number, name: string, maxDepth: number, maxEntries: number): number;
}

/** What safeFstatat reports of an entry (never following a link: a link's own fields). */
export interface EntryStat { mode: number; uid: number; gid: number; nlink: number; size: number; dev: number; ino: number }

/** A one-shot exchange on a Unix socket (src/addon/request.cc). */
export type ExchangeHandle = { readonly __exchange: unique symbol };

/** What unixExchange reports: bytes read, end of file (or reset), a read error (-errno), idleMs without progress. */
export const EXCHANGE = { DATA: 0, END: 1, ERROR: 2, IDLE: 3 } as const;

/** The daemon's end of a running supervisor launcher (`xlurm-stepd --launcher`). */
export type LauncherHandle = { readonly __launcher: unique symbol };

/** Messages from the launcher (native/src/launch-proto.h); CLOSED: its end is gone. */
export const LAUNCH = { CLOSED: 0, SPAWNED: 3, EXITED: 4 } as const;

const here = path.resolve(__dirname, '..');
const candidates = [
  path.join(here, 'build', 'Release'),
  path.join(here, 'build', 'Debug'),
  path.join(here, 'build'),
];

function findBuilt(file: string): string {
  const tried: string[] = [];
  for (const dir of candidates) {
    const p = path.join(dir, file);
    tried.push(p);
    if (fs.existsSync(p)) return p;
  }
  throw new Error(`cannot find ${file}; run \`npm run build\` (tried ${tried.join(', ')})`);
}

let loaded: XlurmNative | undefined;

/** Load the addon once (lazily, so clients that do not need it pay nothing). */
export function native(): XlurmNative {
  if (!loaded) loaded = require(findBuilt('xlurm_native.node')) as XlurmNative;
  return loaded;
}

/** Absolute path of the xlurm-stepd supervisor executable. */
export function stepdPath(): string {
  return findBuilt('xlurm-stepd');
}

function checkFd(fd: number): void {
  if (!Number.isInteger(fd) || fd < 0) throw new TypeError(`invalid file descriptor: ${fd}`);
}
function checkId(id: number, what: string): void {
  if (!Number.isInteger(id) || id < 0 || id > 0xffffffff) throw new TypeError(`invalid ${what}: ${id}`);
}

export function peerCred(fd: number): PeerCred { checkFd(fd); return native().peerCred(fd); }
export function flockExclusive(fd: number): boolean { checkFd(fd); return native().flockExclusive(fd); }
export function flockUnlock(fd: number): void { checkFd(fd); native().flockUnlock(fd); }
export function accountByUid(uid: number): Account | null { checkId(uid, 'uid'); return native().accountByUid(uid); }
export function groupList(name: string, gid: number): number[] {
  if (typeof name !== 'string' || name === '') throw new TypeError('invalid account name');
  checkId(gid, 'gid');
  return native().groupList(name, gid);
}
/** A new anonymous in-memory file (memfd_create(2), close-on-exec); throws with code ENOSYS where the kernel has none. */
export function memfd(name: string): number { return native().memfd(name); }
/** RLIMIT_NOFILE as [soft, hard]; RLIM_INFINITY is reported as Number.MAX_SAFE_INTEGER. */
export function getNofileLimit(): [number, number] { return native().getNofileLimit(); }

// ----- supervisor spawn (src/addon/spawn.cc) ------------------------------------------------

/** The spawn's arguments: an absolute path and four descriptors. */
function checkSpawn(file: string, fds: readonly number[]): void {
  if (typeof file !== 'string' || !path.isAbsolute(file) || file.includes('\0')) {
    throw new TypeError(`invalid executable path: ${String(file)}`);
  }
  if (!Array.isArray(fds) || fds.length !== 4) throw new TypeError('fds must be [fd0, fd1, fd2, fd3]');
  for (const fd of fds) checkFd(fd);
}

/**
 * posix_spawn(3) `file` with argv [file] and an empty environment, cwd "/", in a new session
 * (POSIX_SPAWN_SETSID), empty signal mask and default dispositions for all signals
 * (POSIX_SPAWN_SETSIGMASK|SETSIGDEF — Node ignores SIGPIPE etc.; glibc still leaves its two
 * internal signals, 32 and 33, ignored), with fds[i] as descriptor i for i = 0..3 and no other
 * descriptor inherited. Any fds[i] may repeat another (a log on both 1 and 2) or be below 4.
 * `file` must be an absolute path (it is resolved after the chdir to "/").
 *
 * posix_spawn runs on libuv's thread pool, so the event loop never waits for the child's execve
 * (the vfork'd parent is blocked until it is done: milliseconds on a loaded machine). The four
 * descriptors are copied before this returns (the caller may close its own at once).
 * onSpawned(null, pid) or onSpawned(error) follows from the loop; the error's `.code` is the
 * errno name ('ENOENT', 'EACCES', 'ENOMEM', 'EAGAIN', …; also `.errno`, `.syscall`, `.path`)
 * and its message "spawn <file>: <strerror>", with nothing left behind (no child, no descriptor).
 *
 * After a successful spawn the child is watched with a pidfd on the daemon's own libuv loop
 * (uv_poll_t on pidfd_open(pid); when no pidfd can be had, e.g. EMFILE, a 50 ms timer polls
 * waitpid(pid, WNOHANG) instead), reaped (that pid only — never any child: libuv reaps its own)
 * and onExit(code, signal) is called once, where exactly one of code/signal is non-null (signal
 * as a name like 'SIGKILL'). Should some other code in the process have reaped it first (a wait
 * for any child), code is -1. onExit runs like any loop callback: in the async context of the
 * spawn call, with process.nextTick and microtasks run after it; a throw is an uncaught
 * exception. The watch does not keep the event loop alive.
 *
 * Throws synchronously only for invalid arguments (TypeError) or when the copies cannot be made
 * (an Error as above with `.syscall` 'fcntl': EMFILE, or EBADF for a closed fds[i]).
 */
export function spawnSupervisorAsync(
  file: string,
  fds: readonly [number, number, number, number],
  onSpawned: (err: Error | null, pid?: number) => void,
  onExit: (code: number | null, signal: string | null) => void,
): void {
  checkSpawn(file, fds);
  if (typeof onSpawned !== 'function' || typeof onExit !== 'function') throw new TypeError('onSpawned and onExit must be functions');
  native().spawnSupervisorAsync(file, [...fds], onSpawned, onExit);
}

/**
 * False where pidfd_open(2) is unavailable (Linux < 5.3, or refused by a seccomp filter) or the
 * C library lacks posix_spawn's chdir/closefrom extensions (glibc < 2.34): callers fall back to
 * child_process.
 */
export function canSpawnSupervisor(): boolean { return native().canSpawnSupervisor(); }

/**
 * A SOCK_SEQPACKET pair, both close-on-exec: [the daemon's end, the launcher's end (its fd 3)].
 */
export function launcherPair(): [number, number] { return native().launcherPair(); }

/**
 * Watch the daemon's end (which it now owns and closes): onMessage(op, tag, value) for each
 * LAUNCH.SPAWNED (value: pid, 0 when started but not tracked, or -errno) and LAUNCH.EXITED
 * (value: wait status), then LAUNCH.CLOSED once when the launcher's end is gone.
 */
export function launcherWatch(fd: number, onMessage: (op: number, tag: number, value: number) => void): LauncherHandle {
  checkFd(fd);
  if (typeof onMessage !== 'function') throw new TypeError('onMessage must be a function');
  return native().launcherWatch(fd, onMessage);
}

/** Ask the launcher to fork a supervisor on these fds 0-3 (sent, not copied: the caller may close its own). Throws EAGAIN, EPIPE... */
export function launcherSpawn(handle: LauncherHandle, tag: number, fds: readonly [number, number, number, number]): void {
  checkId(tag, 'tag');
  for (const fd of fds) checkFd(fd);
  native().launcherSpawn(handle, tag, [...fds]);
}

/** Ask the launcher to signal the supervisor `tag` unless it has reaped it already. */
export function launcherSignal(handle: LauncherHandle, tag: number, signal: number): void {
  checkId(tag, 'tag');
  native().launcherSignal(handle, tag, signal);
}

/** Stop watching and close the daemon's end: the launcher exits (its supervisors do not). */
export function launcherClose(handle: LauncherHandle): void { native().launcherClose(handle); }

// ----- one-shot requests without node:net (src/addon/request.cc) ---------------------------

/**
 * socket(AF_UNIX, SOCK_STREAM) (nonblocking, close-on-exec) connected to `socketPath`; the
 * descriptor. Throws a Node-style system error (`.code` ENOENT, ECONNREFUSED, EAGAIN when the
 * listener's backlog is full, ENAMETOOLONG…; `.errno`, `.syscall`).
 */
export function unixConnect(socketPath: string): number {
  if (typeof socketPath !== 'string') throw new TypeError('invalid socket path');
  return native().unixConnect(socketPath);
}

/**
 * Take `fd` (from unixConnect; it is closed by unixClose, never by the caller), write `frame`
 * and report from the event loop: onEvent(EXCHANGE.DATA, bytes) for each read,
 * onEvent(EXCHANGE.END) at end of file or a reset, onEvent(EXCHANGE.ERROR, -errno) for another
 * read error, onEvent(EXCHANGE.IDLE) each `idleMs` without bytes read or written. A failed write
 * (the peer closed) only stops writing: what the peer sent is still reported. The exchange keeps
 * the event loop alive until unixClose. Check the peer (peerCred) before: nothing is written
 * before this call.
 */
export function unixExchange(fd: number, frame: Buffer, idleMs: number, onEvent: (kind: number, value?: Buffer | number) => void): ExchangeHandle {
  checkFd(fd);
  if (!Buffer.isBuffer(frame)) throw new TypeError('frame must be a Buffer');
  checkMs(idleMs, 'idle timeout');
  if (typeof onEvent !== 'function') throw new TypeError('onEvent must be a function');
  return native().unixExchange(fd, frame, idleMs, onEvent);
}

/** Stop the exchange and close its descriptor (again: nothing). */
export function unixClose(handle: ExchangeHandle): void { native().unixClose(handle); }

// ----- vendor device libraries (src/addon/device.cc) -----------------------------------------

function checkMs(ms: number, what: string): void {
  if (!Number.isInteger(ms) || ms < 1 || ms > 0x7fffffff) throw new TypeError(`invalid ${what}: ${ms}`);
}
function checkHandle(h: DeviceHandle): void {
  if (!Number.isInteger(h) || h < 1 || h > 0xffffffff) throw new TypeError(`invalid device handle: ${h}`);
}

/**
 * Open a vendor library: dlopen each of `paths` in order until one loads
 * (a bare soname uses the dynamic loader's search), resolve the vendor's
 * symbols and initialise it, on the library's own worker thread, waiting at
 * most `timeoutMs`. Throws an Error whose message says why (`no <kind> support
 * in this build`, `cannot load library: …`, `nvmlInit_v2: Driver Not Loaded (9)`,
 * `dlopen timed out after N ms`).
 * Paths come from the daemon's own configuration, never from a job.
 */
export function deviceOpen(kind: string, paths: readonly string[], timeoutMs: number): DeviceHandle {
  if (typeof kind !== 'string' || kind === '') throw new TypeError('invalid device kind');
  if (!Array.isArray(paths) || paths.length === 0 || paths.some((p) => typeof p !== 'string' || p === '' || p.includes('\0'))) {
    throw new TypeError('invalid library path list');
  }
  checkMs(timeoutMs, 'timeout');
  return native().deviceOpen(kind, [...paths], timeoutMs) as DeviceHandle;
}

/** Enumerate the library's devices (synchronous, at most `timeoutMs`); throws Error(reason). */
export function deviceDiscover(handle: DeviceHandle, timeoutMs: number): RawDevice[] {
  checkHandle(handle);
  checkMs(timeoutMs, 'timeout');
  return native().deviceDiscover(handle, timeoutMs);
}

/**
 * Probe devices by id off the event loop. Resolves with one row per id, in
 * order, within `deadlineMs`: a driver call still running at the deadline
 * yields rows with `error: "<call> timed out after N ms"`, and until that
 * call returns every later probe of the library answers the same at once.
 */
export function deviceProbe(handle: DeviceHandle, ids: readonly number[], deadlineMs: number): Promise<ProbeRow[]> {
  checkHandle(handle);
  if (!Array.isArray(ids)) throw new TypeError('invalid device id list');
  for (const id of ids) checkId(id, 'device id');
  checkMs(deadlineMs, 'deadline');
  return native().deviceProbe(handle, [...ids], deadlineMs);
}

/** Shut the library down (at most `timeoutMs`; skipped while a call is hung). */
export function deviceClose(handle: DeviceHandle, timeoutMs: number): void {
  checkHandle(handle);
  checkMs(timeoutMs, 'timeout');
  native().deviceClose(handle, timeoutMs);
}

/** A device number to deny a job (docs/behaviour.md §24.8): a character or block device's major:minor. */
export interface DeviceNumber { type: 'c' | 'b'; major: number; minor: number }

/**
 * Attach a BPF_PROG_TYPE_CGROUP_DEVICE program to the cgroup v2 directory
 * `cgroupDir` that denies every access to the given device numbers and allows
 * all others (with BPF_F_ALLOW_MULTI: programs of the cgroups above still run).
 * It stays attached until the cgroup is removed. Throws a system error
 * (`EPERM: …, bpf(BPF_PROG_ATTACH)`).
 */
export function deviceFilterAttach(cgroupDir: string, deny: readonly DeviceNumber[]): void {
  if (typeof cgroupDir !== 'string' || cgroupDir === '') throw new TypeError('invalid cgroup directory');
  const flat: number[] = [];
  for (const d of deny) {
    if (d.type !== 'c' && d.type !== 'b') throw new TypeError('invalid device type');
    checkId(d.major, 'major');
    checkId(d.minor, 'minor');
    flat.push(d.type === 'b' ? 1 : 2, d.major, d.minor);
  }
  native().deviceFilterAttach(cgroupDir, flat);
}

/** How many device programs are attached to a cgroup v2 directory (BPF_PROG_QUERY). */
export function deviceFilterCount(cgroupDir: string): number {
  if (typeof cgroupDir !== 'string' || cgroupDir === '') throw new TypeError('invalid cgroup directory');
  return native().deviceFilterCount(cgroupDir);
}

/** '' when this kernel loads a cgroup device program for this process, else why not. */
export function deviceFilterSupported(): string { return native().deviceFilterSupported(); }

// ----- descriptor-relative file operations (src/addon/safe-fs.cc, extensions 28.1) ----------

/** unlinkat's flag for a directory; renameat2's flag that refuses to replace an entry. */
export const AT_REMOVEDIR = 0x200;
export const RENAME_NOREPLACE = 1;

/** One entry's name: no '/', not '.' or '..', no NUL (`allowEmpty`: '' is the directory itself). */
function checkEntry(name: string, allowEmpty = false): void {
  if (typeof name !== 'string' || name.includes('\0') || name.includes('/') || (name === '' ? !allowEmpty : name === '.' || name === '..')) {
    throw new TypeError(`invalid entry name: ${JSON.stringify(name)}`);
  }
}
/** A relative name of one or more components, none empty, '.' or '..'. */
function checkRelative(name: string): void {
  if (typeof name !== 'string' || name === '' || name.includes('\0') || name.startsWith('/') || name.split('/').some((c) => c === '' || c === '.' || c === '..')) {
    throw new TypeError(`invalid relative name: ${JSON.stringify(name)}`);
  }
}
function checkMode(mode: number): void {
  if (!Number.isInteger(mode) || mode < 0 || mode > 0o7777) throw new TypeError(`invalid mode: ${mode}`);
}

/**
 * openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC, mode): a new descriptor. A name of several
 * components is resolved beneath dirfd without following any link (openat2 RESOLVE_NO_SYMLINKS |
 * RESOLVE_BENEATH, or a component-by-component walk where the kernel has no openat2). A link
 * anywhere: ELOOP (or ENOTDIR, EXDEV from openat2).
 */
export function safeOpenat(dirfd: number, name: string, flags: number, mode = 0): number {
  checkFd(dirfd); checkRelative(name); checkId(flags, 'flags'); checkMode(mode);
  return native().safeOpenat(dirfd, name, flags, mode);
}
/** mkdirat(dirfd, name, mode) (the umask applies). */
export function safeMkdirat(dirfd: number, name: string, mode: number): void {
  checkFd(dirfd); checkEntry(name); checkMode(mode);
  native().safeMkdirat(dirfd, name, mode);
}
/** unlinkat(dirfd, name, flags): the entry itself (a link is removed, never followed); flags 0 or AT_REMOVEDIR. */
export function safeUnlinkat(dirfd: number, name: string, flags = 0): void {
  checkFd(dirfd); checkEntry(name);
  if (flags !== 0 && flags !== AT_REMOVEDIR) throw new TypeError(`invalid unlinkat flags: ${flags}`);
  native().safeUnlinkat(dirfd, name, flags);
}
/** renameat(2), or renameat2(2) with flags (RENAME_NOREPLACE); entries are renamed, never followed. */
export function safeRenameat(olddirfd: number, oldname: string, newdirfd: number, newname: string, flags = 0): void {
  checkFd(olddirfd); checkEntry(oldname); checkFd(newdirfd); checkEntry(newname);
  if (flags !== 0 && flags !== RENAME_NOREPLACE) throw new TypeError(`invalid renameat2 flags: ${flags}`);
  native().safeRenameat(olddirfd, oldname, newdirfd, newname, flags);
}
/** fchownat(dirfd, name, uid, gid, AT_SYMLINK_NOFOLLOW); name '' chowns dirfd itself. */
export function safeFchownat(dirfd: number, name: string, uid: number, gid: number): void {
  checkFd(dirfd); checkEntry(name, true); checkId(uid, 'uid'); checkId(gid, 'gid');
  native().safeFchownat(dirfd, name, uid, gid);
}
/** chmod of the entry itself, which must be a regular file or a directory (a link: ELOOP; else EINVAL); '' is dirfd. */
export function safeFchmodat(dirfd: number, name: string, mode: number): void {
  checkFd(dirfd); checkEntry(name, true); checkMode(mode);
  native().safeFchmodat(dirfd, name, mode);
}
/** fstatat(dirfd, name, AT_SYMLINK_NOFOLLOW); name '' is dirfd itself (fstat). */
export function safeFstatat(dirfd: number, name: string): EntryStat {
  checkFd(dirfd); checkEntry(name, true);
  return native().safeFstatat(dirfd, name);
}
/**
 * Remove the entry `name` of dirfd and, for a directory, everything in it, descending by
 * descriptor: no link is followed, no other filesystem (a mount point) entered, at most
 * `maxDepth` levels and `maxEntries` entries. Returns how many entries were removed (0: there
 * was none). Throws a system error (`.code` ELOOP past maxDepth, E2BIG past maxEntries, EXDEV at
 * a mount, ENOTEMPTY when it keeps refilling; `.removed` says how many went) and leaves the rest.
 */
export function safeRemoveTree(dirfd: number, name: string, maxDepth = 64, maxEntries = 100000): number {
  checkFd(dirfd); checkEntry(name); checkId(maxDepth, 'depth'); checkId(maxEntries, 'entry count');
  return native().safeRemoveTree(dirfd, name, maxDepth, maxEntries);
}
