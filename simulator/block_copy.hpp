#pragma once
// A KV block copied before a step: copy-on-write of a block shared through the prefix cache.
// The block manager records the copies; a real backend performs them before the step runs.
#include <cstdint>

namespace infraplan::sim::serve {

/// Physical block ids: the KV of `src` is copied into `dst`.
struct BlockCopy {
  std::int32_t src = 0, dst = 0;
};

}  // namespace infraplan::sim::serve
