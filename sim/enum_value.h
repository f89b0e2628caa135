// Shared by the simulated libraries (sim/runtime, sim/driver, sim/blas): an enumeration argument's
// value, read from its bytes. A caller may pass a value outside the C++ enumeration's range (an
// untranslated vendor value such as CUBLAS_GEMM_DEFAULT, -1, or a bad attribute id): it must be
// refused without being loaded as the enumeration type (undefined behaviour; UBSan aborts).
#ifndef TORCHADA_SIM_ENUM_VALUE_H
#define TORCHADA_SIM_ENUM_VALUE_H

#include <cstring>

namespace simenum {

template <class E>
int enum_value(const E& e) {
  static_assert(sizeof(E) == sizeof(int), "enumerations are int-sized");
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

}  // namespace simenum

#endif  // TORCHADA_SIM_ENUM_VALUE_H
