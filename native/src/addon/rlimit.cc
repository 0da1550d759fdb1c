// getNofileLimit(): RLIMIT_NOFILE of the daemon process (its server sizes its connection cap by it).
#include "addon.h"

#include <sys/resource.h>

#include <cerrno>

namespace xlurm {

namespace {

// JS numbers are exact up to 2^53-1; RLIM_INFINITY (and any larger value) is reported as
// Number.MAX_SAFE_INTEGER.
constexpr double kMaxSafeInteger = 9007199254740991.0;

double FromRlim(rlim_t v) {
  if (v == RLIM_INFINITY || static_cast<double>(v) >= kMaxSafeInteger) return kMaxSafeInteger;
  return static_cast<double>(v);
}

// getrlimit(2) RLIMIT_NOFILE -> [soft, hard].
Napi::Value GetNofileLimit(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
    ThrowErrno(env, errno, "getrlimit");
    return env.Undefined();
  }
  Napi::Array out = Napi::Array::New(env, 2);
  out.Set(0u, Napi::Number::New(env, FromRlim(rl.rlim_cur)));
  out.Set(1u, Napi::Number::New(env, FromRlim(rl.rlim_max)));
  return out;
}

}  // namespace

void InitRlimit(Napi::Env env, Napi::Object exports) {
  exports.Set("getNofileLimit", Napi::Function::New(env, GetNofileLimit, "getNofileLimit"));
}

}  // namespace xlurm
