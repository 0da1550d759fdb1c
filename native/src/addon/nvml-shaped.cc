// NVML-shaped libraries behind the Vendor interface (see nvml-shaped.h): NVML (nvml.cc) and its
// renamed clones (HGML, hgml.cc). No vendor headers: the few functions and structs used are
// declared here from docs/driver-apis.md §1 (HGML: §5, "NVML-identical").
// Names below are NVML's; the library's own come from its NvmlShapedApi table.
//
//   Init      (preload), nvmlInit_v2 (or nvmlInitWithFlags(0), or nvmlInit), nvmlErrorString
//   Discover  nvmlDeviceGetCount_v2, per index nvmlDeviceGetHandleByIndex_v2, nvmlDeviceGetUUID,
//             nvmlDeviceGetName
//   Probe     per id: handle by index, UUID (the daemon compares it with discovery), compute
//             processes (_v3, else _v2, else plain; rows validated, see DecodeProcessRows)
//             then, when exported, nvmlDeviceGetTopologyCommonAncestor per pair (device groups);
//             and, when exported, nvmlDeviceGetUtilizationRates and nvmlDeviceGetMemoryInfo
//             (utilisation and memory in use for samples, never a device error)
//   Shutdown  nvmlShutdown, once per successful init
#include "nvml-shaped.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
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

// Process rows seen behind the process symbols (docs/driver-apis.md §1.6, §9).
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
using TopologyFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlDevice_t, int*);
using MinorFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);
struct Utilization { unsigned int gpu; unsigned int memory; };   // nvmlUtilization_t, percent
struct MemoryInfo { unsigned long long total, free, used; };     // nvmlMemory_t (v1), bytes
using UtilizationFn = nvmlReturn_t (*)(nvmlDevice_t, Utilization*);
using MemoryFn = nvmlReturn_t (*)(nvmlDevice_t, MemoryInfo*);
// nvmlPciInfo_t: busIdLegacy[16] (busId in v1), then domain, bus, device (the fields read here);
// v3 is 68 bytes, older versions shorter. The buffer is larger than any of them.
struct PciInfo { char bus_id_legacy[16]; unsigned int domain, bus, device, pci_device_id, pci_subsystem_id; char rest[96]; };
using PciInfoFn = nvmlReturn_t (*)(nvmlDevice_t, PciInfo*);  // nvmlGpuTopologyLevel_t is an int enum

// NVML_TOPOLOGY_MULTIPLE: the two GPUs share a PCIe switch hierarchy (one or more switches)
// without going through a host bridge; INTERNAL (0, one board) and SINGLE (10, one switch) are
// closer. Such GPUs form one device group (docs/behaviour.md §21.5).
constexpr int kTopologyGroupLevel = 20;

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

using InitFlagsFn = nvmlReturn_t (*)(unsigned int);

class NvmlShaped : public Vendor {
 public:
  explicit NvmlShaped(const NvmlShapedApi& api) : api_(api) {}

  // Load `api_.preload` from the directory of `path` first, when it is there: the main library
  // names it in DT_NEEDED, and the loader satisfies that from an already-loaded object with the
  // same soname, however it was loaded (so RTLD_LOCAL is enough). A bare file name goes through
  // the loader's own search, which is expected to find both.
  void BeforeOpen(const std::string& path) override {
    if (!api_.preload || preloaded_) return;
    size_t slash = path.rfind('/');
    if (slash == std::string::npos) return;
    std::string dep = path.substr(0, slash + 1) + api_.preload;
    if (access(dep.c_str(), F_OK) != 0) return;
    // Never dlclose'd, like every vendor library (device.cc). A failure shows up as the main
    // library's own dlopen error, which names the missing dependency.
    if (dlopen(dep.c_str(), RTLD_NOW | RTLD_LOCAL)) preloaded_ = true;
  }

