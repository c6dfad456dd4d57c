// infraplan cost --gpu G --op gemm|attention_prefill|attention_decode|memory|launch ...: one op
// through the CostModel, with where the number came from (measured table, extrapolation,
// roofline), so the model can be inspected piece by piece.
#include <algorithm>
#include <cstdio>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "hardware/calibrated_cost_model.hpp"
#include "common/limits.hpp"
#include "common/error.hpp"
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
    {"attention-kernel", true,
     "attention_prefill: default (the profile's attention tables) or flash2 (the FlashAttention-2 kernels' "
     "tables, where the profile has them)"},
    {"bytes", true, "memory: bytes read + written (e.g. 1GiB)"},
    {"clock-mhz", true,
     "gemm: predict at this SM clock instead of the profile's reference clock (GPUs under a power cap "
     "run heavy GEMMs at 1400-1980 MHz on the H200)"},
    {"clock", true,
     "gemm: reference (default: the clock the profile's tables refer to), top (the board's highest clock: "
     "a short benchmark after rest) or held (the clock the profile's power law gives this GEMM run back "
     "to back on its own: a benchmark that holds each shape)"},
    {"duty", true,
     "gemm with --clock held: the share of the time the GEMM runs, the GPU idle the rest (a benchmark's "
     "gaps between samples, a GEMM between lighter work), in [0.001, 1] (default 1: back to back)"},
    {"profile", true, "hardware profile JSON (default: the GPU's embedded profile)"},
    {"roofline", false, "datasheet roofline instead of the profile"},
    {"json", false, "machine-readable output"},
};

// Largest GEMM dimension and batch count, attention sequences and heads accepted by `cost`.
constexpr std::int64_t kMaxGemmDim = std::int64_t(1) << 31;
constexpr std::int64_t kMaxBatch = std::int64_t(1) << 24;

std::int64_t need(const Args& a, const char* name, std::int64_t max) {
  auto v = a.get_int(name, 1, max);
  if (!v) throw Error(std::string("--op ") + a.get("op", "") + " needs --" + name);
  return *v;
}

/// The options each op reads; any other op-specific option given is an error, not ignored.
void refuse_others(const Args& a, const std::string& op, const std::vector<std::string>& used) {
  for (const char* o :
       {"m", "n", "k", "batch", "dtype", "seq", "kv-len", "context", "heads", "kv-heads", "head-dim",
        "kv-dtype", "non-causal", "attention-kernel", "bytes", "clock-mhz", "clock", "layout"})
    if (std::find(used.begin(), used.end(), o) == used.end()) {
      const std::string name = o;
      const bool gemm_only = name == "m" || name == "n" || name == "k" || name == "clock-mhz" ||
                             name == "clock" || name == "layout";
      a.refuse(o, "does not apply to --op " + op + (gemm_only ? " (it applies to --op gemm only)" : ""));
    }
}

}  // namespace

