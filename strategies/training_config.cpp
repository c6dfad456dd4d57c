#include "strategies/training_config.hpp"

#include <algorithm>
#include <cmath>

#include "common/limits.hpp"
#include "common/error.hpp"
#include "strategies/pipeline_layout.hpp"

namespace infraplan::strat {

const char* pp_schedule_name(PpSchedule s) {
  switch (s) {
    case PpSchedule::GPipe:
      return "gpipe";
    case PpSchedule::OneFOneB:
      return "1f1b";
    case PpSchedule::Interleaved:
      return "interleaved";
    case PpSchedule::ZBH1:
      return "zb-h1";
    case PpSchedule::DualPipe:
      return "dualpipe";
  }
  return "?";
}

std::vector<std::string> pp_schedule_names() { return {"1f1b", "gpipe", "interleaved", "zb-h1", "dualpipe"}; }

int chunks_per_stage(const TrainingConfig& t) {
  if (t.pp_schedule == PpSchedule::Interleaved) return t.pp_virtual_stages;
  if (t.pp_schedule == PpSchedule::DualPipe) return 2;
  return 1;
}

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::BF16Mixed:
      return "bf16-mixed";
    case Precision::FP16Mixed:
      return "fp16-mixed";
    case Precision::AmpBF16:
      return "amp-bf16";
    case Precision::BF16Pure:
      return "bf16-pure";
    case Precision::FP8Mixed:
      return "fp8-mixed";
  }
  return "?";
}

std::vector<std::string> precision_names() {
  return {"bf16-mixed", "fp16-mixed", "amp-bf16", "bf16-pure", "fp8-mixed"};
}

const char* optimizer_name(Optimizer o) {
  switch (o) {
    case Optimizer::AdamW:
      return "adamw";
    case Optimizer::SGD:
      return "sgd";
    case Optimizer::LAMB:
      return "lamb";
  }
  return "?";
}

Json TrainingConfig::to_json() const {
  Json j = {{"seq_len", seq_len},
            {"global_batch", global_batch},
            {"micro_batch", micro_batch},
            {"tp", tp},
            {"pp", pp},
            {"dp", dp},
            {"cp", cp},
            {"ep", ep},
            {"sp", sp},
            {"zero", zero},
            {"pp_schedule", pp_schedule_name(pp_schedule)},
            {"pp_virtual_stages", pp_virtual_stages},
            {"pp_layers", pp_layers},
            {"dp_shard", dp_shard},
            {"train_tokens", train_tokens},
            {"recompute", model::recompute_name(recompute)},
            {"precision", precision_name(precision)},
            {"optimizer", optimizer_name(optimizer)},
            {"flash_attention", flash_attention},
            {"moe_imbalance", moe_imbalance},
            {"host_dispatch", host_dispatch_name(host_dispatch)},
            {"framework", framework_name(framework_of(*this))},
            {"dp_buckets", dp_buckets_name(dp_buckets)},
            {"dp_bucket_mib", dp_bucket_mib}};
  if (recompute_layers > 0) j["recompute_layers"] = recompute_layers;
  if (attention_kernel != hw::AttentionKernel::Default)
    j["attention_kernel"] = hw::attention_kernel_name(attention_kernel);
  return j;
}

bool layer_checkpointed(const TrainingConfig& t, std::int64_t index_in_chunk) {
  if (t.recompute != model::Recompute::Full || t.recompute_layers <= 0) return true;
  return index_in_chunk < t.recompute_layers;
}

std::string selective_op_refusal(const model::ModelSpec& m, Framework fw, bool flash_attention) {
  // Op-level selective checkpointing is a PyTorch eager policy (torch.utils.checkpoint with a
  // policy over aten ops): priced on the eager frameworks' op lists of dense blocks only.
  if (!is_eager(fw))
    return std::string(
               "is PyTorch's op-level checkpointing, priced for the eager frameworks only; "
               "training.framework is \"") +
           framework_name(fw) +
           "\"; valid: framework pytorch-eager or transformers, or recompute none, "
           "selective or full";
  if (m.moe.enabled() || m.mla.enabled())
    return "is priced for dense blocks with standard attention; " + m.name + " has " +
           (m.moe.enabled() ? "MoE" : "MLA") + " layers; valid: recompute none, selective or full";
  if (!flash_attention)
    return "keeps fused attention's output (SDPA); training.flash_attention is false; valid: "
           "flash_attention true, or recompute none, selective or full";
  return "";
}

