// NVIDIA NVML (libnvidia-ml.so.1) behind the Vendor interface. No vendor headers: the few
// functions and structs used are declared here from ../../shared/spec/driver-apis.md §1.
//
//   Init      nvmlInit_v2 (or nvmlInit), nvmlErrorString
//   Discover  nvmlDeviceGetCount_v2, per index nvmlDeviceGetHandleByIndex_v2, nvmlDeviceGetUUID,
//             nvmlDeviceGetName
//   Probe     per id: handle by index, UUID (the daemon compares it with discovery), compute
//             processes (_v3, else _v2, else plain; rows validated, see DecodeProcessRows)
//   Shutdown  nvmlShutdown, once per successful init
#include "device.h"

#include <cstring>
#include <string>
#include <vector>

namespace xlurm::dev {

namespace {

using nvmlReturn_t = int;
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;

constexpr nvmlReturn_t kSuccess = 0;
constexpr nvmlReturn_t kInsufficientSize = 7;
constexpr unsigned kUuidBufferSize = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE
constexpr unsigned kNameBufferSize = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr uint32_t kPidCeiling = 1u << 22;  // Linux pid_max can never exceed 2^22

// Process rows seen behind the process symbols (driver-apis.md §1.6, §9).
struct ProcessInfoV1 {  // plain symbol
  unsigned int pid;
  unsigned long long usedGpuMemory;
};
struct ProcessInfoV2 {  // _v2, and _v3 on most drivers
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
struct ProcessInfoCc {  // _v3 on drivers 535.43-535.86
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
  unsigned long long usedGpuCcProtectedMemory;
};
static_assert(sizeof(ProcessInfoV1) == 16, "nvmlProcessInfo_v1_t is 16 bytes on LP64");
static_assert(sizeof(ProcessInfoV2) == 24, "nvmlProcessInfo_v2_t is 24 bytes on LP64");
static_assert(sizeof(ProcessInfoCc) == 32, "the 535.43 _v3 row is 32 bytes on LP64");
constexpr size_t kMaxStride = sizeof(ProcessInfoCc);

using InitFn = nvmlReturn_t (*)();
using ShutdownFn = nvmlReturn_t (*)();
using ErrorStringFn = const char* (*)(nvmlReturn_t);
using CountFn = nvmlReturn_t (*)(unsigned int*);
using HandleByIndexFn = nvmlReturn_t (*)(unsigned int, nvmlDevice_t*);
using StringFn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);
using ProcessesFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, void*);

}  // namespace

// Decode `n` process rows from `buf` (`bytes` long, zero-filled before the driver wrote into
// it), trying the strides in `order`. A stride is accepted when every row has a plausible PID
// (1 ≤ pid < 2^22) and nothing but zeros follows the n-th row: a stride larger than the real one
// runs into the zero fill (PID 0), a smaller one leaves real bytes behind the last row.
// Returns false when no stride fits (the answer is invalid).
bool DecodeProcessRows(const unsigned char* buf, size_t bytes, unsigned n, const std::vector<size_t>& order,
                       std::vector<uint32_t>* pids) {
  for (size_t stride : order) {
    if (static_cast<size_t>(n) * stride > bytes) continue;
    std::vector<uint32_t> out;
    bool ok = true;
    for (unsigned i = 0; i < n && ok; i++) {
      uint32_t pid;
      std::memcpy(&pid, buf + static_cast<size_t>(i) * stride, sizeof pid);
      if (pid == 0 || pid >= kPidCeiling) ok = false;
      out.push_back(pid);
    }
    for (size_t k = static_cast<size_t>(n) * stride; ok && k < bytes; k++)
      if (buf[k] != 0) ok = false;
    if (ok) {
      *pids = std::move(out);
      return true;
    }
  }
  return false;
}

namespace {

class Nvml : public Vendor {
 public:
  std::string Init(void* lib, const std::string& path) override {
    const char* missing = nullptr;
    auto need = [&](std::initializer_list<const char*> names, const char** which = nullptr) {
      void* p = FindSymbol(lib, names, which);
      if (!p && !missing) missing = *names.begin();
      return p;
    };
    init_ = reinterpret_cast<InitFn>(need({"nvmlInit_v2", "nvmlInit"}, &init_name_));
    shutdown_ = reinterpret_cast<ShutdownFn>(need({"nvmlShutdown"}));
    error_string_ = reinterpret_cast<ErrorStringFn>(need({"nvmlErrorString"}));
    count_ = reinterpret_cast<CountFn>(need({"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"}));
    by_index_ = reinterpret_cast<HandleByIndexFn>(need({"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"}));
    uuid_ = reinterpret_cast<StringFn>(need({"nvmlDeviceGetUUID"}));
    name_ = reinterpret_cast<StringFn>(need({"nvmlDeviceGetName"}));
    const char* procs_symbol = nullptr;
    processes_ = reinterpret_cast<ProcessesFn>(need(
        {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2",
         "nvmlDeviceGetComputeRunningProcesses"},
        &procs_symbol));
    if (missing) return path + " does not export " + missing + " (not an NVML library?)";
    // Preferred layout first (driver-apis.md §1.6): the versioned symbols take 24-byte rows,
    // except on the drivers that used 32 (535.43-535.86) or 16 bytes behind _v3.
    if (std::strcmp(procs_symbol, "nvmlDeviceGetComputeRunningProcesses") == 0)
      strides_ = {sizeof(ProcessInfoV1), sizeof(ProcessInfoV2), sizeof(ProcessInfoCc)};
    else
      strides_ = {sizeof(ProcessInfoV2), sizeof(ProcessInfoCc), sizeof(ProcessInfoV1)};
    Enter(init_name_);
    nvmlReturn_t rc = init_();
    if (rc != kSuccess) return Error(init_name_, rc);
    return "";
  }

