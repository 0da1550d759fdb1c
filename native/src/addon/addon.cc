// Module entry point of xlurm_native.node: registers every syscall family's exports. Nothing
// else lives here (node-pty style).
#include "addon.h"

namespace {

using Initialiser = void (*)(Napi::Env, Napi::Object);

// Order does not matter; export names must be unique across families.
constexpr Initialiser kInitialisers[] = {
    xlurm::InitPeerCred,
    xlurm::InitFlock,
    xlurm::InitAccounts,
    xlurm::InitFd,
    xlurm::InitRlimit,
    xlurm::InitSpawn,
    xlurm::InitLauncher,
    xlurm::InitRequest,
    xlurm::InitDevices,
    xlurm::InitDeviceFilter,
    xlurm::InitSafeFs,
};

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  for (Initialiser init : kInitialisers) {
    init(env, exports);
    if (env.IsExceptionPending()) break;
  }
  return exports;
}

}  // namespace

NODE_API_MODULE(xlurm_native, Init)
