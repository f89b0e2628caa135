// Every enum the cuBLAS, cuBLASLt and NCCL forwarders translate (the generated Pair<> tables in
// shim/gen/*_types.h), checked value by value against both headers' enumerator lists:
//  - a CUDA value the MUSA side can express maps to a value the MUSA header defines, and back to
//    a CUDA value that maps to the same MUSA value (round trip);
//  - a value without a counterpart, or outside the CUDA enum, is refused (never passed raw);
//  - MUSA status codes all come back as codes of the CUDA library;
//  - the per-call lookups (EnumCodec: dense arrays, constant offsets) answer as the reference
//    linear walks of abi/convert.h do, for every value near the table's and the extremes.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <iterator>
#include <string>
#include <vector>

#include "cublas/cublas.h"
#include "cublasLt/cublasLt.h"
#include "nccl/nccl.h"

namespace ta = torchada;

namespace {

template <class T>
bool contains(const T& values, int v) {
  return std::find(std::begin(values), std::end(values), v) != std::end(values);
}

template <class CudaEnum>
void check_pair(const char* name) {
  using P = ta::Pair<CudaEnum>;
  SCOPED_TRACE(name);
  int translated = 0;
  for (int v : P::kCudaValues) {
    const auto cuda = static_cast<CudaEnum>(v);
    if (!P::valid(cuda)) continue;
    ++translated;
    const int musa = static_cast<int>(P::to_musa(cuda));
    EXPECT_TRUE(contains(P::kMusaValues, musa)) << v << " -> " << musa << " is not a MUSA value";
    const int back = static_cast<int>(P::to_cuda(static_cast<typename P::Musa>(musa)));
    EXPECT_TRUE(contains(P::kCudaValues, back)) << musa << " -> " << back;
    EXPECT_EQ(static_cast<int>(P::to_musa(static_cast<CudaEnum>(back))), musa) << v;
  }
  EXPECT_GT(translated, 0) << "no value of " << name << " reaches MUSA";
  if (!P::kIdentical) {
    // A value outside the CUDA enum is refused rather than passed through.
    int outside = 0x5eed;
    while (contains(P::kCudaValues, outside)) ++outside;
    EXPECT_FALSE(P::valid(static_cast<CudaEnum>(outside))) << outside;
  }
  // Every MUSA status has a CUDA answer: a status never comes back as a raw MUSA number. (Other
  // enums only travel CUDA -> MUSA, or back from values the CUDA side set.)
  const std::string type = name;
  if (type.find("Status") == std::string::npos && type.find("Result") == std::string::npos) return;
  for (int m : P::kMusaValues) {
    const int back = static_cast<int>(P::to_cuda(static_cast<typename P::Musa>(m)));
    if (!contains(P::kCudaValues, back))
      ADD_FAILURE() << "MUSA value " << m << " of " << name << " has no CUDA counterpart";
  }
}

template <class CudaEnum>
void check_codec(const char* name) {
  using P = ta::Pair<CudaEnum>;
  using C = ta::EnumCodec<P::kTable>;
  SCOPED_TRACE(name);
  std::vector<int> values = {INT_MIN, INT_MIN + 1, -1, 0, 1, INT_MAX - 1, INT_MAX, ta::kPassRaw};
  for (const auto& e : P::kTable)
    for (long long d = -300; d <= 300; ++d)
      for (long long k : {e.cuda + d, e.musa + d})
        if (k >= INT_MIN && k <= INT_MAX) values.push_back(static_cast<int>(k));
  int wrong = 0;
  for (int v : values) {
    wrong += C::known(v) != ta::enum_known(P::kTable, v);
    wrong += C::to_musa(v) != ta::enum_to_musa(P::kTable, v);
    wrong += C::to_cuda(v, ta::kPassRaw) != ta::enum_to_cuda(P::kTable, v, ta::kPassRaw);
    wrong += C::to_cuda(v, 12345) != ta::enum_to_cuda(P::kTable, v, 12345);
    if (wrong) {
      ADD_FAILURE() << "EnumCodec differs from the linear walk at " << v;
      return;
    }
  }
}

#define TORCHADA_CHECK_PAIR(T) \
  check_pair<T>(#T);           \
  check_codec<T>(#T);
TEST(EnumTranslation, CublasEnums){
    TORCHADA_CUBLAS_ENUM_PAIRS(TORCHADA_CHECK_PAIR)} TEST(EnumTranslation, CublasLtEnums){
    TORCHADA_CUBLASLT_ENUM_PAIRS(TORCHADA_CHECK_PAIR)} TEST(EnumTranslation, NcclEnums){
    TORCHADA_NCCL_ENUM_PAIRS(TORCHADA_CHECK_PAIR)}

// The simulator's muBLAS numbers these differently from cuBLAS (../shared/musa-abi.md): the
// tables must not be the identity, or a missing translation would go unnoticed.
TEST(EnumTranslation, SimulatorValuesDifferWhereMusaAbiSaysSo) {
  EXPECT_FALSE(ta::Pair<cublasOperation_t>::kIdentical);
  EXPECT_EQ(ta::Pair<cublasOperation_t>::to_musa(CUBLAS_OP_T), MUBLAS_OP_T);
  EXPECT_NE(static_cast<int>(CUBLAS_OP_T), static_cast<int>(MUBLAS_OP_T));
  EXPECT_EQ(ta::Pair<cublasFillMode_t>::to_musa(CUBLAS_FILL_MODE_LOWER), MUBLAS_FILL_MODE_LOWER);
  EXPECT_EQ(ta::Pair<cublasSideMode_t>::to_musa(CUBLAS_SIDE_RIGHT), MUBLAS_SIDE_RIGHT);
  EXPECT_EQ(ta::Pair<cublasDiagType_t>::to_musa(CUBLAS_DIAG_UNIT), MUBLAS_DIAG_UNIT);
  EXPECT_EQ(ta::Pair<cublasGemmAlgo_t>::to_musa(CUBLAS_GEMM_ALGO7_TENSOR_OP),
            MUBLAS_GEMM_DEFAULT_TENSOR_OP);
  EXPECT_EQ(ta::Pair<cublasStatus_t>::to_cuda(MUBLAS_STATUS_NOT_IMPLEMENTED),
            CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(ta::Pair<cublasStatus_t>::to_cuda(MUBLAS_STATUS_INVALID_HANDLE),
            CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_FALSE(ta::Pair<cublasOperation_t>::valid(CUBLAS_OP_CONJG));  // muBLAS has no CONJG
}

// The per-call translation of the common enums is a bounds check and an add (cublasOperation_t:
// 0..2 -> 111..113 on the simulator) or one load, never a walk of the table.
TEST(EnumTranslation, CommonEnumsNeedNoTableWalk) {
  using Op = ta::EnumCodec<ta::Pair<cublasOperation_t>::kTable>;
  EXPECT_TRUE(Op::ToMusa::kAffine);
  EXPECT_TRUE(ta::EnumCodec<ta::Pair<cublasFillMode_t>::kTable>::ToMusa::kDense);
  EXPECT_TRUE(ta::EnumCodec<ta::Pair<cudaDataType_t>::kTable>::ToMusa::kDense);
  EXPECT_TRUE(ta::EnumCodec<ta::Pair<cublasGemmAlgo_t>::kTable>::ToMusa::kDense);
  EXPECT_TRUE(ta::EnumCodec<ta::Pair<cublasStatus_t>::kTable>::ToCuda::kDense);
}

}  // namespace
