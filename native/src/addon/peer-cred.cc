// peerCred(fd): the credentials of the process at the other end of a connected Unix socket.
#include "addon.h"

#include <sys/socket.h>
#include <sys/types.h>

#include <cerrno>

namespace xlurm {

namespace {

// SO_PEERCRED (socket(7), unix(7)) reports the pid/uid/gid the peer had when it called
// connect(2) (or socketpair(2)): the kernel's word, which no request field can override. As in
// systemd's getpeercred(), a short answer (optlen) is EIO and a missing pid (0: the peer is
// in another pid namespace or the credentials were never set) is ENODATA, so callers never
// authorise on a zeroed struct.
Napi::Value PeerCred(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd;
  if (!ArgFd(info, 0, "peerCred(fd)", &fd)) return env.Undefined();

  struct ucred cred = {};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    ThrowErrno(env, errno, "getsockopt");
    return env.Undefined();
  }
  if (len != sizeof cred) {
    ThrowErrno(env, EIO, "getsockopt");
    return env.Undefined();
  }
  if (cred.pid <= 0) {
    ThrowErrno(env, ENODATA, "getsockopt");
    return env.Undefined();
  }

  Napi::Object out = Napi::Object::New(env);
  out.Set("pid", Napi::Number::New(env, cred.pid));
  out.Set("uid", Napi::Number::New(env, cred.uid));
  out.Set("gid", Napi::Number::New(env, cred.gid));
  return out;
}

}  // namespace

void InitPeerCred(Napi::Env env, Napi::Object exports) {
  exports.Set("peerCred", Napi::Function::New(env, PeerCred, "peerCred"));
}

}  // namespace xlurm
