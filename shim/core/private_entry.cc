// The trampoline every private entry stub jumps to (see private_entry.h), and the refusal target.
//
// On entry the stub has put its resolver's address in a scratch register; the stack and every
// argument register are the caller's. The trampoline saves the integer and vector argument
// registers (and rax: a variadic call's vector-register count), calls the resolver on an aligned
// stack, restores them, unwinds its frame and jumps to the resolver's answer, so the target runs
// as if called directly, returning to the original caller.
#include "core/private_entry.h"

namespace torchada {
namespace {

thread_local long t_private_status = 0;

long private_status() { return t_private_status; }

}  // namespace

void* private_refusal(long status) {
  t_private_status = status;
  return reinterpret_cast<void*>(&private_status);
}

}  // namespace torchada

#if defined(__x86_64__)
// Stack: the stub was reached by a call, so rsp is 8 mod 16; rbp and 7 registers make it 0 mod 16
// again after 136 more bytes (8 xmm registers and 8 bytes of padding): movaps and the call need
// that alignment.
__asm__(
    ".pushsection .text\n"
    ".globl torchada_private_trampoline\n"
    ".hidden torchada_private_trampoline\n"
    ".type torchada_private_trampoline, @function\n"
    ".p2align 4\n"
    "torchada_private_trampoline:\n"
    "  push %rbp\n"
    "  mov %rsp, %rbp\n"
    "  push %rdi\n"
    "  push %rsi\n"
    "  push %rdx\n"
    "  push %rcx\n"
    "  push %r8\n"
    "  push %r9\n"
    "  push %rax\n"
    "  sub $136, %rsp\n"
    "  movaps %xmm0, 0(%rsp)\n"
    "  movaps %xmm1, 16(%rsp)\n"
    "  movaps %xmm2, 32(%rsp)\n"
    "  movaps %xmm3, 48(%rsp)\n"
    "  movaps %xmm4, 64(%rsp)\n"
    "  movaps %xmm5, 80(%rsp)\n"
    "  movaps %xmm6, 96(%rsp)\n"
    "  movaps %xmm7, 112(%rsp)\n"
    "  call *%r11\n"
    "  mov %rax, %r11\n"
    "  movaps 0(%rsp), %xmm0\n"
    "  movaps 16(%rsp), %xmm1\n"
    "  movaps 32(%rsp), %xmm2\n"
    "  movaps 48(%rsp), %xmm3\n"
    "  movaps 64(%rsp), %xmm4\n"
    "  movaps 80(%rsp), %xmm5\n"
    "  movaps 96(%rsp), %xmm6\n"
    "  movaps 112(%rsp), %xmm7\n"
    "  add $136, %rsp\n"
    "  pop %rax\n"
    "  pop %r9\n"
    "  pop %r8\n"
    "  pop %rcx\n"
    "  pop %rdx\n"
    "  pop %rsi\n"
    "  pop %rdi\n"
    "  pop %rbp\n"
    "  jmp *%r11\n"
    ".size torchada_private_trampoline, . - torchada_private_trampoline\n"
    ".popsection\n");
#elif defined(__aarch64__)
// x0-x7 and q0-q7 carry arguments, x8 an indirect result's address: 224 bytes with fp and lr.
__asm__(
    ".pushsection .text\n"
    ".globl torchada_private_trampoline\n"
    ".hidden torchada_private_trampoline\n"
    ".type torchada_private_trampoline, %function\n"
    ".p2align 2\n"
    "torchada_private_trampoline:\n"
    "  stp x29, x30, [sp, #-224]!\n"
    "  mov x29, sp\n"
    "  stp x0, x1, [sp, #16]\n"
    "  stp x2, x3, [sp, #32]\n"
    "  stp x4, x5, [sp, #48]\n"
    "  stp x6, x7, [sp, #64]\n"
    "  str x8, [sp, #80]\n"
    "  stp q0, q1, [sp, #96]\n"
    "  stp q2, q3, [sp, #128]\n"
    "  stp q4, q5, [sp, #160]\n"
    "  stp q6, q7, [sp, #192]\n"
    "  blr x17\n"
    "  mov x16, x0\n"
    "  ldp x0, x1, [sp, #16]\n"
    "  ldp x2, x3, [sp, #32]\n"
    "  ldp x4, x5, [sp, #48]\n"
    "  ldp x6, x7, [sp, #64]\n"
    "  ldr x8, [sp, #80]\n"
    "  ldp q0, q1, [sp, #96]\n"
    "  ldp q2, q3, [sp, #128]\n"
    "  ldp q4, q5, [sp, #160]\n"
    "  ldp q6, q7, [sp, #192]\n"
    "  ldp x29, x30, [sp], #224\n"
    "  br x16\n"
    ".size torchada_private_trampoline, . - torchada_private_trampoline\n"
    ".popsection\n");
#endif
