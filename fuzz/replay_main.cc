// Runs files through a fuzzing entry point without libFuzzer: every corpus file, under the
// build's sanitizers, as a ctest (tools.check.fuzz_replay, sim.fuzz_replay). Arguments: files or
// directories. Linked with each entry point (fuzz/check, fuzz/sim).
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

void Collect(const std::string& path, std::vector<std::string>* out) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return;
  if (!S_ISDIR(st.st_mode)) {
    out->push_back(path);
    return;
  }
  DIR* d = opendir(path.c_str());
  if (!d) return;
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') names.emplace_back(e->d_name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) Collect(path + "/" + n, out);
}

}  // namespace

int main(int argc, char** argv) {
  const char* self = argv[0];
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) Collect(argv[i], &files);
  if (files.empty()) {
    std::fprintf(stderr, "%s: no input files\n", self);
    return 1;
  }
  for (const std::string& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
    if (!in.eof() && in.fail()) {
      std::fprintf(stderr, "%s: cannot read %s\n", self, f.c_str());
      return 1;
    }
    if (LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()) != 0) {
      std::fprintf(stderr, "%s: %s: entry point failed\n", self, f.c_str());
      return 1;
    }
  }
  std::printf("%s: %zu inputs\n", self, files.size());
  return 0;
}
