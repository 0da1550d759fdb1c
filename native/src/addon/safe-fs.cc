// Descriptor-relative file operations for paths a user can influence (extensions 28.1; the one
// TS user is packages/daemon/src/safe-fs.ts). Every operation names an entry of a directory the
// caller holds open (`dirfd`), never a path resolved from "/": a user who can rename or replace
// entries under that directory cannot make root follow a symbolic link out of it.
//
// - safeOpenat: openat with O_NOFOLLOW|O_CLOEXEC always added. A name of several components
//   ("a/b") is resolved with openat2(RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH) where the kernel has it
//   (Linux >= 5.6), else component by component with O_NOFOLLOW|O_DIRECTORY (same guarantee, more
//   syscalls). Absolute names, "..", "." and empty components are refused (EINVAL).
// - safeMkdirat, safeUnlinkat, safeRenameat, safeFchownat (AT_SYMLINK_NOFOLLOW: the entry
//   itself), safeFchmodat (the entry pinned by an O_PATH descriptor, which must be a regular file
//   or a directory; chmod through /proc/self/fd, as glibc's own fchmodat does, because Linux's
//   fchmodat has no working AT_SYMLINK_NOFOLLOW before fchmodat2), safeFstatat (never follows;
//   name "" is the directory itself). These take one component each.
// - safeRemoveTree: recursive removal that descends by descriptor (openat O_DIRECTORY|O_NOFOLLOW,
//   fdopendir, unlinkat on the parent's descriptor), never follows a link, never crosses a mount
//   (st_dev of each directory against the top one's), with bounded depth and entry count. Each
//   directory is first emptied of its subdirectories only and rmdir'ed, and only if that says
//   ENOTEMPTY are its other entries unlinked: so a cgroup tree (whose control files cannot be
//   unlinked, and go with their directory) is removed by the same call.
//
// Synchronous on purpose: the trees are small (a job's share directory, a card's registry
// directory: a handful of files), each call is a few local-filesystem syscalls, and the callers
// need the answer before they go on (a job must not start with a directory it could not make).
// The bounds keep a user's deliberately huge tree from holding the daemon's thread: removal then
// fails with E2BIG and what is left stays (the caller logs it).
//
// Concurrent swaps: at worst an operation fails with an error, or removes an entry that is inside
// the tree at the moment of the unlinkat; it never acts outside the directory it was handed.
#include "addon.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace xlurm {

