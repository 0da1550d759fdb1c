// setCloexec(fd, on): close-on-exec control for descriptors handed to xlurm-stepd.
// memfd(name): an anonymous in-memory file, for the job spec handed to xlurm-stepd.
#include "addon.h"

#include <fcntl.h>
#include <sys/mman.h>

#include <cerrno>

namespace xlurm {

namespace {

// fcntl(2) F_GETFD/F_SETFD. The daemon clears FD_CLOEXEC only on the descriptors a child must
// inherit; everything else Node opens is close-on-exec already.
Napi::Value SetCloexec(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd;
  bool on;
  if (!ArgFd(info, 0, "setCloexec(fd, on)", &fd) || !ArgBool(info, 1, "setCloexec(fd, on)", &on))
    return env.Undefined();
  int flags = fcntl(fd, F_GETFD);
  if (flags < 0) {
    ThrowErrno(env, errno, "fcntl");
    return env.Undefined();
  }
  int want = on ? (flags | FD_CLOEXEC) : (flags & ~FD_CLOEXEC);
  if (want != flags && fcntl(fd, F_SETFD, want) < 0) ThrowErrno(env, errno, "fcntl");
  return env.Undefined();
}

// memfd_create(2), close-on-exec. The daemon writes a job's spec into one and hands it to the
// supervisor as stdin: like the unlinked file it replaces, it is complete before the spawn and
// lives as long as a descriptor does, but creating it allocates no inode and writes no
// directory entry (a file created in XLURM_HOME cost 10-300 us here, per job).
Napi::Value Memfd(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) {
    Napi::TypeError::New(env, "memfd(name): name must be a string").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  std::string name = info[0].As<Napi::String>().Utf8Value();
  int fd = memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd < 0) {
    ThrowErrno(env, errno, "memfd_create");
    return env.Undefined();
  }
  return Napi::Number::New(env, fd);
}

}  // namespace

void InitFd(Napi::Env env, Napi::Object exports) {
  exports.Set("setCloexec", Napi::Function::New(env, SetCloexec, "setCloexec"));
  exports.Set("memfd", Napi::Function::New(env, Memfd, "memfd"));
}

}  // namespace xlurm
