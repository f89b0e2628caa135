// What the generated cuBLAS / cuBLASLt / NCCL exports share (compiled once per CUDA ABI, like
// abi/export.h). A library's traits class (shim/<lib>/<lib>.h) supplies its status type, how a
// MUSA status comes back and how refusals are answered; lib_call does the rest.
#pragma once

#include <climits>
#include <cstring>
#include <type_traits>

#include "abi/convert.h"
#include "core/libraries.h"
#include "core/policy.h"
#include "core/trace.h"
#include "gen/fn_ids.h"

namespace torchada {
inline namespace TORCHADA_ABI_NS {

template <class T, class = void>
struct HasValidity : std::false_type {};
template <class T>
struct HasValidity<T, std::void_t<decltype(Pair<T>::valid(std::declval<T>()))>> : std::true_type {};

// An argument the MUSA side can be given: enums must have a counterpart, the rest always can.
template <class T>
inline bool arg_ok(T v) {
  if constexpr (HasValidity<T>::value) {
    return Pair<T>::valid(v);
  } else {
    (void)v;
    return true;
  }
}

// The generated forwarders' body: refuse untranslatable enum values, convert every argument,
// call, translate the status back.
template <class L, class R, class... P, class... A>
inline typename L::Status lib_call(Fn id, R (*fn)(P...), A... args) {
  static_assert(sizeof...(P) == sizeof...(A), "argument count differs from the MUSA signature");
  if (TORCHADA_UNLIKELY(fn == nullptr)) return L::missing(id);
  if (TORCHADA_UNLIKELY(!(arg_ok(args) && ...))) return L::invalid_enum(id);
  const typename L::Status s = L::status(fn(convert<P>(args)...));
  if (TORCHADA_UNLIKELY(s != L::kSuccess)) note_error(id);
  return s;
}

// lib_call() with the backend call recorded as a nested trace event when the export is traced.
template <class L, bool kTraced, class F, class... A>
inline typename L::Status traced_lib_call(const char* backend_name, Fn id, F fn, A... args) {
  if constexpr (kTraced) {
    trace::BackendSpan span(backend_name);
    return lib_call<L>(id, fn, args...);
  } else {
    (void)backend_name;
    return lib_call<L>(id, fn, args...);
  }
}

inline bool fits_int(long long v) { return v >= INT_MIN && v <= INT_MAX; }

}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
