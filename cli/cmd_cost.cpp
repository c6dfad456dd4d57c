// infraplan cost --gpu G --op gemm|attention_prefill|attention_decode|memory|launch ...: one op
// through the CostModel, with where the number came from (measured table, extrapolation,
// roofline), so the model can be inspected piece by piece.
#include <algorithm>
#include <cstdio>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "hardware/calibrated_cost_model.hpp"
#include "model/error.hpp"
#include "simulator/cost_setup.hpp"

namespace infraplan::cli {

namespace {

const std::vector<OptionSpec> kSpec = {
    {"gpu", true, "GPU catalog name"},
    {"op", true, "gemm | attention_prefill | attention_decode | memory | launch"},
    {"m", true, "gemm: rows of A and C (tokens)"},
    {"n", true, "gemm: columns of B and C"},
    {"k", true, "gemm: inner dimension"},
    {"batch", true, "gemm: batched GEMM count; attention: sequences (default 1)"},
    {"dtype", true, "gemm: bf16 fp16 tf32 fp32 fp8 int8 int4; attention: bf16 (default bf16)"},
    {"layout", true,
     "gemm: operand layout, tn (forward Y = X·Wᵀ, default), nn (input gradient dX = dY·W), nt (weight "
     "gradient dW = dYᵀ·X, k = tokens)"},
    {"seq", true, "attention_prefill: new tokens per sequence"},
    {"kv-len", true, "attention_prefill: keys per sequence (default = --seq)"},
    {"context", true, "attention_decode: cached tokens per sequence"},
    {"heads", true, "attention: query heads (default 32)"},
    {"kv-heads", true, "attention: key/value heads (default 8)"},
    {"head-dim", true, "attention: head width (default 128)"},
    {"kv-dtype", true, "attention_decode: KV format (default bf16)"},
    {"non-causal", false, "attention_prefill: no causal mask"},
    {"bytes", true, "memory: bytes read + written (e.g. 1GiB)"},
    {"clock-mhz", true,
     "gemm: predict at this SM clock instead of the profile's reference clock (GPUs under a power cap "
     "run heavy GEMMs at 1400-1980 MHz on the H200)"},
    {"profile", true, "hardware profile JSON (default: the GPU's embedded profile)"},
    {"roofline", false, "datasheet roofline instead of the profile"},
    {"json", false, "machine-readable output"},
};

std::int64_t need(const Args& a, const char* name) {
  auto v = a.get_int(name, 1);
  if (!v) throw Error(std::string("--op ") + a.get("op", "") + " needs --" + name);
  return *v;
}

}  // namespace

int cmd_cost(const std::vector<std::string>& argv) {
  Args a(argv, kSpec);
  if (a.help()) {
    std::printf(
        "Usage: infraplan cost --gpu G --op gemm --m M --n N --k K [--dtype bf16] [--layout tn|nn|nt] "
        "[--clock-mhz F] [--json]\n"
        "       infraplan cost --gpu G --op attention_prefill --seq S [--batch B] [--heads H --kv-heads K "
        "--head-dim D]\n"
        "       infraplan cost --gpu G --op attention_decode --context C [--batch B] [--kv-dtype bf16]\n"
        "       infraplan cost --gpu G --op memory --bytes 1GiB\n"
        "       infraplan cost --gpu G --op launch\n\n%s",
        options_help(kSpec).c_str());
    return 0;
  }
  const auto& gpu = hw::find_gpu(a.require("gpu"));
  const std::string op = a.require("op");
  const std::vector<std::string> ops = {"gemm", "attention_prefill", "attention_decode", "memory", "launch"};
  if (std::find(ops.begin(), ops.end(), op) == ops.end()) throw Error(unknown_name_message("--op", op, ops));
  auto cs = sim::make_cost_setup(gpu, a.get("profile", ""), a.flag("roofline"));
  const auto& cm = *cs.cost;
  hw::CostEstimate e;
  std::string shape, unit = "TFLOP/s", clock_note;
  if (a.get("clock-mhz").has_value() && op != "gemm") throw Error("--clock-mhz applies to --op gemm only");
  if (a.get("layout").has_value() && op != "gemm") throw Error("--layout applies to --op gemm only");
  hw::GemmLayout layout = hw::GemmLayout::TN;
  if (auto l = a.get("layout")) {
    auto parsed = hw::parse_gemm_layout(*l);
    if (!parsed) throw Error(unknown_name_message("--layout", *l, {"tn", "nn", "nt"}));
    layout = *parsed;
  }
  double scale = 1e12;
  if (op == "gemm") {
    hw::GemmShape g;
    g.m = need(a, "m");
    g.n = need(a, "n");
    g.k = need(a, "k");
    g.batch = a.get_int("batch", 1).value_or(1);
    g.dtype = parse_dtype(a.get("dtype", "bf16"), "--dtype");
    g.layout = layout;
    e = cm.gemm(g);
    if (a.get("clock-mhz").has_value()) {
      const double mhz = *a.get_number("clock-mhz", 100);
      if (mhz > 10000) throw Error("--clock-mhz: expected MHz between 100 and 10000, got " + fmt(mhz, 0));
      const auto* cal = dynamic_cast<const hw::CalibratedCostModel*>(&cm);
      if (!cal || !(cal->reference_clock_mhz() > 0))
        throw Error("--clock-mhz needs a measured profile with GEMM clock readings; " + cs.name +
                    " has none");
      const double f = cal->clock_factor(g.dtype, mhz);
      e.seconds /= f;
      e.achieved *= f;
      clock_note = fmt(mhz, 0) + " MHz (the table refers to " + fmt(cal->reference_clock_mhz(), 0) +
                   " MHz; time x (reference / clock)^" + fmt(cal->clock_exponent(g.dtype), 2) + ")";
    }
    shape = std::string(dtype_name(g.dtype)) + " " + std::to_string(g.m) + "x" + std::to_string(g.n) + "x" +
            std::to_string(g.k) + (g.batch > 1 ? " x" + std::to_string(g.batch) : "") + " " +
            hw::gemm_layout_name(layout);
  } else if (op == "attention_prefill") {
    hw::AttentionPrefillShape p;
    p.q_len = need(a, "seq");
    p.kv_len = a.get_int("kv-len", 1).value_or(p.q_len);
    p.batch = a.get_int("batch", 1).value_or(1);
    p.heads = a.get_int("heads", 1).value_or(32);
    p.kv_heads = a.get_int("kv-heads", 1).value_or(8);
    p.head_dim = a.get_int("head-dim", 1).value_or(128);
    p.causal = !a.flag("non-causal");
    e = cm.attention_prefill(p);
    shape = std::to_string(p.batch) + " x " + std::to_string(p.q_len) + " tokens, " +
            std::to_string(p.heads) + "/" + std::to_string(p.kv_heads) + " heads x " +
            std::to_string(p.head_dim) + (p.causal ? ", causal" : "");
  } else if (op == "attention_decode") {
    hw::AttentionDecodeShape d;
    d.batch = a.get_int("batch", 1).value_or(1);
    d.total_context_tokens = need(a, "context") * d.batch;
    d.heads = a.get_int("heads", 1).value_or(32);
    d.kv_heads = a.get_int("kv-heads", 1).value_or(8);
    d.head_dim = a.get_int("head-dim", 1).value_or(128);
    d.kv_dtype = parse_dtype(a.get("kv-dtype", "bf16"), "--kv-dtype");
    e = cm.attention_decode(d);
    shape = std::to_string(d.batch) + " seqs x " + std::to_string(d.total_context_tokens / d.batch) +
            " cached tokens";
    unit = "GB/s";
    scale = 1e9;
  } else if (op == "memory") {
    double bytes = parse_bytes_string(a.require("bytes"), "--bytes");
    e = cm.memory_bound(bytes);
    shape = fmt_gib(bytes) + " moved";
    unit = "GB/s";
    scale = 1e9;
  } else {
    e.seconds = cm.launch_overhead_seconds();
    e.source = a.flag("roofline") ? hw::CostSource::Roofline : hw::CostSource::Measured;
    e.detail = "kernel launch overhead";
    shape = "one kernel launch";
    unit = "";
  }
  // The measured spread of this op kind (between calibration runs and machines), when known.
  const std::string kind = op == "gemm"                        ? "gemm"
                           : op.rfind("attention", 0) == 0    ? "attention"
                           : op == "memory"                    ? "memory"
                                                               : "";
  double range_lo = 0, range_hi = 0;  // (plain doubles: GCC 12 misreads an optional pair as uninitialised)
  bool has_range = false;
  if (!kind.empty())
    if (auto r = cs.spread.range(kind, e.seconds)) has_range = true, range_lo = r->first, range_hi = r->second;
  if (a.flag("json")) {
    Json j = {{"gpu", gpu.name},
              {"op", op},
              {"shape", shape},
              {"seconds", e.seconds},
              {"achieved", e.achieved},
              {"ceiling", e.ceiling},
              {"unit", unit.empty() ? "" : (unit == "GB/s" ? "B/s" : "FLOP/s")},
              {"source", hw::cost_source_name(e.source)},
              {"detail", e.detail},
              {"cost_model", cs.name}};
    if (!clock_note.empty()) j["clock"] = clock_note;
    if (op == "gemm") j["layout"] = hw::gemm_layout_name(layout);
    if (has_range) j["seconds_range"] = {range_lo, range_hi};
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  Table t({"quantity", "value"});
  t.add({"op", op + ": " + shape});
  t.add({"predicted time", fmt_seconds(e.seconds)});
  if (has_range) t.add({"measured spread", fmt_seconds(range_lo) + " … " + fmt_seconds(range_hi)});
  if (!unit.empty()) {
    t.add({"achieved", fmt(e.achieved / scale, 1) + " " + unit});
    t.add({"ceiling", fmt(e.ceiling / scale, 1) + " " + unit});
    if (e.ceiling > 0) t.add({"of ceiling", fmt(100 * e.achieved / e.ceiling, 1) + "%"});
  }
  t.add({"source",
         std::string(hw::cost_source_name(e.source)) + (e.detail.empty() ? "" : " (" + e.detail + ")")});
  if (!clock_note.empty()) t.add({"clock", clock_note});
  t.add({"cost model", cs.name});
  std::printf("%s", t.str().c_str());
  return 0;
}

}  // namespace infraplan::cli
