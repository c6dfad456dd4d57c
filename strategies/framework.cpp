#include "strategies/framework.hpp"

#include "common/error.hpp"

namespace infraplan::strat {

const char* framework_name(Framework f) {
  switch (f) {
    case Framework::Auto:
      return "auto";
    case Framework::PytorchEager:
      return "pytorch-eager";
    case Framework::Transformers:
      return "transformers";
    case Framework::TorchCompile:
      return "torch-compile";
    case Framework::Megatron:
      return "megatron";
  }
  return "?";
}

std::vector<std::string> framework_names() {
  return {"pytorch-eager", "transformers", "torch-compile", "megatron"};
}

Framework parse_framework(const std::string& s, const std::string& path) {
  for (auto f : {Framework::Auto, Framework::PytorchEager, Framework::Transformers, Framework::TorchCompile,
                 Framework::Megatron})
    if (s == framework_name(f)) return f;
  throw Error(path + "=\"" + s + "\" is not a framework; valid: auto, pytorch-eager, transformers, "
              "torch-compile, megatron");
}

}  // namespace infraplan::strat
