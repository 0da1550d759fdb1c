// MetaX MXSML (libmxsml.so) behind the Vendor interface, through the native index-based API. No
// vendor headers: the functions and structs used are declared here from
// docs/driver-apis.md §4 and §9.
//
//   Init      symbols; mxSmlInit (MXSML has no shutdown: nothing to undo)
//   Discover  mxSmlGetDeviceCount (returns the count), per index mxSmlGetDeviceInfo (UUID, name,
//             mode: virtual functions are left out unless every device is one, as in a guest)
//   Probe     per id: mxSmlGetDeviceInfo (UUID; the daemon compares it with discovery),
//             mxSmlGetDeviceUnavailableReason and, when exported, mxSmlGetDeviceState (either
//             saying "not available" → unhealthy), then the per-device process query
//             (mxSmlGetSingleGpuProcess_v3, else _v2, else plain), rows validated and matched
//             on the device's sequence index (DecodeProcessRows); and, when exported,
//             mxSmlGetMemoryInfo (VRAM, KB) and mxSmlGetDeviceIpUsage (Xcore, the compute IP), for
//             samples
//   Shutdown  nothing
#include "device.h"
#include "node-holders.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

namespace xlurm::dev {

namespace {

using mxSmlReturn_t = unsigned int;

constexpr mxSmlReturn_t kSuccess = 0;
constexpr mxSmlReturn_t kInsufficientSize = 10;
constexpr unsigned kModeVf = 2;
constexpr unsigned kMaxGpusPerProcess = 64;  // MAX_GPU_NUM_USED_BY_PROCESS
constexpr unsigned kFirstCapacity = 64;      // process rows; grows on demand
constexpr unsigned kMaxRows = 4096;
constexpr uint32_t kPidCeiling = 1u << 22;   // Linux pid_max can never exceed 2^22

struct DeviceInfo {  // mxSmlDeviceInfo_t
  unsigned int deviceId;
  unsigned int type;
  char bdfId[32];
  unsigned int gpuId;  // the PHYSICAL id: never what process rows carry
  unsigned int nodeId;
  char uuid[96];
  unsigned int brand;
  unsigned int mode;  // None 0, Pf 1, Vf 2
  char deviceName[32];
};
struct UnavailableReason {  // mxSmlDeviceUnavailableReasonInfo_t
  int unavailableCode;
  char unavailableReason[64];
};
struct ProcessGpuInfoV1 {  // mxSmlProcessGpuInfo_t
  char bdfId[32];
  unsigned int gpuId;  // the device's sequence index (the deviceId of the calls)
  unsigned long gpuMemoryUsage;
};
struct ProcessGpuInfoV3 {  // mxSmlProcessGpuInfo_v3_t (_v2: the same size, without sgpuId)
  char bdfId[32];
  unsigned int gpuId;
  unsigned long gpuMemoryUsage;
  unsigned int dieId;
  int sgpuId;
};
struct ProcessInfoV1 {  // mxSmlProcessInfo_t
  unsigned int processId;
  char processName[64];
  unsigned int gpuNumber;
  ProcessGpuInfoV1 processGpuInfo[kMaxGpusPerProcess];
};
struct ProcessInfoV3 {  // mxSmlProcessInfo_v3_t / _v2_t
  unsigned int processId;
  char processName[64];
  unsigned int gpuNumber;
  ProcessGpuInfoV3 processGpuInfo[kMaxGpusPerProcess];
};
static_assert(sizeof(DeviceInfo) == 184, "mxSmlDeviceInfo_t is 184 bytes");
static_assert(offsetof(DeviceInfo, uuid) == 48 && offsetof(DeviceInfo, deviceName) == 152, "mxSmlDeviceInfo_t layout");
static_assert(sizeof(UnavailableReason) == 68, "mxSmlDeviceUnavailableReasonInfo_t is 68 bytes");
static_assert(sizeof(ProcessGpuInfoV1) == 48 && sizeof(ProcessGpuInfoV3) == 56, "process GPU entries are 48 / 56 bytes on LP64");
static_assert(sizeof(ProcessInfoV1) == 3144 && sizeof(ProcessInfoV3) == 3656, "process rows are 3144 / 3656 bytes on LP64");
static_assert(offsetof(ProcessInfoV1, processGpuInfo) == 72 && offsetof(ProcessInfoV3, processGpuInfo) == 72, "entries at 72");

using InitFn = mxSmlReturn_t (*)();
using CountFn = unsigned int (*)();
using InfoFn = mxSmlReturn_t (*)(unsigned int, DeviceInfo*);
using ErrorStringFn = const char* (*)(mxSmlReturn_t);
using StateFn = mxSmlReturn_t (*)(unsigned int, int*);
using UnavailableFn = mxSmlReturn_t (*)(unsigned int, UnavailableReason*);
using ProcessesFn = mxSmlReturn_t (*)(unsigned int, unsigned int*, void*);
// mxSmlMemoryInfo_t: KB, signed (docs/driver-apis.md §4.5); the vram pair is the device memory.
struct MemoryInfo { long visVramTotal, visVramUse, vramTotal, vramUse, xttTotal, xttUse; };
static_assert(sizeof(MemoryInfo) == 48, "mxSmlMemoryInfo_t is 48 bytes on LP64");
using MemoryFn = mxSmlReturn_t (*)(unsigned int, MemoryInfo*);
using IpUsageFn = mxSmlReturn_t (*)(unsigned int, int /* mxSmlUsageIp_t */, int*);
constexpr int kIpXcore = 4;  // MXSML_Usage_Xcore: the compute cores (Dla, Vpue, Vpud, G2d are not)

// A fixed-size text field that the driver may fill without a terminator.
std::string Text(const char* field, size_t size) { return std::string(field, strnlen(field, size)); }

template <typename T>
T Load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Decode `n` process rows (`row` bytes each, GPU entries `entry` bytes apart) answered for the
// device with sequence index `index`: the PIDs (ascending, once each) of the rows that list that
// index among their first gpuNumber entries. Each row is one process and lists every GPU it uses,
// by sequence index — never the physical mxSmlDeviceInfo_t.gpuId (docs/driver-apis.md §4.4). Returns
// "" or why the answer is invalid (a bad PID or GPU count).
std::string DecodeProcessRows(const unsigned char* buf, size_t row, size_t entry, unsigned n, uint32_t index,
                              std::vector<uint32_t>* pids) {
  pids->clear();
  for (unsigned k = 0; k < n; k++) {
    const unsigned char* r = buf + static_cast<size_t>(k) * row;
    uint32_t pid = Load<uint32_t>(r + offsetof(ProcessInfoV1, processId));
    uint32_t gpus = Load<uint32_t>(r + offsetof(ProcessInfoV1, gpuNumber));
    if (pid == 0 || pid >= kPidCeiling) return "row " + std::to_string(k) + " has PID " + std::to_string(pid);
    if (gpus == 0 || gpus > kMaxGpusPerProcess)
      return "row " + std::to_string(k) + " (PID " + std::to_string(pid) + ") lists " + std::to_string(gpus) + " GPUs";
    for (uint32_t j = 0; j < gpus; j++) {
      const unsigned char* e = r + offsetof(ProcessInfoV1, processGpuInfo) + static_cast<size_t>(j) * entry;
      if (Load<uint32_t>(e + offsetof(ProcessGpuInfoV1, gpuId)) == index) {
        pids->push_back(pid);
        break;
      }
    }
  }
  std::sort(pids->begin(), pids->end());
  pids->erase(std::unique(pids->begin(), pids->end()), pids->end());
  return "";
}

class Mxsml : public Vendor {
 public:
  std::string Init(void* lib, const std::string& path) override {
    const char* missing = nullptr;
    auto need = [&](std::initializer_list<const char*> names, const char** which = nullptr) {
      void* p = FindSymbol(lib, names, which);
      if (!p && !missing) missing = *names.begin();
      return p;
    };
    init_ = reinterpret_cast<InitFn>(need({"mxSmlInit"}));
    count_ = reinterpret_cast<CountFn>(need({"mxSmlGetDeviceCount"}));
    info_ = reinterpret_cast<InfoFn>(need({"mxSmlGetDeviceInfo"}));
    error_string_ = reinterpret_cast<ErrorStringFn>(need({"mxSmlGetErrorString"}));
    unavailable_ = reinterpret_cast<UnavailableFn>(need({"mxSmlGetDeviceUnavailableReason"}));
    processes_ = reinterpret_cast<ProcessesFn>(need(
        {"mxSmlGetSingleGpuProcess_v3", "mxSmlGetSingleGpuProcess_v2", "mxSmlGetSingleGpuProcess"}, &processes_name_));
    if (missing) return path + " does not export " + missing + " (not an MXSML library?)";
    state_ = reinterpret_cast<StateFn>(FindSymbol(lib, {"mxSmlGetDeviceState"}));
    memory_ = reinterpret_cast<MemoryFn>(FindSymbol(lib, {"mxSmlGetMemoryInfo"}));
    ip_usage_ = reinterpret_cast<IpUsageFn>(FindSymbol(lib, {"mxSmlGetDeviceIpUsage"}));
    if (std::strcmp(processes_name_, "mxSmlGetSingleGpuProcess") == 0) {
      row_size_ = sizeof(ProcessInfoV1);
      entry_size_ = sizeof(ProcessGpuInfoV1);
    }
    Enter("mxSmlInit");
    mxSmlReturn_t rc = init_();
    if (rc != kSuccess) return Error("mxSmlInit", rc);
    return "";
  }

