// libFuzzer entry point for torchada-check: any bytes, as a file the tool is given. The whole
// path a real file takes after it is mapped: libelf, the scan, the fat binary walk (also on the
// raw input), classification against the embedded tables, both renderings.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "classify.h"
#include "elf_scan.h"
#include "fatbin.h"
#include "report.h"
#include "tables.h"

namespace {

const torchada::check::Tables& EmbeddedTables() {
  static const torchada::check::Tables tables = [] {
    torchada::check::Tables t;
    t.LoadEmbedded();
    return t;
  }();
  return tables;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchada::check;
  const Tables& tables = EmbeddedTables();
  // libelf may convert a foreign-endian image in place: give it its own copy, exactly sized so
  // that the sanitizers see any read past the end.
  std::vector<unsigned char> image(data, data + size);
  ElfScan scan;
  std::string error;
  RunSummary run;
  if (ScanElfImage(image.data(), image.size(), &scan, &error)) {
    run.files.push_back(Classify("input", std::move(scan), tables));
  } else {
    run.files.push_back(ErrorReport("input", error));
  }
  run.overall = run.files.front().verdict;
  const std::string json = RenderJson(run, tables);
  const std::string text = RenderText(run, tables, TextOptions{});
  FatbinSummary fatbin;
  WalkFatbin(data, size, &fatbin);
  return json.empty() || text.empty() ? -1 : 0;
}