  std::string Init(void* lib, const std::string& path) override {
    const char* missing = nullptr;
    auto need = [&](std::initializer_list<const char*> names, const char** which = nullptr) {
      void* p = FindSymbol(lib, names, which);
      if (!p && !missing) missing = *names.begin();
      return p;
    };
    // Initialisers in order of preference: …Init_v2, …InitWithFlags(0), …Init.
    init_ = reinterpret_cast<InitFn>(FindSymbol(lib, {api_.init}, &init_name_));
    if (!init_ && api_.init_with_flags)
      init_flags_ = reinterpret_cast<InitFlagsFn>(FindSymbol(lib, {api_.init_with_flags}, &init_name_));
    if (!init_ && !init_flags_) init_ = reinterpret_cast<InitFn>(need({api_.init, api_.init_plain}, &init_name_));
    shutdown_ = reinterpret_cast<ShutdownFn>(need({api_.shutdown}));
    error_string_ = reinterpret_cast<ErrorStringFn>(need({api_.error_string}));
    count_ = reinterpret_cast<CountFn>(need({api_.count[0], api_.count[1]}));
    by_index_ = reinterpret_cast<HandleByIndexFn>(need({api_.handle_by_index[0], api_.handle_by_index[1]}));
    uuid_ = reinterpret_cast<StringFn>(need({api_.uuid}));
    name_ = reinterpret_cast<StringFn>(api_.name_required ? need({api_.name}) : FindSymbol(lib, {api_.name}));
    const char* procs_symbol = nullptr;
    processes_ = reinterpret_cast<ProcessesFn>(need({api_.processes[0], api_.processes[1], api_.processes[2]}, &procs_symbol));
    if (api_.topology) topology_ = reinterpret_cast<TopologyFn>(FindSymbol(lib, {api_.topology}));
    if (api_.minor) minor_ = reinterpret_cast<MinorFn>(FindSymbol(lib, {api_.minor}));
    if (api_.utilization) utilization_ = reinterpret_cast<UtilizationFn>(FindSymbol(lib, {api_.utilization}));
    if (api_.memory) memory_ = reinterpret_cast<MemoryFn>(FindSymbol(lib, {api_.memory}));
    if (api_.pci_info[0])
      pci_info_ = reinterpret_cast<PciInfoFn>(FindSymbol(lib, {api_.pci_info[0], api_.pci_info[1], api_.pci_info[2]}, &pci_info_name_));
    if (missing) return path + " does not export " + missing + " (not an " + api_.library + " library?)";
    // Preferred layout first (docs/driver-apis.md §1.6): the versioned symbols take 24-byte rows,
    // except on the drivers that used 32 (535.43-535.86) or 16 bytes behind _v3.
    if (std::strcmp(procs_symbol, api_.processes[2]) == 0)
      strides_ = {sizeof(ProcessInfoV1), sizeof(ProcessInfoV2), sizeof(ProcessInfoCc)};
    else
      strides_ = {sizeof(ProcessInfoV2), sizeof(ProcessInfoCc), sizeof(ProcessInfoV1)};
    Enter(init_name_);
    nvmlReturn_t rc = init_ ? init_() : init_flags_(0);
    if (rc != kSuccess) return Error(init_name_, rc);
    return "";
  }

  std::string Discover(std::vector<RawDevice>* out) override {
    unsigned int count = 0;
    Enter(api_.count_call);
    nvmlReturn_t rc = count_(&count);
    if (rc != kSuccess) return Error(api_.count_call, rc);
    std::vector<nvmlDevice_t> handles;  // per device; nullptr: not identified
    for (unsigned int i = 0; i < count; i++) {
      RawDevice d;
      d.id = i;
      nvmlDevice_t h = nullptr;
      std::string err = Handle(i, &h);
      if (err.empty()) err = ReadString(uuid_, api_.uuid, h, kUuidBufferSize, &d.uuid);
      if (err.empty() && name_) err = ReadString(name_, api_.name, h, kNameBufferSize, &d.name);
      if (err.empty() && !name_) d.name = api_.default_name;
      if (err.empty() && d.uuid.empty()) err = std::string(api_.uuid) + ": empty UUID";
      if (err.empty()) Nodes(h, &d.nodes);
      if (err.empty()) d.pci = Pci(h);
      d.error = err;
      out->push_back(std::move(d));
      handles.push_back(err.empty() ? h : nullptr);
    }
    Groups(handles, out);
    return "";
  }

  // Device groups from the topology: GPUs whose common ancestor is at most kTopologyGroupLevel
  // are joined (transitively). Any failed call (Not Supported on most consumer boards) leaves
  // every group unknown: a partial answer would read a missing link as "not connected".
  void Groups(const std::vector<nvmlDevice_t>& handles, std::vector<RawDevice>* out) {
    if (!topology_ || handles.size() > 1024) return;
    size_t n = handles.size();
    std::vector<size_t> root(n);
    for (size_t i = 0; i < n; i++) root[i] = i;
    auto find = [&](size_t i) { while (root[i] != i) i = root[i] = root[root[i]]; return i; };
    for (size_t i = 0; i < n; i++) {
      if (!handles[i]) continue;
      for (size_t j = i + 1; j < n; j++) {
        if (!handles[j]) continue;
        int level = -1;
        Enter(api_.topology);
        if (topology_(handles[i], handles[j], &level) != kSuccess || level < 0) return;
        if (level <= kTopologyGroupLevel) root[find(j)] = find(i);
      }
    }
    // Number the groups 0, 1, … in the order of their first device.
    std::vector<int64_t> number(n, -1);
    int64_t next = 0;
    for (size_t i = 0; i < n; i++) {
      if (!handles[i]) continue;
      size_t r = find(i);
      if (number[r] < 0) number[r] = next++;
      (*out)[out->size() - n + i].group = number[r];
    }
  }

