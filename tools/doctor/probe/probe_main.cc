// doctor-probe CHECK [--musart P] [--musa P] [--mublas P] [--mublasLt P] [--mccl P] [--mtml P]
// See probe.h for the output; torchada-doctor is its only intended caller.
#include <cstring>
#include <string>

#include "probe.h"

int main(int argc, char** argv) {
  using namespace torchada::probe;
  if (argc < 2) {
    std::fprintf(
        stderr,
        "usage: doctor-probe versions|devices|blas-status|mccl-status|gemm|copy|event|"
        "allreduce [--musart P] [--musa P] [--mublas P] [--mublasLt P] [--mccl P] [--mtml P]\n");
    return 2;
  }
  std::string check = argv[1], musart, musa, mublas, mublaslt, mccl, mtml;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--musart")
      musart = v;
    else if (k == "--musa")
      musa = v;
    else if (k == "--mublas")
      mublas = v;
    else if (k == "--mublasLt")
      mublaslt = v;
    else if (k == "--mccl")
      mccl = v;
    else if (k == "--mtml")
      mtml = v;
    else {
      std::fprintf(stderr, "doctor-probe: unknown option %s\n", k.c_str());
      return 2;
    }
  }
  if (check == "versions") return MusaVersions(musart, musa, mublas, mublaslt, mccl, mtml);
  if (check == "devices") return CudaDevices(musart);
  if (check == "blas-status") return MublasStatus(mublas);
  if (check == "mccl-status") return MccLStatus(mccl);
  if (check == "gemm") return CudaGemm();
  if (check == "copy") return CudaCopy();
  if (check == "event") return CudaEvent();
  if (check == "allreduce") return CudaAllReduce();
  std::fprintf(stderr, "doctor-probe: unknown check %s\n", check.c_str());
  return 2;
}