  std::string Discover(std::vector<RawDevice>* out) override {
    Enter("mxSmlGetDeviceCount");
    unsigned int count = count_();
    if (count > 1024) return "mxSmlGetDeviceCount: invalid answer (" + std::to_string(count) + " devices)";
    std::vector<DeviceInfo> infos(count);
    std::vector<std::string> errors(count);
    // SR-IOV: on a host the VFs belong to virtual machines and are left out; a guest sees only
    // VFs and uses them. A device that cannot be identified might be physical.
    bool physical = false;
    for (unsigned int i = 0; i < count; i++) {
      errors[i] = Info(i, &infos[i]);
      physical = physical || !errors[i].empty() || infos[i].mode != kModeVf;
    }
    for (unsigned int i = 0; i < count; i++) {
      RawDevice d;
      d.id = i;
      d.error = errors[i];
      if (d.error.empty()) {
        d.uuid = Text(infos[i].uuid, sizeof infos[i].uuid);
        d.name = Text(infos[i].deviceName, sizeof infos[i].deviceName);
        if (physical && infos[i].mode == kModeVf) d.error = "a virtual function (VF); the physical GPUs are managed";
        else if (d.uuid.empty()) d.error = "mxSmlGetDeviceInfo: empty UUID";
        // MetaX GPUs are DRM devices: their card/render nodes from the PCI address (docs/behaviour.md §24.8).
        if (d.error.empty()) d.nodes = DrmNodes(Text(infos[i].bdfId, sizeof infos[i].bdfId));
        if (d.error.empty()) d.pci = PciAddress(Text(infos[i].bdfId, sizeof infos[i].bdfId));
      }
      out->push_back(std::move(d));
    }
    return "";
  }

