// Linked into every executable of a sanitized build (make sanitize; cmake/NvsvpDependencies.cmake).
//
// SystemC 2.3.4 runs its threads as QuickThreads coroutines on stacks it maps itself, and tells
// AddressSanitizer of each switch through a weak reference to __sanitizer_start_switch_fiber:
// sc_cor_pkg_qt::yield(next) passes next's m_stack and m_stack_size. The main coroutine has
// neither (both 0), so on every switch back to sc_start's caller ASan is told that the main stack
// is [0, 0). From then on __asan_handle_no_return (run by every throw) finds the stack bounds
// absurd, prints "ASan is ignoring requested __asan_handle_no_return ... False positive error
// reports may follow" and leaves the unwound frames' redzones poisoned; the next frames laid on
// that memory are then reported as stack-buffer-overflow or stack-use-after-scope. And LeakSanitizer
// never scans those mapped coroutine stacks, so what only a suspended SystemC thread still refers
// to (its locals when the simulation stops with the thread waiting) is reported as leaked.
//
// A thread that ends leaves through sc_cor_pkg_qt::abort(next), which switches without telling
// ASan at all, so ASan goes on taking the dead thread's stack for the current one.
//
// The two definitions below take the place of ASan's and libsystemc's for the whole process (the
// executable's symbols come first in the lookup; the link exports them, cmake/NvsvpDependencies.cmake):
// __sanitizer_start_switch_fiber gives the main coroutine the main thread's real stack, registers
// each coroutine stack once as a LeakSanitizer root region and forwards to ASan's own function;
// sc_cor_pkg_qt::abort tells ASan of its switch (start and finish at once: the aborted thread never
// runs again) and then makes it with libsystemc's own abort.
#include <dlfcn.h>
#include <pthread.h>
#include <sanitizer/lsan_interface.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

namespace {

using StartSwitchFiber = void (*)(void**, const void*, size_t);
using FinishSwitchFiber = void (*)(void*, const void**, size_t*);
using CoroutineAbort = void (*)(void*, void*);

// libsystemc-2.3.4's sc_cor_pkg_qt::abort(sc_cor*), and where its sc_cor_qt keeps the stack (as its
// own sc_cor_pkg_qt::yield reads them: m_stack_size at byte 8, m_stack at byte 16).
constexpr const char* kAbortSymbol = "_ZN7sc_core13sc_cor_pkg_qt5abortEPNS_6sc_corE";
constexpr size_t kStackSizeOffset = 8;
constexpr size_t kStackOffset = 16;

struct MainStack {
  const void* bottom = nullptr;
  size_t size = 0;
};

MainStack main_thread_stack() {
  MainStack stack;
  pthread_attr_t attributes;
  if (pthread_getattr_np(pthread_self(), &attributes) == 0) {
    void* address = nullptr;
    pthread_attr_getstack(&attributes, &address, &stack.size);
    stack.bottom = address;
    pthread_attr_destroy(&attributes);
  }
  return stack;
}

// The definition next in the lookup after this file's own: ASan's or libsystemc's.
template <class Function>
Function next_definition(const char* symbol) {
  void* const next = dlsym(RTLD_NEXT, symbol);
  if (next == nullptr) {
    std::fprintf(stderr, "systemc_fiber_bounds: no %s after this one (not an ASan build of SystemC 2.3.4?)\n", symbol);
    std::abort();
  }
  return reinterpret_cast<Function>(next);
}

StartSwitchFiber asan_start_switch_fiber() {
  static const auto next = next_definition<StartSwitchFiber>("__sanitizer_start_switch_fiber");
  return next;
}

// SystemC runs every coroutine on the main thread, so the main thread's stack is the main
// coroutine's.
const MainStack& main_stack() {
  static const MainStack stack = main_thread_stack();
  return stack;
}

}  // namespace

extern "C" void __sanitizer_start_switch_fiber(void** fake_stack_save, const void* bottom, size_t size) {
  static std::set<const void*> roots;
  if (bottom == nullptr && size == 0) {
    bottom = main_stack().bottom;
    size = main_stack().size;
  } else if (roots.insert(bottom).second) {
    // Scanned only where mapped and readable at the leak check, so a stack SystemC has unmapped
    // since is skipped.
    __lsan_register_root_region(bottom, size);
  }
  asan_start_switch_fiber()(fake_stack_save, bottom, size);
}

// sc_core::sc_cor_pkg_qt::abort(sc_core::sc_cor* next), by its mangled name (the class is not in
// SystemC's installed headers); `package` is `this`.
extern "C" void sc_cor_pkg_qt_abort(void* package, void* next) __asm__("_ZN7sc_core13sc_cor_pkg_qt5abortEPNS_6sc_corE");

extern "C" void sc_cor_pkg_qt_abort(void* package, void* next) {
  static const auto systemc_abort = next_definition<CoroutineAbort>(kAbortSymbol);
  static const auto asan_finish_switch_fiber = next_definition<FinishSwitchFiber>("__sanitizer_finish_switch_fiber");
  const auto* coroutine = static_cast<const unsigned char*>(next);
  size_t size = 0;
  const void* bottom = nullptr;
  std::memcpy(&size, coroutine + kStackSizeOffset, sizeof size);
  std::memcpy(&bottom, coroutine + kStackOffset, sizeof bottom);
  __sanitizer_start_switch_fiber(nullptr, bottom, size);
  asan_finish_switch_fiber(nullptr, nullptr, nullptr);
  systemc_abort(package, next);
}
