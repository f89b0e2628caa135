// cuBLASLt through the preloaded shim on the simulated muBLASLt (sim/blaslt), whose enum values
// deliberately differ from cuBLASLt's (attributes + 100..600, epilogues << 12, orders 16/17): a
// value the shim forgot to translate is refused there, or lands on the wrong field.
//
// The descriptors the shim hands out are muBLASLt's own objects, so the test also reads them
// with the simulator's functions (dlopen of the already-loaded libmublasLt.so.1) to see the value
// muBLASLt actually holds. Expectations are written here by NAME (CUBLASLT_X <-> MUBLASLT_X); the
// generated pairs only supply each enum's list of enumerators, so that every value is tried.
//
// The program is linked with NVIDIA's libcublasLt.so.13 and libcudart.so.13 like a user's; run
// with LD_PRELOAD=libtorchada.so TORCHADA_BACKEND=sim (see CMakeLists.txt).
// CUBLASLT_TEST_FAKE=1 selects the tests against tests/shim/cublasLt/fake_mublasLt.cc
// (TORCHADA_SIM_LIB_DIR points at it): results whose states the simulator never produces.
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <mublasLt.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "abi/library.h"  // enum_known, used by the generated pairs
#include "gen/cublas13_types.h"
#include "gen/cublasLt13_types.h"

namespace {

namespace ta = torchada;

bool under_shim() {
  Dl_info info{};
  void* f = dlsym(RTLD_DEFAULT, "cublasLtCreate");
  return f != nullptr && dladdr(f, &info) != 0 && info.dli_fname != nullptr &&
         std::strstr(info.dli_fname, "libtorchada") != nullptr;
}

bool fake_mode() {
  const char* v = std::getenv("CUBLASLT_TEST_FAKE");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

// The muBLASLt the shim loaded (after its first cuBLASLt call).
struct Sim {
  bool ok = false;
  decltype(&::mublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&::mublasLtMatmulDescGetAttribute) desc_get = nullptr;
  decltype(&::mublasLtMatrixLayoutSetAttribute) layout_set = nullptr;
  decltype(&::mublasLtMatrixLayoutGetAttribute) layout_get = nullptr;
  decltype(&::mublasLtMatmulPreferenceSetAttribute) pref_set = nullptr;
  decltype(&::mublasLtMatmulPreferenceGetAttribute) pref_get = nullptr;
  decltype(&::mublasLtMatrixTransformDescSetAttribute) xform_set = nullptr;
  decltype(&::mublasLtMatrixTransformDescGetAttribute) xform_get = nullptr;
  decltype(&::mublasLtMatmulAlgoConfigSetAttribute) config_set = nullptr;
  decltype(&::mublasLtMatmulAlgoConfigGetAttribute) config_get = nullptr;
  void* handle = nullptr;
};

const Sim& sim() {
  static const Sim s = [] {
    Sim r;
    r.handle = dlopen("libmublasLt.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (r.handle == nullptr) return r;
    auto get = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(r.handle, name));
      return fn != nullptr;
    };
    r.ok = get(r.desc_set, "mublasLtMatmulDescSetAttribute") &&
           get(r.desc_get, "mublasLtMatmulDescGetAttribute") &&
           get(r.layout_set, "mublasLtMatrixLayoutSetAttribute") &&
           get(r.layout_get, "mublasLtMatrixLayoutGetAttribute") &&
           get(r.pref_set, "mublasLtMatmulPreferenceSetAttribute") &&
           get(r.pref_get, "mublasLtMatmulPreferenceGetAttribute") &&
           get(r.xform_set, "mublasLtMatrixTransformDescSetAttribute") &&
           get(r.xform_get, "mublasLtMatrixTransformDescGetAttribute") &&
           get(r.config_set, "mublasLtMatmulAlgoConfigSetAttribute") &&
           get(r.config_get, "mublasLtMatmulAlgoConfigGetAttribute");
    return r;
  }();
  return s;
}

// What the shim logged while `f` ran.
template <class F>
std::string log_of(F&& f) {
  testing::internal::CaptureStderr();
  f();
  return testing::internal::GetCapturedStderr();
}

class Lt : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!under_shim()) GTEST_SKIP() << "needs LD_PRELOAD=libtorchada.so (ctest sets it)";
    if (fake_mode()) GTEST_SKIP() << "CUBLASLT_TEST_FAKE=1: only the fake-library tests run";
    ASSERT_EQ(cublasLtCreate(&handle_), CUBLAS_STATUS_SUCCESS);
    ASSERT_TRUE(sim().ok) << "the simulator's libmublasLt.so.1 is not loaded";
  }
  void TearDown() override {
    if (handle_ != nullptr) {
      EXPECT_EQ(cublasLtDestroy(handle_), CUBLAS_STATUS_SUCCESS);
    }
  }
  cublasLtHandle_t handle_ = nullptr;
};

// ---- Informational calls

