// The "power" section of a profile: sustained clock and power under the board's limit.
#include "hardware/profile_sections.hpp"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "hardware/profile_json.hpp"

namespace infraplan::hw {

using namespace profile_json;

// power: the sustained-load probe and held engine steps.
void parse_power_section(const Json& j, const std::string& origin, Profile& p) {
  const Json& pj = j["power"];
  const std::string pp = "power";
  Profile::PowerSection ps;
  ps.limit_w = number(need(pj, "limit_w", pp, origin), pp + ".limit_w", origin, 1);
  ps.max_clock_mhz = number(need(pj, "max_clock_mhz", pp, origin), pp + ".max_clock_mhz", origin, 1);
  if (ps.limit_w > 1e5) fail(origin, pp + ".limit_w", "expected a board power below 100 kW");
  if (ps.max_clock_mhz > 1e5) fail(origin, pp + ".max_clock_mhz", "expected a clock below 100 GHz");
  if (pj.contains("idle_w") && pj["idle_w"].is_number())
    ps.idle_w = number(pj["idle_w"], pp + ".idle_w", origin, 0);
  if (pj.contains("gemm_operands")) {
    const Json& g = pj["gemm_operands"];
    if (!g.is_string() || (g.get<std::string>() != "uniform" && g.get<std::string>() != "normal"))
      fail(origin, pp + ".gemm_operands", "expected \"uniform\" or \"normal\", got " + shown(g));
    ps.gemm_operands = g.get<std::string>();
  }
  if (pj.contains("normal_operands")) {
    const Json& no = pj["normal_operands"];
    const std::string f = pp + ".normal_operands";
    if (!no.is_object()) fail(origin, f, "expected {\"clock_ratio\": number, \"source\": text}");
    ps.normal_operand_clock_ratio =
        number(need(no, "clock_ratio", f, origin), f + ".clock_ratio", origin, 0.5);
    if (ps.normal_operand_clock_ratio > 1.5)
      fail(origin, f + ".clock_ratio", "expected a clock ratio in [0.5, 1.5] (normal over uniform operands)");
    if (no.contains("source") && !no["source"].is_string()) fail(origin, f + ".source", "expected a string");
  }
  const Json& pts = need(pj, "points", pp, origin);
  if (!pts.is_array()) fail(origin, pp + ".points", "expected an array of measured workloads");
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const Json& q = pts[i];
    const std::string f = pp + ".points[" + std::to_string(i) + "]";
    Profile::PowerPoint pt;
    const Json& kind = need(q, "kind", f, origin);
    if (!kind.is_string())
      fail(origin, f + ".kind",
           "expected \"gemm\", \"copy\", \"elementwise\", \"attention\", \"decode\" or \"mixed\"");
    pt.label = kind.get<std::string>();
    const std::string kind_name = pt.label;
    if (pt.label != "gemm" && pt.label != "copy" && pt.label != "mixed" && pt.label != "elementwise" &&
        pt.label != "attention" && pt.label != "decode")
      fail(origin, f + ".kind",
           "expected \"gemm\", \"copy\", \"elementwise\", \"attention\", \"decode\" or \"mixed\", got " +
               shown(kind));
    if (q.contains("dtype")) {
      const Json& dt = q["dtype"];
      if (!dt.is_string()) fail(origin, f + ".dtype", "expected a format name");
      const Dtype d = parse_dtype(dt.get<std::string>(), f + ".dtype");
      pt.eight_bit = d == Dtype::FP8 || d == Dtype::INT8;
      pt.label += " " + dt.get<std::string>();
    }
    if (q.contains("m") && q.contains("n") && q.contains("k"))
      pt.label += " " + std::to_string(integer(q["m"], f + ".m", origin, 1, kMaxDim)) + "x" +
                  std::to_string(integer(q["n"], f + ".n", origin, 1, kMaxDim)) + "x" +
                  std::to_string(integer(q["k"], f + ".k", origin, 1, kMaxDim));
    if (q.contains("layout") && q["layout"].is_string()) pt.label += " " + q["layout"].get<std::string>();
    pt.attention = kind_name == "attention";
    // Attention points of a framework's kernel (bench/pytorch/attention_power.py): pass and shape.
    if (pt.attention && q.contains("pass") && q["pass"].is_string() && q.contains("batch") &&
        q.contains("heads") && q.contains("seq_len") && q.contains("head_dim"))
      pt.label += " " + q["pass"].get<std::string>() + " " +
                  std::to_string(integer(q["batch"], f + ".batch", origin, 1, kMaxDim)) + "x" +
                  std::to_string(integer(q["heads"], f + ".heads", origin, 1, kMaxDim)) + "x" +
                  std::to_string(integer(q["seq_len"], f + ".seq_len", origin, 1, kMaxDim)) + "x" +
                  std::to_string(integer(q["head_dim"], f + ".head_dim", origin, 1, kMaxDim));
    if (pt.attention && q.contains("kernel") && q["kernel"].is_string())
      pt.label += " (" + q["kernel"].get<std::string>() + ")";
    if (kind_name == "mixed") pt.gemm_label = "gemm" + pt.label.substr(kind_name.size());
    if (q.contains("mix_with") && q["mix_with"].is_string()) {
      pt.mix_with = q["mix_with"].get<std::string>();
      if (pt.mix_with != "idle" && pt.mix_with != "copy" && pt.mix_with != "elementwise")
        fail(origin, f + ".mix_with",
             "expected \"idle\", \"copy\" or \"elementwise\", got " + shown(q["mix_with"]));
      pt.label += " + " + pt.mix_with;
    }
    const Json& role = need(q, "role", f, origin);
    if (!role.is_string() || (role.get<std::string>() != "fit" && role.get<std::string>() != "holdout"))
      fail(origin, f + ".role", "expected \"fit\" or \"holdout\", got " + shown(role));
    pt.role = role.get<std::string>();
    pt.flops = number(need(q, "flops", f, origin), f + ".flops", origin, 0);
    pt.bytes = number(need(q, "bytes", f, origin), f + ".bytes", origin, 0);
    if (q.contains("elementwise_bytes"))
      pt.elementwise_bytes = number(q["elementwise_bytes"], f + ".elementwise_bytes", origin, 0);
    else if (pt.label == "elementwise")
      pt.elementwise_bytes = std::exchange(pt.bytes, 0.0);
    // Paged decode attention's FLOPs run on CUDA cores, not tensor cores: the law prices its bytes.
    if (kind_name == "decode") pt.flops = 0;
    const Json& b = need(q, "burst", f, origin);
    const Json& su = need(q, "sustained", f, origin);
    pt.burst_seconds = number(need(b, "seconds", f + ".burst", origin), f + ".burst.seconds", origin, 1e-9);
    if (b.contains("clock_mhz") && !b["clock_mhz"].is_null())
      pt.burst_clock_mhz = number(b["clock_mhz"], f + ".burst.clock_mhz", origin, 1);
    pt.sustained_seconds =
        number(need(su, "seconds", f + ".sustained", origin), f + ".sustained.seconds", origin, 1e-9);
    pt.clock_mhz =
        number(need(su, "clock_mhz", f + ".sustained", origin), f + ".sustained.clock_mhz", origin, 1);
    pt.power_w = number(need(su, "power_w", f + ".sustained", origin), f + ".sustained.power_w", origin, 1);
    // A mixture's clock changes within its period: the clock sampled every 100 ms by NVML averages
    // over it, where the GPU-side reading falls at one phase.
    if (pt.label.rfind("mixed", 0) == 0 && su.contains("nvml_clock_mhz") && su["nvml_clock_mhz"].is_number())
      pt.clock_mhz = number(su["nvml_clock_mhz"], f + ".sustained.nvml_clock_mhz", origin, 1);
    if (q.contains("period_s")) pt.period_s = number(q["period_s"], f + ".period_s", origin, 0);
    if (q.contains("gemm_share")) pt.gemm_share = number(q["gemm_share"], f + ".gemm_share", origin, 0);
    if (pt.gemm_share > 1) fail(origin, f + ".gemm_share", "expected a share of time in [0, 1]");
    if (pt.period_s > 0) pt.label += " @ " + std::to_string(std::lround(pt.period_s * 1e3)) + " ms";
    if (q.contains("gemm_burst_seconds") && q.contains("gemms_per_period") &&
        q.contains("other_burst_seconds")) {
      const double g = number(q["gemm_burst_seconds"], f + ".gemm_burst_seconds", origin, 0);
      const double n = double(integer(q["gemms_per_period"], f + ".gemms_per_period", origin, 1, 1 << 20));
      pt.other_phase_seconds = number(q["other_burst_seconds"], f + ".other_burst_seconds", origin, 0);
      pt.gemm_phase_seconds = g * n;
      if (pt.gemm_phase_seconds > 1e3 || pt.other_phase_seconds > 1e3)
        fail(origin, f, "a mixture's phases above 1000 s: not a kernel measurement");
    }
    if (pt.burst_seconds > 1e3 || pt.sustained_seconds > 1e3)
      fail(origin, f, "seconds per unit above 1000: not a kernel measurement");
    ps.points.push_back(std::move(pt));
  }
  if (pj.contains("engine_steps")) {
    const Json& es = pj["engine_steps"];
    if (!es.is_array()) fail(origin, pp + ".engine_steps", "expected an array of held decode steps");
    if (es.size() > 1024) fail(origin, pp + ".engine_steps", "at most 1024 held steps");
    for (std::size_t i = 0; i < es.size(); ++i) {
      const Json& q = es[i];
      const std::string f = pp + ".engine_steps[" + std::to_string(i) + "]";
      if (!q.is_object()) fail(origin, f, "expected an object");
      Profile::EngineStepPoint e;
      e.model = need(q, "model", f, origin);
      if (!e.model.is_string() && !e.model.is_object())
        fail(origin, f + ".model", "expected a model preset name or a model object");
      if (q.contains("name")) {
        if (!q["name"].is_string()) fail(origin, f + ".name", "expected a string");
        e.name = q["name"].get<std::string>();
      }
      e.batch = integer(need(q, "batch", f, origin), f + ".batch", origin, 1, 65536);
      e.context = integer(need(q, "context", f, origin), f + ".context", origin, 1, std::int64_t(1) << 24);
      const Json& role = need(q, "role", f, origin);
      if (!role.is_string() || (role.get<std::string>() != "fit" && role.get<std::string>() != "holdout"))
        fail(origin, f + ".role", "expected \"fit\" or \"holdout\", got " + shown(role));
      e.role = role.get<std::string>();
      const Json& h = need(q, "held", f, origin);
      const std::string fh = f + ".held";
      e.gpu_seconds = number(need(h, "gpu_seconds", fh, origin), fh + ".gpu_seconds", origin, 1e-7);
      e.wall_seconds = number(need(h, "wall_seconds", fh, origin), fh + ".wall_seconds", origin, 1e-7);
      e.clock_mhz = number(need(h, "clock_mhz", fh, origin), fh + ".clock_mhz", origin, 1);
      e.power_w = number(need(h, "power_w", fh, origin), fh + ".power_w", origin, 1);
      if (e.gpu_seconds > 60 || e.wall_seconds > 60)
        fail(origin, fh, "a decode step above 60 s: not a measurement");
      if (e.clock_mhz > ps.max_clock_mhz * 1.01)
        fail(origin, fh + ".clock_mhz",
             "above the section's max_clock_mhz " + std::to_string(ps.max_clock_mhz));
      if (e.power_w > ps.limit_w * 1.2)
        fail(origin, fh + ".power_w", "more than 1.2 x the section's limit_w " + std::to_string(ps.limit_w));
      ps.engine_steps.push_back(std::move(e));
    }
  }
  p.power = std::move(ps);
}
}  // namespace infraplan::hw
