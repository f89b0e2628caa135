// The driver entry point lookup (symbols/driver.txt, by requested name and CUDA version) and the
// driver's own cuGetProcAddress forms, which answer from the same table.
#include "driver/entry_points.h"

#include <atomic>
#include <cstring>

#include "core/log.h"
#include "driver/driver.h"
#include "gen/driver_impl.h"

namespace torchada {
namespace drv {
namespace {

// Why an entry is not handed out, logged once per entry.
constexpr std::size_t kMaxLogged = 2048;
std::atomic<bool> g_logged[kMaxLogged];

bool first_time(std::size_t index) {
  return index >= kMaxLogged || !g_logged[index].exchange(true, std::memory_order_relaxed);
}

}  // namespace

int driver_version() { return CUDA_VERSION; }

EntryLookup lookup_entry_point(const char* symbol, unsigned version, bool per_thread) {
  std::size_t count = 0;
  const DriverEntry* entries = driver_entries(&count);
  const DriverEntry* legacy = nullptr;
  const DriverEntry* ptsz = nullptr;
  bool known = false;
  for (std::size_t i = 0; i < count; ++i) {
    const DriverEntry& e = entries[i];
    if (std::strcmp(e.request, symbol) != 0) continue;
    known = true;
    // since 0: an ABI cudaTypedefs.h has no typedef for, exported but never handed out.
    if (e.since == 0 || static_cast<unsigned>(e.since) > version) continue;
    const DriverEntry*& best = e.per_thread ? ptsz : legacy;
    if (e.per_thread && !per_thread) continue;
    if (best == nullptr || e.since > best->since) best = &e;
  }
  if (!known) {
    TORCHADA_LOG(kInfo, "driver entry point %s requested: not provided (no row in driver.txt)",
                 symbol);
    return {nullptr, EntryStatus::kSymbolNotFound};
  }
  const DriverEntry* e = ptsz ? ptsz : legacy;
  if (e == nullptr) {
    TORCHADA_LOG(kInfo, "driver entry point %s requested for CUDA %u: it is newer than that",
                 symbol, version);
    return {nullptr, EntryStatus::kVersionNotSufficient};
  }
  const std::size_t index = static_cast<std::size_t>(e - entries);
  if (e->disposition == DriverDisposition::kUnsupported) {
    if (first_time(index))
      TORCHADA_LOG(kInfo, "driver entry point %s (%s) requested: not provided: %s", symbol, e->name,
                   e->note);
    return {nullptr, EntryStatus::kSymbolNotFound};
  }
  // Kernel rows are handed out: calling one names the module or kernel it refuses.
  if (e->disposition == DriverDisposition::kForward ||
      e->disposition == DriverDisposition::kTranslate) {
    const DriverBackend& b = driver_backend();
    if (!b.usable) return {nullptr, EntryStatus::kSymbolNotFound};  // logged when loading
    if (e->resolved != nullptr && !e->resolved(b.table)) {
      if (first_time(index))
        TORCHADA_LOG(kWarn,
                     "driver entry point %s requested: %s does not export %s, reported as not "
                     "found",
                     e->name, b.path, e->target);
      return {nullptr, EntryStatus::kSymbolNotFound};
    }
  }
  return {e->fn(), EntryStatus::kFound};
}

namespace {

static_assert(static_cast<int>(CU_GET_PROC_ADDRESS_SUCCESS) ==
                      static_cast<int>(EntryStatus::kFound) &&
                  static_cast<int>(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND) ==
                      static_cast<int>(EntryStatus::kSymbolNotFound) &&
                  static_cast<int>(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT) ==
                      static_cast<int>(EntryStatus::kVersionNotSufficient),
              "CUdriverProcAddressQueryResult values");

// NVIDIA's documented behaviour: not found is CUDA_SUCCESS with a null pointer and the reason in
// *symbolStatus; a version above the driver's is CUDA_ERROR_INVALID_VALUE. The CUDA 11.3 form has
// no status output and reports not found as CUDA_ERROR_NOT_FOUND.
CUresult proc_address(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                      CUdriverProcAddressQueryResult* symbolStatus, bool has_status) {
  if (symbol == nullptr || pfn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pfn = nullptr;
  if (flags != CU_GET_PROC_ADDRESS_DEFAULT && flags != CU_GET_PROC_ADDRESS_LEGACY_STREAM &&
      flags != CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
    return CUDA_ERROR_INVALID_VALUE;
  if (cudaVersion < 0 || cudaVersion > driver_version()) return CUDA_ERROR_INVALID_VALUE;
  const EntryLookup r = lookup_entry_point(symbol, static_cast<unsigned>(cudaVersion),
                                           flags == CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
  *pfn = r.fn;
  if (symbolStatus) *symbolStatus = static_cast<CUdriverProcAddressQueryResult>(r.status);
  if (!has_status && r.status != EntryStatus::kFound) return CUDA_ERROR_NOT_FOUND;
  return CUDA_SUCCESS;
}

}  // namespace

namespace impl {

CUresult shim_cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags) {
  return proc_address(symbol, pfn, cudaVersion, flags, nullptr, false);
}

CUresult shim_cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                                  CUdriverProcAddressQueryResult* symbolStatus) {
  return proc_address(symbol, pfn, cudaVersion, flags, symbolStatus, true);
}

}  // namespace impl
}  // namespace drv
}  // namespace torchada
