// The "framework" section of a profile: eager-framework host costs and eager kernels.
#include "hardware/profile_sections.hpp"

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "hardware/profile_json.hpp"

namespace infraplan::hw {

using namespace profile_json;

// framework: host costs, eager kernels, clock shares, memsets (docs/calibration.md).
void parse_framework_section(const Json& j, const std::string& origin, Profile& p) {
  const Json& f = j["framework"];
  const std::string fp = "framework";
  if (!f.is_object()) fail(origin, fp, "expected a JSON object");
  FrameworkProfile fw;
  fw.name = str(f, "name", "");
  if (fw.name.empty()) fail(origin, fp + ".name", "missing (required), e.g. \"pytorch-eager\"");
  fw.torch_version = str(f, "torch_version", "");
  fw.cuda_version = str(f, "cuda_version", "");
  fw.date = str(f, "date", "");
  fw.command = str(f, "command", "");
  auto us = [&](const char* key, bool required) {
    if (!f.contains(key)) {
      if (required) fail(origin, fp + "." + key, "missing (required), microseconds >= 0");
      return 0.0;
    }
    return number(f[key], fp + "." + key, origin, 0);
  };
  fw.op_dispatch_us_forward = us("op_dispatch_us_forward", true);
  fw.op_dispatch_us_backward = us("op_dispatch_us_backward", true);
  fw.optimizer_us_per_tensor = us("optimizer_us_per_tensor", true);
  fw.optimizer_us_fixed = us("optimizer_us_fixed", false);
  fw.aten_op_us_nograd = us("aten_op_us_nograd", false);
  fw.checkpoint_us_forward_per_block = us("checkpoint_us_forward_per_block", false);
  fw.checkpoint_us_backward_per_block = us("checkpoint_us_backward_per_block", false);
  fw.aten_op_us_forward = us("aten_op_us_autograd_forward", false);
  fw.aten_op_us_backward = us("aten_op_us_autograd_backward", false);
  // {key: {forward_us, backward_us}} objects; `admit` may refuse a key (returns the reason), and
  // a value above `max_us` is refused.
  auto fwd_bwd_map = [&](const char* name, std::map<std::string, std::pair<double, double>>& out,
                         double max_us, const std::function<std::string(const std::string&)>& admit) {
    if (!f.contains(name)) return;
    const Json& o = f[name];
    const std::string fo = fp + "." + name;
    if (!o.is_object()) fail(origin, fo, "expected an object of {forward_us, backward_us}");
    for (auto it = o.begin(); it != o.end(); ++it) {
      const std::string fk = fo + "." + it.key();
      if (admit) {
        const std::string why = admit(it.key());
        if (!why.empty()) fail(origin, fk, why);
      }
      auto us_of = [&](const char* d) {
        const double v = number(need(*it, d, fk, origin), fk + "." + d, origin, 0);
        if (v > max_us)
          fail(origin, fk + "." + d,
               "expected at most " + number_text(max_us) + " µs, got " + shown((*it)[d]));
        return v;
      };
      out[it.key()] = {us_of("forward_us"), us_of("backward_us")};
    }
  };
  constexpr double kUnbounded = 1e300;
  fwd_bwd_map("per_module_us", fw.module_us, kUnbounded, {});
  if (f.contains("fused_adamw")) {
    const Json& fa = f["fused_adamw"];
    const std::string fk = fp + ".fused_adamw";
    if (!fa.is_object()) fail(origin, fk, "expected an object {fp32|bf16: [{params, seconds}, ...]}");
    for (auto it = fa.begin(); it != fa.end(); ++it) {
      if (it.key() == "command" || it.key() == "date") continue;
      if (it.key() != "fp32" && it.key() != "bf16")
        fail(origin, fk + "." + it.key(), "unknown state dtype; valid: fp32, bf16");
      if (!it->is_array() || it->empty()) fail(origin, fk + "." + it.key(), "expected a non-empty array");
      std::vector<std::pair<double, double>> pts;
      for (std::size_t i = 0; i < it->size(); ++i) {
        const std::string pk = fk + "." + it.key() + "[" + std::to_string(i) + "]";
        const double n = number(need((*it)[i], "params", pk, origin), pk + ".params", origin, 1);
        const double s = number(need((*it)[i], "seconds", pk, origin), pk + ".seconds", origin, 0);
        if (!pts.empty() && n <= pts.back().first) fail(origin, pk + ".params", "must ascend");
        pts.emplace_back(n, s);
      }
      fw.fused_adamw[it.key()] = std::move(pts);
    }
  }
  fwd_bwd_map("block_host_us", fw.block_us, kUnbounded, {});
  // torch.compile's per-call host cost: at most 1 s per call (measured: up to 4.6 ms).
  fwd_bwd_map("block_host_pass_us", fw.pass_us, 1e6, [](const std::string& key) {
    return key.rfind("torch-compile/", 0) == 0 ? std::string()
                                               : std::string(
                                                     "only torch-compile entries have a per-call host cost "
                                                     "(eager frameworks price it per op)");
  });
  if (f.contains("block_host_runs")) {
    const Json& pr = f["block_host_runs"];
    const std::string fr = fp + ".block_host_runs";
    if (!pr.is_object()) fail(origin, fr, "expected an object of {forward_us: [...], backward_us: [...]}");
    for (auto it = pr.begin(); it != pr.end(); ++it) {
      const std::string fk = fr + "." + it.key();
      const Json& fw_runs = need(*it, "forward_us", fk, origin);
      const Json& bw_runs = need(*it, "backward_us", fk, origin);
      if (!fw_runs.is_array() || !bw_runs.is_array() || fw_runs.empty() || fw_runs.size() != bw_runs.size() ||
          fw_runs.size() > 1000)
        fail(origin, fk, "expected forward_us and backward_us arrays of the same length (1 … 1000 runs)");
      auto& runs = fw.block_runs[it.key()];
      for (std::size_t i = 0; i < fw_runs.size(); ++i)
        runs.emplace_back(number(fw_runs[i], fk + ".forward_us[" + std::to_string(i) + "]", origin, 0),
                          number(bw_runs[i], fk + ".backward_us[" + std::to_string(i) + "]", origin, 0));
    }
  }
  if (f.contains("elementwise")) {
    const Json& e = f["elementwise"];
    const std::string fe = fp + ".elementwise";
    fw.elementwise_elements = axis(need(e, "elements", fe, origin), fe + ".elements", origin);
    const Json& ops = need(e, "ops", fe, origin);
    if (!ops.is_object()) fail(origin, fe + ".ops", "expected an object of {width, seconds}");
    for (auto it = ops.begin(); it != ops.end(); ++it) {
      const std::string fo = fe + ".ops." + it.key();
      fw.elementwise_seconds[it.key()] =
          seconds_grid(need(*it, "seconds", fo, origin), fo + ".seconds", origin,
                       fw.elementwise_elements.size(), "one per element count");
    }
  }
  if (f.contains("clock_share")) {
    const std::string fc = fp + ".clock_share";
    const Json& ops = need(f["clock_share"], "ops", fc, origin);
    if (!ops.is_object()) fail(origin, fc + ".ops", "expected an object {op: share in [0, 1]}");
    for (auto it = ops.begin(); it != ops.end(); ++it) {
      const std::string fo = fc + ".ops." + it.key();
      const bool adamw = it.key() == "fused_adamw_fp32" || it.key() == "fused_adamw_bf16";
      if (!adamw && !fw.elementwise_seconds.count(it.key()))
        fail(origin, fo, "no such op in framework.elementwise.ops (nor fused_adamw_fp32 / fused_adamw_bf16)");
      const double share = number(*it, fo, origin, 0);
      if (share > 1) fail(origin, fo, "expected a share in [0, 1], got " + fmt_num(share));
      fw.clock_share[it.key()] = share;
    }
  }
  if (f.contains("memsets")) {
    const std::string fm = fp + ".memsets";
    const Json& m = f["memsets"];
    FrameworkProfile::Memsets ms;
    ms.per_gemm = number(need(m, "per_gemm", fm, origin), fm + ".per_gemm", origin, 0);
    ms.seconds = number(need(m, "seconds", fm, origin), fm + ".seconds", origin, 0);
    if (ms.per_gemm > 4) fail(origin, fm + ".per_gemm", "expected at most 4 memsets per GEMM call");
    if (ms.seconds > 1e-3) fail(origin, fm + ".seconds", "expected at most 1 ms per memset");
    fw.memsets = ms;
  }
  p.framework = std::move(fw);
}
}  // namespace infraplan::hw
