#include "model/model_spec.hpp"

#include <algorithm>
#include <filesystem>

#include "common/input_file.hpp"
#include "common/limits.hpp"
#include "common/error.hpp"

namespace infraplan::model {

const char* ffn_type_name(FfnType t) {
  switch (t) {
    case FfnType::SwiGLU:
      return "swiglu";
    case FfnType::GELU:
      return "gelu";
    case FfnType::ReLU:
      return "relu";
  }
  return "?";
}

static FfnType parse_ffn_type(const std::string& s) {
  return s == "swiglu" ? FfnType::SwiGLU : s == "gelu" ? FfnType::GELU : FfnType::ReLU;
}

std::int64_t ModelSpec::q_dim() const {
  return mla.enabled() ? heads * (mla.qk_nope_head_dim + mla.qk_rope_head_dim) : heads * head_dim;
}

std::int64_t ModelSpec::kv_dim() const {
  return mla.enabled() ? heads * (mla.qk_nope_head_dim + mla.qk_rope_head_dim) : kv_heads * head_dim;
}

void ModelSpec::validate() const {
  namespace L = limits;
  const std::string who = "model '" + name.substr(0, 64) + "': ";
  auto range = [&](std::int64_t v, const char* field, std::int64_t min, std::int64_t max) {
    if (v < min || v > max)
      throw Error(who + field + "=" + std::to_string(v) + " is invalid: must be an integer in " +
                  range_text(min, max));
  };
  range(hidden, "hidden", 1, L::kMaxHidden);
  range(layers, "layers", 1, L::kMaxLayers);
  range(heads, "heads", 1, L::kMaxHeads);
  range(kv_heads, "kv_heads", 1, heads);
  range(head_dim, "head_dim", 1, L::kMaxHeadDim);
  range(vocab, "vocab", 1, L::kMaxVocab);
  range(max_seq, "max_seq", 1, L::kMaxSeqTokens);
  if (heads % kv_heads != 0)
    throw Error(who + "kv_heads=" + std::to_string(kv_heads) + " must divide heads=" + std::to_string(heads));
  bool all_moe = moe.enabled() && moe.dense_layers == 0;
  range(ffn_hidden, "ffn_hidden", all_moe ? 0 : 1, L::kMaxFfnHidden);
  range(moe.experts, "moe.experts", 0, L::kMaxExperts);
  if (moe.enabled()) {
    range(moe.top_k, "moe.top_k", 1, moe.experts);
    range(moe.expert_ffn_hidden, "moe.expert_ffn_hidden", 1, L::kMaxFfnHidden);
    range(moe.dense_layers, "moe.dense_layers", 0, layers - 1);
    range(moe.shared_experts, "moe.shared_experts", 0, L::kMaxExperts);
  } else {
    range(moe.top_k, "moe.top_k", 0, L::kMaxExperts);
    range(moe.expert_ffn_hidden, "moe.expert_ffn_hidden", 0, L::kMaxFfnHidden);
    range(moe.shared_experts, "moe.shared_experts", 0, L::kMaxExperts);
    range(moe.dense_layers, "moe.dense_layers", 0, layers);
  }
  range(mla.kv_lora_rank, "mla.kv_lora_rank", 0, L::kMaxLoraRank);
  range(mla.q_lora_rank, "mla.q_lora_rank", 0, L::kMaxLoraRank);
  if (mla.enabled()) {
    range(mla.qk_rope_head_dim, "mla.qk_rope_head_dim", 1, L::kMaxHeadDim);
    range(mla.qk_nope_head_dim, "mla.qk_nope_head_dim", 1, L::kMaxHeadDim);
    range(mla.v_head_dim, "mla.v_head_dim", 1, L::kMaxHeadDim);
  } else {
    range(mla.qk_rope_head_dim, "mla.qk_rope_head_dim", 0, L::kMaxHeadDim);
    range(mla.qk_nope_head_dim, "mla.qk_nope_head_dim", 0, L::kMaxHeadDim);
    range(mla.v_head_dim, "mla.v_head_dim", 0, L::kMaxHeadDim);
  }
}

Json ModelSpec::to_json() const {
  Json j = {{"name", name},
            {"hidden", hidden},
            {"layers", layers},
            {"heads", heads},
            {"kv_heads", kv_heads},
            {"head_dim", head_dim},
            {"ffn_hidden", ffn_hidden},
            {"ffn_type", ffn_type_name(ffn_type)},
            {"norm", norm == NormType::RMSNorm ? "rmsnorm" : "layernorm"},
            {"position", position == PositionType::Rope ? "rope" : "learned"},
            {"vocab", vocab},
            {"tied_embeddings", tied_embeddings},
            {"qkv_bias", qkv_bias},
            {"linear_bias", linear_bias},
            {"max_seq", max_seq}};
  if (moe.enabled())
    j["moe"] = {{"experts", moe.experts},
                {"top_k", moe.top_k},
                {"expert_ffn_hidden", moe.expert_ffn_hidden},
                {"shared_experts", moe.shared_experts},
                {"dense_layers", moe.dense_layers}};
  if (mla.enabled())
    j["mla"] = {{"q_lora_rank", mla.q_lora_rank},
                {"kv_lora_rank", mla.kv_lora_rank},
                {"qk_rope_head_dim", mla.qk_rope_head_dim},
                {"qk_nope_head_dim", mla.qk_nope_head_dim},
                {"v_head_dim", mla.v_head_dim}};
  return j;
}

namespace {

ModelSpec llama(std::string name, std::int64_t h, std::int64_t L, std::int64_t a, std::int64_t kv,
                std::int64_t ffn, std::int64_t vocab, std::int64_t max_seq) {
  ModelSpec m;
  m.name = std::move(name);
  m.hidden = h;
  m.layers = L;
  m.heads = a;
  m.kv_heads = kv;
  m.head_dim = h / a;
  m.ffn_hidden = ffn;
  m.vocab = vocab;
  m.max_seq = max_seq;
  return m;
}

ModelSpec gpt(std::string name, std::int64_t h, std::int64_t L, std::int64_t a, std::int64_t max_seq) {
  ModelSpec m = llama(std::move(name), h, L, a, a, 4 * h, 50257, max_seq);
  m.ffn_type = FfnType::GELU;
  m.norm = NormType::LayerNorm;
  m.position = PositionType::Learned;
  m.tied_embeddings = true;
  m.linear_bias = true;
  return m;
}

// Sources: the models' papers and their published Hugging Face config.json files.
std::vector<ModelSpec> build_presets() {
  std::vector<ModelSpec> p;
  p.push_back(gpt("gpt3-175b", 12288, 96, 96, 2048));  // Brown et al. 2020, Table 2.1
  p.push_back(gpt("gpt2-124m", 768, 12, 12, 1024));    // Radford et al. 2019 (GPT-2 small)
  p.push_back(gpt("gpt2-350m", 1024, 24, 16, 1024));   // GPT-2 medium
  p.push_back(gpt("gpt2-774m", 1280, 36, 20, 1024));   // GPT-2 large
  p.push_back(gpt("gpt2-1.5b", 1600, 48, 25, 1024));   // GPT-2 xl
  p.push_back(llama("llama2-7b", 4096, 32, 32, 32, 11008, 32000, 4096));
  p.push_back(llama("llama2-13b", 5120, 40, 40, 40, 13824, 32000, 4096));
  p.push_back(llama("llama2-70b", 8192, 80, 64, 8, 28672, 32000, 4096));
  p.push_back(llama("llama3-8b", 4096, 32, 32, 8, 14336, 128256, 8192));
  p.push_back(llama("llama3-70b", 8192, 80, 64, 8, 28672, 128256, 8192));
  p.push_back(llama("llama3-405b", 16384, 126, 128, 8, 53248, 128256, 8192));
  {
    ModelSpec m = llama("mixtral-8x7b", 4096, 32, 32, 8, 14336, 32000, 32768);
    m.moe = {8, 2, 14336, 0, 0};
    p.push_back(m);
  }
  {
    // DeepSeek-V3 (arXiv 2412.19437): 61 layers, first 3 dense, 256 routed + 1 shared expert,
    // top-8, MLA. The multi-token-prediction module is not counted.
    ModelSpec m = llama("deepseek-v3", 7168, 61, 128, 128, 18432, 129280, 163840);
    m.head_dim = 128;
    m.moe = {256, 8, 2048, 1, 3};
    m.mla = {1536, 512, 64, 128, 128};
    p.push_back(m);
  }
  {
    ModelSpec m = llama("qwen2.5-7b", 3584, 28, 28, 4, 18944, 152064, 32768);
    m.qkv_bias = true;
    p.push_back(m);
  }
  std::sort(p.begin(), p.end(), [](const ModelSpec& a, const ModelSpec& b) { return a.name < b.name; });
  return p;
}

const std::vector<ModelSpec>& presets() {
  static const std::vector<ModelSpec> p = build_presets();
  return p;
}

const std::vector<std::string> kModelKeys = {
    "name",       "hidden",      "layers",  "heads",    "kv_heads", "head_dim",
    "ffn_hidden", "ffn_type",    "norm",    "position", "vocab",    "tied_embeddings",
    "qkv_bias",   "linear_bias", "max_seq", "moe",      "mla",      "preset"};

void apply_inline(ModelSpec& m, const JsonObject& o) {
  namespace L = limits;
  o.reject_unknown(kModelKeys);
  auto num = [](const JsonObject& j, const char* key, std::int64_t fallback, std::int64_t min,
                std::int64_t max) { return j.get_int_min(key, fallback, min, max); };
  m.name = o.get_string("name", m.name.empty() ? "custom" : m.name);
  m.hidden = num(o, "hidden", m.hidden, 1, L::kMaxHidden);
  m.layers = num(o, "layers", m.layers, 1, L::kMaxLayers);
  m.heads = num(o, "heads", m.heads, 1, L::kMaxHeads);
  bool kv_given = o.has("kv_heads");
  m.kv_heads = num(o, "kv_heads", kv_given ? 0 : (m.kv_heads ? m.kv_heads : m.heads), 1, L::kMaxHeads);
  bool hd_given = o.has("head_dim");
  if (hd_given) {
    m.head_dim = num(o, "head_dim", 0, 1, L::kMaxHeadDim);
  } else if (o.has("hidden") || o.has("heads") || m.head_dim == 0) {
    m.head_dim = m.heads > 0 ? m.hidden / m.heads : 0;
  }
  m.ffn_hidden = num(o, "ffn_hidden", m.ffn_hidden, 0, L::kMaxFfnHidden);
  m.ffn_type = parse_ffn_type(o.get_choice("ffn_type", ffn_type_name(m.ffn_type), {"swiglu", "gelu", "relu"}));
  m.norm = o.get_choice("norm", m.norm == NormType::RMSNorm ? "rmsnorm" : "layernorm",
                        {"rmsnorm", "layernorm"}) == "rmsnorm"
               ? NormType::RMSNorm
               : NormType::LayerNorm;
  m.position = o.get_choice("position", m.position == PositionType::Rope ? "rope" : "learned",
                            {"rope", "learned"}) == "rope"
                   ? PositionType::Rope
                   : PositionType::Learned;
  m.vocab = num(o, "vocab", m.vocab, 1, L::kMaxVocab);
  m.tied_embeddings = o.get_bool("tied_embeddings", m.tied_embeddings);
  m.qkv_bias = o.get_bool("qkv_bias", m.qkv_bias);
  m.linear_bias = o.get_bool("linear_bias", m.linear_bias);
  m.max_seq = num(o, "max_seq", m.max_seq, 1, L::kMaxSeqTokens);
  if (auto moe = o.opt_object("moe")) {
    moe->reject_unknown({"experts", "top_k", "expert_ffn_hidden", "shared_experts", "dense_layers"});
    m.moe.experts = num(*moe, "experts", m.moe.experts, 0, L::kMaxExperts);
    m.moe.top_k = num(*moe, "top_k", m.moe.top_k, 0, L::kMaxExperts);
    m.moe.expert_ffn_hidden = num(*moe, "expert_ffn_hidden",
                                  m.moe.expert_ffn_hidden ? m.moe.expert_ffn_hidden : m.ffn_hidden, 0,
                                  L::kMaxFfnHidden);
    m.moe.shared_experts = num(*moe, "shared_experts", m.moe.shared_experts, 0, L::kMaxExperts);
    m.moe.dense_layers = num(*moe, "dense_layers", m.moe.dense_layers, 0, L::kMaxLayers);
  }
  if (auto mla = o.opt_object("mla")) {
    mla->reject_unknown(
        {"q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim"});
    m.mla.q_lora_rank = num(*mla, "q_lora_rank", m.mla.q_lora_rank, 0, L::kMaxLoraRank);
    m.mla.kv_lora_rank = num(*mla, "kv_lora_rank", m.mla.kv_lora_rank, 0, L::kMaxLoraRank);
    m.mla.qk_rope_head_dim = num(*mla, "qk_rope_head_dim", m.mla.qk_rope_head_dim, 0, L::kMaxHeadDim);
    m.mla.qk_nope_head_dim = num(*mla, "qk_nope_head_dim", m.mla.qk_nope_head_dim, 0, L::kMaxHeadDim);
    m.mla.v_head_dim = num(*mla, "v_head_dim", m.mla.v_head_dim, 0, L::kMaxHeadDim);
  }
}

bool looks_like_hf(const Json& j) {
  return j.is_object() && (j.contains("hidden_size") || j.contains("n_embd") || j.contains("model_type") ||
                           j.contains("num_hidden_layers"));
}

}  // namespace

std::vector<std::string> preset_names() {
  std::vector<std::string> n;
  for (const auto& m : presets()) n.push_back(m.name);
  return n;
}

ModelSpec preset(const std::string& name) {
  for (const auto& m : presets())
    if (m.name == name) return m;
  throw Error(unknown_name_message("model", name, preset_names()));
}

namespace {

// Hugging Face architectures by their MLP: gated (gate, up and down projections) or plain (up
// and down). The activation alone does not say which: Gemma gates a GELU, OPT runs a plain ReLU.
const std::vector<std::string> kGatedTypes = {
    "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "deepseek_v2", "deepseek_v3",
    "phi3", "olmo", "olmo2", "internlm2", "cohere", "gemma", "gemma2", "gemma3", "gemma3_text", "granite",
    "exaone", "yi", "baichuan", "minicpm", "stablelm"};
const std::vector<std::string> kPlainTypes = {"gpt2", "gpt_neo", "gptj", "gpt_neox", "opt", "bloom", "falcon",
                                              "phi", "gpt_bigcode", "starcoder2", "mpt", "codegen", "bert"};
const std::vector<std::string> kActivations = {"silu", "swish", "gelu", "gelu_new", "gelu_pytorch_tanh",
                                               "gelu_fast", "gelu_python", "gelu_accurate", "quick_gelu",
                                               "relu"};

bool among(const std::string& s, const std::vector<std::string>& v) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

/// The MLP of a Hugging Face config from its activation and architecture; refuses what infraplan
/// does not model rather than guessing.
FfnType hf_ffn_type(const std::string& act, const std::string& type, const std::string& origin) {
  const std::string where = origin + ": hidden_act='" + act.substr(0, 32) + "'";
  if (!among(act, kActivations))
    throw Error(where + " is not supported; supported activations: " + join(kActivations));
  const bool gelu = act.find("gelu") != std::string::npos;
  const bool gated = among(type, kGatedTypes), plain = among(type, kPlainTypes);
  if (act == "silu" || act == "swish") {
    if (plain)
      throw Error(where + " with the plain MLP of model_type '" + type +
                  "' is not modelled (infraplan models SiLU only as the gated SwiGLU MLP)");
    return FfnType::SwiGLU;
  }
  if (gated)
    throw Error(where + ": model_type '" + type + "' gates its MLP with " + (gelu ? "GELU (GeGLU)" : "ReLU (ReGLU)") +
                ", which infraplan does not model; it models SwiGLU (gated, SiLU) and plain GELU or ReLU MLPs");
  return gelu ? FfnType::GELU : FfnType::ReLU;
}

}  // namespace

ModelSpec model_from_hf_config(const Json& j, const std::string& origin) {
  namespace L = limits;
  // Hugging Face writes None (null) for "use the default": null reads as absent here.
  JsonObject o(j, "", JsonObject::Null::Absent);
  auto first_int = [&](std::initializer_list<const char*> keys, std::int64_t fallback, std::int64_t max) {
    for (const char* k : keys)
      if (auto v = o.opt_int_in(k, 0, max)) return *v;
    return fallback;
  };
  ModelSpec m;
  try {
    m.name = o.get_string("_name_or_path", "");
    if (m.name.empty()) m.name = o.get_string("model_type", "hf-model");
    std::string type = o.get_string("model_type", "");
    m.hidden = first_int({"hidden_size", "n_embd", "d_model"}, 0, L::kMaxHidden);
    m.layers = first_int({"num_hidden_layers", "n_layer", "num_layers"}, 0, L::kMaxLayers);
    m.heads = first_int({"num_attention_heads", "n_head"}, 0, L::kMaxHeads);
    m.kv_heads = first_int({"num_key_value_heads", "multi_query_group_num"}, m.heads, L::kMaxHeads);
    m.head_dim = first_int({"head_dim"}, m.heads > 0 ? m.hidden / m.heads : 0, L::kMaxHeadDim);
    m.vocab = first_int({"vocab_size"}, 0, L::kMaxVocab);
    m.max_seq = first_int({"max_position_embeddings", "n_positions", "seq_length"}, 4096, L::kMaxSeqTokens);
    const std::string act =
        o.get_string("hidden_act", o.get_string("hidden_activation", o.get_string("activation_function", "silu")));
    m.ffn_type = hf_ffn_type(act, type, origin);
    const bool plain = m.ffn_type != FfnType::SwiGLU;
    m.ffn_hidden = first_int({"intermediate_size", "n_inner", "ffn_hidden_size"}, plain ? 4 * m.hidden : 0,
                             L::kMaxFfnHidden);
    if (type == "gpt2" || o.has("n_embd")) {
      m.norm = NormType::LayerNorm;
      m.position = PositionType::Learned;
      m.linear_bias = true;
      m.tied_embeddings = o.get_bool("tie_word_embeddings", true);
    } else {
      m.tied_embeddings = o.get_bool("tie_word_embeddings", false);
    }
    if (type.rfind("qwen2", 0) == 0) m.qkv_bias = true;
    m.qkv_bias = o.get_bool("attention_bias", m.qkv_bias);
    // MoE fields: Mixtral (num_local_experts), DeepSeek (n_routed_experts), Qwen-MoE (num_experts).
    std::int64_t experts = first_int({"num_local_experts", "n_routed_experts", "num_experts"}, 0, L::kMaxExperts);
    if (experts > 0) {
      m.moe.experts = experts;
      m.moe.top_k = first_int({"num_experts_per_tok", "moe_top_k"}, 2, L::kMaxExperts);
      m.moe.expert_ffn_hidden = first_int({"moe_intermediate_size"}, m.ffn_hidden, L::kMaxFfnHidden);
      m.moe.shared_experts = first_int({"n_shared_experts"}, 0, L::kMaxExperts);
      if (m.moe.shared_experts == 0) {
        std::int64_t shared = first_int({"shared_expert_intermediate_size"}, 0, L::kMaxFfnHidden);
        if (shared > 0 && m.moe.expert_ffn_hidden > 0) m.moe.shared_experts = shared / m.moe.expert_ffn_hidden;
      }
      m.moe.dense_layers = first_int({"first_k_dense_replace"}, 0, L::kMaxLayers);
    }
    std::int64_t kv_lora = first_int({"kv_lora_rank"}, 0, L::kMaxLoraRank);
    if (kv_lora > 0) {
      m.mla.kv_lora_rank = kv_lora;
      m.mla.q_lora_rank = first_int({"q_lora_rank"}, 0, L::kMaxLoraRank);
      m.mla.qk_rope_head_dim = first_int({"qk_rope_head_dim"}, 64, L::kMaxHeadDim);
      m.mla.qk_nope_head_dim = first_int({"qk_nope_head_dim"}, 128, L::kMaxHeadDim);
      m.mla.v_head_dim = first_int({"v_head_dim"}, 128, L::kMaxHeadDim);
      m.kv_heads = m.heads;
    }
  } catch (const Error& e) {
    const std::string w = e.what();
    throw Error(w.rfind(origin, 0) == 0 ? w : origin + ": " + w);
  }
  try {
    m.validate();
  } catch (const Error& e) {
    throw Error(origin + ": Hugging Face config is incomplete: " + e.what());
  }
  return m;
}

ModelSpec model_from_json(const Json& j, const std::string& path) {
  if (looks_like_hf(j)) return model_from_hf_config(j, path);
  JsonObject o(j, path);
  ModelSpec m;
  if (auto p = o.opt_string("preset")) m = preset(*p);
  apply_inline(m, o);
  m.validate();
  return m;
}

ModelSpec resolve_model(const Json& v, const std::string& path) {
  if (v.is_string()) return resolve_model_arg(v.get<std::string>());
  if (v.is_object()) return model_from_json(v, path);
  throw Error(path +
              ": expected a preset name, a file path or an object; valid presets: " + join(preset_names()));
}

ModelSpec resolve_model_arg(const std::string& arg) {
  auto names = preset_names();
  if (std::find(names.begin(), names.end(), arg) != names.end()) return preset(arg);
  std::error_code ec;
  if (std::filesystem::exists(arg, ec)) return model_from_json(read_json_file(arg), arg);
  throw Error(unknown_name_message("model", arg, names) + " (or give a path to a JSON file)");
}

}  // namespace infraplan::model