namespace {

// Close a descriptor, keeping errno (for the error that is about to be thrown).
void CloseKeepErrno(int fd) {
  int saved = errno;
  close(fd);
  errno = saved;
}

// One component: non-empty, no '/', not "." or "..".
bool IsComponent(const std::string& s) {
  return !s.empty() && s.find('/') == std::string::npos && s != "." && s != ".." && s.find('\0') == std::string::npos;
}

// Split a relative name into components, refusing absolute names and "."/".."/empty parts.
bool SplitRelative(const std::string& name, std::vector<std::string>* parts) {
  if (name.empty() || name[0] == '/') return false;
  size_t at = 0;
  while (at <= name.size()) {
    size_t slash = name.find('/', at);
    if (slash == std::string::npos) slash = name.size();
    std::string part = name.substr(at, slash - at);
    if (!IsComponent(part)) return false;
    parts->push_back(part);
    at = slash + 1;
  }
  return true;
}

bool ArgName(const Napi::CallbackInfo& info, size_t i, const char* usage, std::string* out, bool allowEmpty) {
  if (!ArgString(info, i, usage, out)) return false;
  if ((allowEmpty && out->empty()) || IsComponent(*out)) return true;
  ThrowErrno(info.Env(), EINVAL, usage);
  return false;
}

// Linux >= 5.6; -1 with errno ENOSYS elsewhere (or under a seccomp filter that refuses it).
int Openat2(int dirfd, const char* name, int flags, mode_t mode) {
#ifdef SYS_openat2
  struct open_how how;
  memset(&how, 0, sizeof how);
  how.flags = static_cast<uint64_t>(flags);
  // openat2 refuses a mode without O_CREAT/O_TMPFILE.
  how.mode = (flags & (O_CREAT | __O_TMPFILE)) ? mode : 0;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  return static_cast<int>(syscall(SYS_openat2, dirfd, name, &how, sizeof how));
#else
  (void)dirfd; (void)name; (void)flags; (void)mode;
  errno = ENOSYS;
  return -1;
#endif
}

bool g_noOpenat2 = false;  // set once the kernel said ENOSYS (or EPERM from a seccomp filter)

// openat of `name` under dirfd, never following a link in any component.
int OpenBeneath(int dirfd, const std::vector<std::string>& parts, const std::string& whole, int flags, mode_t mode) {
  flags |= O_NOFOLLOW | O_CLOEXEC;
  if (parts.size() == 1) return openat(dirfd, parts[0].c_str(), flags, mode);
  if (!g_noOpenat2) {
    int fd = Openat2(dirfd, whole.c_str(), flags, mode);
    if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) return fd;
    g_noOpenat2 = true;
  }
  // The walk: each directory opened O_NOFOLLOW|O_DIRECTORY relative to the one before.
  int at = dirfd;
  for (size_t i = 0; i + 1 < parts.size(); i++) {
    int next = openat(at, parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (at != dirfd) CloseKeepErrno(at);
    if (next < 0) return -1;
    at = next;
  }
  int fd = openat(at, parts.back().c_str(), flags, mode);
  if (at != dirfd) CloseKeepErrno(at);
  return fd;
}

Napi::Value SafeOpenat(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "safeOpenat(dirfd, name, flags, mode)";
  int dirfd;
  std::string name;
  uint32_t flags, mode;
  if (!ArgFd(info, 0, usage, &dirfd) || !ArgString(info, 1, usage, &name) || !ArgU32(info, 2, usage, &flags) ||
      !ArgU32(info, 3, usage, &mode)) return env.Undefined();
  std::vector<std::string> parts;
  if (!SplitRelative(name, &parts)) { ThrowErrno(env, EINVAL, "openat"); return env.Undefined(); }
  int fd;
  do fd = OpenBeneath(dirfd, parts, name, static_cast<int>(flags), static_cast<mode_t>(mode));
  while (fd < 0 && errno == EINTR);
  if (fd < 0) { ThrowErrno(env, errno, parts.size() > 1 ? "openat2" : "openat"); return env.Undefined(); }
  return Napi::Number::New(env, fd);
}

Napi::Value SafeMkdirat(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "safeMkdirat(dirfd, name, mode)";
  int dirfd;
  std::string name;
  uint32_t mode;
  if (!ArgFd(info, 0, usage, &dirfd) || !ArgName(info, 1, usage, &name, false) || !ArgU32(info, 2, usage, &mode)) return env.Undefined();
  if (mkdirat(dirfd, name.c_str(), static_cast<mode_t>(mode)) != 0) ThrowErrno(env, errno, "mkdirat");
  return env.Undefined();
}

Napi::Value SafeUnlinkat(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "safeUnlinkat(dirfd, name, flags)";
  int dirfd;
  std::string name;
  uint32_t flags;
  if (!ArgFd(info, 0, usage, &dirfd) || !ArgName(info, 1, usage, &name, false) || !ArgU32(info, 2, usage, &flags)) return env.Undefined();
  if (unlinkat(dirfd, name.c_str(), static_cast<int>(flags & AT_REMOVEDIR)) != 0) ThrowErrno(env, errno, "unlinkat");
  return env.Undefined();
}

Napi::Value SafeRenameat(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "safeRenameat(olddirfd, oldname, newdirfd, newname, flags)";
  int olddirfd, newdirfd;
  std::string oldname, newname;
  uint32_t flags;
  if (!ArgFd(info, 0, usage, &olddirfd) || !ArgName(info, 1, usage, &oldname, false) || !ArgFd(info, 2, usage, &newdirfd) ||
      !ArgName(info, 3, usage, &newname, false) || !ArgU32(info, 4, usage, &flags)) return env.Undefined();
  // renameat2 acts on the entries themselves (a link is renamed, never followed); flags: RENAME_NOREPLACE etc.
  int rc = flags ? static_cast<int>(syscall(SYS_renameat2, olddirfd, oldname.c_str(), newdirfd, newname.c_str(), flags))
                 : renameat(olddirfd, oldname.c_str(), newdirfd, newname.c_str());
  if (rc != 0) ThrowErrno(env, errno, flags ? "renameat2" : "renameat");
  return env.Undefined();
}

Napi::Value SafeFchownat(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "safeFchownat(dirfd, name, uid, gid)";
  int dirfd;
  std::string name;
  uint32_t uid, gid;
  if (!ArgFd(info, 0, usage, &dirfd) || !ArgName(info, 1, usage, &name, true) || !ArgU32(info, 2, usage, &uid) ||
      !ArgU32(info, 3, usage, &gid)) return env.Undefined();
  int rc = name.empty() ? fchown(dirfd, uid, gid) : fchownat(dirfd, name.c_str(), uid, gid, AT_SYMLINK_NOFOLLOW);
  if (rc != 0) ThrowErrno(env, errno, "fchownat");
  return env.Undefined();
}

Napi::Value SafeFchmodat(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "safeFchmodat(dirfd, name, mode)";
  int dirfd;
  std::string name;
  uint32_t mode;
  if (!ArgFd(info, 0, usage, &dirfd) || !ArgName(info, 1, usage, &name, true) || !ArgU32(info, 2, usage, &mode)) return env.Undefined();
  if (name.empty()) {
    if (fchmod(dirfd, static_cast<mode_t>(mode)) != 0) ThrowErrno(env, errno, "fchmod");
    return env.Undefined();
  }
  // Pin the entry itself (a link is opened as the link), check what it is, then chmod that inode.
  int fd = openat(dirfd, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) { ThrowErrno(env, errno, "openat"); return env.Undefined(); }
  struct stat st;
  if (fstat(fd, &st) != 0) { CloseKeepErrno(fd); ThrowErrno(env, errno, "fstat"); return env.Undefined(); }
  if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    close(fd);
    ThrowErrno(env, S_ISLNK(st.st_mode) ? ELOOP : EINVAL, "fchmodat");
    return env.Undefined();
  }
  char proc[64];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  int rc = chmod(proc, static_cast<mode_t>(mode));
  int err = errno;
  close(fd);
  if (rc != 0) ThrowErrno(env, err, "fchmodat");
  return env.Undefined();
}

