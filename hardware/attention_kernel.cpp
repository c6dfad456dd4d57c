#include "hardware/attention_kernel.hpp"

#include "common/error.hpp"

namespace infraplan::hw {

const char* attention_kernel_name(AttentionKernel k) {
  return k == AttentionKernel::Flash2 ? "flash2" : "default";
}

const std::vector<std::string>& attention_kernel_names() {
  static const std::vector<std::string> names{"default", "flash2"};
  return names;
}

AttentionKernel parse_attention_kernel(const std::string& name, const std::string& field) {
  if (name == "default") return AttentionKernel::Default;
  if (name == "flash2") return AttentionKernel::Flash2;
  throw Error(field + "=\"" + name + "\" is invalid: valid choices are default, flash2");
}

}  // namespace infraplan::hw
