// Device isolation on cgroup v2 (docs/behaviour.md §24.8): a BPF_PROG_TYPE_CGROUP_DEVICE program
// that denies a list of device numbers and allows every other access, assembled by hand here and
// loaded and attached with the raw bpf(2) system call (no libbpf: the program is a few
// instructions, and the addon must not depend on a library the hosts may not have).
//
//   deviceFilterAttach(cgroupDir, deny)  load the program for `deny` (flat [type, major, minor]
//                                        triples; type 'b' = 1, 'c' = 2) and attach it to the
//                                        cgroup directory with BPF_F_ALLOW_MULTI, so programs of
//                                        the cgroups above (systemd's DevicePolicy) still run
//                                        and every one of them must allow
//   deviceFilterCount(cgroupDir)         how many device programs are attached to that cgroup
//   deviceFilterSupported()              "" when this kernel loads such a program, else why
//
// The attachment belongs to the cgroup, not to a descriptor: the program descriptor is closed
// once attached, the program stays in force until the cgroup is removed, and a daemon restart
// does not lift it.
#include "addon.h"

#include <fcntl.h>
#include <linux/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace xlurm {

namespace {

struct DenyRule {
  uint32_t type;  // BPF_DEVCG_DEV_BLOCK (1) or BPF_DEVCG_DEV_CHAR (2)
  uint32_t major;
  uint32_t minor;
};

long Bpf(int cmd, union bpf_attr* attr) {
  return syscall(__NR_bpf, cmd, attr, sizeof *attr);
}

bpf_insn Insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm) {
  bpf_insn i;
  std::memset(&i, 0, sizeof i);
  i.code = code;
  i.dst_reg = dst & 0xf;
  i.src_reg = src & 0xf;
  i.off = off;
  i.imm = imm;
  return i;
}

// The program. Its context is struct bpf_cgroup_dev_ctx { u32 access_type (access << 16 | type);
// u32 major; u32 minor; }; it returns 1 to allow the access and 0 to deny it (EPERM):
//   r2 = ctx->access_type & 0xffff; r3 = ctx->major; r4 = ctx->minor
//   per rule: if r2 != type goto next; if r3 != major goto next; if r4 != minor goto next;
//             r0 = 0; exit;  next:
//   r0 = 1; exit
std::vector<bpf_insn> Assemble(const std::vector<DenyRule>& deny) {
  constexpr uint8_t kLdxW = BPF_LDX | BPF_MEM | BPF_W;
  constexpr uint8_t kAnd32 = BPF_ALU | BPF_AND | BPF_K;
  constexpr uint8_t kJneK = BPF_JMP | BPF_JNE | BPF_K;
  constexpr uint8_t kMov64K = BPF_ALU64 | BPF_MOV | BPF_K;
  constexpr uint8_t kExit = BPF_JMP | BPF_EXIT;
  std::vector<bpf_insn> p;
  p.push_back(Insn(kLdxW, BPF_REG_2, BPF_REG_1, offsetof(bpf_cgroup_dev_ctx, access_type), 0));
  p.push_back(Insn(kAnd32, BPF_REG_2, 0, 0, 0xffff));
  p.push_back(Insn(kLdxW, BPF_REG_3, BPF_REG_1, offsetof(bpf_cgroup_dev_ctx, major), 0));
  p.push_back(Insn(kLdxW, BPF_REG_4, BPF_REG_1, offsetof(bpf_cgroup_dev_ctx, minor), 0));
  for (const DenyRule& r : deny) {
    // Offsets count the instructions skipped: to the first one after this rule's exit.
    p.push_back(Insn(kJneK, BPF_REG_2, 0, 4, static_cast<int32_t>(r.type)));
    p.push_back(Insn(kJneK, BPF_REG_3, 0, 3, static_cast<int32_t>(r.major)));
    p.push_back(Insn(kJneK, BPF_REG_4, 0, 2, static_cast<int32_t>(r.minor)));
    p.push_back(Insn(kMov64K, BPF_REG_0, 0, 0, 0));
    p.push_back(Insn(kExit, 0, 0, 0, 0));
  }
  p.push_back(Insn(kMov64K, BPF_REG_0, 0, 0, 1));
  p.push_back(Insn(kExit, 0, 0, 0, 0));
  return p;
}

// BPF_PROG_LOAD; returns the program descriptor, or -1 with errno set and the verifier's first
// complaint (if any) in *why.
int Load(const std::vector<DenyRule>& deny, std::string* why) {
  std::vector<bpf_insn> prog = Assemble(deny);
  static char license[] = "MIT";  // the project's; the program calls no GPL-only helper
  std::vector<char> log(4096, 0);
  union bpf_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  attr.insns = reinterpret_cast<uint64_t>(prog.data());
  attr.insn_cnt = static_cast<uint32_t>(prog.size());
  attr.license = reinterpret_cast<uint64_t>(license);
  std::strncpy(attr.prog_name, "xlurm_devices", sizeof attr.prog_name - 1);
  int fd = static_cast<int>(Bpf(BPF_PROG_LOAD, &attr));
  if (fd >= 0) return fd;
  int err = errno;
  // Retry with the verifier's log only to explain the failure (a log costs kernel memory).
  attr.log_buf = reinterpret_cast<uint64_t>(log.data());
  attr.log_size = static_cast<uint32_t>(log.size());
  attr.log_level = 1;
  int again = static_cast<int>(Bpf(BPF_PROG_LOAD, &attr));
  if (again >= 0) return again;
  log.back() = 0;
  std::string text(log.data());
  size_t nl = text.find('\n');
  if (nl != std::string::npos) text.resize(nl);
  *why = text;
  errno = err;
  return -1;
}