TEST_F(Lt, VersionsAreTheCallersHeaders) {
  EXPECT_EQ(cublasLtGetVersion(), static_cast<size_t>(CUBLAS_VERSION));
  EXPECT_EQ(cublasLtGetCudartVersion(), static_cast<size_t>(CUDART_VERSION));
  int v = -1;
  EXPECT_EQ(cublasLtGetProperty(MAJOR_VERSION, &v), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(v, CUBLAS_VER_MAJOR);
  EXPECT_EQ(cublasLtGetProperty(MINOR_VERSION, &v), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(v, CUBLAS_VER_MINOR);
  EXPECT_EQ(cublasLtGetProperty(PATCH_LEVEL, &v), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(v, CUBLAS_VER_PATCH);
  v = -7;
  EXPECT_EQ(cublasLtGetProperty(static_cast<libraryPropertyType>(3), &v),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(v, -7);
  EXPECT_EQ(cublasLtGetProperty(MAJOR_VERSION, nullptr), CUBLAS_STATUS_INVALID_VALUE);
}

TEST_F(Lt, StatusNamesAndStrings) {
  const std::pair<cublasStatus_t, const char*> names[] = {
      {CUBLAS_STATUS_SUCCESS, "CUBLAS_STATUS_SUCCESS"},
      {CUBLAS_STATUS_NOT_INITIALIZED, "CUBLAS_STATUS_NOT_INITIALIZED"},
      {CUBLAS_STATUS_ALLOC_FAILED, "CUBLAS_STATUS_ALLOC_FAILED"},
      {CUBLAS_STATUS_INVALID_VALUE, "CUBLAS_STATUS_INVALID_VALUE"},
      {CUBLAS_STATUS_ARCH_MISMATCH, "CUBLAS_STATUS_ARCH_MISMATCH"},
      {CUBLAS_STATUS_MAPPING_ERROR, "CUBLAS_STATUS_MAPPING_ERROR"},
      {CUBLAS_STATUS_EXECUTION_FAILED, "CUBLAS_STATUS_EXECUTION_FAILED"},
      {CUBLAS_STATUS_INTERNAL_ERROR, "CUBLAS_STATUS_INTERNAL_ERROR"},
      {CUBLAS_STATUS_NOT_SUPPORTED, "CUBLAS_STATUS_NOT_SUPPORTED"},
      {CUBLAS_STATUS_LICENSE_ERROR, "CUBLAS_STATUS_LICENSE_ERROR"},
  };
  std::vector<std::string> texts;
  for (const auto& [status, name] : names) {
    SCOPED_TRACE(name);
    ASSERT_NE(cublasLtGetStatusName(status), nullptr);
    EXPECT_STREQ(cublasLtGetStatusName(status), name);
    const char* text = cublasLtGetStatusString(status);
    ASSERT_NE(text, nullptr);
    EXPECT_GT(std::strlen(text), 0u);
    EXPECT_STRNE(text, name);
    texts.push_back(text);
  }
  for (size_t i = 0; i < texts.size(); ++i)
    for (size_t j = i + 1; j < texts.size(); ++j) EXPECT_NE(texts[i], texts[j]);
  // A code cuBLAS does not define (inside the enum's range).
  const auto unknown = static_cast<cublasStatus_t>(17);
  EXPECT_STREQ(cublasLtGetStatusName(unknown), "unrecognized status");
  EXPECT_STREQ(cublasLtGetStatusString(unknown), "unrecognized status");
}

// ---- Attribute round trips

TEST_F(Lt, TransposeRoundTrip) {
  cublasLtMatmulDesc_t desc = nullptr;
  ASSERT_EQ(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), CUBLAS_STATUS_SUCCESS);
  const int32_t t = CUBLAS_OP_T;
  EXPECT_EQ(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t)),
            CUBLAS_STATUS_SUCCESS);
  int32_t back = -1;
  size_t written = 0;
  EXPECT_EQ(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &back, sizeof(back),
                                           &written),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(back, CUBLAS_OP_T);
  EXPECT_EQ(written, sizeof(int32_t));
  // muBLASLt holds its own value, under its own attribute id; TRANSB was not touched.
  int32_t musa = -1;
  ASSERT_EQ(sim().desc_get(reinterpret_cast<mublasLtMatmulDesc_t>(desc),
                           MUBLASLT_MATMUL_DESC_TRANSA, &musa, sizeof(musa), &written),
            MUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(musa, MUBLAS_OP_T);
  ASSERT_NE(static_cast<int>(MUBLAS_OP_T), static_cast<int>(CUBLAS_OP_T));
  ASSERT_EQ(sim().desc_get(reinterpret_cast<mublasLtMatmulDesc_t>(desc),
                           MUBLASLT_MATMUL_DESC_TRANSB, &musa, sizeof(musa), &written),
            MUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(musa, MUBLAS_OP_N);
  EXPECT_EQ(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &back, sizeof(back),
                                           &written),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(back, CUBLAS_OP_N);
  EXPECT_EQ(cublasLtMatmulDescDestroy(desc), CUBLAS_STATUS_SUCCESS);
}

TEST_F(Lt, EpilogueRoundTrip) {
  cublasLtMatmulDesc_t desc = nullptr;
  ASSERT_EQ(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), CUBLAS_STATUS_SUCCESS);
  uint32_t e = CUBLASLT_EPILOGUE_GELU_BIAS;
  EXPECT_EQ(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof(e)),
            CUBLAS_STATUS_SUCCESS);
  e = 0;
  EXPECT_EQ(
      cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof(e), nullptr),
      CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(e, static_cast<uint32_t>(CUBLASLT_EPILOGUE_GELU_BIAS));
  uint32_t musa = 0;
  size_t written = 0;
  ASSERT_EQ(sim().desc_get(reinterpret_cast<mublasLtMatmulDesc_t>(desc),
                           MUBLASLT_MATMUL_DESC_EPILOGUE, &musa, sizeof(musa), &written),
            MUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(musa, static_cast<uint32_t>(MUBLASLT_EPILOGUE_GELU_BIAS));
  EXPECT_EQ(cublasLtMatmulDescDestroy(desc), CUBLAS_STATUS_SUCCESS);
}

TEST_F(Lt, OrderRoundTrip) {
  cublasLtMatrixLayout_t layout = nullptr;
  ASSERT_EQ(cublasLtMatrixLayoutCreate(&layout, CUDA_R_16F, 8, 4, 8), CUBLAS_STATUS_SUCCESS);
  int32_t order = -1;
  EXPECT_EQ(cublasLtMatrixLayoutGetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_ORDER, &order,
                                             sizeof(order), nullptr),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(order, CUBLASLT_ORDER_COL);  // muBLASLt's default (16), named back
  order = CUBLASLT_ORDER_ROW;
  EXPECT_EQ(
      cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_ORDER, &order, sizeof(order)),
      CUBLAS_STATUS_SUCCESS);
  order = -1;
  EXPECT_EQ(cublasLtMatrixLayoutGetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_ORDER, &order,
                                             sizeof(order), nullptr),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(order, CUBLASLT_ORDER_ROW);
  int32_t musa = -1;
  size_t written = 0;
  ASSERT_EQ(sim().layout_get(reinterpret_cast<mublasLtMatrixLayout_t>(layout),
                             MUBLASLT_MATRIX_LAYOUT_ORDER, &musa, sizeof(musa), &written),
            MUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(musa, MUBLASLT_ORDER_ROW);
  // The type travels by name too; plain numbers are unchanged.
  uint32_t type = 0;
  EXPECT_EQ(cublasLtMatrixLayoutGetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_TYPE, &type,
                                             sizeof(type), nullptr),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(type, static_cast<uint32_t>(CUDA_R_16F));
  uint64_t rows = 0;
  EXPECT_EQ(cublasLtMatrixLayoutGetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows,
                                             sizeof(rows), nullptr),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(rows, 8u);
  EXPECT_EQ(cublasLtMatrixLayoutDestroy(layout), CUBLAS_STATUS_SUCCESS);
}

// ---- Every value of every enum-valued attribute

struct Mapping {
  int cuda;
  int musa;
};

// One kind of descriptor, through the shim and through the simulator directly.
struct Family {
  const char* name;
  std::function<void*()> create;
  std::function<void(void*)> destroy;
  std::function<int(void*, int, const void*, size_t)> shim_set;
  std::function<int(void*, int, void*, size_t, size_t*)> shim_get;
  std::function<int(void*, int, const void*, size_t)> sim_set;
  std::function<int(void*, int, void*, size_t, size_t*)> sim_get;
};

struct EnumAttr {
  const char* name;
  int cuda_attr;
  int musa_attr;
  size_t size;                 // 4, or 2 for the uint16_t shape ids
  std::vector<int> values;     // every enumerator of the value's enum in the caller's header
  std::vector<Mapping> named;  // the muBLASLt namesakes; any other value must be refused
};

template <class E>
std::vector<int> values_of() {
  return std::vector<int>(std::begin(ta::Pair<E>::kCudaValues), std::end(ta::Pair<E>::kCudaValues));
}

void put(void* buf, size_t size, int v) {
  if (size == sizeof(uint16_t)) {
    const auto u = static_cast<uint16_t>(v);
    std::memcpy(buf, &u, sizeof(u));
  } else {
    std::memcpy(buf, &v, sizeof(v));
  }
}
int take(const void* buf, size_t size) {
  if (size == sizeof(uint16_t)) {
    uint16_t u;
    std::memcpy(&u, buf, sizeof(u));
    return u;
  }
  int v;
  std::memcpy(&v, buf, sizeof(v));
  return v;
}

void check_values(const Family& f, const EnumAttr& a) {
  SCOPED_TRACE(std::string(f.name) + " " + a.name);
  int translated = 0, refused = 0, simulator_refused = 0;
  for (int v : a.values) {
    SCOPED_TRACE("value " + std::to_string(v));
    const Mapping* m = nullptr;
    for (const Mapping& n : a.named)
      if (n.cuda == v) m = &n;
    void* obj = f.create();
    ASSERT_NE(obj, nullptr);
    unsigned char buf[4] = {}, out[4] = {};
    put(buf, a.size, v);
    size_t written = 0;
    // Values the shim emulates: muBLASLt's layout holds a stand-in, the shim answers the value.
    // Pointer-array batches (strided in muBLASLt, shim/cublasLt/matmul.cc), the IMMA orders
    // (column-major in muBLASLt, shim/cublasLt/emulated_layouts.cc) and CUDA_R_4F_E2M1.
    int stand_in = -1;
    if (std::strcmp(a.name, "CUBLASLT_MATRIX_LAYOUT_BATCH_MODE") == 0 &&
        v == CUBLASLT_BATCH_MODE_POINTER_ARRAY)
      stand_in = MUBLASLT_BATCH_MODE_STRIDED;
    if (std::strcmp(a.name, "CUBLASLT_MATRIX_LAYOUT_ORDER") == 0 &&
        (v == CUBLASLT_ORDER_COL32 || v == CUBLASLT_ORDER_COL4_4R2_8C ||
         v == CUBLASLT_ORDER_COL32_2R_4R4))
      stand_in = MUBLASLT_ORDER_COL;
    // NVFP4's elements (an FP8 stand-in in muBLASLt, shim/cublasLt/block_scaled.cc).
    if (std::strcmp(a.name, "CUBLASLT_MATRIX_LAYOUT_TYPE") == 0 && v == CUDA_R_4F_E2M1)
      stand_in = MUSA_R_8F_E4M3;
    if (stand_in >= 0) {
      ++translated;
      EXPECT_EQ(f.shim_set(obj, a.cuda_attr, buf, a.size), CUBLAS_STATUS_SUCCESS);
      ASSERT_EQ(f.sim_get(obj, a.musa_attr, out, a.size, &written), MUBLAS_STATUS_SUCCESS);
      EXPECT_EQ(take(out, a.size), stand_in);
      std::memset(out, 0xff, sizeof(out));
      EXPECT_EQ(f.shim_get(obj, a.cuda_attr, out, a.size, &written), CUBLAS_STATUS_SUCCESS);
      EXPECT_EQ(take(out, a.size), v);
      EXPECT_EQ(written, a.size);
      f.destroy(obj);
      continue;
    }
    if (m != nullptr) {
      // The shim answers what muBLASLt answers for the namesake value.
      void* probe = f.create();
      unsigned char mbuf[4] = {};
      put(mbuf, a.size, m->musa);
      const int sim_status = f.sim_set(probe, a.musa_attr, mbuf, a.size);
      f.destroy(probe);
      ASSERT_TRUE(sim_status == MUBLAS_STATUS_SUCCESS || sim_status == MUBLAS_STATUS_INVALID_VALUE)
          << sim_status;
      const int status = f.shim_set(obj, a.cuda_attr, buf, a.size);
      EXPECT_EQ(status, sim_status == MUBLAS_STATUS_SUCCESS ? CUBLAS_STATUS_SUCCESS
                                                            : CUBLAS_STATUS_INVALID_VALUE);
      if (status != CUBLAS_STATUS_SUCCESS) ++simulator_refused;
      if (status == CUBLAS_STATUS_SUCCESS) {
        ++translated;
        ASSERT_EQ(f.sim_get(obj, a.musa_attr, out, a.size, &written), MUBLAS_STATUS_SUCCESS);
        EXPECT_EQ(take(out, a.size), m->musa);
        // Read back: the first cuBLASLt name of that muBLASLt value (HERMITAN comes back as C).
        int first = v;
        for (const Mapping& n : a.named) {
          if (n.musa == m->musa) {
            first = n.cuda;
            break;
          }
        }
        // An emulated compute type reads back as set (the shim notes it: emulation.cc).
        if (std::strcmp(a.name, "CUBLASLT_MATMUL_DESC_COMPUTE_TYPE") == 0 &&
            (v == CUBLAS_COMPUTE_32F_EMULATED_16BFX9 ||
             v == CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT))
          first = v;
        std::memset(out, 0xff, sizeof(out));
        EXPECT_EQ(f.shim_get(obj, a.cuda_attr, out, a.size, &written), CUBLAS_STATUS_SUCCESS);
        EXPECT_EQ(take(out, a.size), first);
        EXPECT_EQ(written, a.size);
      }
    } else {
      ++refused;
      const std::string log = log_of([&] {
        EXPECT_EQ(f.shim_set(obj, a.cuda_attr, buf, a.size), CUBLAS_STATUS_INVALID_VALUE);
      });
      EXPECT_NE(log.find("has no muBLASLt counterpart"), std::string::npos) << log;
      EXPECT_NE(log.find(a.name), std::string::npos) << log;
    }
    f.destroy(obj);
  }
  EXPECT_GT(translated, 0);
  EXPECT_EQ(translated + refused + simulator_refused, static_cast<int>(a.values.size()));
}

#define CUDA_MUSA(x, y) \
  { x, y }
#define LT(x) \
  { CUBLASLT_##x, MUBLASLT_##x }
#define BLAS(x) \
  { CUBLAS_##x, MUBLAS_##x }
#define TYPE(x) \
  { CUDA_##x, MUSA_##x }

const std::vector<Mapping> kOps = {BLAS(OP_N), BLAS(OP_T), BLAS(OP_C),
                                   CUDA_MUSA(CUBLAS_OP_HERMITAN, MUBLAS_OP_C)};
const std::vector<Mapping> kFill = {BLAS(FILL_MODE_LOWER), BLAS(FILL_MODE_UPPER),
                                    BLAS(FILL_MODE_FULL)};
const std::vector<Mapping> kCompute = {
    BLAS(COMPUTE_16F), BLAS(COMPUTE_16F_PEDANTIC), BLAS(COMPUTE_32F), BLAS(COMPUTE_32F_PEDANTIC),
    BLAS(COMPUTE_32F_FAST_16F), BLAS(COMPUTE_32F_FAST_16BF), BLAS(COMPUTE_32F_FAST_TF32),
    BLAS(COMPUTE_64F), BLAS(COMPUTE_64F_PEDANTIC), BLAS(COMPUTE_32I), BLAS(COMPUTE_32I_PEDANTIC),
    // CUDA 13's emulated types compute natively (symbols/enum_map.txt).
    CUDA_MUSA(CUBLAS_COMPUTE_32F_EMULATED_16BFX9, MUBLAS_COMPUTE_32F),
    CUDA_MUSA(CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT, MUBLAS_COMPUTE_64F)};
const std::vector<Mapping> kTypes = {TYPE(R_16F), TYPE(C_16F), TYPE(R_16BF),    TYPE(C_16BF),
                                     TYPE(R_32F), TYPE(C_32F), TYPE(R_64F),     TYPE(C_64F),
                                     TYPE(R_8I),  TYPE(C_8I),  TYPE(R_8U),      TYPE(C_8U),
                                     TYPE(R_16I), TYPE(R_32I), TYPE(C_32I),     TYPE(R_32U),
                                     TYPE(C_32U), TYPE(R_64I), TYPE(R_8F_E4M3), TYPE(R_8F_E5M2)};
const std::vector<Mapping> kPointerModes = {
    LT(POINTER_MODE_HOST), LT(POINTER_MODE_DEVICE), LT(POINTER_MODE_DEVICE_VECTOR),
    LT(POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO), LT(POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST)};
const std::vector<Mapping> kEpilogues = {
    LT(EPILOGUE_DEFAULT),  LT(EPILOGUE_RELU),        LT(EPILOGUE_RELU_AUX),
    LT(EPILOGUE_BIAS),     LT(EPILOGUE_RELU_BIAS),   LT(EPILOGUE_RELU_AUX_BIAS),
    LT(EPILOGUE_DRELU),    LT(EPILOGUE_DRELU_BGRAD), LT(EPILOGUE_GELU),
    LT(EPILOGUE_GELU_AUX), LT(EPILOGUE_GELU_BIAS),   LT(EPILOGUE_GELU_AUX_BIAS),
    LT(EPILOGUE_DGELU),    LT(EPILOGUE_DGELU_BGRAD), LT(EPILOGUE_BGRADA),
    LT(EPILOGUE_BGRADB)};

template <class T>
std::vector<T> with(std::vector<T> v, T extra) {
  v.push_back(extra);
  return v;
}

Family desc_family() {
  return Family{
      "matmul descriptor",
      [] {
        cublasLtMatmulDesc_t d = nullptr;
        return cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS
                   ? static_cast<void*>(d)
                   : nullptr;
      },
      [](void* d) { cublasLtMatmulDescDestroy(static_cast<cublasLtMatmulDesc_t>(d)); },
      [](void* d, int a, const void* b, size_t n) {
        return static_cast<int>(
            cublasLtMatmulDescSetAttribute(static_cast<cublasLtMatmulDesc_t>(d),
                                           static_cast<cublasLtMatmulDescAttributes_t>(a), b, n));
      },
      [](void* d, int a, void* b, size_t n, size_t* w) {
        return static_cast<int>(cublasLtMatmulDescGetAttribute(
            static_cast<cublasLtMatmulDesc_t>(d), static_cast<cublasLtMatmulDescAttributes_t>(a), b,
            n, w));
      },
      [](void* d, int a, const void* b, size_t n) {
        return static_cast<int>(sim().desc_set(static_cast<mublasLtMatmulDesc_t>(d),
                                               static_cast<mublasLtMatmulDescAttributes_t>(a), b,
                                               n));
      },
      [](void* d, int a, void* b, size_t n, size_t* w) {
        return static_cast<int>(sim().desc_get(static_cast<mublasLtMatmulDesc_t>(d),
                                               static_cast<mublasLtMatmulDescAttributes_t>(a), b, n,
                                               w));
      }};
}

Family layout_family() {
  return Family{
      "matrix layout",
      [] {
        cublasLtMatrixLayout_t l = nullptr;
        return cublasLtMatrixLayoutCreate(&l, CUDA_R_32F, 4, 4, 4) == CUBLAS_STATUS_SUCCESS
                   ? static_cast<void*>(l)
                   : nullptr;
      },
      [](void* l) { cublasLtMatrixLayoutDestroy(static_cast<cublasLtMatrixLayout_t>(l)); },
      [](void* l, int a, const void* b, size_t n) {
        return static_cast<int>(cublasLtMatrixLayoutSetAttribute(
            static_cast<cublasLtMatrixLayout_t>(l), static_cast<cublasLtMatrixLayoutAttribute_t>(a),
            b, n));
      },
      [](void* l, int a, void* b, size_t n, size_t* w) {
        return static_cast<int>(cublasLtMatrixLayoutGetAttribute(
            static_cast<cublasLtMatrixLayout_t>(l), static_cast<cublasLtMatrixLayoutAttribute_t>(a),
            b, n, w));
      },
      [](void* l, int a, const void* b, size_t n) {
        return static_cast<int>(sim().layout_set(static_cast<mublasLtMatrixLayout_t>(l),
                                                 static_cast<mublasLtMatrixLayoutAttribute_t>(a), b,
                                                 n));
      },
      [](void* l, int a, void* b, size_t n, size_t* w) {
        return static_cast<int>(sim().layout_get(static_cast<mublasLtMatrixLayout_t>(l),
                                                 static_cast<mublasLtMatrixLayoutAttribute_t>(a), b,
                                                 n, w));
      }};
}

Family pref_family() {
  return Family{
      "matmul preference",
      [] {
        cublasLtMatmulPreference_t p = nullptr;
        return cublasLtMatmulPreferenceCreate(&p) == CUBLAS_STATUS_SUCCESS ? static_cast<void*>(p)
                                                                           : nullptr;
      },
      [](void* p) { cublasLtMatmulPreferenceDestroy(static_cast<cublasLtMatmulPreference_t>(p)); },
      [](void* p, int a, const void* b, size_t n) {
        return static_cast<int>(cublasLtMatmulPreferenceSetAttribute(
            static_cast<cublasLtMatmulPreference_t>(p),
            static_cast<cublasLtMatmulPreferenceAttributes_t>(a), b, n));
      },
      [](void* p, int a, void* b, size_t n, size_t* w) {
        return static_cast<int>(cublasLtMatmulPreferenceGetAttribute(
            static_cast<cublasLtMatmulPreference_t>(p),
            static_cast<cublasLtMatmulPreferenceAttributes_t>(a), b, n, w));
      },
      [](void* p, int a, const void* b, size_t n) {
        return static_cast<int>(sim().pref_set(static_cast<mublasLtMatmulPreference_t>(p),
                                               static_cast<mublasLtMatmulPreferenceAttributes_t>(a),
                                               b, n));
      },
      [](void* p, int a, void* b, size_t n, size_t* w) {
        return static_cast<int>(sim().pref_get(static_cast<mublasLtMatmulPreference_t>(p),
                                               static_cast<mublasLtMatmulPreferenceAttributes_t>(a),
                                               b, n, w));
      }};
}

Family transform_family() {
  return Family{"matrix transform descriptor",
                [] {
                  cublasLtMatrixTransformDesc_t t = nullptr;
                  return cublasLtMatrixTransformDescCreate(&t, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS
                             ? static_cast<void*>(t)
                             : nullptr;
                },
                [](void* t) {
                  cublasLtMatrixTransformDescDestroy(static_cast<cublasLtMatrixTransformDesc_t>(t));
                },
                [](void* t, int a, const void* b, size_t n) {
                  return static_cast<int>(cublasLtMatrixTransformDescSetAttribute(
                      static_cast<cublasLtMatrixTransformDesc_t>(t),
                      static_cast<cublasLtMatrixTransformDescAttributes_t>(a), b, n));
                },
                [](void* t, int a, void* b, size_t n, size_t* w) {
                  return static_cast<int>(cublasLtMatrixTransformDescGetAttribute(
                      static_cast<cublasLtMatrixTransformDesc_t>(t),
                      static_cast<cublasLtMatrixTransformDescAttributes_t>(a), b, n, w));
                },
                [](void* t, int a, const void* b, size_t n) {
                  return static_cast<int>(sim().xform_set(
                      static_cast<mublasLtMatrixTransformDesc_t>(t),
                      static_cast<mublasLtMatrixTransformDescAttributes_t>(a), b, n));
                },
                [](void* t, int a, void* b, size_t n, size_t* w) {
                  return static_cast<int>(sim().xform_get(
                      static_cast<mublasLtMatrixTransformDesc_t>(t),
                      static_cast<mublasLtMatrixTransformDescAttributes_t>(a), b, n, w));
                }};
}

// An algorithm from cublasLtMatmulAlgoInit, in heap storage.
Family config_family(cublasLtHandle_t handle) {
  return Family{
      "algorithm configuration",
      [handle] {
        auto* algo = new cublasLtMatmulAlgo_t{};
        if (cublasLtMatmulAlgoInit(handle, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                                   CUDA_R_32F, CUDA_R_32F, 0, algo) != CUBLAS_STATUS_SUCCESS) {
          delete algo;
          return static_cast<void*>(nullptr);
        }
        return static_cast<void*>(algo);
      },
      [](void* a) { delete static_cast<cublasLtMatmulAlgo_t*>(a); },
      [](void* algo, int a, const void* b, size_t n) {
        return static_cast<int>(cublasLtMatmulAlgoConfigSetAttribute(
            static_cast<cublasLtMatmulAlgo_t*>(algo),
            static_cast<cublasLtMatmulAlgoConfigAttributes_t>(a), b, n));
      },
      [](void* algo, int a, void* b, size_t n, size_t* w) {
        return static_cast<int>(cublasLtMatmulAlgoConfigGetAttribute(
            static_cast<cublasLtMatmulAlgo_t*>(algo),
            static_cast<cublasLtMatmulAlgoConfigAttributes_t>(a), b, n, w));
      },
      [](void* algo, int a, const void* b, size_t n) {
        return static_cast<int>(
            sim().config_set(static_cast<mublasLtMatmulAlgo_t*>(algo),
                             static_cast<mublasLtMatmulAlgoConfigAttributes_t>(a), b, n));
      },
      [](void* algo, int a, void* b, size_t n, size_t* w) {
        return static_cast<int>(
            sim().config_get(static_cast<mublasLtMatmulAlgo_t*>(algo),
                             static_cast<mublasLtMatmulAlgoConfigAttributes_t>(a), b, n, w));
      }};
}

#define ATTR(cuda, musa) #cuda, cuda, musa

TEST_F(Lt, EveryMatmulDescriptorEnumValue) {
  const Family f = desc_family();
  const std::vector<int> types_or_default = with(values_of<cudaDataType_t>(), -1);
  const std::vector<Mapping> named_or_default = with(kTypes, Mapping{-1, -1});
  const EnumAttr attrs[] = {
      {ATTR(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, MUBLASLT_MATMUL_DESC_COMPUTE_TYPE), 4,
       values_of<cublasComputeType_t>(), kCompute},
      {ATTR(CUBLASLT_MATMUL_DESC_SCALE_TYPE, MUBLASLT_MATMUL_DESC_SCALE_TYPE), 4,
       values_of<cudaDataType_t>(), kTypes},
      {ATTR(CUBLASLT_MATMUL_DESC_POINTER_MODE, MUBLASLT_MATMUL_DESC_POINTER_MODE), 4,
       values_of<cublasLtPointerMode_t>(), kPointerModes},
      {ATTR(CUBLASLT_MATMUL_DESC_TRANSA, MUBLASLT_MATMUL_DESC_TRANSA), 4,
       values_of<cublasOperation_t>(), kOps},
      {ATTR(CUBLASLT_MATMUL_DESC_TRANSB, MUBLASLT_MATMUL_DESC_TRANSB), 4,
       values_of<cublasOperation_t>(), kOps},
      {ATTR(CUBLASLT_MATMUL_DESC_TRANSC, MUBLASLT_MATMUL_DESC_TRANSC), 4,
       values_of<cublasOperation_t>(), kOps},
      {ATTR(CUBLASLT_MATMUL_DESC_FILL_MODE, MUBLASLT_MATMUL_DESC_FILL_MODE), 4,
       values_of<cublasFillMode_t>(), kFill},
      {ATTR(CUBLASLT_MATMUL_DESC_EPILOGUE, MUBLASLT_MATMUL_DESC_EPILOGUE), 4,
       values_of<cublasLtEpilogue_t>(), kEpilogues},
      {ATTR(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, MUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE), 4,
       types_or_default, named_or_default},
      {ATTR(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE,
            MUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE),
       4, types_or_default, named_or_default},
  };
  for (const EnumAttr& a : attrs) check_values(f, a);
}

TEST_F(Lt, EveryLayoutPreferenceTransformEnumValue) {
  check_values(layout_family(), {ATTR(CUBLASLT_MATRIX_LAYOUT_TYPE, MUBLASLT_MATRIX_LAYOUT_TYPE), 4,
                                 values_of<cudaDataType_t>(), kTypes});
  check_values(layout_family(), {ATTR(CUBLASLT_MATRIX_LAYOUT_ORDER, MUBLASLT_MATRIX_LAYOUT_ORDER),
                                 4,
                                 values_of<cublasLtOrder_t>(),
                                 {LT(ORDER_COL), LT(ORDER_ROW)}});
  check_values(layout_family(),
               {ATTR(CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, MUBLASLT_MATRIX_LAYOUT_BATCH_MODE),
                4,
                values_of<cublasLtBatchMode_t>(),
                {LT(BATCH_MODE_STRIDED)}});
  check_values(pref_family(),
               {ATTR(CUBLASLT_MATMUL_PREF_SEARCH_MODE, MUBLASLT_MATMUL_PREF_SEARCH_MODE),
                4,
                values_of<cublasLtMatmulSearch_t>(),
                {LT(SEARCH_BEST_FIT), LT(SEARCH_LIMITED_BY_ALGO_ID)}});
  const Family x = transform_family();
  check_values(x, {ATTR(CUBLASLT_MATRIX_TRANSFORM_DESC_SCALE_TYPE,
                        MUBLASLT_MATRIX_TRANSFORM_DESC_SCALE_TYPE),
                   4, values_of<cudaDataType_t>(), kTypes});
  check_values(x, {ATTR(CUBLASLT_MATRIX_TRANSFORM_DESC_POINTER_MODE,
                        MUBLASLT_MATRIX_TRANSFORM_DESC_POINTER_MODE),
                   4, values_of<cublasLtPointerMode_t>(), kPointerModes});
  check_values(
      x, {ATTR(CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, MUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA), 4,
          values_of<cublasOperation_t>(), kOps});
  check_values(
      x, {ATTR(CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSB, MUBLASLT_MATRIX_TRANSFORM_DESC_TRANSB), 4,
          values_of<cublasOperation_t>(), kOps});
}

TEST_F(Lt, ReductionSchemeMaskBitByBit) {
  const Family f = pref_family();
  void* pref = f.create();
  ASSERT_NE(pref, nullptr);
  for (uint32_t mask = 0; mask <= CUBLASLT_REDUCTION_SCHEME_MASK; ++mask) {
    SCOPED_TRACE(mask);
    ASSERT_EQ(f.shim_set(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &mask, sizeof(mask)),
              CUBLAS_STATUS_SUCCESS);
    uint32_t expect = 0;
    if (mask & CUBLASLT_REDUCTION_SCHEME_INPLACE) expect |= MUBLASLT_REDUCTION_SCHEME_INPLACE;
    if (mask & CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE)
      expect |= MUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    if (mask & CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE)
      expect |= MUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE;
    uint32_t musa = 0xdead, back = 0xbeef;
    size_t w = 0;
    ASSERT_EQ(f.sim_get(pref, MUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &musa, 4, &w),
              MUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(musa, expect);
    ASSERT_EQ(f.shim_get(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &back, 4, &w),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(back, mask);
  }
  // A bit no scheme has is refused, and the mask stays.
  const uint32_t bad = 8 | CUBLASLT_REDUCTION_SCHEME_INPLACE;
  const std::string log = log_of([&] {
    EXPECT_EQ(f.shim_set(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &bad, 4),
              CUBLAS_STATUS_INVALID_VALUE);
  });
  EXPECT_NE(log.find("CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK"), std::string::npos) << log;
  uint32_t back = 0;
  EXPECT_EQ(f.shim_get(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &back, 4, nullptr),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(back, static_cast<uint32_t>(CUBLASLT_REDUCTION_SCHEME_MASK));
  f.destroy(pref);
}

// ---- The size protocol

TEST_F(Lt, SizeQueriesAndExactSizes) {
  cublasLtMatmulDesc_t desc = nullptr;
  ASSERT_EQ(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), CUBLAS_STATUS_SUCCESS);
  size_t w = 0;
  // buf NULL and sizeInBytes 0: the size, for translated and plain attributes alike.
  EXPECT_EQ(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, nullptr, 0, &w),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(w, sizeof(int32_t));
  w = 0;
  EXPECT_EQ(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, nullptr, 0, &w),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(w, sizeof(uint32_t));
  w = 0;
  EXPECT_EQ(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, nullptr, 0, &w),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(w, sizeof(void*));
  // A size query needs somewhere to write the size.
  EXPECT_EQ(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, nullptr, 0, nullptr),
            CUBLAS_STATUS_INVALID_VALUE);
  // Wrong sizes and NULL buffers, both directions.
  int64_t wide = CUBLAS_OP_T;
  int32_t t = CUBLAS_OP_T;
  EXPECT_EQ(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &wide, sizeof(wide)),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, 2),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, nullptr, 4),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(
      cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &wide, sizeof(wide), &w),
      CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, nullptr, 4, &w),
            CUBLAS_STATUS_INVALID_VALUE);
  const void* p = &t;
  EXPECT_EQ(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &p, 4),
            CUBLAS_STATUS_INVALID_VALUE);
  // Nothing above changed the descriptor.
  int32_t back = -1;
  EXPECT_EQ(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &back, 4, nullptr),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(back, CUBLAS_OP_N);
  EXPECT_EQ(cublasLtMatmulDescDestroy(desc), CUBLAS_STATUS_SUCCESS);

  cublasLtMatrixLayout_t layout = nullptr;
  ASSERT_EQ(cublasLtMatrixLayoutCreate(&layout, CUDA_R_32F, 3, 2, 3), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatrixLayoutGetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_ROWS, nullptr, 0, &w),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(w, sizeof(uint64_t));
  EXPECT_EQ(cublasLtMatrixLayoutGetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_ORDER, nullptr, 0, &w),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(w, sizeof(int32_t));
  EXPECT_EQ(cublasLtMatrixLayoutDestroy(layout), CUBLAS_STATUS_SUCCESS);

  cublasLtMatmulPreference_t pref = nullptr;
  ASSERT_EQ(cublasLtMatmulPreferenceCreate(&pref), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatmulPreferenceGetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                 nullptr, 0, &w),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(w, sizeof(uint64_t));
  const uint32_t narrow = 1024;
  EXPECT_EQ(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                 &narrow, sizeof(narrow)),
            CUBLAS_STATUS_INVALID_VALUE);
  const uint64_t ws = 1 << 20;
  EXPECT_EQ(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                 &ws, sizeof(ws)),
            CUBLAS_STATUS_SUCCESS);
  uint64_t ws_back = 0;
  EXPECT_EQ(cublasLtMatmulPreferenceGetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                 &ws_back, sizeof(ws_back), &w),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(ws_back, ws);
  EXPECT_EQ(cublasLtMatmulPreferenceDestroy(pref), CUBLAS_STATUS_SUCCESS);
}

