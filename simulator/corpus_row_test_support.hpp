#pragma once
// A measured LLaMA-architecture training step as bench/pytorch/llama_corpus.py measure() writes it
// (the corpus, docs/data/h200_llama_corpus.json, and the sweeps of bench/pytorch/trace_sweep.py):
// the model it built and the one-GPU step it ran, for the tests that predict such rows.
#include <algorithm>
#include <string>

#include "common/error.hpp"
#include "common/json_util.hpp"
#include "simulator/training_sim.hpp"

namespace infraplan::sim::train {

/// One H200 (a DGX H200 node cut to one GPU): the machine of every corpus row and probe.
inline hw::Cluster one_h200() {
  hw::Cluster c = hw::cluster_preset("dgx-h200", 1);
  c.gpus_per_node = 1;
  return c;
}

/// One GPU of the kind a corpus file ran on (its "gpu" field: an H200, or an H100 with its
/// derived profile); an H200 for files without the field.
inline hw::Cluster one_gpu_of(const Json& corpus) {
  const std::string gpu = corpus.contains("gpu") ? corpus.at("gpu").get<std::string>() : "NVIDIA H200";
  if (gpu == "NVIDIA H200") return one_h200();
  if (gpu != "NVIDIA H100 80GB HBM3")
    throw Error("corpus measured on '" + gpu + "': no cluster preset known");
  hw::Cluster c = hw::cluster_preset("dgx-h100", 1);
  c.gpus_per_node = 1;
  return c;
}

/// The model a row measured (its "dims").
inline model::ModelSpec llama_of(const Json& row) {
  const auto& d = row.at("dims");
  model::ModelSpec m;
  m.name = row.at("model").get<std::string>();
  m.hidden = d.at("hidden").get<std::int64_t>();
  m.layers = d.at("layers").get<std::int64_t>();
  m.heads = d.at("heads").get<std::int64_t>();
  m.kv_heads = d.at("kv_heads").get<std::int64_t>();
  m.head_dim = m.hidden / m.heads;
  m.ffn_hidden = d.at("ffn").get<std::int64_t>();
  m.vocab = d.at("vocab").get<std::int64_t>();
  m.tied_embeddings = d.at("tied_embeddings").get<bool>();
  m.qkv_bias = d.at("qkv_bias").get<bool>();
  m.max_seq = std::max<std::int64_t>(4096, row.at("seq_len").get<std::int64_t>());
  m.validate();
  return m;
}

/// The framework of the row's implementation ("plain", "hf", "compile").
inline strat::Framework framework_of_impl(const std::string& impl) {
  if (impl == "hf") return strat::Framework::Transformers;
  if (impl == "compile") return strat::Framework::TorchCompile;
  return strat::Framework::PytorchEager;
}

/// The one-GPU step a row measured, resolved on `c`.
inline strat::TrainingConfig config_of(const Json& row, const model::ModelSpec& m, const hw::Cluster& c) {
  strat::TrainingConfig t;
  t.seq_len = row.at("seq_len").get<std::int64_t>();
  t.micro_batch = row.at("micro_batch").get<std::int64_t>();
  t.global_batch = t.micro_batch;
  t.precision = row.at("precision").get<std::string>() == "amp-bf16" ? strat::Precision::AmpBF16
                                                                     : strat::Precision::BF16Pure;
  t.framework = framework_of_impl(row.at("impl").get<std::string>());
  // llama_corpus.py's checkpointing: none, every_block (full) or selective_op (--sac).
  const std::string ck = row.at("checkpointing").get<std::string>();
  t.recompute = ck == "none"           ? model::Recompute::None
                : ck == "selective_op" ? model::Recompute::SelectiveOp
                                       : model::Recompute::Full;
  // Steps forced onto SDPA's flash backend (llama_corpus.py --attention flash) run FlashAttention-2.
  if (row.value("attention", std::string("default")) == "flash")
    t.attention_kernel = hw::AttentionKernel::Flash2;
  strat::resolve_training(t, m, c);
  return t;
}

}  // namespace infraplan::sim::train