void ThrowWithDetail(Napi::Env env, int err, const char* syscall, const std::string& detail) {
  Napi::Error e = ErrnoError(env, err, syscall);
  if (!detail.empty()) e.Set("detail", Napi::String::New(env, detail));
  e.ThrowAsJavaScriptException();
}

bool ArgDenyList(const Napi::CallbackInfo& info, size_t i, const char* usage, std::vector<DenyRule>* out) {
  bool ok = info.Length() > i && info[i].IsArray();
  if (ok) {
    Napi::Array a = info[i].As<Napi::Array>();
    ok = a.Length() % 3 == 0 && a.Length() / 3 <= 4096;  // a program stays far below the verifier's limits
    std::vector<uint32_t> v;
    for (uint32_t k = 0; ok && k < a.Length(); k++) {
      Napi::Value x = a.Get(k);
      if (!x.IsNumber()) { ok = false; break; }
      double d = x.As<Napi::Number>().DoubleValue();
      if (!(d >= 0 && d <= 2147483647.0) || static_cast<double>(static_cast<uint32_t>(d)) != d) { ok = false; break; }
      v.push_back(static_cast<uint32_t>(d));
    }
    for (size_t k = 0; ok && k < v.size(); k += 3) {
      if (v[k] != BPF_DEVCG_DEV_BLOCK && v[k] != BPF_DEVCG_DEV_CHAR) ok = false;
      else out->push_back(DenyRule{v[k], v[k + 1], v[k + 2]});
    }
  }
  if (!ok) Napi::TypeError::New(info.Env(), std::string("Usage: ") + usage).ThrowAsJavaScriptException();
  return ok;
}

Napi::Value DeviceFilterAttach(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "deviceFilterAttach(cgroupDir, [type, major, minor, ...])";
  std::string dir;
  std::vector<DenyRule> deny;
  if (!ArgString(info, 0, usage, &dir) || !ArgDenyList(info, 1, usage, &deny)) return env.Undefined();
  int cg = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cg < 0) {
    ThrowErrno(env, errno, "open");
    return env.Undefined();
  }
  std::string why;
  int prog = Load(deny, &why);
  if (prog < 0) {
    int err = errno;
    close(cg);
    ThrowWithDetail(env, err, "bpf(BPF_PROG_LOAD)", why);
    return env.Undefined();
  }
  union bpf_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.target_fd = static_cast<uint32_t>(cg);
  attr.attach_bpf_fd = static_cast<uint32_t>(prog);
  attr.attach_type = BPF_CGROUP_DEVICE;
  attr.attach_flags = BPF_F_ALLOW_MULTI;
  long rc = Bpf(BPF_PROG_ATTACH, &attr);
  int err = errno;
  close(prog);
  close(cg);
  if (rc != 0) ThrowErrno(env, err, "bpf(BPF_PROG_ATTACH)");
  return env.Undefined();
}

Napi::Value DeviceFilterCount(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "deviceFilterCount(cgroupDir)";
  std::string dir;
  if (!ArgString(info, 0, usage, &dir)) return env.Undefined();
  int cg = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cg < 0) {
    ThrowErrno(env, errno, "open");
    return env.Undefined();
  }
  union bpf_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.query.target_fd = static_cast<uint32_t>(cg);
  attr.query.attach_type = BPF_CGROUP_DEVICE;
  long rc = Bpf(BPF_PROG_QUERY, &attr);  // prog_ids NULL: the kernel only fills prog_cnt
  int err = errno;
  close(cg);
  if (rc != 0) {
    ThrowErrno(env, err, "bpf(BPF_PROG_QUERY)");
    return env.Undefined();
  }
  return Napi::Number::New(env, attr.query.prog_cnt);
}

Napi::Value DeviceFilterSupported(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string why;
  int fd = Load({}, &why);
  if (fd >= 0) {
    close(fd);
    return Napi::String::New(env, "");
  }
  int err = errno;
  std::string text = std::string("bpf(BPF_PROG_LOAD): ") + std::strerror(err);
  if (!why.empty()) text += " (" + why + ")";
  return Napi::String::New(env, text);
}

}  // namespace

void InitDeviceFilter(Napi::Env env, Napi::Object exports) {
  exports.Set("deviceFilterAttach", Napi::Function::New(env, DeviceFilterAttach, "deviceFilterAttach"));
  exports.Set("deviceFilterCount", Napi::Function::New(env, DeviceFilterCount, "deviceFilterCount"));
  exports.Set("deviceFilterSupported", Napi::Function::New(env, DeviceFilterSupported, "deviceFilterSupported"));
}

}  // namespace xlurm
