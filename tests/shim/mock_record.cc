#include "mock_record.h"

#include <mutex>
#include <string>
#include <vector>

namespace {
struct Call {
  std::string name;
  std::vector<std::uint64_t> words;
};
std::mutex g_mu;
std::vector<Call> g_calls;
int g_result = 0;
}  // namespace

void mock_record(const char* name, std::initializer_list<std::uint64_t> words) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_calls.push_back({name, words});
}
int mock_result() { return g_result; }
const char* mock_string(const char* name) { return name; }

extern "C" {
void torchada_mock_reset(int result) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_calls.clear();
  g_result = result;
}
int torchada_mock_calls() {
  std::lock_guard<std::mutex> lock(g_mu);
  return static_cast<int>(g_calls.size());
}
const char* torchada_mock_name(int i) {
  std::lock_guard<std::mutex> lock(g_mu);
  return i >= 0 && i < static_cast<int>(g_calls.size()) ? g_calls[i].name.c_str() : nullptr;
}
int torchada_mock_words(int i, std::uint64_t* out, int max) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (i < 0 || i >= static_cast<int>(g_calls.size())) return -1;
  const auto& w = g_calls[i].words;
  for (int k = 0; k < max && k < static_cast<int>(w.size()); ++k) out[k] = w[k];
  return static_cast<int>(w.size());
}
}
