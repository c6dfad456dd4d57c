// infraplan models [show NAME|FILE] [--seq S] [--json]
#include <cstdio>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "common/limits.hpp"
#include "common/error.hpp"
#include "model/model_math.hpp"
#include "model/model_spec.hpp"

namespace infraplan::cli {

namespace {

const std::vector<OptionSpec> kSpec = {
    {"json", false, "machine-readable output"},
    {"seq", true, "sequence length for FLOPs per token (default: the model's max_seq, capped at 4096)"},
};

Json model_json(const model::ModelSpec& m, std::int64_t seq) {
  auto b = model::count_params(m);
  Json kv = Json::object();
  for (Dtype d : {Dtype::BF16, Dtype::FP16, Dtype::FP8, Dtype::INT8, Dtype::INT4})
    kv[std::string(dtype_name(d))] = model::kv_bytes_per_token(m, d);
  return {{"name", m.name},
          {"spec", m.to_json()},
          {"params",
           {{"total", b.total},
            {"embedding", b.embedding},
            {"attention", b.attention},
            {"mlp", b.mlp},
            {"norm", b.norm},
            {"lm_head", b.lm_head},
            {"expert", b.expert},
            {"active_per_token", b.active_per_token}}},
          {"seq_len", seq},
          {"flops_per_token",
           {{"forward", model::forward_flops_per_token(m, seq)},
            {"training", model::training_flops_per_token(m, seq)}}},
          {"kv_bytes_per_token", kv}};
}

}  // namespace

int cmd_models(const std::vector<std::string>& argv) {
  Args a(argv, kSpec);
  if (a.help()) {
    std::printf(
        "Usage: infraplan models [--json]\n       infraplan models show NAME|FILE [--seq S] [--json]\n\n%s",
        options_help(kSpec).c_str());
    return 0;
  }
  a.expect_positional(0, 2, "infraplan models [show NAME|FILE]");
  const auto& pos = a.positional();
  if (pos.empty()) {
    a.refuse("seq", "applies to 'models show NAME' only");
    if (a.flag("json")) {
      Json out = Json::array();
      for (const auto& n : model::preset_names()) out.push_back(model_json(model::preset(n), 4096));
      std::printf("%s\n", out.dump(2).c_str());
      return 0;
    }
    Table t({"model", "params", "active", "layers", "hidden", "heads", "kv_heads", "ffn", "vocab",
             "KV/token bf16"});
    for (const auto& n : model::preset_names()) {
      auto m = model::preset(n);
      auto b = model::count_params(m);
      t.add({m.name, fmt_count(b.total), fmt_count(b.active_per_token), std::to_string(m.layers),
             std::to_string(m.hidden), std::to_string(m.heads), std::to_string(m.kv_heads),
             m.moe.enabled() ? std::to_string(m.moe.experts) + "x" + std::to_string(m.moe.expert_ffn_hidden)
                             : std::to_string(m.ffn_hidden),
             std::to_string(m.vocab), fmt(model::kv_bytes_per_token(m, Dtype::BF16) / 1024, 1) + " KiB"});
    }
    std::printf("%s\nDetails: infraplan models show NAME (or a Hugging Face config.json)\n", t.str().c_str());
    return 0;
  }
  if (pos[0] != "show") throw Error(unknown_name_message("models subcommand", pos[0], {"show"}));
  if (pos.size() != 2) throw Error("usage: infraplan models show NAME|FILE");
  auto m = model::resolve_model_arg(pos[1]);
  std::int64_t seq = a.get_int("seq", 1, limits::kMaxSeqTokens).value_or(std::min<std::int64_t>(m.max_seq, 4096));
  Json j = model_json(m, seq);
  if (a.flag("json")) {
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  auto b = model::count_params(m);
  std::printf("%s: %s parameters (%s active per token)\n", m.name.c_str(), fmt_count(b.total).c_str(),
              fmt_count(b.active_per_token).c_str());
  std::printf("  hidden %lld, layers %lld, heads %lld (kv %lld, head_dim %lld), %s FFN %lld, vocab %lld%s\n",
              (long long)m.hidden, (long long)m.layers, (long long)m.heads, (long long)m.kv_heads,
              (long long)m.head_dim, model::ffn_type_name(m.ffn_type), (long long)m.ffn_hidden,
              (long long)m.vocab, m.tied_embeddings ? ", tied embeddings" : "");
  if (m.moe.enabled())
    std::printf("  MoE: %lld experts (top-%lld, %lld shared) of width %lld, %lld leading dense layers\n",
                (long long)m.moe.experts, (long long)m.moe.top_k, (long long)m.moe.shared_experts,
                (long long)m.moe.expert_ffn_hidden, (long long)m.moe.dense_layers);
  if (m.mla.enabled())
    std::printf("  MLA: q_lora %lld, kv_lora %lld, rope %lld, nope %lld, v %lld\n",
                (long long)m.mla.q_lora_rank, (long long)m.mla.kv_lora_rank,
                (long long)m.mla.qk_rope_head_dim, (long long)m.mla.qk_nope_head_dim,
                (long long)m.mla.v_head_dim);
  Table p({"component", "parameters", "share", "bf16 bytes"});
  for (auto [name, v] : {std::pair{"embedding", b.embedding},
                         {"attention", b.attention},
                         {"mlp", b.mlp},
                         {"norm", b.norm},
                         {"lm_head", b.lm_head},
                         {"total", b.total}})
    p.add({name, fmt_count(v), fmt(100 * v / b.total, 1) + "%", fmt_gib(2 * v)});
  std::printf("\n%s", p.str().c_str());
  std::printf("\nFLOPs per token at seq %lld: forward %.3g, training %.3g (6N = %.3g)\n", (long long)seq,
              model::forward_flops_per_token(m, seq), model::training_flops_per_token(m, seq),
              6 * b.active_per_token);
  Table k({"kv dtype", "bytes/token", "per 4096-token sequence"});
  for (Dtype d : {Dtype::BF16, Dtype::FP8, Dtype::INT4}) {
    double v = model::kv_bytes_per_token(m, d);
    k.add({std::string(dtype_name(d)), fmt(v, 0), fmt_gib(v * 4096)});
  }
  std::printf("\n%s", k.str().c_str());
  return 0;
}

}  // namespace infraplan::cli
