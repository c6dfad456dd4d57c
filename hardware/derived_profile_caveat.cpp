#include "hardware/derived_profile_caveat.hpp"

namespace infraplan::hw {

std::string derived_profile_caveat(const Profile& p) {
  if (p.source != "derived") return "";
  const std::string head = p.gpu + ": the profile is derived from the measured " +
                           (p.derived_from.empty() ? std::string("H200") : p.derived_from) +
                           " profile, not measured on this GPU; ";
  const std::string tail = " (docs/accuracy.md); `infraplan calibrate` on the GPU replaces it";
  // The summaries follow docs/accuracy.md's published training rows; the tests that print those
  // tables (simulator/training_accuracy_test.cpp) hold the numbers.
  if (p.gpu == "h100-sxm5-80gb")
    return head +
           "on every published H100 training row checked (NeMo fp8, IBM's bf16 PyTorch FSDP, Llama 3 405B) "
           "the "
           "prediction was faster than measured, by 4-35% (26-30% on the bf16 FSDP rows): read it as an "
           "upper "
           "bound" +
           tail;
  if (p.gpu == "a100-sxm4-80gb")
    return head +
           "on the published A100 training rows checked (Megatron-LM, torchtitan and IBM's PyTorch FSDP) it "
           "was "
           "within -8% … +14% of the measured throughput" +
           tail;
  return head + "no published training row on this GPU has been checked against it" + tail;
}

}  // namespace infraplan::hw
