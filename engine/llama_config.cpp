#include "engine/llama_config.hpp"

#include <cmath>

#include "common/error.hpp"

namespace infraplan::engine {

std::int64_t LlamaConfig::params() const {
  const std::int64_t h = hidden;
  const std::int64_t per_layer = h * qkv_dim() + std::int64_t(q_dim()) * h + 3 * h * ffn + 2 * h;
  return std::int64_t(vocab) * h * (tied_embeddings ? 1 : 2) + std::int64_t(layers) * per_layer + h;
}

void LlamaConfig::validate() const {
  auto need = [&](bool ok, const std::string& field, long long v, const std::string& valid) {
    if (!ok)
      throw Error("engine model '" + name + "': " + field + "=" + std::to_string(v) + " is not supported; " +
                  valid);
  };
  need(layers >= 1, "layers", layers, "need at least 1");
  need(hidden >= 8 && hidden % 8 == 0 && hidden <= 16384, "hidden", hidden,
       "need a multiple of 8 up to 16384");
  need(head_dim == 128, "head_dim", head_dim, "the paged decode kernel runs head_dim 128 only");
  need(heads >= 1, "heads", heads, "need at least 1");
  need(kv_heads >= 1 && heads % kv_heads == 0, "kv_heads", kv_heads, "must divide heads");
  const int g = kv_heads > 0 ? heads / kv_heads : 0;
  need(g == 1 || g == 2 || g == 4 || g == 8, "heads/kv_heads", g, "valid group sizes: 1, 2, 4, 8");
  need(ffn >= 8 && ffn % 8 == 0, "ffn", ffn, "need a multiple of 8");
  need(vocab >= 2, "vocab", vocab, "need at least 2");
  need(max_seq >= 16, "max_seq", max_seq, "need at least 16 tokens");
}

Json LlamaConfig::to_json() const {
  return {{"name", name},       {"layers", layers},         {"hidden", hidden},
          {"heads", heads},     {"kv_heads", kv_heads},     {"head_dim", head_dim},
          {"ffn", ffn},         {"vocab", vocab},           {"max_seq", max_seq},
          {"rms_eps", rms_eps}, {"rope_theta", rope_theta}, {"tied_embeddings", tied_embeddings},
          {"params", params()}};
}

std::vector<float> rope_table(const LlamaConfig& c) {
  const int half = c.head_dim / 2;
  std::vector<float> t(std::size_t(c.max_seq) * std::size_t(half) * 2);
  for (int p = 0; p < c.max_seq; ++p)
    for (int j = 0; j < half; ++j) {
      const double a = double(p) * std::pow(double(c.rope_theta), -2.0 * j / double(c.head_dim));
      t[(std::size_t(p) * half + std::size_t(j)) * 2] = float(std::cos(a));
      t[(std::size_t(p) * half + std::size_t(j)) * 2 + 1] = float(std::sin(a));
    }
  return t;
}

LlamaConfig llama_config_from_spec(const model::ModelSpec& m, float rope_theta, float rms_eps) {
  auto refuse = [&](const std::string& what) {
    throw Error("model '" + m.name + "': the CUDA engine runs LLaMA-architecture decoders only (" + what +
                ")");
  };
  if (m.moe.enabled()) refuse("MoE is not implemented");
  if (m.mla.enabled()) refuse("MLA is not implemented");
  if (m.ffn_type != model::FfnType::SwiGLU) refuse("ffn must be SwiGLU");
  if (m.norm != model::NormType::RMSNorm) refuse("norm must be RMSNorm");
  if (m.position != model::PositionType::Rope) refuse("positions must be rotary");
  if (m.qkv_bias || m.linear_bias) refuse("biases are not implemented");
  LlamaConfig c;
  c.name = m.name;
  c.layers = int(m.layers);
  c.hidden = int(m.hidden);
  c.heads = int(m.heads);
  c.kv_heads = int(m.kv_heads);
  c.head_dim = int(m.head_dim > 0 ? m.head_dim : m.hidden / m.heads);
  c.ffn = int(m.ffn_hidden);
  c.vocab = int(m.vocab);
  c.max_seq = int(m.max_seq);
  c.tied_embeddings = m.tied_embeddings;
  c.rope_theta = rope_theta;
  c.rms_eps = rms_eps;
  c.validate();
  return c;
}

LlamaConfig llama_config_from_hf(const Json& j, const std::string& origin) {
  JsonObject o(j, "");
  if (o.has("rope_scaling") && !o.raw()["rope_scaling"].is_null())
    throw Error(origin + ": rope_scaling is not implemented by the CUDA engine");
  const std::string act = o.get_string("hidden_act", "silu");
  if (act != "silu")
    throw Error(origin + ": hidden_act='" + act + "' is not supported; the engine runs SwiGLU (silu)");
  if (o.get_bool("attention_bias", false) || o.get_bool("mlp_bias", false))
    throw Error(origin + ": attention_bias/mlp_bias are not implemented by the CUDA engine");
  LlamaConfig c;
  c.name = o.get_string("_name_or_path", o.get_string("model_type", "hf-model"));
  c.hidden = int(o.get_int("hidden_size"));
  c.layers = int(o.get_int("num_hidden_layers"));
  c.heads = int(o.get_int("num_attention_heads"));
  c.kv_heads = int(o.get_int("num_key_value_heads", c.heads));
  c.head_dim = int(o.get_int("head_dim", c.heads > 0 ? c.hidden / c.heads : 0));
  c.ffn = int(o.get_int("intermediate_size"));
  c.vocab = int(o.get_int("vocab_size"));
  c.max_seq = int(o.get_int("max_position_embeddings", 4096));
  c.rms_eps = float(o.get_number("rms_norm_eps", 1e-5));
  c.rope_theta = float(o.get_number("rope_theta", 1e4));
  c.tied_embeddings = o.get_bool("tie_word_embeddings", false);
  try {
    c.validate();
  } catch (const Error& e) {
    throw Error(origin + ": " + e.what());
  }
  return c;
}

}  // namespace infraplan::engine
