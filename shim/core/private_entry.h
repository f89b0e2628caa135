// NVIDIA-private entry points: names NVIDIA's libraries export for each other (libcublas calls
// cublasLtLegacyGemmSSS, cublasLtCtxInit...) that no public header declares, so their signatures
// are unknown. torchada exports them too, since a preloaded library answers every import of the
// process. Under the cuda pass-through backend such a call must reach NVIDIA's function with the
// argument registers and the stack exactly as its caller left them, which only a jump achieves (a
// C++ forwarder that calls it with no arguments hands on whatever the registers hold by then, and
// never the stack arguments): cuBLAS's GEMMs failed that way on an H200.
//
// So each such export is an assembly stub (TORCHADA_PRIVATE_ENTRY, emitted by symbols/) that
// saves the argument registers, calls its generated resolver, restores them and jumps where the
// resolver says: NVIDIA's function, or private_refusal's function, which returns the status of
// the refusal (the resolver has named it in the log). The stubs share one trampoline
// (private_entry.cc).
#pragma once

namespace torchada {

// The function a refused private call jumps to: it returns `status` (as the int or enum the
// caller reads from the return register). The status is kept per thread until that call.
void* private_refusal(long status);

}  // namespace torchada

// clang-format off
#if defined(__x86_64__)
// endbr64 (a no-op before CET) keeps the export a valid indirect-branch target; r11 is free on
// entry in the SysV ABI (neither an argument nor preserved).
#define TORCHADA_PRIVATE_ENTRY(sym, resolver)     \
  __asm__(".pushsection .text\n"                  \
          ".globl " sym "\n"                      \
          ".type " sym ", @function\n"            \
          ".p2align 4\n"                          \
          sym ":\n"                               \
          "  endbr64\n"                           \
          "  lea " resolver "(%rip), %r11\n"      \
          "  jmp torchada_private_trampoline\n"   \
          ".size " sym ", . - " sym "\n"          \
          ".popsection\n")
#elif defined(__aarch64__)
// x17 (IP1) is free on entry in AAPCS64.
#define TORCHADA_PRIVATE_ENTRY(sym, resolver)     \
  __asm__(".pushsection .text\n"                  \
          ".globl " sym "\n"                      \
          ".type " sym ", %function\n"            \
          ".p2align 2\n"                          \
          sym ":\n"                               \
          "  adrp x17, " resolver "\n"            \
          "  add x17, x17, :lo12:" resolver "\n"  \
          "  b torchada_private_trampoline\n"     \
          ".size " sym ", . - " sym "\n"          \
          ".popsection\n")
#else
#error "torchada: private entry stubs exist for x86-64 and AArch64 only (shim/core/private_entry.h)"
#endif
// clang-format on