// ---- Attributes muBLASLt lacks

TEST_F(Lt, AttributesMublasLtLacksAreRefusedByName) {
  cublasLtMatmulDesc_t desc = nullptr;
  ASSERT_EQ(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), CUBLAS_STATUS_SUCCESS);
  const std::pair<cublasLtMatmulDescAttributes_t, const char*> lacking[] = {
      {CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_POINTER,
       "CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_POINTER"},
      {CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_AMAX_POINTER,
       "CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_AMAX_POINTER"},
      // (CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR is the shim's:
      // Lt.EmulatedComputeAndDescriptors; so are D_OUT_SCALE_MODE / _POINTER:
      // tests/programs/cublaslt_mxfp8_out.cc.)
  };
  for (const auto& [attr, name] : lacking) {
    SCOPED_TRACE(name);
    const void* ptr = &desc;
    size_t w = 0;
    std::string log = log_of([&] {
      EXPECT_EQ(cublasLtMatmulDescSetAttribute(desc, attr, &ptr, sizeof(ptr)),
                CUBLAS_STATUS_INVALID_VALUE);
    });
    EXPECT_NE(log.find(std::string(name) + " has no muBLASLt counterpart"), std::string::npos)
        << log;
    log = log_of([&] {
      EXPECT_EQ(cublasLtMatmulDescGetAttribute(desc, attr, nullptr, 0, &w),
                CUBLAS_STATUS_INVALID_VALUE);
    });
    EXPECT_NE(log.find(name), std::string::npos) << log;
  }
  // A number that is no attribute at all (16 lies between two of them).
  const int32_t v = 1;
  const std::string log = log_of([&] {
    EXPECT_EQ(cublasLtMatmulDescSetAttribute(desc, static_cast<cublasLtMatmulDescAttributes_t>(16),
                                             &v, sizeof(v)),
              CUBLAS_STATUS_INVALID_VALUE);
  });
  EXPECT_NE(log.find("attribute 16"), std::string::npos) << log;
  // The algorithm capability muBLASLt's algorithms do not report, in CUDA 12's header only, is
  // covered by Abi12; the FP8 aux attributes are not in the simulated muBLASLt.
  EXPECT_EQ(cublasLtMatmulDescDestroy(desc), CUBLAS_STATUS_SUCCESS);
}

