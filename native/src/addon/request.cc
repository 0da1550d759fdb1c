// A one-shot request over a Unix stream socket without node:net (the clients' common path; see
// docs/performance.md, Client start-up: loading net and its streams stack was a large part of a
// command's start-up):
//   unixConnect(path)                        -> fd: socket(AF_UNIX, SOCK_STREAM, nonblocking,
//                                               close-on-exec) and connect(2); throws a Node-style
//                                               system error (ENOENT, ECONNREFUSED, EAGAIN: the
//                                               listener's backlog is full, as libuv reports it)
//   unixExchange(fd, frame, idleMs, onEvent) -> handle; takes the descriptor over, writes `frame`
//                                               and reports, from the event loop:
//                                               onEvent(0, bytes) for what was read,
//                                               onEvent(1) at end of file (or a reset),
//                                               onEvent(2, -errno) for another read error,
//                                               onEvent(3) after idleMs without progress
//   unixClose(handle)                           stops and closes (idempotent)
// The caller checks the peer (SO_PEERCRED, peerCred) between connect and exchange, so nothing is
// written to a socket it does not trust. The exchange is driven by a uv_poll_t on Node's own loop,
// not a blocking call: a process that also serves the socket (the CLI's unit tests, whose fake
// daemon runs in the test process) keeps answering meanwhile. The handles keep the loop alive,
// as a socket does. A write error (EPIPE: the daemon closed after answering BUSY) stops writing
// only: what the peer sent before closing is still read and reported.
#include "addon.h"

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace xlurm {

namespace {

constexpr size_t kReadChunk = 64 * 1024;

struct Exchange {
  napi_env env = nullptr;
  int fd = -1;
  uv_poll_t poll;
  uv_timer_t timer;
  bool open = false;
  // Two owners: the two uv handles (until both close callbacks ran) and the External given to
  // JS (until it is garbage collected); the last one frees it.
  int refs = 2;
  int handles = 2;  // uv handles not yet closed
  std::string out;  // what is still to be written
  size_t written = 0;
  uint64_t idle_ms = 0;
  Napi::FunctionReference callback;
  napi_async_context context = nullptr;
  napi_async_cleanup_hook_handle cleanup = nullptr;
};

void Unref(Exchange* x) {
  if (--x->refs == 0) delete x;
}

void OnClosed(uv_handle_t* handle) {
  auto* x = static_cast<Exchange*>(handle->data);
  if (--x->handles > 0) return;
  x->callback.Reset();
  if (x->context) napi_async_destroy(x->env, x->context);
  x->context = nullptr;
  // At environment teardown this also tells Node that our cleanup hook is done.
  if (x->cleanup) napi_remove_async_cleanup_hook(x->cleanup);
  x->cleanup = nullptr;
  Unref(x);
}

// uv_close first (epoll_ctl DEL), then close the descriptor (see launcher.cc).
void Close(Exchange* x) {
  if (!x->open) return;
  x->open = false;
  uv_close(reinterpret_cast<uv_handle_t*>(&x->poll), OnClosed);
  uv_close(reinterpret_cast<uv_handle_t*>(&x->timer), OnClosed);
  if (x->fd >= 0) close(x->fd);
  x->fd = -1;
}

// As launcher.cc's Deliver: a throw in the callback becomes an uncaught exception.
void Deliver(Exchange* x, int kind, napi_value value) {
  napi_env env = x->env;
  napi_value args[2];
  args[0] = Napi::Number::New(env, kind);
  args[1] = value ? value : Napi::Env(env).Undefined();
  napi_value result;
  napi_status st = napi_make_callback(env, x->context, Napi::Env(env).Global(), x->callback.Value(), 2, args, &result);
  if (st == napi_pending_exception) {
    napi_value error;
    if (napi_get_and_clear_last_exception(env, &error) == napi_ok) napi_fatal_exception(env, error);
  }
}

void OnIdle(uv_timer_t* timer) {
  auto* x = static_cast<Exchange*>(timer->data);
  if (!x->open) return;
  Napi::HandleScope scope(x->env);
  Deliver(x, 3, nullptr);
}

void Progress(Exchange* x) { uv_timer_again(&x->timer); }

void OnEvents(uv_poll_t* poll, int status, int events);

int Wanted(const Exchange* x) { return UV_READABLE | (x->written < x->out.size() ? UV_WRITABLE : 0); }

// Write what the socket takes now (all of it, or until it is full or writing failed).
void WriteSome(Exchange* x) {
  while (x->written < x->out.size()) {
    ssize_t n = send(x->fd, x->out.data() + x->written, x->out.size() - x->written, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n < 0) {  // EPIPE, ECONNRESET: stop writing; reading reports how it ended
      x->out.clear();
      x->written = 0;
      return;
    }
    x->written += static_cast<size_t>(n);
    Progress(x);
  }
  x->out.clear();
  x->written = 0;
}

void OnEvents(uv_poll_t* poll, int status, int events) {
  auto* x = static_cast<Exchange*>(poll->data);
  if (!x->open) return;
  Napi::HandleScope scope(x->env);
  // libuv reports a socket error (EPOLLERR: the peer closed with our bytes unread, a reset) as
  // UV_EBADF and stops the watch: what the peer sent before is still queued, so read anyway;
  // recv then returns those bytes first and the error after them.
  if (status < 0) events = UV_READABLE;
  if (events & UV_WRITABLE) WriteSome(x);
  if (events & (UV_READABLE | UV_DISCONNECT)) {
    // What is there now; a callback may close the exchange, which ends the loop.
    while (x->open) {
      char buf[kReadChunk];
      ssize_t n = recv(x->fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (n == 0 || (n < 0 && errno == ECONNRESET)) {
        Deliver(x, 1, nullptr);
        if (x->open) uv_poll_stop(&x->poll);  // nothing more will come
        return;
      }
      if (n < 0) {
        Deliver(x, 2, Napi::Number::New(x->env, -errno));
        if (x->open) uv_poll_stop(&x->poll);
        return;
      }
      Progress(x);
      Deliver(x, 0, Napi::Buffer<char>::Copy(x->env, buf, static_cast<size_t>(n)));
      if (static_cast<size_t>(n) < sizeof buf) break;
    }
  }
  if (x->open) uv_poll_start(&x->poll, Wanted(x), OnEvents);
}

void OnEnvCleanup(napi_async_cleanup_hook_handle /*handle*/, void* arg) {
  Close(static_cast<Exchange*>(arg));
}

Napi::Value UnixConnect(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string path;
  if (!ArgString(info, 0, "unixConnect(path)", &path)) return env.Undefined();
  struct sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path || path.find('\0') != std::string::npos) {
    ThrowErrno(env, path.empty() ? ENOENT : ENAMETOOLONG, "connect");
    return env.Undefined();
  }
  memcpy(addr.sun_path, path.data(), path.size());
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    ThrowErrno(env, errno, "socket");
    return env.Undefined();
  }
  // A Unix socket connects at once or fails (EAGAIN: backlog full); an interrupted connect
  // carries on in the kernel, so EINTR means "in progress", like EINPROGRESS: both are settled
  // here by waiting for writability.
  if (connect(fd, reinterpret_cast<struct sockaddr*>(&addr), sizeof addr) != 0) {
    int err = errno;
    if (err == EINTR || err == EINPROGRESS) {
      err = 0;
      socklen_t len = sizeof err;
      // Settled by the time SO_ERROR is read back for Unix sockets; a pending state reads 0.
      if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    }
    if (err != 0) {
      close(fd);
      ThrowErrno(env, err, "connect");
      return env.Undefined();
    }
  }
  return Napi::Number::New(env, fd);
}

Napi::Value UnixExchange(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "unixExchange(fd, frame, idleMs, onEvent)";
  int fd;
  uint32_t idle;
  if (!ArgFd(info, 0, usage, &fd)) return env.Undefined();
  if (info.Length() < 4 || !info[1].IsBuffer() || !info[3].IsFunction() || !ArgU32(info, 2, usage, &idle) || idle == 0) {
    Napi::TypeError::New(env, std::string("Usage: ") + usage).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  uv_loop_t* loop = nullptr;
  if (napi_get_uv_event_loop(env, &loop) != napi_ok || !loop) {
    Napi::Error::New(env, "unixExchange: no event loop").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  Napi::Buffer<char> frame = info[1].As<Napi::Buffer<char>>();
  auto* x = new Exchange;
  x->env = env;
  x->fd = fd;
  x->out.assign(frame.Data(), frame.Length());
  x->idle_ms = idle;
  if (uv_poll_init(loop, &x->poll, fd) != 0) {
    delete x;  // nothing else knows it yet; the caller keeps its descriptor
    ThrowErrno(env, EINVAL, "uv_poll_init");
    return env.Undefined();
  }
  x->poll.data = x;
  uv_timer_init(loop, &x->timer);
  x->timer.data = x;
  x->open = true;
  x->callback = Napi::Persistent(info[3].As<Napi::Function>());
  napi_value name = Napi::String::New(env, "xlurm.request");
  if (napi_async_init(env, nullptr, name, &x->context) != napi_ok) x->context = nullptr;
  if (napi_add_async_cleanup_hook(env, OnEnvCleanup, x, &x->cleanup) != napi_ok) x->cleanup = nullptr;
  uv_update_time(loop);  // the deadline counts from now, not from the loop's last wake-up
  uv_timer_start(&x->timer, OnIdle, x->idle_ms, x->idle_ms);
  // Most frames fit in the socket's buffer and are written here; the rest when it drains.
  WriteSome(x);
  int err = uv_poll_start(&x->poll, Wanted(x), OnEvents);
  if (err != 0) {
    x->refs = 1;   // no External will be made
    x->fd = -1;    // on failure the caller keeps its descriptor
    Close(x);
    ThrowErrno(env, -err, "uv_poll_start");
    return env.Undefined();
  }
  return Napi::External<Exchange>::New(env, x, [](Napi::Env, Exchange* dropped) { Unref(dropped); });
}

Napi::Value UnixClose(const Napi::CallbackInfo& info) {
  if (info.Length() >= 1 && info[0].IsExternal()) {
    auto* x = info[0].As<Napi::External<Exchange>>().Data();
    if (x && x->open) Close(x);
  }
  return info.Env().Undefined();
}

}  // namespace

void InitRequest(Napi::Env env, Napi::Object exports) {
  exports.Set("unixConnect", Napi::Function::New(env, UnixConnect, "unixConnect"));
  exports.Set("unixExchange", Napi::Function::New(env, UnixExchange, "unixExchange"));
  exports.Set("unixClose", Napi::Function::New(env, UnixClose, "unixClose"));
}

}  // namespace xlurm