  void Probe(const std::vector<uint32_t>& ids, std::vector<ProbeRow>* out) override {
    for (uint32_t id : ids) {
      ProbeRow r;
      r.id = id;
      DeviceInfo info;
      r.error = Info(id, &info);
      if (r.error.empty()) {
        r.uuid = Text(info.uuid, sizeof info.uuid);
        r.has_uuid = true;
        r.error = Availability(id, &r.health);
      }
      // An unavailable GPU is unhealthy whoever uses it (and may not answer the process query).
      if (r.error.empty() && r.health == Health::kOk) {
        r.error = Processes(id, &r.processes);
        r.has_processes = r.error.empty();
      }
      if (r.error.empty() && r.health == Health::kOk) Readings(id, &r);
      out->push_back(std::move(r));
    }
  }

  void Shutdown() override {}  // MXSML exports no shutdown (docs/driver-apis.md §4.2)

 private:
  // "<call>: <mxSmlGetErrorString> (<code>)", e.g. "mxSmlGetDeviceInfo: Invalid device id (6)".
  std::string Error(const char* call, mxSmlReturn_t rc) {
    Enter("mxSmlGetErrorString");
    const char* text = error_string_(rc);
    return std::string(call) + ": " + (text && *text ? text : "error") + " (" + std::to_string(rc) + ")";
  }

  std::string Info(unsigned int id, DeviceInfo* info) {
    std::memset(info, 0, sizeof *info);
    Enter("mxSmlGetDeviceInfo");
    mxSmlReturn_t rc = info_(id, info);
    return rc == kSuccess ? "" : Error("mxSmlGetDeviceInfo", rc);
  }

