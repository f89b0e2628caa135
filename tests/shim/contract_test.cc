// Contract test: drives every exported cuda* function of both ABIs through libtorchada.so, loaded
// the way a real process loads it, against a recording mock of the MUSA runtime (the real
// backend-loading path, pointed at the mock with TORCHADA_MUSA_LIB_DIR).
//
//  - forward rows reach exactly their musa* function, with every argument word as passed, and
//    the mock's error codes come back translated;
//  - unsupported and kernel rows never reach the backend and never report success;
//  - every row survives value-initialised (NULL) arguments; rows with outputs then fail.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "contract.h"

namespace {

void* g_shim = nullptr;
void* g_mock = nullptr;

void* lookup(const char* name, const char* version) { return dlvsym(g_shim, name, version); }

template <class T>
T mock_fn(const char* name) {
  return reinterpret_cast<T>(dlsym(g_mock, name));
}

class Contract : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("TORCHADA_LOG_LEVEL", "error", 1);
    if (const char* sim = std::getenv("CONTRACT_SIM_DIR")) {
      // The same calls against the simulator: a real runtime's NULL handling, no recording.
      setenv("TORCHADA_BACKEND", "sim", 1);
      setenv("TORCHADA_SIM_LIB_DIR", sim, 1);
    } else {
      setenv("TORCHADA_BACKEND", "musa", 1);
      setenv("TORCHADA_MUSA_LIB_DIR", TORCHADA_MOCK_DIR, 1);
      g_mock = dlopen(TORCHADA_MOCK_DIR "/libmusart.so", RTLD_NOW | RTLD_LOCAL);
      ASSERT_NE(g_mock, nullptr) << dlerror();
    }
    g_shim = dlopen(TORCHADA_SHIM_PATH, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(g_shim, nullptr) << dlerror();
    // The first call loads the backend (which queries its versions); tests count calls after it.
    int n = 0;
    using Count = int (*)(int*);
    ASSERT_EQ(reinterpret_cast<Count>(lookup("cudaGetDeviceCount", "libcudart.so.13"))(&n), 0);
  }
  void reset(int result) {
    if (g_mock) mock_fn<void (*)(int)>("torchada_mock_reset")(result);
  }
  void SetUp() override {
    if (!g_mock && std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) !=
                       "NullArgumentsAreErrorsNotCrashes")
      GTEST_SKIP() << "recording checks need the mock backend (CONTRACT_SIM_DIR is set)";
  }
  int calls() { return mock_fn<int (*)()>("torchada_mock_calls")(); }
  std::string name(int i) {
    const char* n = mock_fn<const char* (*)(int)>("torchada_mock_name")(i);
    return n ? n : "";
  }
  std::vector<std::uint64_t> words(int i) {
    std::uint64_t w[32];
    int n = mock_fn<int (*)(int, std::uint64_t*, int)>("torchada_mock_words")(i, w, 32);
    return n < 0 ? std::vector<std::uint64_t>{} : std::vector<std::uint64_t>(w, w + n);
  }

  void check_table(const ContractRow* rows, std::size_t count, const char* abi) {
    int forwarded = 0, refused = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const ContractRow& r = rows[i];
      SCOPED_TRACE(std::string(r.name) + "@libcudart.so." + abi + " (" + r.disposition + ")");
      ASSERT_NE(lookup(r.name, (std::string("libcudart.so.") + abi).c_str()), nullptr);
      const std::string disp = r.disposition;
      if (disp == "forward") {
        reset(0);
        EXPECT_EQ(r.call_sentinel(lookup), 0);
        ASSERT_EQ(calls(), 1);
        EXPECT_EQ(name(0), r.target);
        std::vector<std::uint64_t> got = words(0);
        ASSERT_EQ(got.size(), r.words.size());
        for (std::size_t k = 0; k < got.size(); ++k) {
          if (r.words[k] != kAny && got[k] != kAny) {
            EXPECT_EQ(got[k], r.words[k]) << "argument " << k;
          }
        }
        reset(1);  // musaErrorInvalidValue
        EXPECT_EQ(r.call_sentinel(lookup), 1);
        reset(2);  // musaErrorMemoryAllocation
        EXPECT_EQ(r.call_sentinel(lookup), 2);
        ++forwarded;
      } else if (disp == "unsupported" || disp == "kernel") {
        reset(0);
        int rc = r.call_zero(lookup);
        EXPECT_NE(rc, 0) << "an unsupported call must never report success";
        if (disp == "unsupported") {
          EXPECT_EQ(rc, 801);  // cudaErrorNotSupported
        } else {
          EXPECT_TRUE(rc == 98 || rc == 209) << rc;  // InvalidDeviceFunction / NoKernelImage
        }
        EXPECT_EQ(calls(), 0) << "must not reach the backend";
        ++refused;
      } else {
        reset(0);
        (void)r.call_zero(lookup);  // translate / shim: must survive NULL arguments
        if (calls() > 0 && r.target[0]) {
          bool reached = false;
          for (int c = 0; c < calls(); ++c)
            reached |= name(c) == r.target || name(c) == "musaGetLastError" ||
                       name(c) == "musaGetDeviceCount";
          EXPECT_TRUE(reached) << "reached " << name(0) << " instead of " << r.target;
        }
      }
    }
    EXPECT_GT(forwarded, 100);
    EXPECT_GT(refused, 100);
  }
};

