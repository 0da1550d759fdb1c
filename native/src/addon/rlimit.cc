// getNofileLimit() / setNofileLimit(soft, hard): RLIMIT_NOFILE of the daemon process.
#include "addon.h"

#include <sys/resource.h>

#include <cerrno>
#include <cmath>

namespace xlurm {

namespace {

// JS numbers are exact up to 2^53-1; RLIM_INFINITY (and any larger value) is reported as
// Number.MAX_SAFE_INTEGER and accepted back from it (or from Infinity).
constexpr double kMaxSafeInteger = 9007199254740991.0;

double FromRlim(rlim_t v) {
  if (v == RLIM_INFINITY || static_cast<double>(v) >= kMaxSafeInteger) return kMaxSafeInteger;
  return static_cast<double>(v);
}

bool ToRlim(double v, rlim_t* out) {
  if (std::isnan(v) || v < 0) return false;
  if (v >= kMaxSafeInteger) {
    *out = RLIM_INFINITY;
    return true;
  }
  if (std::floor(v) != v) return false;
  *out = static_cast<rlim_t>(v);
  return true;
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

// setrlimit(2) RLIMIT_NOFILE. Raising the hard limit needs CAP_SYS_RESOURCE (EPERM otherwise);
// soft > hard is EINVAL from the kernel.
Napi::Value SetNofileLimit(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "setNofileLimit(soft, hard)";
  double soft, hard;
  if (!ArgNumber(info, 0, usage, &soft) || !ArgNumber(info, 1, usage, &hard)) return env.Undefined();
  struct rlimit rl;
  if (!ToRlim(soft, &rl.rlim_cur) || !ToRlim(hard, &rl.rlim_max)) {
    Napi::TypeError::New(env, std::string("Usage: ") + usage).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  if (setrlimit(RLIMIT_NOFILE, &rl) != 0) ThrowErrno(env, errno, "setrlimit");
  return env.Undefined();
}

}  // namespace

void InitRlimit(Napi::Env env, Napi::Object exports) {
  exports.Set("getNofileLimit", Napi::Function::New(env, GetNofileLimit, "getNofileLimit"));
  exports.Set("setNofileLimit", Napi::Function::New(env, SetNofileLimit, "setNofileLimit"));
}

}  // namespace xlurm
