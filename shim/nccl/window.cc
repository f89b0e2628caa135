// NCCL windows (ncclCommWindowRegister, NCCL 2.27+) emulated by ordinary buffer registration:
// MCCL has no symmetric memory, but a window is also an ordinary buffer that collectives read and
// write, and registering it with mcclCommRegister gives those collectives the same results. What
// a window adds beyond that (peer and multimem device pointers, one-sided put/signal) is refused
// by its own rows in symbols/nccl.txt. The window handle is torchada's: the registration, the
// buffer and its communicator, valid until ncclCommWindowDeregister.
#include <mutex>
#include <unordered_set>

#include "gen/nccl2_impl.h"
#include "nccl/nccl.h"

#include "core/policy.h"

namespace torchada {
inline namespace TORCHADA_ABI_NS {
namespace {

struct Window {
  ncclComm_t comm;
  void* handle;  // mcclCommRegister's
  void* buff;
  size_t size;
};

// Live windows: a handle NCCL did not give out (or gave out and took back) is rejected, not read.
struct Windows {
  std::mutex mu;
  std::unordered_set<Window*> live;
};
Windows& windows() {
  static Windows* w = new Windows;  // never destroyed: calls may come after static destructors
  return *w;
}

Window* find(ncclWindow_t win, ncclComm_t comm, bool take) {
  Windows& w = windows();
  std::lock_guard<std::mutex> lock(w.mu);
  auto it = w.live.find(reinterpret_cast<Window*>(win));
  if (it == w.live.end() || (*it)->comm != comm) return nullptr;
  Window* found = *it;
  if (take) w.live.erase(it);
  return found;
}

ncclResult_t invalid(Fn id, const char* what) {
  TORCHADA_LOG(kWarn, "%s: %s: ncclInvalidArgument", kFnNames[static_cast<int>(id)], what);
  note_error(id);
  return ncclInvalidArgument;
}

constexpr int kKnownWinFlags = NCCL_WIN_COLL_SYMMETRIC | NCCL_WIN_STRICT_ORDERING;

ncclResult_t window_register(Fn id, ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
                             int flags) {
  if (win == nullptr) return invalid(id, "win is NULL");
  *win = nullptr;
  if ((flags & ~kKnownWinFlags) != 0) return invalid(id, "unknown winFlags");
  if (!HandleOf<ncclComm_t>::known(comm)) return NcclLib::bad_handle(id);
  const auto& be = NcclLib::backend();
  if (be.table.mcclCommRegister == nullptr) return NcclLib::missing(id);
  void* handle = nullptr;
  const ncclResult_t r =
      finish(id, be.table.mcclCommRegister(convert<mcclComm_t>(comm), buff, size, &handle));
  if (r != ncclSuccess) return r;
  auto* w = new Window{comm, handle, buff, size};
  {
    Windows& all = windows();
    std::lock_guard<std::mutex> lock(all.mu);
    all.live.insert(w);
  }
  TORCHADA_LOG(kDebug, "%s: %p (%zu bytes, winFlags 0x%x) registered as an ordinary buffer",
               kFnNames[static_cast<int>(id)], buff, size, flags);
  *win = reinterpret_cast<ncclWindow_t>(w);
  return ncclSuccess;
}

ncclResult_t window_deregister(Fn id, ncclComm_t comm, ncclWindow_t win) {
  const auto& be = NcclLib::backend();
  if (be.table.mcclCommDeregister == nullptr) return NcclLib::missing(id);
  Window* w = find(win, comm, /*take=*/true);
  if (w == nullptr) return invalid(id, "not a window of this communicator");
  const ncclResult_t r =
      finish(id, be.table.mcclCommDeregister(convert<mcclComm_t>(comm), w->handle));
  delete w;
  return r;
}

ncclResult_t user_ptr(Fn id, ncclComm_t comm, ncclWindow_t win, void** out) {
  if (out == nullptr) return invalid(id, "outUserPtr is NULL");
  *out = nullptr;
  Window* w = find(win, comm, /*take=*/false);
  if (w == nullptr) return invalid(id, "not a window of this communicator");
  *out = w->buff;
  return ncclSuccess;
}

}  // namespace

namespace impl {

ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
                                    int winFlags) {
  return window_register(Fn::k_ncclCommWindowRegister, comm, buff, size, win, winFlags);
}
ncclResult_t pncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
                                     int winFlags) {
  return window_register(Fn::k_pncclCommWindowRegister, comm, buff, size, win, winFlags);
}
ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  return window_deregister(Fn::k_ncclCommWindowDeregister, comm, win);
}
ncclResult_t pncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  return window_deregister(Fn::k_pncclCommWindowDeregister, comm, win);
}
ncclResult_t ncclWinGetUserPtr(ncclComm_t comm, ncclWindow_t win, void** outUserPtr) {
  return user_ptr(Fn::k_ncclWinGetUserPtr, comm, win, outUserPtr);
}
ncclResult_t pncclWinGetUserPtr(ncclComm_t comm, ncclWindow_t win, void** outUserPtr) {
  return user_ptr(Fn::k_pncclWinGetUserPtr, comm, win, outUserPtr);
}

}  // namespace impl
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
