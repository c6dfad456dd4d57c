#include "model/model_spec.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "model/model_math.hpp"

using namespace infraplan;
using namespace infraplan::model;

TEST(ModelSpec, AllPresetsValidate) {
  auto names = preset_names();
  for (const char* want : {"gpt3-175b", "llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b", "llama3-70b",
                           "llama3-405b", "mixtral-8x7b", "deepseek-v3", "qwen2.5-7b"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  for (const auto& n : names) EXPECT_NO_THROW(preset(n).validate()) << n;
}

TEST(ModelSpec, UnknownPresetSuggests) {
  try {
    preset("llama3-7b");
    FAIL();
  } catch (const Error& e) {
    std::string w = e.what();
    EXPECT_NE(w.find("unknown model 'llama3-7b'"), std::string::npos) << w;
    EXPECT_NE(w.find("did you mean"), std::string::npos) << w;
    EXPECT_NE(w.find("llama3-8b"), std::string::npos) << w;
  }
}

TEST(ModelSpec, InlineJsonAndOverrides) {
  auto m = model_from_json(Json::parse(R"({"preset": "llama3-8b", "layers": 16, "name": "half"})"));
  EXPECT_EQ(m.layers, 16);
  EXPECT_EQ(m.hidden, 4096);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.name, "half");
  auto c = model_from_json(Json::parse(
      R"({"name":"tiny","hidden":256,"layers":2,"heads":4,"ffn_hidden":1024,"ffn_type":"gelu","vocab":1000,
          "moe":{"experts":4,"top_k":1,"expert_ffn_hidden":512}})"));
  EXPECT_EQ(c.kv_heads, 4);
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_EQ(c.ffn_type, FfnType::GELU);
  EXPECT_TRUE(c.moe.enabled());
  // Round trip.
  auto r = model_from_json(c.to_json());
  EXPECT_EQ(count_params(r).total, count_params(c).total);
}

TEST(ModelSpec, BadInlineJsonNamesTheField) {
  auto expect_error = [](const char* text, const char* needle) {
    try {
      model_from_json(Json::parse(text));
      FAIL() << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error(R"({"hidden":-5,"layers":2,"heads":4,"ffn_hidden":8,"vocab":10})", "hidden=-5");
  expect_error(R"({"hidden":64,"layers":2,"heads":4,"kv_heads":3,"ffn_hidden":8,"vocab":10})", "kv_heads=3");
  expect_error(R"({"hidden":64,"layers":2,"heads":4,"ffn_hidden":8,"vocab":10,"ffn_type":"geglu"})",
               "model.ffn_type='geglu' is not valid; valid choices: swiglu, gelu, relu");
  expect_error(R"({"hidden":64,"layers":9223372036854775807,"heads":4,"ffn_hidden":8,"vocab":10})",
               "model.layers=9223372036854775807 is invalid: must be an integer in [1, 4096]");
  expect_error(R"({"hidden":64,"layers":2,"heads":4,"ffn_hidden":8,"vocab":10,"head_dim":4294967296})",
               "model.head_dim=4294967296 is invalid");
  expect_error(R"({"hidden":64,"layers":"two","heads":4,"ffn_hidden":8,"vocab":10})",
               "model.layers: expected an integer");
  expect_error(R"({"hiden":64})", "unknown key 'model.hiden'");
  expect_error(R"({"preset":"gpt-5"})", "unknown model 'gpt-5'");
}

TEST(ModelSpec, HuggingFaceConfigs) {
  auto llama = model_from_json(Json::parse(R"({
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
    "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32,
    "num_key_value_heads": 8, "vocab_size": 128256, "tie_word_embeddings": false,
    "max_position_embeddings": 8192, "hidden_act": "silu"})"));
  EXPECT_NEAR(count_params(llama).total, count_params(preset("llama3-8b")).total, 1);
  auto mixtral = model_from_json(Json::parse(R"({
    "model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336,
    "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
    "vocab_size": 32000, "num_local_experts": 8, "num_experts_per_tok": 2})"));
  EXPECT_NEAR(count_params(mixtral).total, count_params(preset("mixtral-8x7b")).total, 1);
  auto ds = model_from_json(Json::parse(R"({
    "model_type": "deepseek_v3", "hidden_size": 7168, "intermediate_size": 18432,
    "moe_intermediate_size": 2048, "num_attention_heads": 128, "num_hidden_layers": 61,
    "num_key_value_heads": 128, "vocab_size": 129280, "n_routed_experts": 256, "n_shared_experts": 1,
    "num_experts_per_tok": 8, "first_k_dense_replace": 3, "q_lora_rank": 1536, "kv_lora_rank": 512,
    "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128})"));
  EXPECT_NEAR(count_params(ds).total, count_params(preset("deepseek-v3")).total, 1);
  auto gpt2 = model_from_json(Json::parse(R"({"model_type":"gpt2","n_embd":768,"n_layer":12,"n_head":12,
    "n_positions":1024,"vocab_size":50257,"activation_function":"gelu_new"})"));
  EXPECT_NEAR(count_params(gpt2).total / 1e6, 124.4, 0.2);  // GPT-2 small
  EXPECT_THROW(model_from_json(Json::parse(R"({"model_type":"llama","hidden_size":4096})")), Error);
}

TEST(ModelSpec, HuggingFaceActivationsAndLimits) {
  auto message = [](const std::string& text) {
    try {
      model_from_json(parse_json_text(text, "config.json"));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string llama = R"("model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
    "num_attention_heads": 32, "vocab_size": 32000, "intermediate_size": 11008)";
  // A gated architecture with ReLU or GELU is refused, not modelled as SwiGLU.
  EXPECT_NE(message("{" + llama + R"(, "hidden_act": "relu"})").find("hidden_act='relu'"), std::string::npos);
  EXPECT_NE(message(R"({"model_type": "gemma", "hidden_size": 3072, "num_hidden_layers": 28,
    "num_attention_heads": 16, "vocab_size": 256000, "intermediate_size": 24576,
    "hidden_activation": "gelu_pytorch_tanh"})").find("GeGLU"), std::string::npos);
  EXPECT_NE(message("{" + llama + R"(, "hidden_act": "mish"})").find("not supported"), std::string::npos);
  EXPECT_NE(message("{" + llama + R"(, "head_dim": 9223372036854775807})").find("head_dim"), std::string::npos);
  EXPECT_NE(message("{" + llama + R"(, "num_hidden_layers": 9223372036854775807})").find("num_hidden_layers"),
            std::string::npos);
  // OPT: a plain ReLU MLP, two matrices with biases like GPT-2's.
  const auto opt = model_from_json(parse_json_text(R"({"model_type": "opt", "hidden_size": 768,
    "num_hidden_layers": 12, "num_attention_heads": 12, "vocab_size": 50272, "intermediate_size": 3072,
    "activation_function": "relu"})", "opt.json"));
  EXPECT_EQ(opt.ffn_type, FfnType::ReLU);
  EXPECT_DOUBLE_EQ(mlp_params_of_layer(opt, 0), 2.0 * 768 * 3072);
  // null means "use the default" in a Hugging Face config.
  const auto with_null = model_from_json(parse_json_text("{" + llama + R"(, "head_dim": null, "rope_scaling": null})",
                                                         "c.json"));
  EXPECT_EQ(with_null.head_dim, 128);
  // Parameter counts are closed forms: the largest model answers at once.
  ModelSpec big = preset("llama3-8b");
  big.layers = 4096;
  EXPECT_NEAR(count_params(big).total, count_params(preset("llama3-8b")).total +
                                           double(4096 - 32) * (attention_params_per_layer(big) +
                                                                mlp_params_of_layer(big, 0) +
                                                                norm_params_per_layer(big)),
              1e3);
}