  // Utilisation (percent) and memory (KB → bytes) for samples (docs/behaviour.md §26.2).
  // Optional: a failed call or an absurd answer is simply not reported, never the device's error.
  void Readings(unsigned int id, ProbeRow* r) {
    if (ip_usage_) {
      int usage = -1;
      Enter("mxSmlGetDeviceIpUsage");
      if (ip_usage_(id, kIpXcore, &usage) == kSuccess && usage >= 0 && usage <= 100) r->utilization = usage;
    }
    if (memory_) {
      MemoryInfo m;
      std::memset(&m, 0, sizeof m);
      Enter("mxSmlGetMemoryInfo");
      if (memory_(id, &m) == kSuccess && m.vramTotal > 0 && m.vramUse >= 0 && m.vramUse <= m.vramTotal &&
          m.vramTotal <= (1L << 40)) {
        r->memory_total = static_cast<int64_t>(m.vramTotal) << 10;
        r->memory_used = static_cast<int64_t>(m.vramUse) << 10;
        r->memory_free = r->memory_total - r->memory_used;
      }
    }
  }

  // Unavailable (a non-zero unavailable code, or state 0) → unhealthy.
  std::string Availability(unsigned int id, Health* health) {
    UnavailableReason why;
    std::memset(&why, 0, sizeof why);
    Enter("mxSmlGetDeviceUnavailableReason");
    mxSmlReturn_t rc = unavailable_(id, &why);
    if (rc != kSuccess) return Error("mxSmlGetDeviceUnavailableReason", rc);
    bool available = why.unavailableCode == 0;
    if (state_) {
      int state = -1;
      Enter("mxSmlGetDeviceState");
      rc = state_(id, &state);
      if (rc != kSuccess) return Error("mxSmlGetDeviceState", rc);
      if (state != 0 && state != 1) return "mxSmlGetDeviceState: invalid answer (state " + std::to_string(state) + ")";
      available = available && state == 1;
    }
    *health = available ? Health::kOk : Health::kUnhealthy;
    return "";
  }

  // The per-device process query: *number in = rows the buffer holds, out = rows written; a
  // buffer it fills completely may have been too small, so it is asked again with a larger one.
  std::string Processes(unsigned int id, std::vector<uint32_t>* pids) {
    const char* call = processes_name_;
    unsigned int capacity = kFirstCapacity;
    for (int attempt = 0; attempt < 6; attempt++) {
      std::vector<unsigned char> buf(static_cast<size_t>(capacity) * row_size_, 0);
      unsigned int n = capacity;
      Enter(call);
      mxSmlReturn_t rc = processes_(id, &n, buf.data());
      if (rc == kInsufficientSize || (rc == kSuccess && n == capacity)) {
        unsigned int want = std::max(rc == kInsufficientSize ? n : 0u, capacity * 2);
        if (capacity >= kMaxRows || want > kMaxRows)
          return std::string(call) + ": invalid answer (more than " + std::to_string(kMaxRows) + " processes)";
        capacity = want;
        continue;
      }
      if (rc != kSuccess) return Error(call, rc);
      if (n > capacity)
        return std::string(call) + ": invalid answer (" + std::to_string(n) + " rows for a buffer of " + std::to_string(capacity) + ")";
      std::string why = DecodeProcessRows(buf.data(), row_size_, entry_size_, n, id, pids);
      return why.empty() ? "" : std::string(call) + ": invalid answer (" + why + ")";
    }
    return std::string(call) + ": invalid answer (process count keeps growing)";
  }

  InitFn init_ = nullptr;
  CountFn count_ = nullptr;
  InfoFn info_ = nullptr;
  ErrorStringFn error_string_ = nullptr;
  UnavailableFn unavailable_ = nullptr;
  StateFn state_ = nullptr;
  ProcessesFn processes_ = nullptr;
  MemoryFn memory_ = nullptr;
  IpUsageFn ip_usage_ = nullptr;
  const char* processes_name_ = "mxSmlGetSingleGpuProcess_v3";
  size_t row_size_ = sizeof(ProcessInfoV3);
  size_t entry_size_ = sizeof(ProcessGpuInfoV3);
};

}  // namespace

std::unique_ptr<Vendor> MakeMxsml() { return std::make_unique<Mxsml>(); }

}  // namespace xlurm::dev