TEST_F(Contract, Cuda13Exports) { check_table(contract13::kRows, contract13::kRowCount, "13"); }
TEST_F(Contract, Cuda12Exports) { check_table(contract12::kRows, contract12::kRowCount, "12"); }

// Value-initialised arguments everywhere: NULL outputs make every row with outputs fail, and
// nothing crashes (rows with no outputs may legitimately succeed, e.g. cudaDeviceSynchronize).
TEST_F(Contract, NullArgumentsAreErrorsNotCrashes) {
  struct Table {
    const ContractRow* rows;
    std::size_t count;
    const char* abi;
  };
  for (const Table& t : {Table{contract13::kRows, contract13::kRowCount, "13"},
                         Table{contract12::kRows, contract12::kRowCount, "12"}}) {
    const ContractRow* rows = t.rows;
    const std::size_t count = t.count;
    const char* abi = t.abi;
    for (std::size_t i = 0; i < count; ++i) {
      const ContractRow& r = rows[i];
      SCOPED_TRACE(std::string(r.name) + "@" + abi);
      reset(1);  // the mock backend rejects, as a real one does for NULL outputs
      int rc = r.call_zero(lookup);
      // cudaSetValidDevices(int* device_arr, int len) reads its array: NULL with len 0 is valid.
      const bool input_array = std::strcmp(r.name, "cudaSetValidDevices") == 0;
      if (r.out_params > 0 && std::strcmp(r.disposition, "shim") != 0 && !input_array) {
        EXPECT_NE(rc, 0);
      }
    }
  }
}

// The two version nodes hold different implementations where the ABIs differ.
TEST_F(Contract, VersionNodesDifferWhereAbisDiffer) {
  void* v12 = lookup("cudaMemAdvise", "libcudart.so.12");
  void* v13 = lookup("cudaMemAdvise", "libcudart.so.13");
  ASSERT_NE(v12, nullptr);
  ASSERT_NE(v13, nullptr);
  EXPECT_NE(v12, v13);
  EXPECT_EQ(dlsym(g_shim, "cudaMemAdvise"), v13) << "the default version is CUDA 13's";
  EXPECT_NE(lookup("cudaThreadSynchronize", "libcudart.so.12"), nullptr);
  EXPECT_EQ(lookup("cudaThreadSynchronize", "libcudart.so.13"), nullptr);
}

// An unsupported call zeroes the outputs it is given, and says so through cudaGetLastError.
TEST_F(Contract, UnsupportedZeroesOutputsAndSetsLastError) {
  using PoolCreate = int (*)(void**, const void*);
  auto create = reinterpret_cast<PoolCreate>(lookup("cudaMemPoolCreate", "libcudart.so.13"));
  ASSERT_NE(create, nullptr);
  void* pool = reinterpret_cast<void*>(0x1234);
  char props[256] = {};
  EXPECT_EQ(create(&pool, props), 801);
  EXPECT_EQ(pool, nullptr);
  auto last = reinterpret_cast<int (*)()>(lookup("cudaGetLastError", "libcudart.so.13"));
  reset(0);
  EXPECT_EQ(last(), 801);
  EXPECT_EQ(last(), 0) << "cudaGetLastError clears the error";
}

}  // namespace
