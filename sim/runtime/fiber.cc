// Fibers: see fiber.h.
#include "fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define TORCHADA_SIM_ASAN_FIBERS 1
#endif
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define TORCHADA_SIM_TSAN_FIBERS 1
#endif

#if defined(TORCHADA_SIM_FIBER_ASM)
// torchada_sim_switch(void** save_sp, void* next_sp): pushes the callee-saved registers on the
// current stack, stores the stack pointer, loads the next one and pops the same from it. A fresh
// fiber's stack is laid out so that the pops land in torchada_sim_fiber_start with r12 = the
// Fiber and r13 = fiber_main. The SSE and x87 control words are not switched: every fiber of a
// block runs on one OS thread, whose rounding modes kernel code leaves alone (restoring them
// cost more than the rest of the switch: ldmxcsr and fldcw serialise).
asm(R"(
  .text
  .p2align 4
  .globl torchada_sim_switch
  .hidden torchada_sim_switch
  .type torchada_sim_switch,@function
torchada_sim_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size torchada_sim_switch, .-torchada_sim_switch

  .p2align 4
  .globl torchada_sim_fiber_start
  .hidden torchada_sim_fiber_start
  .type torchada_sim_fiber_start,@function
torchada_sim_fiber_start:
  movq %r12, %rdi
  callq *%r13
  ud2
  .size torchada_sim_fiber_start, .-torchada_sim_fiber_start
)");
extern "C" void torchada_sim_switch(void** save_sp, void* next_sp);
extern "C" void torchada_sim_fiber_start();
#endif

namespace sim {

namespace {
size_t page_size() {
  static const size_t p = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return p;
}
#if defined(TORCHADA_SIM_ASAN_FIBERS)
// The OS thread's own stack, learnt from the first switch away from it.
thread_local const void* t_thread_stack_bottom = nullptr;
thread_local size_t t_thread_stack_size = 0;
#endif
}  // namespace

FiberStack::~FiberStack() {
  if (map_ != nullptr) munmap(map_, map_size_);
}

bool FiberStack::allocate(size_t size) {
  const size_t page = page_size();
  size = (size + page - 1) / page * page;
  void* m = mmap(nullptr, size + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return false;
  // The lowest page is the guard: an overflowing fiber faults (reported as the launch's error)
  // instead of running into another fiber's stack.
  mprotect(m, page, PROT_NONE);
  map_ = m;
  map_size_ = size + page;
  base_ = static_cast<char*>(m) + page;
  size_ = size;
  return true;
}

Fiber::Fiber() = default;

Fiber::~Fiber() {
#if defined(TORCHADA_SIM_TSAN_FIBERS)
  if (tsan_owned_) __tsan_destroy_fiber(tsan_);
#endif
}

void fiber_main(Fiber* f) {
#if defined(TORCHADA_SIM_ASAN_FIBERS)
  const void* bottom = nullptr;
  size_t size = 0;
  __sanitizer_finish_switch_fiber(nullptr, &bottom, &size);
  if (t_thread_stack_bottom == nullptr) t_thread_stack_bottom = bottom, t_thread_stack_size = size;
#endif
  f->entry_(f->arg_);
  std::abort();  // an entry switches away for the last time instead of returning
}

#if !defined(TORCHADA_SIM_FIBER_ASM)
namespace {
// makecontext passes int arguments: the Fiber's address in two halves.
void fiber_trampoline(unsigned hi, unsigned lo) {
  fiber_main(reinterpret_cast<Fiber*>((static_cast<uintptr_t>(hi) << 32) | lo));
}
}  // namespace
#endif

void Fiber::start(FiberStack* stack, Entry entry, void* arg, unsigned color) {
  stack_ = stack;
  entry_ = entry;
  arg_ = arg;
#if defined(TORCHADA_SIM_ASAN_FIBERS)
  // A reused stack keeps the shadow of its last fiber's frames, which never returned.
  __asan_unpoison_memory_region(stack->bottom(), stack->size());
#endif
#if defined(TORCHADA_SIM_TSAN_FIBERS)
  if (!tsan_owned_) {
    tsan_ = __tsan_create_fiber(0);
    tsan_owned_ = true;
  }
#endif
#if defined(TORCHADA_SIM_FIBER_ASM)
  auto top = (reinterpret_cast<uintptr_t>(stack->bottom()) + stack->size()) & ~uintptr_t{15};
  top -= 16 + (color % 64) * 64;  // 16: the trampoline's call leaves the ABI's alignment
  auto* w = reinterpret_cast<uint64_t*>(top);
  w[-1] = reinterpret_cast<uint64_t>(&torchada_sim_fiber_start);  // ret
  w[-2] = 0;                                                      // rbp
  w[-3] = 0;                                                      // rbx
  w[-4] = reinterpret_cast<uint64_t>(this);                       // r12
  w[-5] = reinterpret_cast<uint64_t>(&fiber_main);                // r13
  w[-6] = 0;                                                      // r14
  w[-7] = 0;                                                      // r15
  sp_ = &w[-7];
#else
  getcontext(&uc_);
  uc_.uc_stack.ss_sp = stack->bottom();
  uc_.uc_stack.ss_size = stack->size() - (color % 64) * 64;
  uc_.uc_link = nullptr;
  const auto p = reinterpret_cast<uintptr_t>(this);
  makecontext(&uc_, reinterpret_cast<void (*)()>(&fiber_trampoline), 2,
              static_cast<unsigned>(p >> 32), static_cast<unsigned>(p & 0xffffffffu));
#endif
}

void Fiber::switch_to(Fiber& from, Fiber& to, bool from_ends) {
#if defined(TORCHADA_SIM_TSAN_FIBERS)
  if (from.tsan_ == nullptr) from.tsan_ = __tsan_get_current_fiber();
  __tsan_switch_to_fiber(to.tsan_, 0);
#endif
#if defined(TORCHADA_SIM_ASAN_FIBERS)
  // A fiber whose entry is done is never resumed: ASan may drop its fake stack.
  void* fake = nullptr;
  const bool to_thread = to.stack_ == nullptr;
  __sanitizer_start_switch_fiber(from_ends ? nullptr : &fake,
                                 to_thread ? t_thread_stack_bottom : to.stack_->bottom(),
                                 to_thread ? t_thread_stack_size : to.stack_->size());
#else
  (void)from_ends;
#endif
#if defined(TORCHADA_SIM_FIBER_ASM)
  torchada_sim_switch(&from.sp_, to.sp_);
#else
  swapcontext(&from.uc_, &to.uc_);
#endif
#if defined(TORCHADA_SIM_ASAN_FIBERS)
  const void* bottom = nullptr;
  size_t size = 0;
  __sanitizer_finish_switch_fiber(fake, &bottom, &size);
  if (from.stack_ == nullptr && t_thread_stack_bottom == nullptr)
    t_thread_stack_bottom = bottom, t_thread_stack_size = size;
#endif
}

void Fiber::resume_thread_after_jump(Fiber& thread) {
#if defined(TORCHADA_SIM_TSAN_FIBERS)
  if (thread.tsan_ != nullptr) __tsan_switch_to_fiber(thread.tsan_, 0);
#else
  (void)thread;
#endif
#if defined(TORCHADA_SIM_ASAN_FIBERS)
  if (t_thread_stack_bottom != nullptr) {
    __sanitizer_start_switch_fiber(nullptr, t_thread_stack_bottom, t_thread_stack_size);
    const void* bottom = nullptr;
    size_t size = 0;
    __sanitizer_finish_switch_fiber(nullptr, &bottom, &size);
  }
#endif
}

}  // namespace sim