bool partial_recompute(const TrainingConfig& t) {
  return t.recompute == model::Recompute::Full && t.recompute_layers > 0;
}

TrainingConfig without_recompute(const TrainingConfig& t) {
  TrainingConfig plain = t;
  plain.recompute = model::Recompute::None;
  plain.recompute_layers = 0;
  return plain;
}

const char* dp_buckets_name(DpBuckets b) { return b == DpBuckets::Copy ? "copy" : "views"; }

double TrainingConfig::bucket_params(double grad_bytes) const {
  if (dp_bucket_mib > 0) return dp_bucket_mib * 1048576.0 / grad_bytes;
  return dp_buckets == DpBuckets::Copy ? 25.0 * 1048576.0 / grad_bytes : 40e6;
}

double TrainingConfig::first_bucket_params(double grad_bytes) const {
  return dp_buckets == DpBuckets::Copy ? std::min(bucket_params(grad_bytes), 1048576.0 / grad_bytes)
                                       : bucket_params(grad_bytes);
}

const char* host_dispatch_name(HostDispatch h) {
  switch (h) {
    case HostDispatch::Auto: return "auto";
    case HostDispatch::On: return "on";
    case HostDispatch::Off: return "off";
  }
  return "?";
}

TrainingConfig training_from_json(const Json& j, const std::string& path) {
  JsonObject o(j, path);
  o.reject_unknown({"seq_len",
                    "global_batch",
                    "micro_batch",
                    "tp",
                    "pp",
                    "dp",
                    "cp",
                    "ep",
                    "sp",
                    "zero",
                    "pp_schedule",
                    "pp_virtual_stages",
                    "recompute",
                    "precision",
                    "optimizer",
                    "flash_attention",
                    "moe_imbalance",
                    "host_dispatch",
                    "framework",
                    "pp_layers",
                    "dp_shard",
                    "train_tokens",
                    "dp_buckets",
                    "dp_bucket_mib",
                    "recompute_layers",
                    "attention_kernel"});
  TrainingConfig t;
  namespace L = limits;
  t.seq_len = o.get_int_min("seq_len", t.seq_len, 1, L::kMaxSeqTokens);
  t.global_batch = o.get_int_min("global_batch", 0, 0, L::kMaxGlobalBatch);
  t.micro_batch = o.get_int_min("micro_batch", 1, 1, L::kMaxMicroBatch);
  t.tp = int(o.get_int_min("tp", 1, 1, L::kMaxGpus));
  t.pp = int(o.get_int_min("pp", 1, 1, L::kMaxGpus));
  t.dp = int(o.get_int_min("dp", 0, 0, L::kMaxGpus));
  t.cp = int(o.get_int_min("cp", 1, 1, L::kMaxGpus));
  t.ep = int(o.get_int_min("ep", 1, 1, L::kMaxGpus));
  t.sp = o.get_bool("sp", false);
  t.zero = int(o.get_int_min("zero", 0, 0, 3));
  std::string s = o.get_choice("pp_schedule", "1f1b", pp_schedule_names());
  for (auto k : {PpSchedule::GPipe, PpSchedule::OneFOneB, PpSchedule::Interleaved, PpSchedule::ZBH1,
                 PpSchedule::DualPipe})
    if (s == pp_schedule_name(k)) t.pp_schedule = k;
  t.pp_virtual_stages =
      int(o.get_int_min("pp_virtual_stages", t.pp_schedule == PpSchedule::Interleaved ? 2 : 1, 1, L::kMaxLayers));
  t.recompute = model::parse_recompute(o.get_string("recompute", "none"), o.field("recompute"));
  t.recompute_layers = o.get_int_min("recompute_layers", 0, 0, L::kMaxLayers);
  std::string p = o.get_choice("precision", "bf16-mixed", precision_names());
  for (auto q : {Precision::BF16Mixed, Precision::FP16Mixed, Precision::AmpBF16, Precision::BF16Pure,
                 Precision::FP8Mixed})
    if (p == precision_name(q)) t.precision = q;
  std::string opt = o.get_choice("optimizer", "adamw", {"adamw", "sgd", "lamb"});
  t.optimizer = opt == "sgd" ? Optimizer::SGD : opt == "lamb" ? Optimizer::LAMB : Optimizer::AdamW;
  t.flash_attention = o.get_bool("flash_attention", true);
  t.attention_kernel = hw::parse_attention_kernel(
      o.get_choice("attention_kernel", "default", hw::attention_kernel_names()), o.field("attention_kernel"));
  if (!t.flash_attention && t.attention_kernel != hw::AttentionKernel::Default)
    throw Error(o.field("attention_kernel") + "=\"" + hw::attention_kernel_name(t.attention_kernel) +
                "\" needs fused attention: it cannot be combined with " + o.field("flash_attention") +
                "=false (unfused attention); drop one of them");
  t.moe_imbalance = o.get_number_min("moe_imbalance", 1.0, 1.0, L::kMaxMoeImbalance);
  if (o.has("pp_layers")) {
    const Json& a = j.at("pp_layers");
    if (!a.is_array() || a.empty())
      throw Error(o.field("pp_layers") + ": expected a non-empty array of layer counts, e.g. [7, 8, 8, 7]");
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!a[i].is_number_integer() || a[i].get<std::int64_t>() < 0 || a[i].get<std::int64_t>() > L::kMaxLayers)
        throw Error(o.field("pp_layers") + "[" + std::to_string(i) + "]=" + a[i].dump() +
                    " is invalid: layer counts are whole numbers in [0, " + std::to_string(L::kMaxLayers) + "]");
      t.pp_layers.push_back(a[i].get<std::int64_t>());
    }
  }
  t.dp_shard = int(o.get_int_min("dp_shard", 0, 0, L::kMaxGpus));
  t.train_tokens = o.get_number_min("train_tokens", 0, 0, 1e18);
  std::string hd = o.get_choice("host_dispatch", "auto", {"auto", "on", "off"});
  t.host_dispatch = hd == "on" ? HostDispatch::On : hd == "off" ? HostDispatch::Off : HostDispatch::Auto;
  t.framework = parse_framework(o.get_string("framework", "auto"), o.field("framework"));
  t.dp_buckets = o.get_choice("dp_buckets", "views", {"views", "copy"}) == "copy" ? DpBuckets::Copy : DpBuckets::Views;
  t.dp_bucket_mib = o.get_number_min("dp_bucket_mib", 0, 0, 1048576);
  if (t.dp_buckets == DpBuckets::Copy && t.zero > 0)
    throw Error(o.field("dp_buckets") + "=copy is PyTorch DDP's bucket copy (zero 0); with zero=" +
                std::to_string(t.zero) + " the gradients are sharded in place; valid here: views");
  return t;
}

