// The pinned PyTorch (scripts/setup-torch.sh, .venv) against libtorchada.so: every function
// torch/lib/*.so import from the libraries torchada replaces (libcudart.so.13, libcublas.so.13,
// libcublasLt.so.13 by version node; libnccl.so.2's unversioned nccl* names) is defined by
// libtorchada.so in that node. Python loads extensions with RTLD_NOW: one missing name fails
// `import torch` ("undefined symbol: ncclCommResume"). Skipped, saying why, without the venv.
#include <dirent.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "elf_exports.h"

namespace {

std::vector<std::string> torch_libraries(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() > 3 && name.find(".so") != std::string::npos) out.push_back(dir + "/" + name);
  }
  closedir(d);
  return out;
}

bool replaced_node(const std::string& node) {
  return node == "libcudart.so.13" || node == "libcublas.so.13" || node == "libcublasLt.so.13";
}

TEST(TorchImports, EveryReplacedFunctionTorchImportsIsDefined) {
  const std::string dir = TORCHADA_TORCH_LIB_DIR;
  const std::vector<std::string> libs = dir.empty() ? std::vector<std::string>{} : torch_libraries(dir);
  if (libs.empty())
    GTEST_SKIP() << "no PyTorch libraries under '" << dir
                 << "': run scripts/setup-torch.sh (the pinned torch in .venv), then re-run cmake";
  const ElfExports ours = read_elf_exports(TORCHADA_SHIM_PATH);
  ASSERT_EQ(ours.error, "");
  size_t checked = 0, nccl = 0;
  for (const std::string& lib : libs) {
    const ElfImports imports = read_elf_imports(lib);
    ASSERT_EQ(imports.error, "") << lib;
    for (const std::string& n : imports.names) {
      const size_t at = n.find('@');
      const std::string name = n.substr(0, at);
      std::string node;
      if (at != std::string::npos) {
        node = n.substr(at + 1);
        if (!replaced_node(node)) continue;
      } else if (name.rfind("nccl", 0) == 0 || name.rfind("pnccl", 0) == 0) {
        node = "libnccl.so.2";  // unversioned: binds to the node named like the library
        ++nccl;
      } else {
        continue;
      }
      ++checked;
      const bool defined = ours.names.count(name + "@@" + node) != 0 ||
                           (node != "libnccl.so.2" && ours.names.count(name + "@" + node) != 0);
      EXPECT_TRUE(defined) << lib << " imports " << name << "@" << node
                           << ", which libtorchada.so does not define: loading it fails";
    }
  }
  // torch 2.15.0+cu132 imports 367 such functions (../shared/DESIGN.md), NCCL's among them.
  EXPECT_GT(checked, 300u);
  EXPECT_GT(nccl, 20u);
}

TEST(TorchImports, ReaderSeesVersionedImports) {
  // The reader itself, on a file that is always there: this test binary imports from libc.
  const ElfImports self = read_elf_imports("/proc/self/exe");
  ASSERT_EQ(self.error, "");
  bool versioned = false;
  for (const std::string& n : self.names)
    if (n.find("@GLIBC_") != std::string::npos) versioned = true;
  EXPECT_TRUE(versioned);
  EXPECT_NE(read_elf_imports("/nonexistent").error, "");
}

}  // namespace
