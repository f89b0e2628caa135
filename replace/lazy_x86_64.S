/* The lazy entry shared by a replacement library's forwarding stubs (x86-64 System V).
 *
 * Each stub is `jmp *torchada_repl_slots+8*i(%rip)`. A slot starts at a two-instruction entry
 * that loads i into %r11 (a scratch register no argument uses) and comes here. This saves every
 * register that can carry an argument (rdi, rsi, rdx, rcx, r8, r9, rax for the vector-register
 * count of variadic calls, r10 for a static chain, xmm0-7), asks torchada_repl_resolve(i) for
 * the target (which also stores it in the slot, so this runs once per stub), restores the
 * registers and jumps to the target with the caller's stack and return address untouched.
 *
 * Included by every generated <soname>.stubs.S, which defines torchada_repl_slots. */
  .text
  .p2align 4
  .type torchada_repl_lazy, @function
torchada_repl_lazy:
  .cfi_startproc
  pushq %rbp
  .cfi_def_cfa_offset 16
  .cfi_offset %rbp, -16
  movq %rsp, %rbp
  .cfi_def_cfa_register %rbp
  /* On entry %rsp is 8 mod 16 (the caller's return address); after the push it is 0 mod 16 and
   * stays so after reserving 8 general + 8 vector registers (64 + 128 bytes). */
  subq $192, %rsp
  movq %rdi, 0(%rsp)
  movq %rsi, 8(%rsp)
  movq %rdx, 16(%rsp)
  movq %rcx, 24(%rsp)
  movq %r8, 32(%rsp)
  movq %r9, 40(%rsp)
  movq %rax, 48(%rsp)
  movq %r10, 56(%rsp)
  movaps %xmm0, 64(%rsp)
  movaps %xmm1, 80(%rsp)
  movaps %xmm2, 96(%rsp)
  movaps %xmm3, 112(%rsp)
  movaps %xmm4, 128(%rsp)
  movaps %xmm5, 144(%rsp)
  movaps %xmm6, 160(%rsp)
  movaps %xmm7, 176(%rsp)
  movl %r11d, %edi
  call torchada_repl_resolve
  movq %rax, %r11
  movq 0(%rsp), %rdi
  movq 8(%rsp), %rsi
  movq 16(%rsp), %rdx
  movq 24(%rsp), %rcx
  movq 32(%rsp), %r8
  movq 40(%rsp), %r9
  movq 48(%rsp), %rax
  movq 56(%rsp), %r10
  movaps 64(%rsp), %xmm0
  movaps 80(%rsp), %xmm1
  movaps 96(%rsp), %xmm2
  movaps 112(%rsp), %xmm3
  movaps 128(%rsp), %xmm4
  movaps 144(%rsp), %xmm5
  movaps 160(%rsp), %xmm6
  movaps 176(%rsp), %xmm7
  movq %rbp, %rsp
  popq %rbp
  .cfi_def_cfa %rsp, 8
  jmpq *%r11
  .cfi_endproc
  .size torchada_repl_lazy, .-torchada_repl_lazy
