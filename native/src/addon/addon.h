// Shared declarations of the xlurm_native addon: the error helpers every syscall family uses and
// one initialiser per family. To add a family (e.g. a device library), write src/addon/<name>.cc
// with an `Init<Name>(env, exports)`, declare it here, list it in kInitialisers (addon.cc) and
// in XLURM_ADDON_SOURCES (CMakeLists.txt).
#pragma once

#include <napi.h>

#include <cstdint>
#include <string>

namespace xlurm {

// A JS Error shaped like Node's own system errors: message "<CODE>: <strerror>, <syscall>",
// and the fields code ('EBADF'), errno (negative, as Node reports it) and syscall.
Napi::Error ErrnoError(Napi::Env env, int err, const char* syscall);

// Throws ErrnoError as a pending JS exception (no C++ exceptions: NAPI_DISABLE_CPP_EXCEPTIONS).
void ThrowErrno(Napi::Env env, int err, const char* syscall);

// The errno's symbolic name ("EBADF"), or "UNKNOWN" when it has none.
const char* ErrnoName(int err);

// Backstop argument checks (the TS facade validates first and throws its own TypeErrors). Each
// returns false after throwing `TypeError("Usage: <usage>")`.
bool ArgFd(const Napi::CallbackInfo& info, size_t i, const char* usage, int* out);
// An array of exactly n descriptors, written to out[0..n).
bool ArgFds(const Napi::CallbackInfo& info, size_t i, size_t n, const char* usage, int* out);
bool ArgU32(const Napi::CallbackInfo& info, size_t i, const char* usage, uint32_t* out);
bool ArgString(const Napi::CallbackInfo& info, size_t i, const char* usage, std::string* out);

// One initialiser per syscall family; each adds its functions to `exports`.
void InitPeerCred(Napi::Env env, Napi::Object exports);  // peer-cred.cc
void InitFlock(Napi::Env env, Napi::Object exports);     // flock.cc
void InitAccounts(Napi::Env env, Napi::Object exports);  // accounts.cc
void InitFd(Napi::Env env, Napi::Object exports);        // fd.cc
void InitRlimit(Napi::Env env, Napi::Object exports);    // rlimit.cc
void InitSpawn(Napi::Env env, Napi::Object exports);
void InitLauncher(Napi::Env env, Napi::Object exports);  // launcher.cc
void InitRequest(Napi::Env env, Napi::Object exports);   // request.cc
void InitDevices(Napi::Env env, Napi::Object exports);   // device.cc (vendor libraries: device.h)
void InitDeviceFilter(Napi::Env env, Napi::Object exports);  // device-filter.cc (cgroup v2 device isolation)
void InitSafeFs(Napi::Env env, Napi::Object exports);        // safe-fs.cc (descriptor-relative file operations, 28.1)

}  // namespace xlurm
