// symbols/cudart.txt against reality: NVIDIA's libcudart.so.12 and .13 export tables (read from
// their ELF dynamic symbol tables) and the built libtorchada.so's.
//  - every function NVIDIA exports has a row for that ABI (a new CUDA release fails here);
//  - no row names a function NVIDIA does not export;
//  - libtorchada.so exports each in the version node of its ABI, and nothing else.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "elf_exports.h"

namespace {

std::set<std::string> table_names(const std::string& abi) {
  std::ifstream in(TORCHADA_SYMBOLS_TABLE);
  std::set<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name, abis;
    fields >> name >> abis;
    if (("," + abis + ",").find("," + abi + ",") != std::string::npos) out.insert(name);
  }
  return out;
}

std::set<std::string> nvidia_names(const char* path, const std::string& node) {
  ElfExports e = read_elf_exports(path);
  EXPECT_EQ(e.error, "");
  std::set<std::string> out;
  for (const std::string& n : e.names) {
    auto at = n.find('@');
    EXPECT_NE(at, std::string::npos) << n << " is unversioned in NVIDIA's library";
    if (at != std::string::npos && n.substr(n.rfind('@') + 1) == node) out.insert(n.substr(0, at));
  }
  return out;
}

void check_abi(const char* nvidia_path, const std::string& abi) {
  const std::string node = "libcudart.so." + abi;
  std::set<std::string> nvidia = nvidia_names(nvidia_path, node);
  std::set<std::string> table = table_names(abi);
  ASSERT_GT(nvidia.size(), 400u);
  for (const auto& n : nvidia) EXPECT_TRUE(table.count(n)) << n << "@" << node << " has no row";
  for (const auto& n : table)
    EXPECT_TRUE(nvidia.count(n)) << n << " (" << abi << ") is not NVIDIA's";

  ElfExports ours = read_elf_exports(TORCHADA_SHIM_PATH);
  ASSERT_EQ(ours.error, "");
  for (const auto& n : table) {
    const bool exported = ours.names.count(n + "@@" + node) || ours.names.count(n + "@" + node);
    EXPECT_TRUE(exported) << "libtorchada.so lacks " << n << "@" << node;
  }
}

TEST(Exports, Cudart13TableMatchesNvidiaAndShim) { check_abi(TORCHADA_CUDART13, "13"); }
TEST(Exports, Cudart12TableMatchesNvidiaAndShim) { check_abi(TORCHADA_CUDART12, "12"); }

TEST(Exports, ShimExportsNothingOutsideTheVersionNodes) {
  ElfExports ours = read_elf_exports(TORCHADA_SHIM_PATH);
  ASSERT_EQ(ours.error, "");
  for (const auto& n : ours.names)
    EXPECT_NE(n.find("@libcudart.so.1"), std::string::npos) << n << " leaks from libtorchada.so";
}

TEST(Exports, MalformedFilesGiveErrors) {
  EXPECT_NE(read_elf_exports("/nonexistent").error, "");
  EXPECT_NE(read_elf_exports(TORCHADA_SYMBOLS_TABLE).error, "");  // a text file
}

}  // namespace
