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
[[gnu::always_inline]] inline bool arg_ok(T v) {
  if constexpr (HasValidity<T>::value) {
    return Pair<T>::valid(v);
  } else {
    (void)v;
    return true;
  }
}

// A library's handle type (cublasHandle_t...): HandleOf<T>::known(v) tells a live handle of the
// library's from anything else, and L::bad_handle(id) answers a call given anything else.
// Specialised by the library's traits header (shim/cublas/cublas.h).
template <class T>
struct HandleOf : std::false_type {};

// A library enum output (cublasGetPointerMode's mode...): MUSA writes the caller's variable itself
// when the two enums are proven identical (Pair<>::kIdentical: nothing to translate), else a MUSA
// temporary, translated back on success.
template <class Cuda>
class EnumOut {
 public:
  using Musa = typename Pair<Cuda>::Musa;
  explicit EnumOut(Cuda* out) : out_(out) {}
  [[gnu::always_inline]] Musa* arg() {
    if constexpr (Pair<Cuda>::kIdentical) {
      static_assert(layout_compatible<Cuda, Musa>());
      return reinterpret_cast<Musa*>(out_);
    } else {
      return out_ ? &tmp_ : nullptr;
    }
  }
  [[gnu::always_inline]] void finish(bool ok) {
    if constexpr (!Pair<Cuda>::kIdentical) {
      if (out_ && ok) *out_ = Pair<Cuda>::to_cuda(tmp_);
    } else {
      (void)ok;
    }
  }

 private:
  Cuda* out_;
  Musa tmp_{};
};

// Whether an export may take its own path: the library loaded, and MUSA's (not the pass-through).
// When not, the export takes its cold path (tracing.py), which loads it or passes the call on.
template <class L>
[[gnu::always_inline]] inline bool lib_ready() {
  const auto* p = L::ready();
  return p != nullptr && !p->passthrough;
}
// The backend in a generated body: kReady when the export checked lib_ready() (no second check).
template <class L, bool kReady>
[[gnu::always_inline]] inline const auto& lib_backend() {
  if constexpr (kReady)
    return *L::ready();
  else
    return L::backend();
}

// The rare outcomes, out of line: a forwarder's own path stays a few instructions around the call.
template <class L>
[[gnu::noinline, gnu::cold]] typename L::Status lib_missing(Fn id) {
  return L::missing(id);
}
template <class L>
[[gnu::noinline, gnu::cold]] typename L::Status lib_invalid_enum(Fn id) {
  return L::invalid_enum(id);
}
// A failed call: counted; the library's traits decide what else (L::fail: a backend's
// not-supported answer names the function once in the log).
template <class L>
[[gnu::noinline, gnu::cold]] typename L::Status lib_error(Fn id, typename L::Status s) {
  return L::fail(id, s);
}
template <class L>
[[gnu::noinline, gnu::cold]] typename L::Status lib_bad_handle(Fn id) {
  return L::bad_handle(id);
}

// Every handle argument of a call a live handle of its library.
template <class... A>
[[gnu::always_inline]] inline bool handles_ok(A... args) {
  return ([&] {
    if constexpr (HandleOf<A>::value)
      return HandleOf<A>::known(args);
    else
      return true;
  }() && ...);
}

// The generated forwarders' body: refuse untranslatable enum values, convert every argument,
// call, translate the status back.
template <class L, class R, class... P, class... A>
[[gnu::always_inline]] inline typename L::Status lib_call(Fn id, R (*fn)(P...), A... args) {
  static_assert(sizeof...(P) == sizeof...(A), "argument count differs from the MUSA signature");
  if (TORCHADA_UNLIKELY(fn == nullptr)) return lib_missing<L>(id);
  if constexpr ((HandleOf<A>::value || ...)) {
    if (TORCHADA_UNLIKELY(!handles_ok(args...))) return lib_bad_handle<L>(id);
  }
  if (TORCHADA_UNLIKELY(!(arg_ok(args) && ...))) return lib_invalid_enum<L>(id);
  const typename L::Status s = L::status(fn(convert<P>(args)...));
  if (TORCHADA_UNLIKELY(s != L::kSuccess)) return lib_error<L>(id, s);
  return L::kSuccess;
}

// lib_call() with the backend call recorded as a nested trace event when the export is traced.
// kPosition: kEndsCall where the export returns its result at once (trace::BackendSpan).
template <class L, bool kTraced, trace::BackendSpan::Position kPosition, class F, class... A>
[[gnu::always_inline]] inline typename L::Status traced_lib_call(const char* backend_name, Fn id,
                                                                 F fn, A... args) {
  if constexpr (kTraced) {
    trace::BackendSpan span(backend_name, kPosition);
    return lib_call<L>(id, fn, args...);
  } else {
    (void)backend_name;
    return lib_call<L>(id, fn, args...);
  }
}

inline bool fits_int(long long v) { return v >= INT_MIN && v <= INT_MAX; }

}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
