#include "strategies/backward_split.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace infraplan::strat {

double weight_gradient_share(const OpTemplate& op) {
  if (op.category != OpCategory::Compute || op.stream != Stream::Compute) return 0;
  const std::string_view n(op.name);
  for (std::string_view w : {"wgrad", "bias_grad", "weight_grad_cast", "lm_head_grad_cast", "tied_grad_add"})
    if (n.find(w) != std::string_view::npos) return 1;
  if (n == "embedding_bwd") return 1;
  for (std::string_view both :
       {"mlp_down_bwd", "attn_proj_bwd", "expert_down_bwd", "expert_up_bwd", "shared_bwd", "router_bwd"})
    if (n == both) return 0.5;
  return 0;
}

SplitBackward split_backward(const std::vector<OpTemplate>& bwd) {
  SplitBackward out;
  // new_index[i]: index in `input` standing for original op i (a removed op stands for the op it
  // depended on, so later ops keep waiting for the same work).
  std::vector<int> new_index(bwd.size(), -1);
  for (std::size_t i = 0; i < bwd.size(); ++i) {
    const OpTemplate& o = bwd[i];
    std::vector<int> deps;
    if (o.explicit_deps) {
      deps = o.deps;
    } else if (i > 0) {
      deps = {int(i) - 1};
    }
    std::vector<int> mapped;
    for (int d : deps) {
      if (d < 0) continue;  // "the op before" of a template's first op: nothing inside the template
      const int n = new_index[std::size_t(d)];
      if (n >= 0 && std::find(mapped.begin(), mapped.end(), n) == mapped.end()) mapped.push_back(n);
    }
    if (mapped.empty() && i > 0 && !out.input.empty()) mapped.push_back(int(out.input.size()) - 1);
    const double share = weight_gradient_share(o);
    if (share > 0) {
      OpTemplate w = o;
      w.seconds *= share, w.flops *= share, w.bytes *= share;
      w.deps.clear(), w.explicit_deps = false;
      out.weight.push_back(w);
    }
    if (share >= 1) {
      new_index[i] = mapped.empty() ? -1 : mapped.front();
      continue;
    }
    OpTemplate b = o;
    b.seconds *= 1 - share, b.flops *= 1 - share, b.bytes *= 1 - share;
    if (share > 0) b.module = "";  // the framework op's host cost stays with the W half
    b.deps = mapped;
    b.explicit_deps = true;
    out.input.push_back(b);
    new_index[i] = int(out.input.size()) - 1;
  }
  return out;
}

}  // namespace infraplan::strat
