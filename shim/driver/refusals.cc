// What the CUDA driver exports answer when MUSA cannot serve a call: a function libmusa lacks, an
// unsupported row of symbols/driver.txt, NVIDIA device code. Each is logged (the first few times
// per function), counted for TORCHADA_STATS and the exit summary, and aborts under
// TORCHADA_STRICT=1 (core/policy.cc).
#include <elf.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#include "core/log.h"
#include "driver/driver.h"

namespace torchada {
namespace drv {
namespace {

// How many refusals of one kernel-loading function name their module: enough to see a pattern.
constexpr unsigned kNamedPerFunction = 8;
std::atomic<unsigned> g_named[kFnCount];

// The names of the functions (kernels) in `image` when it is a 64-bit ELF cubin, comma-separated
// into `out` (truncated); empty for PTX text, fatbinaries and anything unrecognised. The image is
// the caller's, as well-formed as the driver would require (an in-memory image carries no size):
// only its header, section table and symbol table are read, names bounded by their table's size.
void cubin_kernel_names(const void* image, char* out, std::size_t size) {
  out[0] = '\0';
  const auto* base = static_cast<const unsigned char*>(image);
  if (std::memcmp(base, ELFMAG, SELFMAG) != 0 || base[EI_CLASS] != ELFCLASS64) return;
  Elf64_Ehdr eh;
  std::memcpy(&eh, base, sizeof eh);
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shnum > 4096) return;
  auto section = [&](std::size_t k) {
    Elf64_Shdr sh;
    std::memcpy(&sh, base + eh.e_shoff + k * sizeof(Elf64_Shdr), sizeof sh);
    return sh;
  };
  std::size_t used = 0;
  for (std::size_t k = 0; k < eh.e_shnum; ++k) {
    const Elf64_Shdr symtab = section(k);
    if (symtab.sh_type != SHT_SYMTAB || symtab.sh_entsize != sizeof(Elf64_Sym) ||
        symtab.sh_link >= eh.e_shnum)
      continue;
    const Elf64_Shdr strtab = section(symtab.sh_link);
    for (std::size_t j = 0; j < symtab.sh_size / sizeof(Elf64_Sym); ++j) {
      Elf64_Sym sym;
      std::memcpy(&sym, base + symtab.sh_offset + j * sizeof sym, sizeof sym);
      if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_name >= strtab.sh_size) continue;
      const char* name = reinterpret_cast<const char*>(base + strtab.sh_offset + sym.st_name);
      const std::size_t len = strnlen(name, strtab.sh_size - sym.st_name);
      if (used + len + 3 >= size) {
        if (used + 4 < size) std::memcpy(out + used, used ? ",..." : "...", used ? 5 : 4);
        return;
      }
      if (used) out[used++] = ',';
      std::memcpy(out + used, name, len);
      used += len;
      out[used] = '\0';
    }
  }
}

}  // namespace

CUresult missing(Fn fn) {
  note_missing(fn);
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult refuse(Fn fn, const char* why) {
  note_unsupported(fn, why);
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult no_binary(Fn fn, const char* what, const void* image) {
  const auto i = static_cast<std::size_t>(fn);
  // A module PyTorch's own operator loads (jiterator) while the kernel bridge tries it: the bridge
  // serves the call, so the refusal is logged at debug level.
  const bool served = kernel_bridge_serving();
  if (g_named[i].fetch_add(1, std::memory_order_relaxed) < kNamedPerFunction) {
    char kernels[160] = "";
    if (image != nullptr) cubin_kernel_names(image, kernels, sizeof kernels);
    // Triton's kernels (torch.compile's default backend, inductor, writes them; PyTorch's own
    // Triton operators too) are NVIDIA code like any other: say what to use instead.
    const bool triton = std::strncmp(kernels, "triton_", 7) == 0 ||
                        (what != nullptr && (std::strstr(what, "torchinductor") != nullptr ||
                                             std::strstr(what, "/triton/") != nullptr ||
                                             std::strstr(what, ".triton") != nullptr));
    const LogLevel level = served ? LogLevel::kDebug : LogLevel::kWarn;
    if (log_enabled(level))
      log(level,
          "%s(%s%s%s%s%s): NVIDIA device code (cubin/PTX/fatbinary) cannot run on MUSA; "
          "refused with CUDA_ERROR_NO_BINARY_FOR_GPU%s",
          kFnNames[i], what ? "\"" : "", what ? what : "an in-memory image", what ? "\"" : "",
          kernels[0] ? " with kernels " : "", kernels,
          triton ? ". It is a Triton kernel: torch.compile's default backend (inductor) "
                   "generates them; under torchada use torch.compile(backend=\"aot_eager\") "
                   "(or \"eager\"), which runs PyTorch's operators through the kernel bridge"
                 : "");
  }
  note_unsupported(fn, "NVIDIA device code cannot be loaded or run on MUSA", /*logged=*/true);
  return CUDA_ERROR_NO_BINARY_FOR_GPU;
}

CUresult not_initialised(Fn fn) {
  static std::atomic<bool> logged{false};
  if (!logged.exchange(true, std::memory_order_relaxed))
    TORCHADA_LOG(kInfo,
                 "%s before cuInit (and before any CUDA runtime call): CUDA_ERROR_NOT_INITIALIZED, "
                 "as NVIDIA's driver answers",
                 kFnNames[static_cast<std::size_t>(fn)]);
  note_error(fn);
  return CUDA_ERROR_NOT_INITIALIZED;
}

}  // namespace drv
}  // namespace torchada