  std::string Discover(std::vector<RawDevice>* out) override {
    unsigned int count = 0;
    Enter("nvmlDeviceGetCount");
    nvmlReturn_t rc = count_(&count);
    if (rc != kSuccess) return Error("nvmlDeviceGetCount", rc);
    for (unsigned int i = 0; i < count; i++) {
      RawDevice d;
      d.id = i;
      nvmlDevice_t h = nullptr;
      std::string err = Handle(i, &h);
      if (err.empty()) err = ReadString(uuid_, "nvmlDeviceGetUUID", h, kUuidBufferSize, &d.uuid);
      if (err.empty()) err = ReadString(name_, "nvmlDeviceGetName", h, kNameBufferSize, &d.name);
      if (err.empty() && d.uuid.empty()) err = "nvmlDeviceGetUUID: empty UUID";
      d.error = err;
      out->push_back(std::move(d));
    }
    return "";
  }

  void Probe(const std::vector<uint32_t>& ids, std::vector<ProbeRow>* out) override {
    for (uint32_t id : ids) {
      ProbeRow r;
      r.id = id;
      nvmlDevice_t h = nullptr;
      r.error = Handle(id, &h);
      if (r.error.empty()) {
        r.error = ReadString(uuid_, "nvmlDeviceGetUUID", h, kUuidBufferSize, &r.uuid);
        r.has_uuid = r.error.empty();
      }
      if (r.error.empty()) {
        r.error = Processes(h, &r.processes);
        r.has_processes = r.error.empty();
      }
      out->push_back(std::move(r));
    }
  }

  void Shutdown() override {
    Enter("nvmlShutdown");
    shutdown_();
  }

 private:
  // "<call>: <nvmlErrorString> (<code>)", e.g. "nvmlDeviceGetUUID: GPU is lost (15)".
  std::string Error(const char* call, nvmlReturn_t rc) {
    Enter("nvmlErrorString");
    const char* text = error_string_ ? error_string_(rc) : nullptr;
    return std::string(call) + ": " + (text && *text ? text : "error") + " (" + std::to_string(rc) + ")";
  }

  std::string Handle(unsigned int index, nvmlDevice_t* h) {
    Enter("nvmlDeviceGetHandleByIndex");
    nvmlReturn_t rc = by_index_(index, h);
    if (rc != kSuccess) return Error("nvmlDeviceGetHandleByIndex", rc);
    if (!*h) return "nvmlDeviceGetHandleByIndex: invalid answer (null handle)";
    return "";
  }

  std::string ReadString(StringFn fn, const char* call, nvmlDevice_t h, unsigned int size, std::string* out) {
    std::vector<char> buf(size + 1, 0);
    Enter(call);
    nvmlReturn_t rc = fn(h, buf.data(), size);
    if (rc != kSuccess) return Error(call, rc);
    buf[size] = 0;  // a driver that fills the buffer without a terminator must not run us off it
    out->assign(buf.data());
    return "";
  }

  // The compute processes on `h`: the two-call protocol (size, then rows) with a zero-filled
  // buffer that leaves room for the largest row layout and a few late-starting processes.
  std::string Processes(nvmlDevice_t h, std::vector<uint32_t>* pids) {
    const char* call = "nvmlDeviceGetComputeRunningProcesses";
    unsigned int count = 0;
    Enter(call);
    nvmlReturn_t rc = processes_(h, &count, nullptr);
    if (rc == kSuccess) {
      if (count != 0) return std::string(call) + ": invalid answer (" + std::to_string(count) + " rows reported without a buffer)";
      pids->clear();
      return "";
    }
    if (rc != kInsufficientSize) return Error(call, rc);
    for (int attempt = 0; attempt < 4; attempt++) {
      if (count > 65536) return std::string(call) + ": invalid answer (" + std::to_string(count) + " processes)";
      unsigned int capacity = count + 16;
      std::vector<unsigned char> buf(static_cast<size_t>(capacity) * kMaxStride, 0);
      unsigned int n = capacity;
      Enter(call);
      rc = processes_(h, &n, buf.data());
      if (rc == kInsufficientSize) {  // more processes started in between
        count = n > count ? n : count + 16;
        continue;
      }
      if (rc != kSuccess) return Error(call, rc);
      if (n > capacity) return std::string(call) + ": invalid answer (" + std::to_string(n) + " rows for a buffer of " + std::to_string(capacity) + ")";
      if (!DecodeProcessRows(buf.data(), buf.size(), n, strides_, pids))
        return std::string(call) + ": invalid answer (the rows match no known layout)";
      return "";
    }
    return std::string(call) + ": invalid answer (process count keeps growing)";
  }

  InitFn init_ = nullptr;
  const char* init_name_ = "nvmlInit_v2";
  ShutdownFn shutdown_ = nullptr;
  ErrorStringFn error_string_ = nullptr;
  CountFn count_ = nullptr;
  HandleByIndexFn by_index_ = nullptr;
  StringFn uuid_ = nullptr;
  StringFn name_ = nullptr;
  ProcessesFn processes_ = nullptr;
  std::vector<size_t> strides_;
};

}  // namespace

std::unique_ptr<Vendor> MakeNvml() { return std::make_unique<Nvml>(); }

}  // namespace xlurm::dev