  // The device's node from its minor number. A failure is not the device's failure: isolation
  // then has no node to deny for it (docs/behaviour.md §24.8), and discovery goes on.
  void Nodes(nvmlDevice_t h, std::vector<std::string>* nodes) {
    if (!minor_) return;
    unsigned int minor = 0;
    Enter(api_.minor);
    if (minor_(h, &minor) != kSuccess || minor > 1u << 20) return;
    nodes->push_back(std::string(api_.node_prefix) + std::to_string(minor));
  }

  // The device's PCI address ("%04x:%02x:%02x.0", as sysfs names it; NVML's function is always 0).
  // Optional like the nodes: a failure leaves it unknown, never the device's error.
  std::string Pci(nvmlDevice_t h) {
    if (!pci_info_) return "";
    PciInfo info{};
    Enter(pci_info_name_);
    if (pci_info_(h, &info) != kSuccess || info.bus > 0xff || info.device > 0x1f) return "";
    char bdf[32];
    std::snprintf(bdf, sizeof bdf, "%04x:%02x:%02x.0", info.domain, info.bus, info.device);
    return bdf;
  }

  // Utilisation and memory in use for samples. Optional: a failed or absurd answer is simply not
  // reported, never the device's error (its status comes from the queries above).
  void Readings(nvmlDevice_t h, ProbeRow* r) {
    if (utilization_) {
      Utilization u{};
      Enter(api_.utilization);
      if (utilization_(h, &u) == kSuccess && u.gpu <= 100) r->utilization = u.gpu;
    }
    if (memory_) {
      MemoryInfo m{};
      Enter(api_.memory);
      if (memory_(h, &m) == kSuccess && m.used <= m.total && m.total > 0) {
        r->memory_used = static_cast<int64_t>(m.used);
        r->memory_total = static_cast<int64_t>(m.total);
        r->memory_free = static_cast<int64_t>(m.free <= m.total ? m.free : m.total - m.used);
      }
    }
  }

  void Probe(const std::vector<uint32_t>& ids, std::vector<ProbeRow>* out) override {
    for (uint32_t id : ids) {
      ProbeRow r;
      r.id = id;
      nvmlDevice_t h = nullptr;
      r.error = Handle(id, &h);
      if (r.error.empty()) {
        r.error = ReadString(uuid_, api_.uuid, h, kUuidBufferSize, &r.uuid);
        r.has_uuid = r.error.empty();
      }
      if (r.error.empty()) {
        r.error = Processes(h, &r.processes);
        r.has_processes = r.error.empty();
      }
      if (r.error.empty()) Readings(h, &r);
      out->push_back(std::move(r));
    }
  }

  void Shutdown() override {
    Enter(api_.shutdown);
    shutdown_();
  }

 private:
  // "<call>: <…ErrorString> (<code>)", e.g. "nvmlDeviceGetUUID: GPU is lost (15)".
  std::string Error(const char* call, nvmlReturn_t rc) {
    Enter(api_.error_string);
    const char* text = error_string_ ? error_string_(rc) : nullptr;
    return std::string(call) + ": " + (text && *text ? text : "error") + " (" + std::to_string(rc) + ")";
  }

  std::string Handle(unsigned int index, nvmlDevice_t* h) {
    Enter(api_.handle_call);
    nvmlReturn_t rc = by_index_(index, h);
    if (rc != kSuccess) return Error(api_.handle_call, rc);
    if (!*h) return std::string(api_.handle_call) + ": invalid answer (null handle)";
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
    const char* call = api_.processes_call;
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

  const NvmlShapedApi& api_;
  bool preloaded_ = false;
  InitFn init_ = nullptr;
  InitFlagsFn init_flags_ = nullptr;
  const char* init_name_ = nullptr;
  ShutdownFn shutdown_ = nullptr;
  ErrorStringFn error_string_ = nullptr;
  CountFn count_ = nullptr;
  HandleByIndexFn by_index_ = nullptr;
  StringFn uuid_ = nullptr;
  StringFn name_ = nullptr;
  ProcessesFn processes_ = nullptr;
  TopologyFn topology_ = nullptr;
  MinorFn minor_ = nullptr;
  UtilizationFn utilization_ = nullptr;
  MemoryFn memory_ = nullptr;
  PciInfoFn pci_info_ = nullptr;
  const char* pci_info_name_ = nullptr;
  std::vector<size_t> strides_;
};

}  // namespace

std::unique_ptr<Vendor> MakeNvmlShaped(const NvmlShapedApi& api) { return std::make_unique<NvmlShaped>(api); }

}  // namespace xlurm::dev
