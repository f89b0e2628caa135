// Fibers for the device-code executor: one per simulated thread of a block that synchronises,
// switched by hand on one OS thread (a few nanoseconds a switch on x86-64, where the switch is
// eleven instructions; ucontext elsewhere). Sanitizers are told about every switch.
#ifndef TORCHADA_SIM_RUNTIME_FIBER_H
#define TORCHADA_SIM_RUNTIME_FIBER_H

#include <cstddef>

#if defined(__x86_64__)
#define TORCHADA_SIM_FIBER_ASM 1
#else
#include <ucontext.h>
#endif

namespace sim {

// A stack region with a guard page below it, mapped once and reused.
class FiberStack {
 public:
  FiberStack() = default;
  ~FiberStack();
  FiberStack(const FiberStack&) = delete;
  FiberStack& operator=(const FiberStack&) = delete;
  bool allocate(size_t size);  // false: mmap failed
  void* bottom() const { return base_; }
  size_t size() const { return size_; }

 private:
  void* map_ = nullptr;
  size_t map_size_ = 0;
  void* base_ = nullptr;  // lowest usable address
  size_t size_ = 0;
};

// An execution context: the scheduler's own (the OS thread's) or a fiber's.
class Fiber {
 public:
  using Entry = void (*)(void* arg);
  Fiber();
  ~Fiber();
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // Makes this a fresh fiber that runs entry(arg) on `stack` when first switched to. The entry
  // must never return: it ends by switching away for the last time. `color` staggers where the
  // stack's frames begin: stacks are page-aligned, so without it every fiber's frames would fall
  // in the same cache sets and evict each other at each switch.
  void start(FiberStack* stack, Entry entry, void* arg, unsigned color = 0);
  // Saves the current context into `from` and resumes `to`. `from_ends`: `from` is a fiber whose
  // entry is done and will never be resumed (its last switch).
  static void switch_to(Fiber& from, Fiber& to, bool from_ends = false);
  // After a siglongjmp from a fiber back to the OS thread's own stack (a fault in kernel code):
  // the sanitizers learn that `thread`, the OS thread's context, runs again.
  static void resume_thread_after_jump(Fiber& thread);

 private:
#if defined(TORCHADA_SIM_FIBER_ASM)
  void* sp_ = nullptr;
#else
  ucontext_t uc_{};
#endif
  FiberStack* stack_ = nullptr;  // null: the OS thread's own stack
  void* tsan_ = nullptr;         // ThreadSanitizer's fiber
  bool tsan_owned_ = false;
  Entry entry_ = nullptr;
  void* arg_ = nullptr;
  friend void fiber_main(Fiber* f);
};

}  // namespace sim

#endif  // TORCHADA_SIM_RUNTIME_FIBER_H
