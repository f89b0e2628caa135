#include "cupti/refusal.h"

#include <cupti.h>

#include "core/libraries.h"
#include "core/policy.h"
#include "core/private_entry.h"
#include "cupti/callback_names.h"

namespace torchada::cupti {

void* nvidia_or_refusal(const char* name, Fn fn) {
  if (void* f = nvidia_symbol("libcupti.so.13", name)) return f;
  note_missing(fn);
  return private_refusal(CUPTI_ERROR_NOT_SUPPORTED);
}

void* refusal(Fn fn) {
  note_unsupported(fn);
  return private_refusal(CUPTI_ERROR_NOT_SUPPORTED);
}

const char* find_name(const CallbackName* table, unsigned count, unsigned id) {
  unsigned lo = 0, hi = count;
  while (lo < hi) {
    const unsigned mid = (lo + hi) / 2;
    if (table[mid].id < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < count && table[lo].id == id ? table[lo].name : nullptr;
}

}  // namespace torchada::cupti