Napi::Value StatObject(Napi::Env env, const struct stat& st) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("mode", Napi::Number::New(env, st.st_mode));
  o.Set("uid", Napi::Number::New(env, st.st_uid));
  o.Set("gid", Napi::Number::New(env, st.st_gid));
  o.Set("nlink", Napi::Number::New(env, static_cast<double>(st.st_nlink)));
  o.Set("size", Napi::Number::New(env, static_cast<double>(st.st_size)));
  o.Set("dev", Napi::Number::New(env, static_cast<double>(st.st_dev)));
  o.Set("ino", Napi::Number::New(env, static_cast<double>(st.st_ino)));
  return o;
}

Napi::Value SafeFstatat(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "safeFstatat(dirfd, name)";
  int dirfd;
  std::string name;
  if (!ArgFd(info, 0, usage, &dirfd) || !ArgName(info, 1, usage, &name, true)) return env.Undefined();
  struct stat st;
  int rc = name.empty() ? fstat(dirfd, &st) : fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW);
  if (rc != 0) { ThrowErrno(env, errno, "fstatat"); return env.Undefined(); }
  return StatObject(env, st);
}

// ----- removeTree ------------------------------------------------------------------------------

struct Removal {
  dev_t dev;             // the top directory's filesystem: nothing on another is touched
  uint32_t maxDepth;
  uint32_t maxEntries;
  uint32_t removed = 0;
  const char* failed = nullptr;  // the syscall that failed (errno holds why)
};

// A directory that keeps refilling while it is emptied (a user adding entries as fast as they go)
// is given up after this many passes: ENOTEMPTY.
constexpr int kPasses = 8;

bool RemoveEntry(Removal* r, int dirfd, const char* name, uint32_t depth);

// Empty the directory `fd` (owned by the caller, closed here). `dirsOnly`: remove only the
// subdirectories (a first pass: on cgroupfs a directory goes by rmdir with its control files in
// it, which cannot be unlinked; elsewhere the second pass takes the rest).
bool EmptyDir(Removal* r, int fd, uint32_t depth, bool dirsOnly) {
  DIR* d = fdopendir(fd);
  if (!d) { CloseKeepErrno(fd); r->failed = "fdopendir"; return false; }
  bool ok = true;
  for (;;) {
    errno = 0;
    struct dirent* e = readdir(d);
    if (!e) {
      if (errno != 0) { r->failed = "readdir"; ok = false; }
      break;
    }
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    if (dirsOnly && e->d_type != DT_DIR) {
      // d_type is a hint; DT_UNKNOWN (some filesystems) is asked of fstatat.
      struct stat st;
      if (e->d_type != DT_UNKNOWN || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) continue;
    }
    if (!RemoveEntry(r, dirfd(d), e->d_name, depth + 1)) { ok = false; break; }
  }
  int saved = errno;
  closedir(d);
  errno = saved;
  return ok;
}

