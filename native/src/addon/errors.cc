// Error helpers shared by every syscall family: Node-style system errors and argument checks.
#include "addon.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <string>

namespace xlurm {

namespace {

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
#define XLURM_HAVE_STRERRORNAME_NP 1
#endif

#ifndef XLURM_HAVE_STRERRORNAME_NP
// Fallback for C libraries without strerrorname_np(3): the errnos these syscalls can return.
struct ErrnoEntry { int err; const char* name; };
constexpr ErrnoEntry kErrnoNames[] = {
    {EPERM, "EPERM"},   {ENOENT, "ENOENT"},   {ESRCH, "ESRCH"},     {EINTR, "EINTR"},
    {EIO, "EIO"},       {ENXIO, "ENXIO"},     {E2BIG, "E2BIG"},     {EBADF, "EBADF"},
    {EAGAIN, "EAGAIN"}, {ENOMEM, "ENOMEM"},   {EACCES, "EACCES"},   {EFAULT, "EFAULT"},
    {EBUSY, "EBUSY"},   {EEXIST, "EEXIST"},   {ENOTDIR, "ENOTDIR"}, {EISDIR, "EISDIR"},
    {EINVAL, "EINVAL"}, {ENFILE, "ENFILE"},   {EMFILE, "EMFILE"},   {ENOTTY, "ENOTTY"},
    {ENOSPC, "ENOSPC"}, {EROFS, "EROFS"},     {EPIPE, "EPIPE"},     {ERANGE, "ERANGE"},
    {ENOLCK, "ENOLCK"}, {ENOSYS, "ENOSYS"},   {ENODATA, "ENODATA"}, {ENOTSOCK, "ENOTSOCK"},
    {ENOPROTOOPT, "ENOPROTOOPT"}, {EOPNOTSUPP, "EOPNOTSUPP"}, {ENOTCONN, "ENOTCONN"},
    {EILSEQ, "EILSEQ"},
};
#endif

}  // namespace

const char* ErrnoName(int err) {
#ifdef XLURM_HAVE_STRERRORNAME_NP
  const char* name = strerrorname_np(err);
  return name ? name : "UNKNOWN";
#else
  for (const ErrnoEntry& e : kErrnoNames)
    if (e.err == err) return e.name;
  return "UNKNOWN";
#endif
}

Napi::Error ErrnoError(Napi::Env env, int err, const char* syscall) {
  const char* code = ErrnoName(err);
  std::string message = std::string(code) + ": " + strerror(err) + ", " + syscall;
  Napi::Error error = Napi::Error::New(env, message);
  error.Set("code", Napi::String::New(env, code));
  // Node reports system errors with a negative errno (libuv's convention), e.g. -9 for EBADF.
  error.Set("errno", Napi::Number::New(env, -err));
  error.Set("syscall", Napi::String::New(env, syscall));
  return error;
}

void ThrowErrno(Napi::Env env, int err, const char* syscall) {
  ErrnoError(env, err, syscall).ThrowAsJavaScriptException();
}

namespace {

bool Usage(const Napi::CallbackInfo& info, const char* usage) {
  Napi::TypeError::New(info.Env(), std::string("Usage: ") + usage).ThrowAsJavaScriptException();
  return false;
}

// An integral JS number within [0, max].
bool IntegralInRange(const Napi::Value& v, double max, double* out) {
  if (!v.IsNumber()) return false;
  double d = v.As<Napi::Number>().DoubleValue();
  if (!std::isfinite(d) || d < 0 || d > max || std::floor(d) != d) return false;
  *out = d;
  return true;
}

}  // namespace

bool ArgFd(const Napi::CallbackInfo& info, size_t i, const char* usage, int* out) {
  double d;
  if (info.Length() <= i || !IntegralInRange(info[i], 2147483647.0, &d)) return Usage(info, usage);
  *out = static_cast<int>(d);
  return true;
}

bool ArgFds(const Napi::CallbackInfo& info, size_t i, size_t n, const char* usage, int* out) {
  if (info.Length() <= i || !info[i].IsArray() || info[i].As<Napi::Array>().Length() != n) return Usage(info, usage);
  Napi::Array list = info[i].As<Napi::Array>();
  for (uint32_t k = 0; k < n; k++) {
    double d;
    if (!IntegralInRange(list.Get(k), 2147483647.0, &d)) return Usage(info, usage);
    out[k] = static_cast<int>(d);
  }
  return true;
}

bool ArgU32(const Napi::CallbackInfo& info, size_t i, const char* usage, uint32_t* out) {
  double d;
  if (info.Length() <= i || !IntegralInRange(info[i], 4294967295.0, &d)) return Usage(info, usage);
  *out = static_cast<uint32_t>(d);
  return true;
}

bool ArgString(const Napi::CallbackInfo& info, size_t i, const char* usage, std::string* out) {
  if (info.Length() <= i || !info[i].IsString()) return Usage(info, usage);
  *out = info[i].As<Napi::String>().Utf8Value();
  return true;
}

}  // namespace xlurm
