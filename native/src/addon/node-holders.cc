// See node-holders.h. The scan reads /proc/<pid>/fd/<n> links (proc(5)): readlink(2) names the
// open file as the holder's mount namespace sees it; stat(2) through the link reaches the open
// inode itself, so a character device matches by st_rdev whatever path the holder used.
#include "node-holders.h"

#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace xlurm::dev {

namespace {

// PF_KTHREAD in /proc/<pid>/stat's flags (field 9). Kernel threads live in the initial PID
// namespace only, and PID 2 there is always kthreadd: a process table whose PID 2 is a kernel
// thread shows every process on the host; any other (a container's own /proc) hides some.
constexpr unsigned long kPfKthread = 0x00200000;
constexpr uint32_t kPidCeiling = 1u << 22;  // Linux pid_max can never exceed 2^22

std::string Errno(const std::string& what, int err) { return what + ": " + std::strerror(err); }

bool ReadLink(const std::string& path, std::string* out) {
  char buf[PATH_MAX];
  ssize_t n = readlink(path.c_str(), buf, sizeof buf - 1);
  if (n < 0) return false;
  out->assign(buf, static_cast<size_t>(n));
  return true;
}

// A decimal PID in [1, 2^22), else 0.
uint32_t ParsePid(const char* s) {
  if (!*s || std::strspn(s, "0123456789") != std::strlen(s) || std::strlen(s) > 7) return 0;
  unsigned long v = std::strtoul(s, nullptr, 10);
  return v >= 1 && v < kPidCeiling ? static_cast<uint32_t>(v) : 0;
}

// Closes a DIR* on every path out.
struct Dir {
  explicit Dir(const std::string& path) : d(opendir(path.c_str())) {}
  ~Dir() { if (d) closedir(d); }
  DIR* d;
};

// "" when `proc_root` is the initial PID namespace's process table (see kPfKthread), else why not.
std::string CheckHostTable(const std::string& proc_root) {
  std::string path = proc_root + "/2/stat";
  FILE* f = std::fopen(path.c_str(), "re");
  if (!f) return Errno("cannot read " + path, errno);
  char buf[1024];
  size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = 0;
  // "2 (comm) state ppid pgrp session tty_nr tpgid flags ..."; comm may hold spaces and ')'.
  const char* rest = std::strrchr(buf, ')');
  unsigned long flags = 0;
  if (!rest || std::sscanf(rest + 1, " %*s %*d %*d %*d %*d %*d %lu", &flags) != 1) return "invalid " + path;
  if (!(flags & kPfKthread))
    return proc_root + " is not the host's process table (its PID 2 is not a kernel thread): processes in other PID namespaces cannot be seen";
  return "";
}

bool Holds(const DeviceNodes& dev, const std::string& target, const struct stat* st) {
  if (std::find(dev.paths.begin(), dev.paths.end(), target) != dev.paths.end()) return true;
  return st && S_ISCHR(st->st_mode) && std::find(dev.rdevs.begin(), dev.rdevs.end(), st->st_rdev) != dev.rdevs.end();
}

}  // namespace

std::string ResolveNodes(const std::vector<std::string>& reported, DeviceNodes* out) {
  for (const std::string& p : reported) {
    struct stat st;
    if (stat(p.c_str(), &st) != 0) return Errno("cannot stat " + p, errno);
    out->paths.push_back(p);
    char* real = realpath(p.c_str(), nullptr);
    if (real) {
      if (p != real) out->paths.push_back(real);
      std::free(real);
    }
    if (S_ISCHR(st.st_mode)) out->rdevs.push_back(st.st_rdev);
  }
  return "";
}

std::string FindNodeHolders(const std::string& proc_root, const std::vector<DeviceNodes>& devices,
                            std::vector<std::vector<uint32_t>>* holders) {
  holders->assign(devices.size(), {});
  std::string why = CheckHostTable(proc_root);
  if (!why.empty()) return why;
  // Ourselves, as that process table numbers us (the library in this process holds the nodes).
  std::string self_link;
  uint32_t self = ReadLink(proc_root + "/self", &self_link) ? ParsePid(self_link.c_str()) : 0;
  if (self == 0) self = static_cast<uint32_t>(getpid());
  bool any_rdev = false;
  for (const DeviceNodes& d : devices) any_rdev = any_rdev || !d.rdevs.empty();

  Dir root(proc_root);
  if (!root.d) return Errno("cannot read " + proc_root, errno);
  while (struct dirent* e = readdir(root.d)) {
    uint32_t pid = ParsePid(e->d_name);
    if (pid == 0 || pid == self) continue;
    std::string fd_dir = proc_root + "/" + e->d_name + "/fd";
    Dir fds(fd_dir);
    if (!fds.d) {
      if (errno == ENOENT || errno == ESRCH) continue;  // the process has exited meanwhile
      if (errno == EACCES || errno == EPERM)
        return Errno("cannot read " + fd_dir, errno) + " (only a root daemon can see every process's open devices)";
      return Errno("cannot read " + fd_dir, errno);
    }
    std::vector<bool> found(devices.size(), false);
    while (struct dirent* f = readdir(fds.d)) {
      if (f->d_name[0] == '.') continue;
      std::string link = fd_dir + "/" + f->d_name;
      std::string target;
      if (!ReadLink(link, &target)) continue;  // closed meanwhile
      struct stat st;
      const struct stat* stp = nullptr;
      if (any_rdev && !target.empty() && target[0] == '/' && stat(link.c_str(), &st) == 0) stp = &st;
      for (size_t i = 0; i < devices.size(); i++)
        if (!found[i] && Holds(devices[i], target, stp)) found[i] = true;
    }
    for (size_t i = 0; i < devices.size(); i++)
      if (found[i]) (*holders)[i].push_back(pid);
  }
  for (auto& h : *holders) std::sort(h.begin(), h.end());
  return "";
}

std::string PciAddress(const std::string& bdf) {
  if (bdf.empty() || bdf.size() > 64 || bdf.find_first_not_of("0123456789abcdefABCDEF:.") != std::string::npos) return "";
  std::string out = bdf;
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string> DrmNodes(const std::string& bdf) {
  std::vector<std::string> out;
  if (bdf.empty() || bdf.size() > 64 || bdf.find_first_not_of("0123456789abcdefABCDEF:.") != std::string::npos) return out;
  const char* root = std::getenv("XLURM_SYSFS_ROOT");
  std::string sysfs = root && root[0] == '/' ? root : "/sys";
  DIR* d = opendir((sysfs + "/bus/pci/devices/" + bdf + "/drm").c_str());
  if (!d) return out;
  while (struct dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.rfind("card", 0) == 0 || name.rfind("renderD", 0) == 0) out.push_back("/dev/dri/" + name);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace xlurm::dev
