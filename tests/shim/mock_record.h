// Recording helpers for the generated mock MUSA runtime (gen/mock_musart.cc).
#pragma once

#include <cstdint>
#include <initializer_list>

#define MOCK_EXPORT __attribute__((visibility("default")))

inline constexpr std::uint64_t mock_any() { return 0xA11A11A11A11A11AULL; }
void mock_record(const char* name, std::initializer_list<std::uint64_t> words);
int mock_result();
const char* mock_string(const char* name);

// Read back by the tests through dlsym on the mock library.
extern "C" {
MOCK_EXPORT void torchada_mock_reset(int result);
MOCK_EXPORT int torchada_mock_calls();
MOCK_EXPORT const char* torchada_mock_name(int i);
MOCK_EXPORT int torchada_mock_words(int i, std::uint64_t* out, int max);
}
