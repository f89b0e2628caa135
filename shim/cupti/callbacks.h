// What the rest of torchada's CUPTI tells its callback API.
#pragma once

namespace torchada::cupti {

// torchada records work on `device` for the first time in this subscription: the subscriber's
// CONTEXT_CREATED callback, if it enabled it, fires once for the device.
void announce_device(int device);

}  // namespace torchada::cupti