int cmd_cost(const std::vector<std::string>& argv) {
  Args a(argv, kSpec);
  if (a.help()) {
    std::printf(
        "Usage: infraplan cost --gpu G --op gemm --m M --n N --k K [--dtype bf16] [--layout tn|nn|nt] "
        "[--clock reference|top|held [--duty F] | --clock-mhz F] [--json]\n"
        "       infraplan cost --gpu G --op attention_prefill --seq S [--batch B] [--heads H --kv-heads K "
        "--head-dim D] [--attention-kernel default|flash2]\n"
        "       infraplan cost --gpu G --op attention_decode --context C [--batch B] [--kv-dtype bf16]\n"
        "       infraplan cost --gpu G --op memory --bytes 1GiB\n"
        "       infraplan cost --gpu G --op launch\n\n%s",
        options_help(kSpec).c_str());
    return 0;
  }
  namespace L = limits;
  a.expect_positional(0, 0, "infraplan cost --gpu G --op OP ...");
  const auto& gpu = hw::find_gpu(a.require("gpu"));
  const std::string op = a.require("op");
  const std::vector<std::string> ops = {"gemm", "attention_prefill", "attention_decode", "memory", "launch"};
  if (std::find(ops.begin(), ops.end(), op) == ops.end()) throw Error(unknown_name_message("--op", op, ops));
  auto cs = sim::make_cost_setup(gpu, a.get("profile", ""), a.flag("roofline"));
  const auto& cm = *cs.cost;
  hw::CostEstimate e;
  std::string shape, unit = "TFLOP/s", clock_note;
  double clock_mhz = 0;  // the clock a gemm was asked at (0: the reference clock)
  if (op == "gemm")
    refuse_others(a, op, {"m", "n", "k", "batch", "dtype", "clock-mhz", "clock", "layout", "duty"});
  else if (op == "attention_prefill")
    refuse_others(a, op,
                  {"seq", "kv-len", "batch", "heads", "kv-heads", "head-dim", "non-causal", "dtype",
                   "attention-kernel"});
  else if (op == "attention_decode")
    refuse_others(a, op, {"context", "batch", "heads", "kv-heads", "head-dim", "kv-dtype", "dtype"});
  else if (op == "memory")
    refuse_others(a, op, {"bytes"});
  else
    refuse_others(a, op, {});
  hw::GemmLayout layout = hw::GemmLayout::TN;
  if (auto l = a.get("layout")) {
    auto parsed = hw::parse_gemm_layout(*l);
    if (!parsed) throw Error(unknown_name_message("--layout", *l, {"tn", "nn", "nt"}));
    layout = *parsed;
  }
  double scale = 1e12;
  bool bf16_gemm = false;  // the GEMM record covers bf16 GEMMs only
  if (op == "gemm") {
    hw::GemmShape g;
    g.m = need(a, "m", kMaxGemmDim);
    g.n = need(a, "n", kMaxGemmDim);
    g.k = need(a, "k", kMaxGemmDim);
    g.batch = a.get_int("batch", 1, kMaxBatch).value_or(1);
    g.dtype = parse_dtype(a.get("dtype", "bf16"), "--dtype");
    g.layout = layout;
    bf16_gemm = g.dtype == Dtype::BF16;
    e = cm.gemm(g);
    const std::string clock = a.get("clock", "reference");
    if (clock != "reference" && clock != "top" && clock != "held")
      throw Error(unknown_name_message("--clock", clock, {"reference", "top", "held"}));
    if (a.given("clock") && a.given("clock-mhz"))
      throw Error("--clock and --clock-mhz both set the clock: give one of them");
    if (a.given("duty") && clock != "held")
      throw Error(
          "--duty applies to --clock held only (the clock the power law gives a GEMM that runs that "
          "share of the time)");
    const double duty = a.get_number("duty", 1e-3, 1.0).value_or(1.0);
    if (a.get("clock-mhz").has_value() || clock != "reference") {
      const auto* cal = dynamic_cast<const hw::CalibratedCostModel*>(&cm);
      if (!cal || !(cal->reference_clock_mhz() > 0))
        throw Error(std::string(a.given("clock") ? "--clock " + clock : "--clock-mhz") +
                    " needs a measured profile with GEMM clock readings; " + cs.name + " has none");
      if (clock != "reference" && !cal->power_model())
        throw Error("--clock " + clock +
                    " needs a profile with a power section (infraplan-calibrate --only power); " + cs.name +
                    " has none");
      if (clock == "held") {
        // A shape the profile timed held (tables.gemm_held_rows) is answered as measured there;
        // otherwise at the power law's held clock.
        const auto h = cal->gemm_held(g, duty);
        clock_mhz = h.clock_mhz;
        e.achieved *= e.seconds / h.seconds;
        e.seconds = h.seconds;
        if (h.hold_ms > 0) {
          e.detail = std::string(dtype_name(g.dtype)) + " " + hw::gemm_layout_name(g.layout) +
                     " row timed held, measured (tables.gemm_held_rows), log-space interpolation";
          clock_note = (clock_mhz > 0 ? fmt(clock_mhz, 0) + " MHz, " : std::string()) +
                       "the clock this shape held when the profile timed it held " + fmt(h.hold_ms, 0) +
                       " ms back to back (tables.gemm_held_rows); the time as measured there";
        } else {
          clock_note =
              fmt(clock_mhz, 0) + " MHz" +
              (duty < 1 ? ", where the power law holds this GEMM run " + fmt(100 * duty, 1) +
                              "% of the time, the GPU idle the rest"
                        : std::string(", where the power law holds this GEMM run back to back on its own")) +
              " (the table refers to " + fmt(cal->reference_clock_mhz(), 0) +
              " MHz; time x (reference / clock)^" + fmt(cal->held_clock_exponent(g.dtype), 2) +
              ", the exponent the power probe's held GEMMs measured)";
        }
      } else {
        const bool top = clock == "top";
        clock_mhz = top ? cal->power_model()->max_clock_mhz() : *a.get_number("clock-mhz", 100, 10000);
        const double f = cal->clock_factor(g.dtype, clock_mhz);
        e.seconds /= f;
        e.achieved *= f;
        clock_note = fmt(clock_mhz, 0) + " MHz" + (top ? ", the board's highest" : "") +
                     " (the table refers to " + fmt(cal->reference_clock_mhz(), 0) +
                     " MHz; time x (reference / clock)^" + fmt(cal->clock_exponent(g.dtype), 2) + ")";
      }
    }
    shape = std::string(dtype_name(g.dtype)) + " " + std::to_string(g.m) + "x" + std::to_string(g.n) + "x" +
            std::to_string(g.k) + (g.batch > 1 ? " x" + std::to_string(g.batch) : "") + " " +
            hw::gemm_layout_name(layout);
  } else if (op == "attention_prefill") {
    hw::AttentionPrefillShape p;
    p.q_len = need(a, "seq", L::kMaxSeqTokens);
    p.kv_len = a.get_int("kv-len", 1, L::kMaxSeqTokens).value_or(p.q_len);
    if (p.kv_len < p.q_len)
      throw Error("--kv-len=" + std::to_string(p.kv_len) + " is invalid: the keys include the " +
                  std::to_string(p.q_len) + " new tokens (--seq), so it must be an integer in " +
                  range_text(p.q_len, L::kMaxSeqTokens));
    p.batch = a.get_int("batch", 1, kMaxBatch).value_or(1);
    p.heads = a.get_int("heads", 1, L::kMaxHeads).value_or(32);
    p.kv_heads = a.get_int("kv-heads", 1, L::kMaxHeads).value_or(std::min<std::int64_t>(8, p.heads));
    p.head_dim = a.get_int("head-dim", 1, L::kMaxHeadDim).value_or(128);
    if (p.heads % p.kv_heads != 0)
      throw Error("--kv-heads=" + std::to_string(p.kv_heads) + " must divide --heads=" + std::to_string(p.heads));
    if (a.given("dtype") && a.get("dtype") != "bf16")
      throw Error("--dtype for attention: only bf16 is modelled (got '" + a.get("dtype", "") + "')");
    p.causal = !a.flag("non-causal");
    p.kernel = hw::parse_attention_kernel(a.get("attention-kernel", "default"), "--attention-kernel");
    e = cm.attention_prefill(p);
    shape =
        std::to_string(p.batch) + " x " + std::to_string(p.q_len) + " tokens, " + std::to_string(p.heads) +
        "/" + std::to_string(p.kv_heads) + " heads x " + std::to_string(p.head_dim) +
        (p.causal ? ", causal" : "") +
        (p.kernel != hw::AttentionKernel::Default ? std::string(", ") + hw::attention_kernel_name(p.kernel)
                                                  : "");
  } else if (op == "attention_decode") {
    hw::AttentionDecodeShape d;
    d.batch = a.get_int("batch", 1, kMaxBatch).value_or(1);
    d.total_context_tokens = need(a, "context", L::kMaxSeqTokens) * d.batch;  // ≤ 2^48: no overflow
    d.heads = a.get_int("heads", 1, L::kMaxHeads).value_or(32);
    d.kv_heads = a.get_int("kv-heads", 1, L::kMaxHeads).value_or(std::min<std::int64_t>(8, d.heads));
    d.head_dim = a.get_int("head-dim", 1, L::kMaxHeadDim).value_or(128);
    if (d.heads % d.kv_heads != 0)
      throw Error("--kv-heads=" + std::to_string(d.kv_heads) + " must divide --heads=" + std::to_string(d.heads));
    if (a.given("dtype") && a.get("dtype") != "bf16")
      throw Error("--dtype for attention: only bf16 is modelled (got '" + a.get("dtype", "") + "')");
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
  // How far GEMMs of the validation rows (bf16, >= 10 µs, at the reference clock) fell from the
  // model: an 80% interval, when the profile records one (by band of predicted time where it has them).
  hw::ValidationError gemm_band;  // (a plain value and a pointer to it, as above)
  const hw::ValidationError* gemm_error = nullptr;
  if (bf16_gemm && clock_note.empty() && e.seconds >= 10e-6)
    if (auto it = cs.validation_error.find("gemm"); it != cs.validation_error.end())
      gemm_band = it->second.for_prediction(e.seconds), gemm_error = &gemm_band;
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
    if (!clock_note.empty()) j["clock"] = clock_note, j["clock_mhz"] = clock_mhz;
    if (op == "gemm") j["layout"] = hw::gemm_layout_name(layout);
    if (has_range) j["seconds_range"] = {range_lo, range_hi};
    if (gemm_error) {
      const auto [lo, hi] = gemm_error->interval(e.seconds);
      j["seconds_interval"] = {lo, hi}, j["interval"] = gemm_error->summary();
    }
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  Table t({"quantity", "value"});
  t.add({"op", op + ": " + shape});
  t.add({"predicted time", fmt_seconds(e.seconds)});
  if (has_range) t.add({"measured spread", fmt_seconds(range_lo) + " … " + fmt_seconds(range_hi)});
  if (gemm_error) {
    const auto [lo, hi] = gemm_error->interval(e.seconds);
    t.add({"interval (80%)", fmt_seconds(lo) + " … " + fmt_seconds(hi)});
  }
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
  if (gemm_error) std::printf("(interval: %s)\n", gemm_error->summary().c_str());
  return 0;
}

}  // namespace infraplan::cli