// Remove the entry `name` of dirfd, whatever it is; a directory after its contents. An entry that
// is gone already counts as removed (someone else was quicker).
bool RemoveEntry(Removal* r, int dirfd, const char* name, uint32_t depth) {
  if (r->removed >= r->maxEntries) { errno = E2BIG; r->failed = "removeTree"; return false; }
  struct stat st;
  if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return true;
    r->failed = "fstatat";
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    // Whatever it is now (a file, a link, a directory swapped in: EISDIR, an error), only the
    // entry is removed: unlinkat never follows.
    if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT) { r->removed++; return true; }
    r->failed = "unlinkat";
    return false;
  }
  if (st.st_dev != r->dev) { errno = EXDEV; r->failed = "removeTree"; return false; }
  if (depth > r->maxDepth) { errno = ELOOP; r->failed = "removeTree"; return false; }
  for (int pass = 0; pass < kPasses; pass++) {
    // O_NOFOLLOW|O_DIRECTORY: a link swapped in since the fstatat fails here (ELOOP/ENOTDIR).
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      if (errno == ENOENT) return true;
      r->failed = "openat";
      return false;
    }
    struct stat own;
    if (fstat(fd, &own) != 0) { CloseKeepErrno(fd); r->failed = "fstat"; return false; }
    // A mount point (bind-mounted by someone) is another filesystem: never descended into.
    if (own.st_dev != r->dev) { close(fd); errno = EXDEV; r->failed = "removeTree"; return false; }
    if (!EmptyDir(r, fd, depth, pass == 0)) return false;
    if (unlinkat(dirfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT) { r->removed++; return true; }
    if (errno != ENOTEMPTY && errno != EEXIST) { r->failed = "unlinkat"; return false; }
  }
  errno = ENOTEMPTY;
  r->failed = "unlinkat";
  return false;
}

Napi::Value SafeRemoveTree(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "safeRemoveTree(dirfd, name, maxDepth, maxEntries)";
  int dirfd;
  std::string name;
  uint32_t maxDepth, maxEntries;
  if (!ArgFd(info, 0, usage, &dirfd) || !ArgName(info, 1, usage, &name, false) || !ArgU32(info, 2, usage, &maxDepth) ||
      !ArgU32(info, 3, usage, &maxEntries)) return env.Undefined();
  struct stat top;
  if (fstat(dirfd, &top) != 0) { ThrowErrno(env, errno, "fstat"); return env.Undefined(); }
  Removal r;
  r.dev = top.st_dev;
  r.maxDepth = maxDepth;
  r.maxEntries = maxEntries;
  struct stat st;
  if (fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return Napi::Number::New(env, 0);
    ThrowErrno(env, errno, "fstatat");
    return env.Undefined();
  }
  if (!RemoveEntry(&r, dirfd, name.c_str(), 0)) {
    Napi::Error err = ErrnoError(env, errno, r.failed ? r.failed : "removeTree");
    err.Set("removed", Napi::Number::New(env, r.removed));
    err.ThrowAsJavaScriptException();
    return env.Undefined();
  }
  return Napi::Number::New(env, r.removed);
}

}  // namespace

void InitSafeFs(Napi::Env env, Napi::Object exports) {
  exports.Set("safeOpenat", Napi::Function::New(env, SafeOpenat, "safeOpenat"));
  exports.Set("safeMkdirat", Napi::Function::New(env, SafeMkdirat, "safeMkdirat"));
  exports.Set("safeUnlinkat", Napi::Function::New(env, SafeUnlinkat, "safeUnlinkat"));
  exports.Set("safeRenameat", Napi::Function::New(env, SafeRenameat, "safeRenameat"));
  exports.Set("safeFchownat", Napi::Function::New(env, SafeFchownat, "safeFchownat"));
  exports.Set("safeFchmodat", Napi::Function::New(env, SafeFchmodat, "safeFchmodat"));
  exports.Set("safeFstatat", Napi::Function::New(env, SafeFstatat, "safeFstatat"));
  exports.Set("safeRemoveTree", Napi::Function::New(env, SafeRemoveTree, "safeRemoveTree"));
}

}  // namespace xlurm