// ---- Heuristics and the algorithm API

// A column-major fp32 problem D = A(m x k) B(k x n) + C.
struct Problem {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  Problem(int m, int n, int k, cudaDataType_t type = CUDA_R_32F) {
    EXPECT_EQ(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cublasLtMatrixLayoutCreate(&a, type, m, k, m), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cublasLtMatrixLayoutCreate(&b, type, k, n, k), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cublasLtMatrixLayoutCreate(&c, type, m, n, m), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cublasLtMatmulPreferenceCreate(&pref), CUBLAS_STATUS_SUCCESS);
  }
  ~Problem() {
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(c);
    cublasLtMatrixLayoutDestroy(b);
    cublasLtMatrixLayoutDestroy(a);
    cublasLtMatmulDescDestroy(desc);
  }
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;
};

TEST_F(Lt, HeuristicResultsAreTranslated) {
  Problem p(8, 6, 4);
  cublasLtMatmulHeuristicResult_t results[20];
  std::memset(results, 0x5a, sizeof(results));
  int returned = -1;
  ASSERT_EQ(cublasLtMatmulAlgoGetHeuristic(handle_, p.desc, p.a, p.b, p.c, p.c, p.pref, 1, results,
                                           &returned),
            CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(returned, 1);
  EXPECT_EQ(results[0].state, CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(results[0].workspaceSize, 0u);
  EXPECT_FLOAT_EQ(results[0].wavesCount, 1.0f);
  // Past the returned count, nothing is written.
  unsigned char pattern[sizeof(results[1])];
  std::memset(pattern, 0x5a, sizeof(pattern));
  EXPECT_EQ(std::memcmp(&results[1], pattern, sizeof(pattern)), 0);
  // More requested than fit on the shim's stack: the same single answer.
  returned = -1;
  ASSERT_EQ(cublasLtMatmulAlgoGetHeuristic(handle_, p.desc, p.a, p.b, p.c, p.c, p.pref, 20, results,
                                           &returned),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(returned, 1);
  // The algorithm is muBLASLt's own: AlgoCheck and the capabilities accept it.
  cublasLtMatmulHeuristicResult_t check;
  std::memset(&check, 0, sizeof(check));
  check.state = CUBLAS_STATUS_INTERNAL_ERROR;
  check.algo = results[0].algo;
  check.algo.data[7] = 0x1234;  // result->algo is never written back
  EXPECT_EQ(cublasLtMatmulAlgoCheck(handle_, p.desc, p.a, p.b, p.c, p.c, &results[0].algo, &check),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(check.state, CUBLAS_STATUS_SUCCESS);
  EXPECT_FLOAT_EQ(check.wavesCount, 1.0f);
  EXPECT_EQ(check.algo.data[7], 0x1234u);
  // LIMITED_BY_ALGO_ID reads results[0].algo as input.
  const uint32_t limited = CUBLASLT_SEARCH_LIMITED_BY_ALGO_ID;
  ASSERT_EQ(cublasLtMatmulPreferenceSetAttribute(p.pref, CUBLASLT_MATMUL_PREF_SEARCH_MODE, &limited,
                                                 sizeof(limited)),
            CUBLAS_STATUS_SUCCESS);
  cublasLtMatmulHeuristicResult_t in = {};
  in.algo = results[0].algo;
  returned = -1;
  EXPECT_EQ(cublasLtMatmulAlgoGetHeuristic(handle_, p.desc, p.a, p.b, p.c, p.c, p.pref, 1, &in,
                                           &returned),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(returned, 1);
  cublasLtMatmulHeuristicResult_t garbage = {};
  EXPECT_EQ(cublasLtMatmulAlgoGetHeuristic(handle_, p.desc, p.a, p.b, p.c, p.c, p.pref, 1, &garbage,
                                           &returned),
            CUBLAS_STATUS_INVALID_VALUE);
}

TEST_F(Lt, HeuristicRefusals) {
  Problem p(8, 6, 4);
  cublasLtMatmulHeuristicResult_t r = {};
  int returned = -1;
  EXPECT_EQ(
      cublasLtMatmulAlgoGetHeuristic(handle_, p.desc, p.a, p.b, p.c, p.c, p.pref, 0, &r, &returned),
      CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasLtMatmulAlgoGetHeuristic(handle_, p.desc, p.a, p.b, p.c, p.c, p.pref, 1, nullptr,
                                           &returned),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(
      cublasLtMatmulAlgoGetHeuristic(handle_, p.desc, p.a, p.b, p.c, p.c, p.pref, 1, &r, nullptr),
      CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(
      cublasLtMatmulAlgoGetHeuristic(nullptr, p.desc, p.a, p.b, p.c, p.c, p.pref, 1, &r, &returned),
      CUBLAS_STATUS_NOT_INITIALIZED);
  // A problem the simulator cannot compute (int8 data): muBLASLt's NOT_IMPLEMENTED is cuBLAS's
  // NOT_SUPPORTED, and no result is reported.
  Problem q(8, 8, 8, CUDA_R_8I);
  returned = -1;
  EXPECT_EQ(
      cublasLtMatmulAlgoGetHeuristic(handle_, q.desc, q.a, q.b, q.c, q.c, q.pref, 1, &r, &returned),
      CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(returned, 0);
  EXPECT_EQ(cublasLtMatmulAlgoCheck(handle_, p.desc, p.a, p.b, p.c, p.c, nullptr, &r),
            CUBLAS_STATUS_INVALID_VALUE);
}

// The configuration layer (shim/cublasLt/algos.cc): every value cuBLASLt defines for each
// configuration attribute is taken and read back as set, whatever muBLASLt's algorithm takes (the
// simulator's takes only its defaults), and the algorithm still checks for a problem; a value
// cuBLASLt does not define (an _END marker, a number past the enum) is refused.
TEST_F(Lt, EveryAlgoConfigValueIsRecorded) {
  const Family f = config_family(handle_);
  Problem p(4, 3, 2);
  struct Attr {
    int cuda;
    size_t size;
    std::vector<int> values;
    std::vector<int> refused;
  };
  const Attr attrs[] = {
      {CUBLASLT_ALGO_CONFIG_TILE_ID,
       4,
       values_of<cublasLtMatmulTile_t>(),
       {CUBLASLT_MATMUL_TILE_END, 100000}},
      {CUBLASLT_ALGO_CONFIG_STAGES_ID,
       4,
       values_of<cublasLtMatmulStages_t>(),
       {CUBLASLT_MATMUL_STAGES_END, 100000}},
      {CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID,
       2,
       values_of<cublasLtMatmulInnerShape_t>(),
       {CUBLASLT_MATMUL_INNER_SHAPE_END, 60000}},
      {CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID,
       2,
       values_of<cublasLtClusterShape_t>(),
       {CUBLASLT_CLUSTER_SHAPE_END, 60000}},
      {CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME,
       4,
       {CUBLASLT_REDUCTION_SCHEME_NONE, CUBLASLT_REDUCTION_SCHEME_INPLACE,
        CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE, CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE},
       {CUBLASLT_REDUCTION_SCHEME_MASK, 8}},
      {CUBLASLT_ALGO_CONFIG_SPLITK_NUM, 4, {0, 1, 2, 4, 16, 1000}, {-1}},
      {CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, 4, {0, 1, 2}, {}},
      {CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, 4, {0, 1, 7}, {}},
  };
  for (const Attr& a : attrs) {
    SCOPED_TRACE(a.cuda);
    void* algo = f.create();
    ASSERT_NE(algo, nullptr);
    int taken = 0;
    for (int v : a.values) {
      bool refused = false;
      for (int r : a.refused) refused = refused || r == v;
      if (refused) continue;
      SCOPED_TRACE(v);
      unsigned char buf[4] = {}, out[4] = {};
      put(buf, a.size, v);
      ASSERT_EQ(f.shim_set(algo, a.cuda, buf, a.size), CUBLAS_STATUS_SUCCESS);
      size_t w = 0;
      ASSERT_EQ(f.shim_get(algo, a.cuda, out, a.size, &w), CUBLAS_STATUS_SUCCESS);
      EXPECT_EQ(take(out, a.size), v);
      EXPECT_EQ(w, a.size);
      // It runs on the simulator's one algorithm: AlgoCheck takes it.
      cublasLtMatmulHeuristicResult_t r = {};
      EXPECT_EQ(cublasLtMatmulAlgoCheck(handle_, p.desc, p.a, p.b, p.c, p.c,
                                        static_cast<cublasLtMatmulAlgo_t*>(algo), &r),
                CUBLAS_STATUS_SUCCESS);
      EXPECT_EQ(r.state, CUBLAS_STATUS_SUCCESS);
      ++taken;
    }
    EXPECT_GT(taken, 1);
    for (int v : a.refused) {
      SCOPED_TRACE(v);
      unsigned char buf[4] = {};
      put(buf, a.size, v);
      EXPECT_EQ(f.shim_set(algo, a.cuda, buf, a.size), CUBLAS_STATUS_INVALID_VALUE);
    }
    // The wrong size is refused; so is setting the id (cublasLtMatmulAlgoInit's).
    unsigned char buf[8] = {};
    EXPECT_EQ(f.shim_set(algo, a.cuda, buf, a.size + 1), CUBLAS_STATUS_INVALID_VALUE);
    EXPECT_EQ(f.shim_set(algo, CUBLASLT_ALGO_CONFIG_ID, buf, 4), CUBLAS_STATUS_INVALID_VALUE);
    f.destroy(algo);
  }
  // An algorithm nobody initialised is no configuration's.
  cublasLtMatmulAlgo_t zero = {};
  const int32_t one = 1;
  EXPECT_EQ(cublasLtMatmulAlgoConfigSetAttribute(&zero, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &one,
                                                 sizeof(one)),
            CUBLAS_STATUS_INVALID_VALUE);
}

// CUDA 13's emulated compute types reach muBLASLt as its native ones and read back as set; the
// emulation descriptors are the shim's own (shim/cublasLt/emulation.cc), read back as set, and a
// matmul descriptor keeps the one it was given.
TEST_F(Lt, EmulatedComputeAndDescriptors) {
  for (auto ct : {CUBLAS_COMPUTE_32F_EMULATED_16BFX9, CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT}) {
    SCOPED_TRACE(ct);
    const cudaDataType_t scale = ct == CUBLAS_COMPUTE_32F_EMULATED_16BFX9 ? CUDA_R_32F : CUDA_R_64F;
    cublasLtMatmulDesc_t desc = nullptr;
    ASSERT_EQ(cublasLtMatmulDescCreate(&desc, ct, scale), CUBLAS_STATUS_SUCCESS);
    int32_t back = -1, musa = -1;
    size_t w = 0;
    ASSERT_EQ(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &back,
                                             sizeof(back), &w),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(back, ct);
    EXPECT_EQ(w, sizeof(back));
    ASSERT_EQ(sim().desc_get(reinterpret_cast<mublasLtMatmulDesc_t>(desc),
                             MUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &musa, sizeof(musa), &w),
              MUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(musa,
              ct == CUBLAS_COMPUTE_32F_EMULATED_16BFX9 ? MUBLAS_COMPUTE_32F : MUBLAS_COMPUTE_64F);
    // Set as an attribute: the native type forgets the note, the emulated one notes it again.
    const int32_t native = CUBLAS_COMPUTE_32F;
    ASSERT_EQ(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &native,
                                             sizeof(native)),
              CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &back,
                                             sizeof(back), &w),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(back, CUBLAS_COMPUTE_32F);
    const int32_t emulated = ct;
    ASSERT_EQ(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &emulated,
                                             sizeof(emulated)),
              CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &back,
                                             sizeof(back), &w),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(back, ct);
    // The emulation descriptor: defaults, settings read back, refusals.
    cublasLtEmulationDesc_t e = nullptr;
    ASSERT_EQ(cublasLtEmulationDescCreate(&e), CUBLAS_STATUS_SUCCESS);
    int32_t v = -1;
    ASSERT_EQ(cublasLtEmulationDescGetAttribute(e, CUBLASLT_EMULATION_DESC_SPECIAL_VALUES_SUPPORT,
                                                &v, sizeof(v), &w),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(v, 0xFFFF);
    const int32_t eager = CUBLAS_EMULATION_STRATEGY_EAGER,
                  fixed = CUDA_EMULATION_MANTISSA_CONTROL_FIXED, bits = 40, offset = -3, bad = 77;
    int32_t* count_ptr = reinterpret_cast<int32_t*>(0x1000);
    EXPECT_EQ(cublasLtEmulationDescSetAttribute(e, CUBLASLT_EMULATION_DESC_STRATEGY, &eager, 4),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cublasLtEmulationDescSetAttribute(
                  e, CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_CONTROL, &fixed, 4),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cublasLtEmulationDescSetAttribute(
                  e, CUBLASLT_EMULATION_DESC_FIXEDPOINT_MAX_MANTISSA_BIT_COUNT, &bits, 4),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cublasLtEmulationDescSetAttribute(
                  e, CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_OFFSET, &offset, 4),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cublasLtEmulationDescSetAttribute(
                  e, CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_COUNT_POINTER, &count_ptr,
                  sizeof(count_ptr)),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cublasLtEmulationDescSetAttribute(e, CUBLASLT_EMULATION_DESC_STRATEGY, &bad, 4),
              CUBLAS_STATUS_INVALID_VALUE);
    EXPECT_EQ(cublasLtEmulationDescSetAttribute(e, CUBLASLT_EMULATION_DESC_STRATEGY, &eager, 8),
              CUBLAS_STATUS_INVALID_VALUE);
    for (auto [attr, want] : {std::pair{CUBLASLT_EMULATION_DESC_STRATEGY, eager},
                              {CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_CONTROL, fixed},
                              {CUBLASLT_EMULATION_DESC_FIXEDPOINT_MAX_MANTISSA_BIT_COUNT, bits},
                              {CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_OFFSET, offset}}) {
      ASSERT_EQ(cublasLtEmulationDescGetAttribute(e, attr, &v, sizeof(v), &w),
                CUBLAS_STATUS_SUCCESS);
      EXPECT_EQ(v, want) << attr;
    }
    int32_t* ptr_back = nullptr;
    ASSERT_EQ(cublasLtEmulationDescGetAttribute(
                  e, CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_COUNT_POINTER, nullptr, 0, &w),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(w, sizeof(ptr_back));
    ASSERT_EQ(cublasLtEmulationDescGetAttribute(
                  e, CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_COUNT_POINTER, &ptr_back,
                  sizeof(ptr_back), &w),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(ptr_back, count_ptr);
    // The matmul descriptor keeps it (NULL before).
    cublasLtEmulationDesc_t got = reinterpret_cast<cublasLtEmulationDesc_t>(0x1);
    ASSERT_EQ(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR, &got,
                                             sizeof(got), &w),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(got, nullptr);
    ASSERT_EQ(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR, &e,
                                             sizeof(e)),
              CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR, &got,
                                             sizeof(got), &w),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(got, e);
    // A stack descriptor, initialised in place.
    cublasLtEmulationDescOpaque_t stack;
    ASSERT_EQ(cublasLtEmulationDescInit(&stack), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cublasLtEmulationDescGetAttribute(&stack, CUBLASLT_EMULATION_DESC_STRATEGY, &v,
                                                sizeof(v), &w),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(v, CUBLAS_EMULATION_STRATEGY_DEFAULT);
    EXPECT_EQ(cublasLtEmulationDescDestroy(e), CUBLAS_STATUS_SUCCESS);
    // Destroying the matmul descriptor forgets its notes: a new one at any address starts plain.
    ASSERT_EQ(cublasLtMatmulDescDestroy(desc), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
              CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &back,
                                             sizeof(back), &w),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(back, CUBLAS_COMPUTE_32F);
    ASSERT_EQ(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR, &got,
                                             sizeof(got), &w),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(got, nullptr);
    ASSERT_EQ(cublasLtMatmulDescDestroy(desc), CUBLAS_STATUS_SUCCESS);
  }
}

TEST_F(Lt, AlgorithmApi) {
  int ids[4] = {-1, -1, -1, -1};
  int n = -1;
  ASSERT_EQ(cublasLtMatmulAlgoGetIds(handle_, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16F,
                                     CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, 4, ids, &n),
            CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(n, 1);
  cublasLtMatmulAlgo_t algo;
  ASSERT_EQ(cublasLtMatmulAlgoInit(handle_, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16F, CUDA_R_16F,
                                   CUDA_R_16F, CUDA_R_16F, ids[0], &algo),
            CUBLAS_STATUS_SUCCESS);
  // CUDA 13's emulated FP32 compute reaches muBLASLt as its native 32F: the same algorithms.
  n = -1;
  EXPECT_EQ(cublasLtMatmulAlgoGetIds(handle_, CUBLAS_COMPUTE_32F_EMULATED_16BFX9, CUDA_R_32F,
                                     CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, 4, ids, &n),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(n, 1);

  size_t w = 0;
  uint32_t u32 = 0;
  // Every epilogue the simulator has, named by cuBLASLt: the mask is their union.
  uint32_t all = 0;
  for (const Mapping& m : kEpilogues) all |= static_cast<uint32_t>(m.cuda);
  ASSERT_EQ(cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_EPILOGUE_MASK, &u32,
                                              sizeof(u32), &w),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(u32, all);
  EXPECT_EQ(w, sizeof(u32));
  ASSERT_EQ(cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_POINTER_MODE_MASK, &u32,
                                              sizeof(u32), &w),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(u32, static_cast<uint32_t>(CUBLASLT_POINTER_MODE_MASK_HOST |
                                       CUBLASLT_POINTER_MODE_MASK_DEVICE |
                                       CUBLASLT_POINTER_MODE_MASK_DEVICE_VECTOR |
                                       CUBLASLT_POINTER_MODE_MASK_ALPHA_DEVICE_VECTOR_BETA_ZERO |
                                       CUBLASLT_POINTER_MODE_MASK_ALPHA_DEVICE_VECTOR_BETA_HOST));
  // The configuration layer's own capabilities (shim/cublasLt/algos.cc): split-K with every
  // reduction scheme, CTA swizzling.
  u32 = 99;
  ASSERT_EQ(cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK, &u32,
                                              sizeof(u32), &w),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(u32, static_cast<uint32_t>(CUBLASLT_REDUCTION_SCHEME_INPLACE |
                                       CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE |
                                       CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE));
  int32_t splitk_support = 0;
  ASSERT_EQ(cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT,
                                              &splitk_support, sizeof(splitk_support), &w),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(splitk_support, 1);
  u32 = 0;
  ASSERT_EQ(cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT, &u32,
                                              sizeof(u32), &w),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(u32, 1u);
  ASSERT_EQ(cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_A_BYTES, &u32,
                                              sizeof(u32), &w),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(u32, 2u);  // fp16 elements
  int32_t i32 = -1;
  ASSERT_EQ(cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_STRIDED_BATCH_SUPPORT, &i32,
                                              sizeof(i32), &w),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(i32, 1);
  uint64_t flags = 0;
  ASSERT_EQ(cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS, &flags,
                                              sizeof(flags), &w),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_TRUE(flags & CUBLASLT_NUMERICAL_IMPL_FLAGS_FMA);
  EXPECT_TRUE(flags & CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_16F);
  // Arrays: the count by size query, then the ids: the configuration layer's tiles and stages
  // (muBLASLt's only one is UNDEFINED, left out as cuBLASLt lists real ones).
  for (auto attr : {CUBLASLT_ALGO_CAP_TILE_IDS, CUBLASLT_ALGO_CAP_STAGES_IDS}) {
    SCOPED_TRACE(attr);
    w = 0;
    ASSERT_EQ(cublasLtMatmulAlgoCapGetAttribute(&algo, attr, nullptr, 0, &w),
              CUBLAS_STATUS_SUCCESS);
    const size_t count = w / sizeof(uint32_t);
    EXPECT_EQ(count, attr == CUBLASLT_ALGO_CAP_TILE_IDS ? 4u : 2u);
    uint32_t arr[8] = {7, 7, 7, 7, 7, 7, 7, 7};
    ASSERT_EQ(cublasLtMatmulAlgoCapGetAttribute(&algo, attr, arr, sizeof(arr), &w),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(w, count * sizeof(uint32_t));
    EXPECT_EQ(arr[0], attr == CUBLASLT_ALGO_CAP_TILE_IDS ? uint32_t{CUBLASLT_MATMUL_TILE_64x64}
                                                         : uint32_t{CUBLASLT_MATMUL_STAGES_32x3});
    EXPECT_EQ(arr[count], 7u);
    // Each advertised id is accepted by the configuration.
    const auto cfg = attr == CUBLASLT_ALGO_CAP_TILE_IDS ? CUBLASLT_ALGO_CONFIG_TILE_ID
                                                        : CUBLASLT_ALGO_CONFIG_STAGES_ID;
    for (size_t i = 0; i < count; ++i)
      EXPECT_EQ(cublasLtMatmulAlgoConfigSetAttribute(&algo, cfg, &arr[i], sizeof(arr[i])),
                CUBLAS_STATUS_SUCCESS);
    // A buffer shorter than one id: refused; one id: the first.
    EXPECT_EQ(cublasLtMatmulAlgoCapGetAttribute(&algo, attr, arr, 2, &w),
              CUBLAS_STATUS_INVALID_VALUE);
    ASSERT_EQ(cublasLtMatmulAlgoCapGetAttribute(&algo, attr, arr, 4, &w), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(w, 4u);
  }
  // Configuration: read back by name, the uint16_t ids at their own size.
  int32_t id = -1;
  ASSERT_EQ(
      cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof(id), &w),
      CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(id, ids[0]);
  EXPECT_EQ(cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID,
                                                 nullptr, 0, &w),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(w, sizeof(uint16_t));
  uint16_t shape = 0xffff;
  EXPECT_EQ(cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID,
                                                 &shape, sizeof(shape), &w),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(shape, static_cast<uint16_t>(CUBLASLT_CLUSTER_SHAPE_AUTO));
  const int32_t splitk = 1;
  EXPECT_EQ(cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk,
                                                 sizeof(splitk)),
            CUBLAS_STATUS_SUCCESS);
  // The configured algorithm still runs a product: checked in the matmul below.
  Problem p(4, 3, 2, CUDA_R_16F);
  cublasLtMatmulHeuristicResult_t r = {};
  EXPECT_EQ(cublasLtMatmulAlgoCheck(handle_, p.desc, p.a, p.b, p.c, p.c, &algo, &r),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(r.state, CUBLAS_STATUS_SUCCESS);
}

// ---- Operations

template <class T>
T* device_copy(const std::vector<T>& h) {
  T* d = nullptr;
  EXPECT_EQ(cudaMalloc(&d, h.size() * sizeof(T)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  return d;
}

TEST_F(Lt, MatrixTransformRowToColumnMajorTransposed) {
  // A: 3 x 5 row-major. C = 2 * A^T: 5 x 3 column-major.
  const int m = 3, n = 5;
  std::vector<float> a(m * n);
  for (int i = 0; i < m * n; ++i) a[i] = static_cast<float>(i * i % 17) - 4.0f;
  float* dA = device_copy(a);
  float* dC = device_copy(std::vector<float>(n * m, -99.0f));
  cublasLtMatrixLayout_t la = nullptr, lc = nullptr;
  ASSERT_EQ(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, m, n, n), CUBLAS_STATUS_SUCCESS);
  const int32_t row = CUBLASLT_ORDER_ROW;
  ASSERT_EQ(cublasLtMatrixLayoutSetAttribute(la, CUBLASLT_MATRIX_LAYOUT_ORDER, &row, sizeof(row)),
            CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, n, m, n), CUBLAS_STATUS_SUCCESS);
  cublasLtMatrixTransformDesc_t t = nullptr;
  ASSERT_EQ(cublasLtMatrixTransformDescCreate(&t, CUDA_R_32F), CUBLAS_STATUS_SUCCESS);
  const int32_t trans = CUBLAS_OP_T;
  ASSERT_EQ(cublasLtMatrixTransformDescSetAttribute(t, CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA,
                                                    &trans, sizeof(trans)),
            CUBLAS_STATUS_SUCCESS);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  const float alpha = 2.0f, beta = 0.0f;
  ASSERT_EQ(
      cublasLtMatrixTransform(handle_, t, &alpha, dA, la, &beta, nullptr, nullptr, dC, lc, stream),
      CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  std::vector<float> c(n * m);
  ASSERT_EQ(cudaMemcpy(c.data(), dC, c.size() * sizeof(float), cudaMemcpyDeviceToHost),
            cudaSuccess);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      EXPECT_EQ(c[j + i * n], 2.0f * a[i * n + j]) << "A(" << i << ", " << j << ")";
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  EXPECT_EQ(cublasLtMatrixTransformDescDestroy(t), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatrixLayoutDestroy(lc), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatrixLayoutDestroy(la), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cudaFree(dC), cudaSuccess);
  EXPECT_EQ(cudaFree(dA), cudaSuccess);
}

std::atomic<int> g_logged{0};
std::atomic<bool> g_named_matmul{false};
void logger_callback(int, const char* function, const char*) {
  g_logged.fetch_add(1);
  if (function != nullptr && std::strstr(function, "Matmul") != nullptr) g_named_matmul = true;
}

// D = A B with an epilogue, through the Logger calls (forwarded): muBLASLt's API trace reaches
// the caller's callback.
TEST_F(Lt, MatmulWithEpilogueAndLogger) {
  const int m = 4, n = 3, k = 2;
  const std::vector<float> a = {1, -2, 3, -4, 0.5f, 0.25f, -1, 2};  // 4 x 2
  const std::vector<float> b = {1, 2, -3, 1, 0, -1};                // 2 x 3
  const std::vector<float> bias = {0.5f, -0.5f, 1, -1};
  float* dA = device_copy(a);
  float* dB = device_copy(b);
  float* dD = device_copy(std::vector<float>(m * n, 0.0f));
  float* dBias = device_copy(bias);
  Problem p(m, n, k);
  const uint32_t e = CUBLASLT_EPILOGUE_RELU_BIAS;
  ASSERT_EQ(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof(e)),
            CUBLAS_STATUS_SUCCESS);
  const void* bp = dBias;
  ASSERT_EQ(
      cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bp, sizeof(bp)),
      CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasLtLoggerSetCallback(&logger_callback), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasLtLoggerSetMask(16), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtLoggerSetLevel(6), CUBLAS_STATUS_INVALID_VALUE);
  const float alpha = 1.0f, beta = 0.0f;
  ASSERT_EQ(cublasLtMatmul(handle_, p.desc, &alpha, dA, p.a, dB, p.b, &beta, dD, p.c, dD, p.c,
                           nullptr, nullptr, 0, nullptr),
            CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<float> d(m * n);
  ASSERT_EQ(cudaMemcpy(d.data(), dD, d.size() * sizeof(float), cudaMemcpyDeviceToHost),
            cudaSuccess);
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < m; ++i) {
      float x = bias[i];
      for (int l = 0; l < k; ++l) x += a[i + l * m] * b[l + j * k];
      EXPECT_FLOAT_EQ(d[i + j * m], x > 0 ? x : 0) << i << ", " << j;
    }
  }
  EXPECT_GT(g_logged.load(), 0);
  EXPECT_TRUE(g_named_matmul.load());
  ASSERT_EQ(cublasLtLoggerSetCallback(nullptr), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasLtLoggerSetMask(0), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtLoggerOpenFile(nullptr), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cudaFree(dBias), cudaSuccess);
  EXPECT_EQ(cudaFree(dD), cudaSuccess);
  EXPECT_EQ(cudaFree(dB), cudaSuccess);
  EXPECT_EQ(cudaFree(dA), cudaSuccess);
}

// ---- Refusals by muBLASLt: each names its function (or attribute) once in the log. These run in
// a process of their own (ctest shim.cublasLt.refusals, TORCHADA_LOG_LEVEL=info), so that each
// refusal here is the process's first.

TEST_F(Lt, RefusalsAreNamedOnce) {
  // int8 data: the simulated muBLASLt has no algorithm for it (NOT_IMPLEMENTED).
  Problem q(8, 8, 8, CUDA_R_8I);
  cublasLtMatmulHeuristicResult_t r = {};
  int returned = -1;
  const auto heuristic = [&] {
    EXPECT_EQ(cublasLtMatmulAlgoGetHeuristic(handle_, q.desc, q.a, q.b, q.c, q.c, q.pref, 1, &r,
                                             &returned),
              CUBLAS_STATUS_NOT_SUPPORTED);
  };
  std::string log = log_of(heuristic);
  EXPECT_NE(log.find("cublasLtMatmulAlgoGetHeuristic: muBLASLt does not support this call"),
            std::string::npos)
      << log;
  log = log_of(heuristic);
  EXPECT_EQ(log.find("does not support"), std::string::npos) << log;

  // A forwarded call: cublasLtMatmul on the same problem.
  const float alpha = 1.0f, beta = 0.0f;
  const auto matmul = [&] {
    EXPECT_EQ(cublasLtMatmul(handle_, q.desc, &alpha, nullptr, q.a, nullptr, q.b, &beta, nullptr,
                             q.c, nullptr, q.c, nullptr, nullptr, 0, nullptr),
              CUBLAS_STATUS_NOT_SUPPORTED);
  };
  log = log_of(matmul);
  EXPECT_NE(log.find("cublasLtMatmul: muBLASLt does not support this call"), std::string::npos)
      << log;
  log = log_of(matmul);
  EXPECT_EQ(log.find("does not support"), std::string::npos) << log;

  // An algorithm for types muBLASLt has none for (no default to fall back on either).
  cublasLtMatmulAlgo_t algo;
  const auto init = [&] {
    EXPECT_EQ(cublasLtMatmulAlgoInit(handle_, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_8I, CUDA_R_8I,
                                     CUDA_R_8I, CUDA_R_8I, 0, &algo),
              CUBLAS_STATUS_NOT_SUPPORTED);
  };
  log = log_of(init);
  EXPECT_NE(log.find("cublasLtMatmulAlgoInit: muBLASLt does not support this call: no algorithm "
                     "for these types"),
            std::string::npos)
      << log;
  log = log_of(init);
  EXPECT_EQ(log.find("does not support"), std::string::npos) << log;

  // A planar complex layout (a non-zero plane offset), which the simulator's muBLASLt refuses:
  // recorded by the shim (emulated, shim/cublasLt/emulated_layouts.cc), no warning, read back;
  // 0 forgets it.
  const int64_t plane = 64;
  log = log_of([&] {
    EXPECT_EQ(cublasLtMatrixLayoutSetAttribute(q.a, CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, &plane,
                                               sizeof(plane)),
              CUBLAS_STATUS_SUCCESS);
  });
  EXPECT_EQ(log.find("PLANE_OFFSET"), std::string::npos) << log;
  int64_t got = -1;
  size_t written = 0;
  EXPECT_EQ(cublasLtMatrixLayoutGetAttribute(q.a, CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, &got,
                                             sizeof(got), &written),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(got, plane);
  const int64_t zero = 0;
  EXPECT_EQ(cublasLtMatrixLayoutSetAttribute(q.a, CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, &zero,
                                             sizeof(zero)),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatrixLayoutGetAttribute(q.a, CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, &got,
                                             sizeof(got), &written),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(got, 0);
}

// cuBLASLt's tiled IMMA orders: muBLASLt has no such layouts. The shim records the order
// (emulated: shim/cublasLt/emulated_layouts.cc) with no warning; another order forgets it.
TEST_F(Lt, AttributesImmaOrdersAreRecorded) {
  cublasLtMatrixLayout_t layout = nullptr;
  ASSERT_EQ(cublasLtMatrixLayoutCreate(&layout, CUDA_R_8I, 32, 32, 1024), CUBLAS_STATUS_SUCCESS);
  const int32_t orders[] = {CUBLASLT_ORDER_COL32, CUBLASLT_ORDER_COL4_4R2_8C,
                            CUBLASLT_ORDER_COL32_2R_4R4, CUBLASLT_ORDER_ROW};
  for (const int32_t order : orders) {
    SCOPED_TRACE(order);
    const std::string log = log_of([&] {
      EXPECT_EQ(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_ORDER, &order,
                                                 sizeof(order)),
                CUBLAS_STATUS_SUCCESS);
    });
    EXPECT_EQ(log.find("warn"), std::string::npos) << log;
    int32_t got = -1;
    size_t written = 0;
    EXPECT_EQ(cublasLtMatrixLayoutGetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_ORDER, &got,
                                               sizeof(got), &written),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(got, order);
    EXPECT_EQ(written, sizeof(got));
  }
  EXPECT_EQ(cublasLtMatrixLayoutDestroy(layout), CUBLAS_STATUS_SUCCESS);
}

// An algorithm id muBLASLt does not know: its default algorithm stands in (logged once at info
// level), and the product is the host reference's.
TEST_F(Lt, RefusalsAlgoInitUnknownIdTakesTheDefault) {
  cublasLtMatmulAlgo_t algo;
  std::memset(&algo, 0, sizeof(algo));
  std::string log = log_of([&] {
    EXPECT_EQ(cublasLtMatmulAlgoInit(handle_, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F,
                                     CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, 4242, &algo),
              CUBLAS_STATUS_SUCCESS);
  });
  EXPECT_NE(log.find("cublasLtMatmulAlgoInit: muBLASLt has no algorithm 4242 for these types; its "
                     "default algorithm 0 stands in"),
            std::string::npos)
      << log;
  log = log_of([&] {
    EXPECT_EQ(cublasLtMatmulAlgoInit(handle_, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F,
                                     CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, 4242, &algo),
              CUBLAS_STATUS_SUCCESS);
  });
  EXPECT_EQ(log.find("has no algorithm"), std::string::npos) << log;
  // The algorithm reports the id the program initialised (it runs muBLASLt's default).
  int32_t id = -1;
  size_t w = 0;
  ASSERT_EQ(
      cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof(id), &w),
      CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(id, 4242);

  // D = 2 A B + 0.5 C with that algorithm.
  const int m = 4, n = 3, k = 2;
  const std::vector<float> a = {1, -2, 3, -4, 0.5f, 0.25f, -1, 2};  // 4 x 2
  const std::vector<float> b = {1, 2, -3, 1, 0, -1};                // 2 x 3
  const std::vector<float> c = {1, 2, 3, 4, -1, -2, -3, -4, 0.5f, 0, 8, -8};
  float* dA = device_copy(a);
  float* dB = device_copy(b);
  float* dC = device_copy(c);
  float* dD = device_copy(std::vector<float>(m * n, -99.0f));
  Problem p(m, n, k);
  const float alpha = 2.0f, beta = 0.5f;
  ASSERT_EQ(cublasLtMatmul(handle_, p.desc, &alpha, dA, p.a, dB, p.b, &beta, dC, p.c, dD, p.c,
                           &algo, nullptr, 0, nullptr),
            CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<float> d(m * n);
  ASSERT_EQ(cudaMemcpy(d.data(), dD, d.size() * sizeof(float), cudaMemcpyDeviceToHost),
            cudaSuccess);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      float x = 0;
      for (int l = 0; l < k; ++l) x += a[i + l * m] * b[l + j * k];
      EXPECT_FLOAT_EQ(d[i + j * m], alpha * x + beta * c[i + j * m]) << i << ", " << j;
    }
  for (float* ptr : {dA, dB, dC, dD}) EXPECT_EQ(cudaFree(ptr), cudaSuccess);
}

// ---- The CUDA 12 ABI: libcublasLt.so.12's names are the shim's too, translated against CUDA
// 12's header (its attribute list differs: ATOMIC_SYNC_* instead of EMULATION_DESCRIPTOR).

TEST_F(Lt, Abi12) {
  using SetFn =
      cublasStatus_t (*)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, const void*, size_t);
  using GetFn = cublasStatus_t (*)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, void*,
                                   size_t, size_t*);
  using CapFn = cublasStatus_t (*)(const cublasLtMatmulAlgo_t*, cublasLtMatmulAlgoCapAttributes_t,
                                   void*, size_t, size_t*);
  using VersionFn = size_t (*)();
  auto set12 = reinterpret_cast<SetFn>(
      dlvsym(RTLD_DEFAULT, "cublasLtMatmulDescSetAttribute", "libcublasLt.so.12"));
  auto get12 = reinterpret_cast<GetFn>(
      dlvsym(RTLD_DEFAULT, "cublasLtMatmulDescGetAttribute", "libcublasLt.so.12"));
  auto cap12 = reinterpret_cast<CapFn>(
      dlvsym(RTLD_DEFAULT, "cublasLtMatmulAlgoCapGetAttribute", "libcublasLt.so.12"));
  auto version12 =
      reinterpret_cast<VersionFn>(dlvsym(RTLD_DEFAULT, "cublasLtGetVersion", "libcublasLt.so.12"));
  ASSERT_NE(set12, nullptr);
  ASSERT_NE(get12, nullptr);
  ASSERT_NE(cap12, nullptr);
  ASSERT_NE(version12, nullptr);
  Dl_info info{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(set12), &info), 0);
  EXPECT_NE(std::strstr(info.dli_fname, "libtorchada"), nullptr) << info.dli_fname;
  EXPECT_NE(reinterpret_cast<void*>(set12),
            reinterpret_cast<void*>(&cublasLtMatmulDescSetAttribute));
  EXPECT_EQ(version12() / 10000, 12u);

  cublasLtMatmulDesc_t desc = nullptr;
  ASSERT_EQ(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), CUBLAS_STATUS_SUCCESS);
  const int32_t t = CUBLAS_OP_T;
  EXPECT_EQ(set12(desc, CUBLASLT_MATMUL_DESC_TRANSB, &t, sizeof(t)), CUBLAS_STATUS_SUCCESS);
  int32_t back = -1;
  EXPECT_EQ(get12(desc, CUBLASLT_MATMUL_DESC_TRANSB, &back, sizeof(back), nullptr),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(back, CUBLAS_OP_T);
  int32_t musa = -1;
  size_t w = 0;
  ASSERT_EQ(sim().desc_get(reinterpret_cast<mublasLtMatmulDesc_t>(desc),
                           MUBLASLT_MATMUL_DESC_TRANSB, &musa, sizeof(musa), &w),
            MUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(musa, MUBLAS_OP_T);
  const uint32_t e = CUBLASLT_EPILOGUE_DGELU_BGRAD;
  EXPECT_EQ(set12(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof(e)), CUBLAS_STATUS_SUCCESS);
  uint32_t me = 0;
  ASSERT_EQ(sim().desc_get(reinterpret_cast<mublasLtMatmulDesc_t>(desc),
                           MUBLASLT_MATMUL_DESC_EPILOGUE, &me, sizeof(me), &w),
            MUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(me, static_cast<uint32_t>(MUBLASLT_EPILOGUE_DGELU_BGRAD));

  // 27 is CUDA 12's CUBLASLT_MATMUL_DESC_ATOMIC_SYNC_NUM_CHUNKS_D_ROWS and no CUDA 13 attribute.
  const auto atomic_sync = static_cast<cublasLtMatmulDescAttributes_t>(27);
  const int32_t chunks = 2;
  std::string log = log_of([&] {
    EXPECT_EQ(set12(desc, atomic_sync, &chunks, sizeof(chunks)), CUBLAS_STATUS_INVALID_VALUE);
  });
  EXPECT_NE(
      log.find("CUBLASLT_MATMUL_DESC_ATOMIC_SYNC_NUM_CHUNKS_D_ROWS has no muBLASLt counterpart"),
      std::string::npos)
      << log;
  log = log_of([&] {
    EXPECT_EQ(cublasLtMatmulDescSetAttribute(desc, atomic_sync, &chunks, sizeof(chunks)),
              CUBLAS_STATUS_INVALID_VALUE);
  });
  EXPECT_NE(log.find("attribute 27"), std::string::npos) << log;
  // CUDA 13's EMULATION_DESCRIPTOR (38) is no CUDA 12 attribute.
  const void* none = nullptr;
  log = log_of([&] {
    EXPECT_EQ(set12(desc, CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR, &none, sizeof(none)),
              CUBLAS_STATUS_INVALID_VALUE);
  });
  EXPECT_NE(log.find("attribute 38"), std::string::npos) << log;

  // CUDA 12's CUBLASLT_ALGO_CAP_ATOMIC_SYNC (20): no muBLASLt counterpart.
  cublasLtMatmulAlgo_t algo;
  ASSERT_EQ(cublasLtMatmulAlgoInit(handle_, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                                   CUDA_R_32F, CUDA_R_32F, 0, &algo),
            CUBLAS_STATUS_SUCCESS);
  int32_t cap = -1;
  log = log_of([&] {
    EXPECT_EQ(
        cap12(&algo, static_cast<cublasLtMatmulAlgoCapAttributes_t>(20), &cap, sizeof(cap), &w),
        CUBLAS_STATUS_INVALID_VALUE);
  });
  EXPECT_NE(log.find("CUBLASLT_ALGO_CAP_ATOMIC_SYNC has no muBLASLt counterpart"),
            std::string::npos)
      << log;
  uint32_t mask = 0;
  EXPECT_EQ(cap12(&algo, CUBLASLT_ALGO_CAP_EPILOGUE_MASK, &mask, sizeof(mask), &w),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_TRUE(mask & CUBLASLT_EPILOGUE_GELU_BIAS);
  EXPECT_EQ(cublasLtMatmulDescDestroy(desc), CUBLAS_STATUS_SUCCESS);
}

// ---- Against tests/shim/cublasLt/fake_mublasLt.cc: states and values the simulator never
// produces.

class LtFake : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!under_shim()) GTEST_SKIP() << "needs LD_PRELOAD=libtorchada.so (ctest sets it)";
    if (!fake_mode()) GTEST_SKIP() << "needs CUBLASLT_TEST_FAKE=1 and the fake muBLASLt";
    ASSERT_EQ(cublasLtCreate(&handle_), CUBLAS_STATUS_SUCCESS);
    lib_ = dlopen("libmublasLt.so.1", RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(lib_, nullptr);
    ASSERT_NE(dlsym(lib_, "fake_mublasLt_seen_algo"), nullptr) << "not the fake muBLASLt";
  }
  uint64_t seen_algo() {
    return reinterpret_cast<uint64_t (*)()>(dlsym(lib_, "fake_mublasLt_seen_algo"))();
  }
  cublasLtHandle_t handle_ = nullptr;
  void* lib_ = nullptr;
  // The fake reads none of these.
  cublasLtMatmulDesc_t desc_ = reinterpret_cast<cublasLtMatmulDesc_t>(&dummy_[0]);
  cublasLtMatrixLayout_t layout_ = reinterpret_cast<cublasLtMatrixLayout_t>(&dummy_[8]);
  cublasLtMatmulPreference_t pref_ = reinterpret_cast<cublasLtMatmulPreference_t>(&dummy_[16]);
  uint64_t dummy_[32] = {};
};

TEST_F(LtFake, HeuristicStatesAreTranslated) {
  cublasLtMatmulHeuristicResult_t r[8];
  std::memset(r, 0, sizeof(r));
  r[0].algo.data[0] = 0xabcdef;  // handed to muBLASLt as input
  int returned = -1;
  ASSERT_EQ(cublasLtMatmulAlgoGetHeuristic(handle_, desc_, layout_, layout_, layout_, layout_,
                                           pref_, 8, r, &returned),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(seen_algo(), 0xabcdefu);
  ASSERT_EQ(returned, 6);
  // The fake answers muBLASLt statuses SUCCESS, NOT_IMPLEMENTED, MEMORY_ERROR, INVALID_HANDLE,
  // PERF_DEGRADED and 14 (no such status).
  const cublasStatus_t want[6] = {CUBLAS_STATUS_SUCCESS,      CUBLAS_STATUS_NOT_SUPPORTED,
                                  CUBLAS_STATUS_ALLOC_FAILED, CUBLAS_STATUS_NOT_INITIALIZED,
                                  CUBLAS_STATUS_SUCCESS,      CUBLAS_STATUS_INTERNAL_ERROR};
  for (int i = 0; i < 6; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(r[i].state, want[i]);
    EXPECT_EQ(r[i].workspaceSize, 1000u * i);
    EXPECT_FLOAT_EQ(r[i].wavesCount, 0.5f * i);
    EXPECT_EQ(r[i].reserved[3], 40 + i);
  }
  // Each result's algorithm is the shim's record of the fake's (shim/cublasLt/algos.cc): handed
  // back to muBLASLt (LIMITED_BY_ALGO_ID reads results[0].algo), it is the fake's again.
  for (int i = 0; i < 6; ++i) {
    SCOPED_TRACE(i);
    cublasLtMatmulHeuristicResult_t again[1];
    std::memset(again, 0, sizeof(again));
    again[0].algo = r[i].algo;
    ASSERT_EQ(cublasLtMatmulAlgoGetHeuristic(handle_, desc_, layout_, layout_, layout_, layout_,
                                             pref_, 1, again, &returned),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(seen_algo(), 200u + i);
    if (i > 0) {
      EXPECT_NE(std::memcmp(&r[i].algo, &r[i - 1].algo, sizeof(r[i].algo)), 0);
    }
  }
  EXPECT_EQ(r[6].state, CUBLAS_STATUS_SUCCESS);  // untouched (zero)
  EXPECT_EQ(r[6].workspaceSize, 0u);
}

TEST_F(LtFake, AlgoCheckStateIsTranslatedAndAlgoKept) {
  cublasLtMatmulHeuristicResult_t r;
  std::memset(&r, 0, sizeof(r));
  r.algo.data[2] = 77;
  ASSERT_EQ(
      cublasLtMatmulAlgoCheck(handle_, desc_, layout_, layout_, layout_, layout_, &r.algo, &r),
      CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(seen_algo(), 77u);     // the algo went in
  EXPECT_EQ(r.algo.data[2], 77u);  // and the fake's scribble on result->algo did not come out
  EXPECT_EQ(r.state, CUBLAS_STATUS_ALLOC_FAILED);  // MUBLAS_STATUS_MEMORY_ERROR
  EXPECT_EQ(r.workspaceSize, 4096u);
  EXPECT_FLOAT_EQ(r.wavesCount, 2.0f);
}

TEST_F(LtFake, ValuesCublasLtCannotNameAreNotPassedOn) {
  // The fake reports an epilogue no cuBLASLt epilogue maps to.
  uint32_t e = 12345;
  const std::string log = log_of([&] {
    EXPECT_EQ(cublasLtMatmulDescGetAttribute(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof(e),
                                             nullptr),
              CUBLAS_STATUS_NOT_SUPPORTED);
  });
  EXPECT_EQ(e, 12345u);
  EXPECT_NE(log.find("CUBLASLT_MATMUL_DESC_EPILOGUE"), std::string::npos) << log;
  // Tile ids: the fake has UNDEFINED, an id cuBLASLt cannot name, and UNDEFINED again.
  cublasLtMatmulAlgo_t algo = {};
  uint32_t tiles[4] = {9, 9, 9, 9};
  size_t w = 0;
  ASSERT_EQ(cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_TILE_IDS, tiles,
                                              sizeof(tiles), &w),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(w, 2 * sizeof(uint32_t));
  EXPECT_EQ(tiles[0], 0u);
  EXPECT_EQ(tiles[1], 0u);
  EXPECT_EQ(tiles[2], 9u);
  // Epilogue mask: RELU and BIAS in muBLASLt's encoding, plus a bit no epilogue has.
  uint32_t mask = 0;
  ASSERT_EQ(cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_EPILOGUE_MASK, &mask,
                                              sizeof(mask), &w),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(mask, static_cast<uint32_t>(CUBLASLT_EPILOGUE_RELU | CUBLASLT_EPILOGUE_BIAS));
  // Functions the fake lacks: muBLASLt without them, like an SDK that predates them.
  EXPECT_EQ(cublasLtMatrixTransform(handle_, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                    nullptr, nullptr, nullptr, nullptr),
            CUBLAS_STATUS_NOT_SUPPORTED);
}

}  // namespace
