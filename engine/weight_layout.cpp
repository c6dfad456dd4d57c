#include "engine/weight_layout.hpp"

#include <cmath>

#include "common/error.hpp"

namespace infraplan::engine {

namespace {
WeightInit matrix(std::int64_t fan_in, float gain = 1.0f) {
  return {0.0f, gain * std::sqrt(3.0f / float(fan_in))};  // unit variance outputs for unit inputs
}
constexpr WeightInit kNorm{1.0f, 0.1f};
constexpr WeightInit kEmbedding{0.0f, 1.0f};
}  // namespace

WeightLayout::WeightLayout(const LlamaConfig& c) : c_(c) {
  c_.validate();
  const std::int64_t h = c.hidden;
  auto add = [&](std::string name, std::int64_t rows, std::int64_t cols, WeightInit init) {
    TensorSlot s;
    s.name = std::move(name);
    s.id = std::uint32_t(t_.size());
    s.rows = rows;
    s.cols = cols;
    s.offset = total_;
    s.init = init;
    total_ += (rows * cols + 63) / 64 * 64;
    t_.push_back(s);
  };
  add("embed", c.vocab, h, kEmbedding);
  add("final_norm", 1, h, kNorm);
  // LM head with a gain of 4: logits of a few units, so greedy choices are rarely near-ties.
  if (c.tied_embeddings)
    add("lm_head (tied)", 0, h, {});
  else
    add("lm_head", c.vocab, h, matrix(h, 4.0f));
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    add(p + "attn_norm", 1, h, kNorm);
    add(p + "qkv", c.qkv_dim(), h, matrix(h));
    add(p + "o", h, c.q_dim(), matrix(c.q_dim()));
    add(p + "ffn_norm", 1, h, kNorm);
    add(p + "gate_up", 2 * std::int64_t(c.ffn), h, matrix(h));
    add(p + "down", h, c.ffn, matrix(c.ffn));
  }
}

std::optional<HfPlacement> WeightLayout::hf_placement(const std::string& n) const {
  const std::int64_t h = c_.hidden;
  if (n == "model.embed_tokens.weight") return HfPlacement{&t_[0], 0, c_.vocab, h};
  if (n == "model.norm.weight") return HfPlacement{&t_[1], 0, 1, h};
  if (n == "lm_head.weight") {
    if (c_.tied_embeddings) return std::nullopt;
    return HfPlacement{&t_[2], 0, c_.vocab, h};
  }
  const std::string pre = "model.layers.";
  if (n.rfind(pre, 0) != 0) return std::nullopt;
  const std::size_t dot = n.find('.', pre.size());
  if (dot == std::string::npos) return std::nullopt;
  int l = -1;
  try {
    l = std::stoi(n.substr(pre.size(), dot - pre.size()));
  } catch (...) {
    return std::nullopt;
  }
  if (l < 0 || l >= c_.layers)
    throw Error("tensor '" + n + "': layer " + std::to_string(l) + " beyond the config's " +
                std::to_string(c_.layers));
  const std::string rest = n.substr(dot + 1);
  const std::int64_t q = c_.q_dim(), kv = c_.kv_dim(), f = c_.ffn;
  if (rest == "input_layernorm.weight") return HfPlacement{&layer(l, LayerTensor::AttnNorm), 0, 1, h};
  if (rest == "post_attention_layernorm.weight") return HfPlacement{&layer(l, LayerTensor::FfnNorm), 0, 1, h};
  if (rest == "self_attn.q_proj.weight") return HfPlacement{&layer(l, LayerTensor::Qkv), 0, q, h};
  if (rest == "self_attn.k_proj.weight") return HfPlacement{&layer(l, LayerTensor::Qkv), q, kv, h};
  if (rest == "self_attn.v_proj.weight") return HfPlacement{&layer(l, LayerTensor::Qkv), q + kv, kv, h};
  if (rest == "self_attn.o_proj.weight") return HfPlacement{&layer(l, LayerTensor::O), 0, h, q};
  if (rest == "mlp.gate_proj.weight") return HfPlacement{&layer(l, LayerTensor::GateUp), 0, f, h};
  if (rest == "mlp.up_proj.weight") return HfPlacement{&layer(l, LayerTensor::GateUp), f, f, h};
  if (rest == "mlp.down_proj.weight") return HfPlacement{&layer(l, LayerTensor::Down), 0, h, f};
  return std::nullopt;
}

std::vector<std::string> WeightLayout::hf_names() const {
  std::vector<std::string> v = {"model.embed_tokens.weight", "model.norm.weight"};
  if (!c_.tied_embeddings) v.push_back("lm_head.weight");
  for (int l = 0; l < c_.layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    for (const char* s :
         {"input_layernorm.weight", "post_attention_layernorm.weight", "self_attn.q_proj.weight",
          "self_attn.k_proj.weight", "self_attn.v_proj.weight", "self_attn.o_proj.weight",
          "mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight"})
      v.push_back(p + s);
  }
  return v;
}

std::vector<std::uint16_t> WeightLayout::random_host(std::uint64_t seed) const {
  std::vector<std::uint16_t> w(std::size_t(total_), 0);
  for (const TensorSlot& t : t_)
    for (std::int64_t i = 0; i < t.elems(); ++i)
      w[std::size_t(t.offset + i)] = bf16_bits(weight_value(t.init, seed, t.id, std::uint64_t(i)));
  return w;
}

}  // namespace infraplan::engine
