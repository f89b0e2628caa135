// torchada's CUPTI callback API: one subscriber, as NVIDIA's CUPTI allows by default, and the
// callbacks torchada can fire.
//
// Served: the resource domain's CONTEXT_CREATED, fired once per device when torchada first
// records work on it for a subscriber that enabled it (PyTorch's profiler subscribes to it and
// refuses to trace the GPU if it cannot). The runtime, driver, synchronisation, NVTX and state
// domains are refused with CUPTI_ERROR_NOT_SUPPORTED when switched on: torchada does not call back
// into a tool around each API call, and saying yes would promise callbacks that never come.
// Switching anything off always succeeds.
#include <cupti.h>

#include <mutex>
#include <set>

#include "cupti/callback_names.h"
#include "cupti/callbacks.h"
#include "gen/cupti_impl.h"

struct CUpti_Subscriber_st {
  CUpti_CallbackFunc callback;
  void* userdata;
  bool context_created;
  bool context_destroy;
};

namespace torchada::cupti {
namespace {

std::mutex g_mutex;
CUpti_Subscriber_st* g_subscriber = nullptr;
std::set<int> g_devices_announced;

bool served(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  return domain == CUPTI_CB_DOMAIN_RESOURCE &&
         (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED ||
          cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
}

bool valid_domain(CUpti_CallbackDomain domain) {
  return domain > CUPTI_CB_DOMAIN_INVALID && domain < CUPTI_CB_DOMAIN_SIZE;
}

CUpti_CallbackDomain g_served_domains[] = {CUPTI_CB_DOMAIN_RESOURCE};

}  // namespace

void announce_device(int device) {
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_subscriber == nullptr || !g_subscriber->context_created) return;
    if (!g_devices_announced.insert(device).second) return;
    callback = g_subscriber->callback;
    userdata = g_subscriber->userdata;
  }
  CUpti_ResourceData data{};
  data.context = nullptr;  // torchada's contexts are the backend's: no CUcontext to hand out
  if (callback != nullptr)
    callback(userdata, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &data);
}

namespace impl {

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                           void* userdata) {
  if (subscriber == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_subscriber != nullptr) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  g_subscriber = new CUpti_Subscriber_st{callback, userdata, false, false};
  g_devices_announced.clear();
  *subscriber = g_subscriber;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (subscriber == nullptr || subscriber != g_subscriber) return CUPTI_ERROR_INVALID_PARAMETER;
  delete g_subscriber;
  g_subscriber = nullptr;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (subscriber == nullptr || subscriber != g_subscriber || !valid_domain(domain))
    return CUPTI_ERROR_INVALID_PARAMETER;
  if (!served(domain, cbid)) return enable != 0 ? CUPTI_ERROR_NOT_SUPPORTED : CUPTI_SUCCESS;
  (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED ? subscriber->context_created
                                               : subscriber->context_destroy) = enable != 0;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                              CUpti_CallbackDomain domain) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (subscriber == nullptr || subscriber != g_subscriber || !valid_domain(domain))
    return CUPTI_ERROR_INVALID_PARAMETER;
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    subscriber->context_created = subscriber->context_destroy = enable != 0;
    return CUPTI_SUCCESS;
  }
  return enable != 0 ? CUPTI_ERROR_NOT_SUPPORTED : CUPTI_SUCCESS;
}

CUptiResult cuptiEnableAllDomains(uint32_t enable, CUpti_SubscriberHandle subscriber) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (subscriber == nullptr || subscriber != g_subscriber) return CUPTI_ERROR_INVALID_PARAMETER;
  if (enable != 0) return CUPTI_ERROR_NOT_SUPPORTED;
  subscriber->context_created = subscriber->context_destroy = false;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetCallbackState(uint32_t* enable, CUpti_SubscriberHandle subscriber,
                                  CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (enable == nullptr || subscriber == nullptr || subscriber != g_subscriber ||
      !valid_domain(domain))
    return CUPTI_ERROR_INVALID_PARAMETER;
  *enable = 0;
  if (served(domain, cbid))
    *enable = cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED ? subscriber->context_created
                                                          : subscriber->context_destroy;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiSupportedDomains(size_t* count, CUpti_DomainTable* table) {
  if (count == nullptr || table == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *count = sizeof(g_served_domains) / sizeof(g_served_domains[0]);
  *table = g_served_domains;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char** name) {
  if (name == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  const char* n = nullptr;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
    n = find_name(kRuntimeCallbacks, kRuntimeCallbacksCount, cbid);
  else if (domain == CUPTI_CB_DOMAIN_DRIVER_API)
    n = find_name(kDriverCallbacks, kDriverCallbacksCount, cbid);
  else
    return CUPTI_ERROR_INVALID_PARAMETER;
  if (n == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *name = n;
  return CUPTI_SUCCESS;
}

}  // namespace impl
}  // namespace torchada::cupti
