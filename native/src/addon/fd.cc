// setCloexec(fd, on): close-on-exec control for descriptors handed to xlurm-stepd.
#include "addon.h"

#include <fcntl.h>

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

}  // namespace

void InitFd(Napi::Env env, Napi::Object exports) {
  exports.Set("setCloexec", Napi::Function::New(env, SetCloexec, "setCloexec"));
}

}  // namespace xlurm
