// Huawei Ascend DCMI (libdcmi.so) behind the Vendor interface. No vendor headers: the functions
// and structs used are declared here from docs/driver-apis.md §2, §8, §9.
//
// Two APIs (§2.1). v2 (`dcmiv2_*`, devices addressed by logical id) is used only when the library
// exports its symbols AND dcmiv2_init returns 0: one libdcmi.so build serves every board, and on
// anything but an Ascend 950 the v2 symbols exist but refuse (DCMI_ERR_CODE_NOT_SUPPORT).
// Otherwise the classic API (`dcmi_*`, devices addressed by (card id, chip index)).
//
//   Init      v2: dcmiv2_init; classic: dcmi_init (the v2 refusal is kept for error texts)
//   Discover  v2: dcmiv2_get_device_list (logical ids), per id dcmiv2_get_device_type (NPUs only),
//             dcmiv2_get_slot_id_and_chip_id_by_dev_id, dcmiv2_get_device_chip_info.
//             classic: dcmi_get_card_list, per card dcmi_get_device_num_in_card, per chip
//             dcmi_get_device_type (NPUs only), dcmi_get_device_logic_id, dcmi_get_device_chip_info.
//             One device per compute chip; id = logical id, uuid (visible) = the logical id as
//             text, npu = card (v2: slot) id, chip = chip index; sorted by id. A chip whose
//             logical id cannot be read stops discovery (no guessing: ASCEND_RT_VISIBLE_DEVICES
//             takes logical ids).
//   Probe     per id: identity (classic: the chip's logical id, read again; v2: its slot and chip),
//             health (0/1 ok, 2/3 unhealthy, anything else invalid), and, unless unhealthy, the
//             processes (a buffer of 128 rows: the call has no capacity argument and fills up to
//             64; one retry, as the call fails when a listed process exits meanwhile).
//             Then, when exported, dcmi[v2]_get_device_hbm_info (memory) and
//             dcmi[v2]_get_device_utilization_rate (AI Core), for samples and card sharing.
//             (At discovery, when exported, dcmi[v2]_get_topo_info_by_device_id per pair: device
//             groups.)
//   Shutdown  nothing: DCMI has no deinit (§2.1); the library stays loaded.
#include "device.h"

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace xlurm::dev {

namespace {

constexpr int kOk = 0;
constexpr int kNpuType = 0;             // enum dcmi_unit_type NPU_TYPE
constexpr int kMaxCards = 64;           // MAX_CARD_NUM
constexpr int kMaxChipsPerCard = 64;
constexpr int kMaxDevices = 64;         // dcmiv2_get_device_list's maximum
constexpr int kProcRows = 128;          // the driver writes up to MAX_PROC_NUM_IN_DEVICE = 64
constexpr uint32_t kPidCeiling = 1u << 22;
constexpr unsigned kHealthNoDevice = 0xFFFFFFFFu;

struct ChipInfo {  // struct dcmi_chip_info
  unsigned char chip_type[32];
  unsigned char chip_name[32];
  unsigned char chip_ver[32];
  unsigned int aicore_cnt;
};
struct ChipInfoV2 {  // struct dcmi_chip_info_v2
  unsigned char chip_type[32];
  unsigned char chip_name[32];
  unsigned char chip_ver[32];
  unsigned int aicore_cnt;
  unsigned char npu_name[32];
};
struct ProcMemInfo {  // struct dcmi_proc_mem_info
  int proc_id;
  unsigned long proc_mem_usage;
};
static_assert(sizeof(ChipInfo) == 100, "dcmi_chip_info is 100 bytes");
static_assert(sizeof(ChipInfoV2) == 132, "dcmi_chip_info_v2 is 132 bytes");
static_assert(sizeof(ProcMemInfo) == 16, "dcmi_proc_mem_info is 16 bytes on LP64");
static_assert(sizeof(int) == 4, "enum dcmi_unit_type is int-sized");

using InitFn = int (*)();
using CardListFn = int (*)(int* card_num, int* card_list, int list_len);
using NumInCardFn = int (*)(int card_id, int* device_num);
using TypeFn = int (*)(int card_id, int device_id, int* type);
using LogicIdFn = int (*)(int* logic_id, int card_id, int device_id);
using ChipInfoFn = int (*)(int card_id, int device_id, ChipInfo* info);
using HealthFn = int (*)(int card_id, int device_id, unsigned int* health);
using ProcsFn = int (*)(int card_id, int device_id, ProcMemInfo* rows, int* num);
using V2ListFn = int (*)(int* device_list, int* device_cnt, int list_len);
using V2TypeFn = int (*)(int dev_id, int* type);
using V2ChipInfoFn = int (*)(int dev_id, ChipInfoV2* info);
using V2SlotChipFn = int (*)(int dev_id, unsigned int* slot_id, unsigned int* chip_id);
using V2HealthFn = int (*)(int dev_id, unsigned int* health);
using V2ProcsFn = int (*)(int dev_id, ProcMemInfo* rows, int* num);
using TopoFn = int (*)(int card1, int dev1, int card2, int dev2, int* topo_type);
using V2TopoFn = int (*)(int id1, int id2, int* topo_type);
using PhyIdFn = int (*)(unsigned int logicid, unsigned int* phyid);  // dcmi_get_device_phyid_from_logicid
// struct dcmi_hbm_info: memory_size and memory_usage in MB (32 B, memory_usage at offset 16).
struct HbmInfo { unsigned long long memory_size; unsigned int freq; unsigned long long memory_usage; int temp; unsigned int bandwidth_util_rate; };
static_assert(sizeof(HbmInfo) == 32 && offsetof(HbmInfo, memory_usage) == 16, "dcmi_hbm_info layout");
using HbmFn = int (*)(int card_id, int device_id, HbmInfo* info);
using V2HbmFn = int (*)(int dev_id, HbmInfo* info);
// dcmi[v2]_get_device_utilization_rate: percent of the unit named by input_type (§2.7).
using UtilFn = int (*)(int card_id, int device_id, int input_type, unsigned int* rate);
using V2UtilFn = int (*)(int dev_id, int input_type, unsigned int* rate);
// The unit whose utilisation a sample records: AI Core (DCMI_UTILIZATION_RATE_*: 2), the compute
// units, what `npu-smi info` shows as AICore(%), supported on 910B and 310P alike (13, "NPU
// overall", is not on every board). It reads 0 while profiling runs (§2.7).
constexpr int kUtilizationAiCore = 2;

// dcmi[v2]_get_topo_info_by_device_id's answers (docs/driver-apis.md §2.8) that put two chips in
// one device group (docs/behaviour.md §21.5): HCCS 3, SIO 6 (the two dies of one package),
// HCCS_SW 7. SYS 1, PHB 2, PXB 4, PIX 5 are PCIe paths; UB 8 and BUTT 9 are not joined.
bool TopoJoins(int type) { return type == 3 || type == 6 || type == 7; }

// DCMI has no error-string function (§2.2): the return codes' meanings.
const char* ErrorText(int rc) {
  switch (rc) {
    case -8001: return "invalid parameter";
    case -8002: return "operation not permitted";
    case -8003: return "memory operation failed";
    case -8004: return "secure function failed";
    case -8005: return "inner error";
    case -8006: return "timed out";
    case -8007: return "invalid device id";
    case -8008: return "device does not exist";
    case -8009: return "ioctl failed";
    case -8010: return "send message failed";
    case -8011: return "receive message failed";
    case -8012: return "not ready";
    case -8013: return "not supported in a container";
    case -8014: return "file operation failed";
    case -8015: return "reset failed";
    case -8016: return "operation aborted";
    case -8017: return "upgrading";
    case -8020: return "resource occupied";
    case -8022: return "partition not right";
    case -8023: return "configuration does not exist";
    case -8255: return "not supported";
    default: return "error";
  }
}

// "<call>: <text> (<code>)", e.g. "dcmi_get_device_health: invalid device id (-8007)".
std::string Error(const char* call, int rc) {
  return std::string(call) + ": " + ErrorText(rc) + " (" + std::to_string(rc) + ")";
}

std::string Invalid(const char* call, const std::string& what) {
  return std::string(call) + ": invalid answer (" + what + ")";
}

// A fixed-size, possibly unterminated text field of a DCMI struct, without trailing blanks.
std::string DcmiText(const unsigned char* field, size_t size) {
  size_t n = 0;
  while (n < size && field[n] != 0) n++;
  std::string s(reinterpret_cast<const char*>(field), n);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
  return s;
}

// The device name from chip_type and chip_name ("Ascend" + "910B3" → "Ascend 910B3", as
// `npu-smi info -m` shows it).
std::string DcmiName(const unsigned char* type, const unsigned char* name) {
  std::string t = DcmiText(type, 32), n = DcmiText(name, 32);
  if (t.empty() || n.empty()) return t + n;
  return t + " " + n;
}

// dcmi[v2]_get_device_health's value (§2.5): 0 healthy, 1 minor alarm (still usable), 2 major
// and 3 critical alarm → unhealthy. 0xFFFFFFFF (the device does not exist) and any other value
// are not a health: the answer is reported as an error (the device is then unknown).
std::string DcmiHealth(const char* call, unsigned value, Health* health) {
  if (value == 0 || value == 1) *health = Health::kOk;
  else if (value == 2 || value == 3) *health = Health::kUnhealthy;
  else if (value == kHealthNoDevice) return std::string(call) + ": the device does not exist (health 0xFFFFFFFF)";
  else return Invalid(call, "health " + std::to_string(value));
  return "";
}

// Validate and decode a process answer: 0 ≤ n ≤ capacity and every PID in [1, 2^22).
std::string DcmiProcesses(const char* call, const ProcMemInfo* rows, int n, int capacity, std::vector<uint32_t>* pids) {
  if (n < 0 || n > capacity) return Invalid(call, std::to_string(n) + " processes");
  std::vector<uint32_t> out;
  for (int i = 0; i < n; i++) {
    int pid = rows[i].proc_id;
    if (pid <= 0 || static_cast<uint32_t>(pid) >= kPidCeiling) return Invalid(call, "process id " + std::to_string(pid));
    out.push_back(static_cast<uint32_t>(pid));
  }
  *pids = std::move(out);
  return "";
}

// Where a discovered chip is (classic calls address it by card and chip index).
struct Location {
  int card = -1;
  int chip = -1;
};

class Dcmi : public Vendor {
 public:
  std::string Init(void* lib, const std::string& path) override {
    auto sym = [&](std::initializer_list<const char*> names) { return FindSymbol(lib, names); };
    // v2, only if every symbol it needs is there and dcmiv2_init accepts (a 950 board).
    auto v2_init = reinterpret_cast<InitFn>(sym({"dcmiv2_init"}));
    v2_list_ = reinterpret_cast<V2ListFn>(sym({"dcmiv2_get_device_list"}));
    v2_health_ = reinterpret_cast<V2HealthFn>(sym({"dcmiv2_get_device_health"}));
    v2_procs_ = reinterpret_cast<V2ProcsFn>(sym({"dcmiv2_get_device_proc_mem_info"}));
    v2_type_ = reinterpret_cast<V2TypeFn>(sym({"dcmiv2_get_device_type"}));
    v2_chip_info_ = reinterpret_cast<V2ChipInfoFn>(sym({"dcmiv2_get_device_chip_info"}));
    v2_slot_chip_ = reinterpret_cast<V2SlotChipFn>(sym({"dcmiv2_get_slot_id_and_chip_id_by_dev_id"}));
    topo_ = reinterpret_cast<TopoFn>(sym({"dcmi_get_topo_info_by_device_id"}));
    v2_topo_ = reinterpret_cast<V2TopoFn>(sym({"dcmiv2_get_topo_info_by_device_id"}));
    phyid_ = reinterpret_cast<PhyIdFn>(sym({"dcmi_get_device_phyid_from_logicid"}));
    hbm_ = reinterpret_cast<HbmFn>(sym({"dcmi_get_device_hbm_info"}));
    v2_hbm_ = reinterpret_cast<V2HbmFn>(sym({"dcmiv2_get_device_hbm_info"}));
    util_ = reinterpret_cast<UtilFn>(sym({"dcmi_get_device_utilization_rate"}));
    v2_util_ = reinterpret_cast<V2UtilFn>(sym({"dcmiv2_get_device_utilization_rate"}));
    if (v2_init && v2_list_ && v2_health_ && v2_procs_) {
      Enter("dcmiv2_init");
      int rc = v2_init();
      if (rc == kOk) {
        v2_ = true;
        return "";
      }
      v2_refusal_ = Error("dcmiv2_init", rc);
    }

    const char* missing = nullptr;
    auto need = [&](std::initializer_list<const char*> names) {
      void* p = FindSymbol(lib, names);
      if (!p && !missing) missing = *names.begin();
      return p;
    };
    auto init = reinterpret_cast<InitFn>(need({"dcmi_init"}));
    card_list_ = reinterpret_cast<CardListFn>(need({"dcmi_get_card_list", "dcmi_get_card_num_list"}));
    num_in_card_ = reinterpret_cast<NumInCardFn>(need({"dcmi_get_device_num_in_card"}));
    logic_id_ = reinterpret_cast<LogicIdFn>(need({"dcmi_get_device_logic_id"}));
    health_ = reinterpret_cast<HealthFn>(need({"dcmi_get_device_health"}));
    procs_ = reinterpret_cast<ProcsFn>(need({"dcmi_get_device_resource_info"}));
    type_ = reinterpret_cast<TypeFn>(sym({"dcmi_get_device_type"}));
    chip_info_ = reinterpret_cast<ChipInfoFn>(sym({"dcmi_get_device_chip_info"}));
    // A classic failure, followed by why v2 was not used (if it was tried).
    auto failed = [&](const std::string& why) { return v2_refusal_.empty() ? why : why + "; " + v2_refusal_; };
    if (missing) return failed(path + " does not export " + missing + " (not a DCMI library?)");
    Enter("dcmi_init");
    int rc = init();
    if (rc != kOk) return failed(Error("dcmi_init", rc));
    return "";
  }

  std::string Discover(std::vector<RawDevice>* out) override {
    std::vector<RawDevice> found;
    std::string err = v2_ ? DiscoverV2(&found) : DiscoverClassic(&found);
    if (!err.empty()) return err;
    std::stable_sort(found.begin(), found.end(), [](const RawDevice& a, const RawDevice& b) { return a.id < b.id; });
    for (const RawDevice& d : found) where_[d.id] = Location{static_cast<int>(d.npu), static_cast<int>(d.chip)};
    Nodes(&found);
    Groups(&found);
    *out = std::move(found);
    return "";
  }

  void Probe(const std::vector<uint32_t>& ids, std::vector<ProbeRow>* out) override {
    for (uint32_t id : ids) {
      ProbeRow r;
      r.id = id;
      auto it = where_.find(id);
      if (it == where_.end()) {
        r.error = "logical id " + std::to_string(id) + " was not discovered";
      } else {
        r.error = v2_ ? ProbeV2(id, it->second, &r) : ProbeClassic(it->second, &r);
      }
      out->push_back(std::move(r));
    }
  }

  void Shutdown() override {}  // no deinit in either API; the library is never unloaded

  // Each chip's node /dev/davinci<physical id> (docs/driver-apis.md §2), for device isolation
  // (docs/behaviour.md §24.8). Without dcmi_get_device_phyid_from_logicid, or when it fails, the
  // chip's nodes stay unknown: logical and physical ids differ inside containers, never guess.
  // Classic API only: v2 boards are never sent a classic call (dcmi_init was not made).
  void Nodes(std::vector<RawDevice>* devs) {
    if (!phyid_ || v2_) return;
    for (RawDevice& d : *devs) {
      if (!d.error.empty()) continue;
      unsigned int phy = 0;
      Enter("dcmi_get_device_phyid_from_logicid");
      if (phyid_(d.id, &phy) != kOk || phy >= static_cast<unsigned>(kMaxCards * kMaxChipsPerCard)) continue;
      d.nodes.push_back("/dev/davinci" + std::to_string(phy));
    }
  }

  // Device groups from the topology: chips joined (transitively) by HCCS, SIO or an HCCS switch.
  // Any failed call (e.g. NOT_SUPPORT) leaves every group unknown.
  void Groups(std::vector<RawDevice>* devs) {
    size_t n = devs->size();
    if ((v2_ ? !v2_topo_ : !topo_) || n > 1024) return;
    std::vector<size_t> root(n);
    for (size_t i = 0; i < n; i++) root[i] = i;
    auto find = [&](size_t i) { while (root[i] != i) i = root[i] = root[root[i]]; return i; };
    auto ok = [&](size_t i) { return (*devs)[i].error.empty(); };
    for (size_t i = 0; i < n; i++) {
      if (!ok(i)) continue;
      for (size_t j = i + 1; j < n; j++) {
        if (!ok(j)) continue;
        const RawDevice& a = (*devs)[i];
        const RawDevice& b = (*devs)[j];
        int type = -1;
        int rc;
        if (v2_) {
          Enter("dcmiv2_get_topo_info_by_device_id");
          rc = v2_topo_(static_cast<int>(a.id), static_cast<int>(b.id), &type);
        } else {
          Enter("dcmi_get_topo_info_by_device_id");
          rc = topo_(static_cast<int>(a.npu), static_cast<int>(a.chip), static_cast<int>(b.npu), static_cast<int>(b.chip), &type);
        }
        if (rc != kOk || type < 0) return;
        if (TopoJoins(type)) root[find(j)] = find(i);
      }
    }
    std::vector<int64_t> number(n, -1);
    int64_t next = 0;
    for (size_t i = 0; i < n; i++) {
      if (!ok(i)) continue;
      size_t r = find(i);
      if (number[r] < 0) number[r] = next++;
      (*devs)[i].group = number[r];
    }
  }

 private:
  // ----- classic ---------------------------------------------------------------------------

  std::string DiscoverClassic(std::vector<RawDevice>* out) {
    int cards[kMaxCards] = {};
    int ncards = -1;
    Enter("dcmi_get_card_list");
    int rc = card_list_(&ncards, cards, kMaxCards);
    if (rc != kOk) return Error("dcmi_get_card_list", rc);
    if (ncards < 0 || ncards > kMaxCards) return Invalid("dcmi_get_card_list", std::to_string(ncards) + " cards");
    for (int c = 0; c < ncards; c++) {
      int card = cards[c];
      int nchips = -1;
      Enter("dcmi_get_device_num_in_card");
      rc = num_in_card_(card, &nchips);
      if (rc != kOk) return "card " + std::to_string(card) + ": " + Error("dcmi_get_device_num_in_card", rc);
      if (nchips < 0 || nchips > kMaxChipsPerCard)
        return "card " + std::to_string(card) + ": " + Invalid("dcmi_get_device_num_in_card", std::to_string(nchips) + " chips");
      for (int chip = 0; chip < nchips; chip++) {
        std::string where = "card " + std::to_string(card) + " chip " + std::to_string(chip) + ": ";
        if (type_) {
          int type = -1;
          Enter("dcmi_get_device_type");
          rc = type_(card, chip, &type);
          if (rc != kOk) return where + Error("dcmi_get_device_type", rc);
          if (type != kNpuType) continue;  // the card's MCU or CPU
        }
        int logical = -1;
        Enter("dcmi_get_device_logic_id");
        rc = logic_id_(&logical, card, chip);
        if (rc != kOk) return where + Error("dcmi_get_device_logic_id", rc) + "; refusing to guess Ascend logical ids";
        if (logical < 0 || logical >= kMaxCards * kMaxChipsPerCard)
          return where + Invalid("dcmi_get_device_logic_id", "logical id " + std::to_string(logical));
        RawDevice d;
        d.id = static_cast<uint32_t>(logical);
        d.uuid = std::to_string(logical);
        d.npu = card;
        d.chip = chip;
        d.name = "Ascend";
        if (chip_info_) {
          ChipInfo info{};
          Enter("dcmi_get_device_chip_info");
          rc = chip_info_(card, chip, &info);
          if (rc != kOk) d.error = Error("dcmi_get_device_chip_info", rc);
          else d.name = DcmiName(info.chip_type, info.chip_name);
        }
        out->push_back(std::move(d));
      }
    }
    return "";
  }

  std::string ProbeClassic(const Location& at, ProbeRow* r) {
    int logical = -1;
    Enter("dcmi_get_device_logic_id");
    int rc = logic_id_(&logical, at.card, at.chip);
    if (rc != kOk) return Error("dcmi_get_device_logic_id", rc);
    r->uuid = std::to_string(logical);  // the daemon compares it with discovery
    r->has_uuid = true;
    unsigned value = 0;
    Enter("dcmi_get_device_health");
    rc = health_(at.card, at.chip, &value);
    if (rc != kOk) return Error("dcmi_get_device_health", rc);
    std::string err = DcmiHealth("dcmi_get_device_health", value, &r->health);
    if (!err.empty() || r->health == Health::kUnhealthy) return err;
    err = Processes("dcmi_get_device_resource_info", [&](ProcMemInfo* rows, int* n) { return procs_(at.card, at.chip, rows, n); }, r);
    if (err.empty() && hbm_) {
      HbmInfo m{};
      Enter("dcmi_get_device_hbm_info");
      if (hbm_(at.card, at.chip, &m) == kOk) Memory(m, r);
    }
    if (err.empty() && util_) {
      unsigned rate = 0;
      Enter("dcmi_get_device_utilization_rate");
      if (util_(at.card, at.chip, kUtilizationAiCore, &rate) == kOk) Utilization(rate, r);
    }
    return err;
  }

  // ----- v2 --------------------------------------------------------------------------------

  std::string DiscoverV2(std::vector<RawDevice>* out) {
    int ids[kMaxDevices] = {};
    int n = -1;
    Enter("dcmiv2_get_device_list");
    int rc = v2_list_(ids, &n, kMaxDevices);
    if (rc != kOk) return Error("dcmiv2_get_device_list", rc);
    if (n < 0 || n > kMaxDevices) return Invalid("dcmiv2_get_device_list", std::to_string(n) + " devices");
    for (int i = 0; i < n; i++) {
      int id = ids[i];
      if (id < 0 || id >= kMaxCards * kMaxChipsPerCard) return Invalid("dcmiv2_get_device_list", "logical id " + std::to_string(id));
      std::string where = "logical id " + std::to_string(id) + ": ";
      if (v2_type_) {
        int type = -1;
        Enter("dcmiv2_get_device_type");
        rc = v2_type_(id, &type);
        if (rc != kOk) return where + Error("dcmiv2_get_device_type", rc);
        if (type != kNpuType) continue;
      }
      RawDevice d;
      d.id = static_cast<uint32_t>(id);
      d.uuid = std::to_string(id);
      d.name = "Ascend";
      if (v2_slot_chip_) {
        Location at;
        d.error = SlotChip(id, &at);
        d.npu = at.card;
        d.chip = at.chip;
      }
      if (d.error.empty() && v2_chip_info_) {
        ChipInfoV2 info{};
        Enter("dcmiv2_get_device_chip_info");
        rc = v2_chip_info_(id, &info);
        if (rc != kOk) d.error = Error("dcmiv2_get_device_chip_info", rc);
        else d.name = DcmiName(info.chip_type, info.chip_name);
      }
      out->push_back(std::move(d));
    }
    return "";
  }

  std::string SlotChip(int id, Location* at) {
    unsigned slot = 0, chip = 0;
    Enter("dcmiv2_get_slot_id_and_chip_id_by_dev_id");
    int rc = v2_slot_chip_(id, &slot, &chip);
    if (rc != kOk) return Error("dcmiv2_get_slot_id_and_chip_id_by_dev_id", rc);
    if (slot > INT32_MAX || chip > INT32_MAX)
      return Invalid("dcmiv2_get_slot_id_and_chip_id_by_dev_id", "slot " + std::to_string(slot) + " chip " + std::to_string(chip));
    at->card = static_cast<int>(slot);
    at->chip = static_cast<int>(chip);
    return "";
  }

  std::string ProbeV2(uint32_t id, const Location& was, ProbeRow* r) {
    int dev = static_cast<int>(id);
    if (v2_slot_chip_) {  // the logical id still names the same chip
      Location now;
      std::string err = SlotChip(dev, &now);
      if (!err.empty()) return err;
      if (now.card != was.card || now.chip != was.chip)
        return "device identity changed since discovery: logical id " + std::to_string(id) + " was card " +
               std::to_string(was.card) + " chip " + std::to_string(was.chip) + ", is now card " +
               std::to_string(now.card) + " chip " + std::to_string(now.chip);
    }
    r->uuid = std::to_string(id);
    r->has_uuid = true;
    unsigned value = 0;
    Enter("dcmiv2_get_device_health");
    int rc = v2_health_(dev, &value);
    if (rc != kOk) return Error("dcmiv2_get_device_health", rc);
    std::string err = DcmiHealth("dcmiv2_get_device_health", value, &r->health);
    if (!err.empty() || r->health == Health::kUnhealthy) return err;
    err = Processes("dcmiv2_get_device_proc_mem_info", [&](ProcMemInfo* rows, int* n) { return v2_procs_(dev, rows, n); }, r);
    if (err.empty() && v2_hbm_) {
      HbmInfo m{};
      Enter("dcmiv2_get_device_hbm_info");
      if (v2_hbm_(dev, &m) == kOk) Memory(m, r);
    }
    if (err.empty() && v2_util_) {
      unsigned rate = 0;
      Enter("dcmiv2_get_device_utilization_rate");
      if (v2_util_(dev, kUtilizationAiCore, &rate) == kOk) Utilization(rate, r);
    }
    return err;
  }

  // ----- both ------------------------------------------------------------------------------

  // The processes on a chip through `call`. The driver lists the PIDs and then reads each one's
  // memory, failing the whole call when a process exits in between (§2.6): one retry.
  template <typename Fn>
  std::string Processes(const char* call, Fn fn, ProbeRow* r) {
    int rc = kOk;
    for (int attempt = 0; attempt < 2; attempt++) {
      std::vector<ProcMemInfo> rows(kProcRows);
      std::memset(rows.data(), 0, rows.size() * sizeof(ProcMemInfo));
      int n = -1;
      Enter(call);
      rc = fn(rows.data(), &n);
      if (rc != kOk) continue;
      std::string err = DcmiProcesses(call, rows.data(), n, kProcRows, &r->processes);
      r->has_processes = err.empty();
      return err;
    }
    return Error(call, rc);
  }

  // Device memory for card sharing (docs/behaviour.md §25.2): optional, never the device's error;
  // an absurd answer is not reported.
  static void Memory(const HbmInfo& m, ProbeRow* r) {
    if (m.memory_size == 0 || m.memory_usage > m.memory_size || m.memory_size > (1ULL << 30)) return;
    r->memory_total = static_cast<int64_t>(m.memory_size << 20);
    r->memory_used = static_cast<int64_t>(m.memory_usage << 20);
    r->memory_free = r->memory_total - r->memory_used;
  }

  // Utilisation for samples (docs/behaviour.md §26.2): optional like the memory; a figure above 100
  // is not a percentage and is not reported.
  static void Utilization(unsigned rate, ProbeRow* r) {
    if (rate <= 100) r->utilization = rate;
  }

  bool v2_ = false;
  std::string v2_refusal_;
  std::map<uint32_t, Location> where_;

  CardListFn card_list_ = nullptr;
  NumInCardFn num_in_card_ = nullptr;
  TypeFn type_ = nullptr;
  LogicIdFn logic_id_ = nullptr;
  ChipInfoFn chip_info_ = nullptr;
  HealthFn health_ = nullptr;
  ProcsFn procs_ = nullptr;

  V2ListFn v2_list_ = nullptr;
  V2TypeFn v2_type_ = nullptr;
  V2ChipInfoFn v2_chip_info_ = nullptr;
  V2SlotChipFn v2_slot_chip_ = nullptr;
  V2HealthFn v2_health_ = nullptr;
  V2ProcsFn v2_procs_ = nullptr;
  TopoFn topo_ = nullptr;
  V2TopoFn v2_topo_ = nullptr;
  PhyIdFn phyid_ = nullptr;
  HbmFn hbm_ = nullptr;
  V2HbmFn v2_hbm_ = nullptr;
  UtilFn util_ = nullptr;
  V2UtilFn v2_util_ = nullptr;
};

}  // namespace

std::unique_ptr<Vendor> MakeDcmi() { return std::make_unique<Dcmi>(); }

}  // namespace xlurm::dev
