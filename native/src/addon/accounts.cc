// accountByUid(uid) / groupList(name, gid): the passwd and group databases through NSS.
#include "addon.h"

#include <grp.h>
#include <pwd.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace xlurm {

namespace {

// getpwuid_r(3) needs a caller-sized buffer; ERANGE means "try a larger one". Entries are at
// most a few KiB; the cap only stops a broken NSS module from making us allocate forever.
constexpr size_t kMaxPwBuffer = 1 << 20;

// Account names end up in job records, logs and setgroups decisions; a name that is not valid
// UTF-8 would be silently altered on its way into a JS string, so it is refused instead.
bool IsValidUtf8(const char* s) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(s);
  while (*p) {
    unsigned c = *p;
    size_t n;
    unsigned min;
    if (c < 0x80) { p++; continue; }
    else if ((c & 0xe0) == 0xc0) { n = 1; min = 0x80; c &= 0x1f; }
    else if ((c & 0xf0) == 0xe0) { n = 2; min = 0x800; c &= 0x0f; }
    else if ((c & 0xf8) == 0xf0) { n = 3; min = 0x10000; c &= 0x07; }
    else return false;
    for (size_t i = 1; i <= n; i++) {
      if ((p[i] & 0xc0) != 0x80) return false;
      c = (c << 6) | (p[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return false;
    p += n + 1;
  }
  return true;
}

// getpwuid_r(3) -> {name, uid, gid, dir, shell}, or null when the uid has no account. Per the
// man page, "not found" may be reported as 0 with a null result or as ENOENT/ESRCH/EBADF/EPERM.
Napi::Value AccountByUid(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint32_t uid;
  if (!ArgU32(info, 0, "accountByUid(uid)", &uid)) return env.Undefined();

  long hint = sysconf(_SC_GETPW_R_SIZE_MAX);
  size_t size = hint > 0 ? static_cast<size_t>(hint) : 1024;
  std::vector<char> buf;
  struct passwd pw;
  struct passwd* result = nullptr;
  for (;;) {
    buf.resize(size);
    int rc = getpwuid_r(static_cast<uid_t>(uid), &pw, buf.data(), buf.size(), &result);
    if (rc == 0) break;
    if (rc == EINTR) continue;
    if (rc == ERANGE && size < kMaxPwBuffer) {
      size *= 2;
      continue;
    }
    if (rc == ENOENT || rc == ESRCH || rc == EBADF || rc == EPERM) {
      result = nullptr;
      break;
    }
    ThrowErrno(env, rc, "getpwuid_r");
    return env.Undefined();
  }
  if (result == nullptr) return env.Null();

  if (!IsValidUtf8(pw.pw_name)) {
    Napi::Error err = ErrnoError(env, EILSEQ, "getpwuid_r");
    err.Set("message", Napi::String::New(env, "non-UTF8 account name"));
    err.ThrowAsJavaScriptException();
    return env.Undefined();
  }

  Napi::Object out = Napi::Object::New(env);
  out.Set("name", Napi::String::New(env, pw.pw_name));
  out.Set("uid", Napi::Number::New(env, pw.pw_uid));
  out.Set("gid", Napi::Number::New(env, pw.pw_gid));
  out.Set("dir", Napi::String::New(env, pw.pw_dir ? pw.pw_dir : ""));
  out.Set("shell", Napi::String::New(env, pw.pw_shell ? pw.pw_shell : ""));
  return out;
}

// getgrouplist(3): every group `name` belongs to, with `gid` included (first). This is the
// list xlurm-stepd passes to setgroups(2), so the daemon can show and check the same thing.
// getgrouplist returns -1 when the array is too small and stores the needed size in ngroups.
Napi::Value GroupList(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "groupList(name, gid)";
  std::string name;
  uint32_t gid;
  if (!ArgString(info, 0, usage, &name) || !ArgU32(info, 1, usage, &gid)) return env.Undefined();
  if (name.empty() || name.find('\0') != std::string::npos) {
    Napi::TypeError::New(env, std::string("Usage: ") + usage).ThrowAsJavaScriptException();
    return env.Undefined();
  }

  long max = sysconf(_SC_NGROUPS_MAX);
  int limit = max > 0 && max < (1 << 20) ? static_cast<int>(max) + 1 : 65537;
  int size = 64;
  std::vector<gid_t> groups;
  for (;;) {
    groups.resize(static_cast<size_t>(size));
    int n = size;
    if (getgrouplist(name.c_str(), static_cast<gid_t>(gid), groups.data(), &n) >= 0) {
      groups.resize(static_cast<size_t>(n));
      break;
    }
    if (size >= limit) {
      ThrowErrno(env, ERANGE, "getgrouplist");
      return env.Undefined();
    }
    size = n > size ? n : size * 2;
    if (size > limit) size = limit;
  }

  Napi::Array out = Napi::Array::New(env, groups.size());
  for (size_t i = 0; i < groups.size(); i++)
    out.Set(static_cast<uint32_t>(i), Napi::Number::New(env, groups[i]));
  return out;
}

}  // namespace

void InitAccounts(Napi::Env env, Napi::Object exports) {
  exports.Set("accountByUid", Napi::Function::New(env, AccountByUid, "accountByUid"));
  exports.Set("groupList", Napi::Function::New(env, GroupList, "groupList"));
}

}  // namespace xlurm
