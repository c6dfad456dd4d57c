#pragma once
// The choice of tensor-core path for the engine's paged prefill attention (engine_kernels.hpp's
// paged_prefill_attention), and its command-line spelling. Host-only.
#include <string>

#include "common/error.hpp"

namespace infraplan::engine {

/// `automatic` takes wgmma for a bf16 cache on a 9.x GPU (Hopper) and mma.sync otherwise; the other
/// two force one (wgmma: bf16 cache on a 9.x GPU only).
enum class PrefillKernel { automatic, mma_sync, wgmma };

inline const char* prefill_kernel_name(PrefillKernel k) {
  switch (k) {
    case PrefillKernel::mma_sync:
      return "mma";
    case PrefillKernel::wgmma:
      return "wgmma";
    case PrefillKernel::automatic:
      break;
  }
  return "auto";
}

/// "auto", "mma" or "wgmma"; anything else is refused naming `field` and the choices.
inline PrefillKernel parse_prefill_kernel(const std::string& s, const std::string& field) {
  for (PrefillKernel k : {PrefillKernel::automatic, PrefillKernel::mma_sync, PrefillKernel::wgmma})
    if (s == prefill_kernel_name(k)) return k;
  throw Error(field + ": '" + s + "' is not one of auto, mma, wgmma");
}

}  // namespace infraplan::engine
