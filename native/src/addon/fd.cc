// memfd(name): an anonymous in-memory file, for the job spec handed to xlurm-stepd.
#include "addon.h"

#include <sys/mman.h>

#include <cerrno>

namespace xlurm {

namespace {

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
  exports.Set("memfd", Napi::Function::New(env, Memfd, "memfd"));
}

}  // namespace xlurm
