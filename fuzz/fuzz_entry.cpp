// The libFuzzer entry of one fuzz target, chosen at compile time (fuzz/CMakeLists.txt).
#include <cstdio>

#include "fuzz/fuzz_targets.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // The command-line target runs commands that print; keep the fuzzer's terminal readable.
  return std::freopen("/dev/null", "w", stdout) ? 0 : 1;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return infraplan::fuzz::INFRAPLAN_FUZZ_TARGET(data, size);
}