Framework framework_of(const TrainingConfig& t) {
  if (t.framework != Framework::Auto) return t.framework;
  return t.precision == Precision::AmpBF16 || t.precision == Precision::BF16Pure ? Framework::PytorchEager
                                                                                  : Framework::Megatron;
}

std::vector<std::int64_t> divisors(std::int64_t n) {
  std::vector<std::int64_t> d;
  for (std::int64_t i = 1; i <= n; ++i)
    if (n % i == 0) d.push_back(i);
  return d;
}

static std::string list(const std::vector<std::int64_t>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

std::int64_t layers_of_stage(const model::ModelSpec& m, int pp, int stage) {
  std::int64_t base = m.layers / pp, extra = m.layers % pp;
  return base + (stage < extra ? 1 : 0);
}

Warnings resolve_training(TrainingConfig& t, const model::ModelSpec& m, const hw::Cluster& c) {
  Warnings w;
  const int n = c.total_gpus();
  auto fail = [](const std::string& s) { throw Error(s); };
  // Each size alone, then their product, before anything multiplies them in an int.
  for (const auto& [name, v] : {std::pair{"tp", t.tp}, {"pp", t.pp}, {"cp", t.cp}, {"dp", t.dp}, {"ep", t.ep}})
    if (v > n)
      fail(std::string("training.") + name + "=" + std::to_string(v) + " exceeds the cluster's " +
           std::to_string(n) + " GPUs");
  const std::int64_t denom = std::int64_t(t.tp) * t.pp * t.cp;
  if (denom > n)
    fail("training: tp×pp×cp = " + std::to_string(denom) + " exceeds the cluster's " + std::to_string(n) +
         " GPUs");
  if (t.dp > 0 && std::int64_t(t.dp) * denom != n)
    fail("training: tp×pp×dp×cp = " + std::to_string(t.tp) + "×" + std::to_string(t.pp) + "×" +
         std::to_string(t.dp) + "×" + std::to_string(t.cp) + " = " + std::to_string(std::int64_t(t.dp) * denom) +
         " but the cluster has " + std::to_string(n) + " GPUs (" + std::to_string(c.nodes) + " nodes × " +
         std::to_string(c.gpus_per_node) + ")");
  if (m.heads % t.tp != 0)
    fail("training.tp=" + std::to_string(t.tp) + " does not divide heads=" + std::to_string(m.heads) +
         "; try " + list(divisors(m.heads)));
  if (t.tp > m.kv_heads) {
    if (t.tp % m.kv_heads != 0)
      fail("training.tp=" + std::to_string(t.tp) +
           " is not a multiple of kv_heads=" + std::to_string(m.kv_heads) +
           " (KV heads can only be replicated evenly); try " + list(divisors(m.heads)));
    w.items.push_back("tp=" + std::to_string(t.tp) + " > kv_heads=" + std::to_string(m.kv_heads) +
                      ": each KV head is replicated on " + std::to_string(t.tp / m.kv_heads) + " TP ranks");
  } else if (m.kv_heads % t.tp != 0) {
    fail("training.tp=" + std::to_string(t.tp) + " does not divide kv_heads=" + std::to_string(m.kv_heads));
  }
  if (t.pp > m.layers)
    fail("training.pp=" + std::to_string(t.pp) + " exceeds layers=" + std::to_string(m.layers));
  if (t.pp_layers.empty() && m.layers % t.pp != 0 && t.pp_schedule != PpSchedule::Interleaved)
    w.items.push_back("pp=" + std::to_string(t.pp) + " splits " + std::to_string(m.layers) +
                      " layers unevenly: stages hold " + std::to_string(layers_of_stage(m, t.pp, 0)) +
                      " or " + std::to_string(layers_of_stage(m, t.pp, t.pp - 1)) + " layers");
  if (t.dp == 0) {
    if (n % denom != 0)
      fail("training: tp×pp×cp=" + std::to_string(denom) + " does not divide the cluster's " +
           std::to_string(n) + " GPUs");
    t.dp = int(n / denom);
  }
  if (t.gpus() != n)
    fail("training: tp×pp×dp×cp = " + std::to_string(t.tp) + "×" + std::to_string(t.pp) + "×" +
         std::to_string(t.dp) + "×" + std::to_string(t.cp) + " = " + std::to_string(t.gpus()) +
         " but the cluster has " + std::to_string(n) + " GPUs (" + std::to_string(c.nodes) + " nodes × " +
         std::to_string(c.gpus_per_node) + ")");
  if (t.ep > 1) {
    if (!m.moe.enabled())
      fail("training.ep=" + std::to_string(t.ep) + " needs a MoE model; " + m.name + " is dense (use ep=1)");
    if (m.moe.experts % t.ep != 0)
      fail("training.ep=" + std::to_string(t.ep) + " does not divide experts=" +
           std::to_string(m.moe.experts) + "; try " + list(divisors(m.moe.experts)));
    if ((t.dp * t.cp) % t.ep != 0)
      fail("training.ep=" + std::to_string(t.ep) + " must divide dp×cp=" + std::to_string(t.dp * t.cp) +
           " (expert parallelism is folded into data parallelism)");
  }
  if (t.seq_len > m.max_seq)
    w.items.push_back("seq_len=" + std::to_string(t.seq_len) +
                      " exceeds the model's max_seq=" + std::to_string(m.max_seq));
  if (t.cp > 1 && t.seq_len % (2 * t.cp) != 0)
    fail("training.cp=" + std::to_string(t.cp) + ": seq_len=" + std::to_string(t.seq_len) +
         " must be divisible by 2×cp for load-balanced causal context parallelism");
  if (t.global_batch == 0) t.global_batch = std::int64_t(t.dp) * t.micro_batch;
  if (t.global_batch % (std::int64_t(t.dp) * t.micro_batch) != 0)
    fail("training.global_batch=" + std::to_string(t.global_batch) +
         " is not a multiple of dp×micro_batch=" + std::to_string(t.dp) + "×" +
         std::to_string(t.micro_batch) + "=" + std::to_string(std::int64_t(t.dp) * t.micro_batch));
  if (t.pp_schedule == PpSchedule::Interleaved) {
    if (t.pp == 1) fail("training.pp_schedule=interleaved needs pp > 1");
    if (t.pp_layers.empty() && m.layers % (std::int64_t(t.pp) * t.pp_virtual_stages) != 0)
      fail("training.pp_virtual_stages=" + std::to_string(t.pp_virtual_stages) +
           ": layers=" + std::to_string(m.layers) +
           " must be divisible by pp×pp_virtual_stages=" + std::to_string(t.pp * t.pp_virtual_stages) +
           ", or give pp_layers (layers per stage or per chunk) for unequal chunks");
    if (t.micro_batches() % t.pp != 0)
      fail("training.pp_schedule=interleaved needs the number of micro-batches (" +
           std::to_string(t.micro_batches()) + ") to be a multiple of pp=" + std::to_string(t.pp));
  } else if (t.pp_virtual_stages != 1) {
    fail("training.pp_virtual_stages=" + std::to_string(t.pp_virtual_stages) +
         " needs pp_schedule=interleaved");
  }
  if (t.pp_schedule == PpSchedule::ZBH1 && t.pp == 1) fail("training.pp_schedule=zb-h1 needs pp > 1");
  if (t.pp_schedule == PpSchedule::DualPipe) {
    if (t.pp < 2 || t.pp % 2 != 0)
      fail("training.pp_schedule=dualpipe needs an even pp >= 2 (pp=" + std::to_string(t.pp) +
           "): every rank holds stage s and stage pp-1-s");
    const std::int64_t mb = t.micro_batches();
    if (mb % 2 != 0 || mb < 2 * std::int64_t(t.pp))
      fail("training.pp_schedule=dualpipe needs an even number of micro-batches >= 2×pp=" +
           std::to_string(2 * t.pp) + " (half enter at each end of the pipeline); this config has " +
           std::to_string(mb) + " (global_batch / (dp × micro_batch))");
  }
  if (!t.pp_layers.empty() || t.pp_schedule == PpSchedule::Interleaved ||
      t.pp_schedule == PpSchedule::DualPipe)
    pipeline_layout(m, t);  // validates pp_layers (count, sum, empty chunks)
  if (t.recompute_layers > 0) {
    if (t.recompute != model::Recompute::Full)
      fail("training.recompute_layers=" + std::to_string(t.recompute_layers) +
           " needs recompute \"full\" (it counts the checkpointed layers of each model chunk); recompute is "
           "\"" +
           model::recompute_name(t.recompute) + "\"; valid: 0 (every layer) or 1.." +
           std::to_string(m.layers) + " with recompute \"full\"");
    if (t.recompute_layers > m.layers)
      fail("training.recompute_layers=" + std::to_string(t.recompute_layers) + " exceeds layers=" +
           std::to_string(m.layers) + "; valid: 0 (every layer) to " + std::to_string(m.layers));
  }
  if (t.recompute == model::Recompute::SelectiveOp) {
    const std::string why = selective_op_refusal(m, framework_of(t), t.flash_attention);
    if (!why.empty()) fail("training.recompute=\"selective-op\" " + why);
  }
  if (t.dp_shard == 0) t.dp_shard = t.dp;
  if (t.dp % t.dp_shard != 0)
    fail("training.dp_shard=" + std::to_string(t.dp_shard) + " does not divide dp=" + std::to_string(t.dp) +
         "; try " + list(divisors(t.dp)));
  if (t.dp_shard < t.dp) {
    if (t.zero == 0)
      fail("training.dp_shard=" + std::to_string(t.dp_shard) + " < dp=" + std::to_string(t.dp) +
           " shards ZeRO states inside groups (HSDP); it needs zero >= 1 (zero=0 shards nothing)");
    if (t.ep > 1)
      fail("training.dp_shard=" + std::to_string(t.dp_shard) +
           " with ep=" + std::to_string(t.ep) +
           ": hybrid sharding of expert-parallel layouts is not modelled; use dp_shard=" + std::to_string(t.dp));
  }
  if (t.zero > 0 && t.dp * t.cp == 1)
    w.items.push_back("zero=" + std::to_string(t.zero) +
                      " has no effect with dp×cp=1 (nothing to shard over)");
  if (t.sp && t.tp == 1) w.items.push_back("sp=true has no effect with tp=1");
  if (t.tp > c.gpus_per_node)
    w.items.push_back("tp=" + std::to_string(t.tp) + " crosses nodes (" + std::to_string(c.gpus_per_node) +
                      " GPUs per node): TP collectives run over the inter-node fabric");
  if (t.precision == Precision::FP8Mixed && !c.gpu.supports(Dtype::FP8))
    fail("training.precision=fp8-mixed: " + c.gpu.name +
         " has no fp8 tensor cores (needs Hopper/Ada or newer); valid: bf16-mixed, fp16-mixed, amp-bf16, "
         "bf16-pure");
  return w;
}

}  // namespace infraplan::strat
