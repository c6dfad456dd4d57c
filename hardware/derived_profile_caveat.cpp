#include "hardware/derived_profile_caveat.hpp"

namespace infraplan::hw {

std::string derived_profile_caveat(const Profile& p) {
  if (p.source != "derived") return "";
  const std::string head = p.gpu + ": the profile is derived from the measured " +
                           (p.derived_from.empty() ? std::string("H200") : p.derived_from) +
                           " profile, not measured on this GPU; ";
  const std::string tail = " (docs/accuracy.md); `infraplan calibrate` on the GPU replaces it";
  // The summaries follow docs/accuracy.md's published training rows; the tests that print those
  // tables (simulator/training_accuracy_test.cpp, training_accuracy_mpt_test.cpp) hold the numbers.
  if (p.gpu == "h100-sxm5-80gb")
    return head +
           "every published H100 training row checked was predicted faster than measured: NeMo fp8 by 15-50% "
           "(4-35% under --clock sustained), bf16 PyTorch FSDP by 8-38% at up to 2,048 tokens (median 27% on "
           "MosaicML's rows, 26-30% on IBM's) and more at longer sequences: read it as an upper bound" +
           tail;
  if (p.gpu == "a100-sxm4-80gb")
    return head +
           "on the published A100 training rows checked (Megatron-LM; PyTorch FSDP of torchtitan, IBM and "
           "MosaicML) it was within -13% ... +23% of the measured throughput at up to 2,048 tokens, mostly "
           "within 10%, but up to 42% fast at 4k-8k tokens and 8-67% fast at 16k-64k tokens (MosaicML)" +
           tail;
  return head + "no published training row on this GPU has been checked against it" + tail;
}

}  // namespace infraplan::hw
