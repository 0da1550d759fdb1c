// flockExclusive(fd) / flockUnlock(fd): the job-lock primitive (docs/behaviour.md §7.3).
#include "addon.h"

#include <sys/file.h>

#include <cerrno>

namespace xlurm {

namespace {

// flock(2) locks belong to the open file description, so a lock taken here and inherited by
// xlurm-stepd (fd 3) lives exactly as long as some process keeps that description open.
// LOCK_NB: the daemon's single thread must never wait for a lock; "would block" means another
// open file description holds it (a supervisor is still running).
Napi::Value FlockExclusive(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd;
  if (!ArgFd(info, 0, "flockExclusive(fd)", &fd)) return env.Undefined();
  for (;;) {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) return Napi::Boolean::New(env, true);
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) return Napi::Boolean::New(env, false);
    ThrowErrno(env, errno, "flock");
    return env.Undefined();
  }
}

// Releases a lock held through fd's open file description (flock(2) LOCK_UN).
Napi::Value FlockUnlock(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd;
  if (!ArgFd(info, 0, "flockUnlock(fd)", &fd)) return env.Undefined();
  while (flock(fd, LOCK_UN) != 0) {
    if (errno == EINTR) continue;
    ThrowErrno(env, errno, "flock");
    break;
  }
  return env.Undefined();
}

}  // namespace

void InitFlock(Napi::Env env, Napi::Object exports) {
  exports.Set("flockExclusive", Napi::Function::New(env, FlockExclusive, "flockExclusive"));
  exports.Set("flockUnlock", Napi::Function::New(env, FlockUnlock, "flockUnlock"));
}

}  // namespace xlurm
