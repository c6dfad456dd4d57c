#include "strategies/training_config.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "strategies/scenario.hpp"

using namespace infraplan;
using namespace infraplan::strat;

namespace {
std::string error_of(TrainingConfig t, const std::string& model, const std::string& cluster) {
  try {
    resolve_training(t, model::preset(model), hw::resolve_cluster_arg(cluster));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

/// The error a training object's JSON text gets ("" when it parses).
std::string err(const char* text) {
  try {
    training_from_json(Json::parse(text));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(TrainingConfig, DerivesDpAndChecksDivisibility) {
  TrainingConfig t;
  t.tp = 8;
  t.pp = 4;
  t.global_batch = 512;
  auto m = model::preset("llama2-70b");
  auto c = hw::cluster_preset("dgx-h100", 8);
  auto w = resolve_training(t, m, c);
  EXPECT_EQ(t.dp, 2);
  EXPECT_EQ(t.micro_batches(), 256);
  EXPECT_TRUE(w.items.empty());

  TrainingConfig bad;
  bad.tp = 3;
  EXPECT_NE(error_of(bad, "llama2-7b", "dgx-h100")
                .find("training.tp=3 does not divide heads=32; try 1, 2, 4, 8, 16, 32"),
            std::string::npos);
  TrainingConfig gpus;
  gpus.tp = 8;
  gpus.dp = 2;
  EXPECT_NE(error_of(gpus, "llama2-7b", "dgx-h100").find("but the cluster has 8 GPUs"), std::string::npos);
  TrainingConfig ep;
  ep.ep = 2;
  EXPECT_NE(error_of(ep, "llama2-7b", "dgx-h100").find("needs a MoE model"), std::string::npos);
  TrainingConfig gb;
  gb.global_batch = 12;
  gb.micro_batch = 2;
  EXPECT_NE(error_of(gb, "llama2-7b", "dgx-h100").find("global_batch=12 is not a multiple of dp×micro_batch"),
            std::string::npos);
  TrainingConfig il;
  il.pp = 4;
  il.pp_schedule = PpSchedule::Interleaved;
  il.pp_virtual_stages = 3;
  il.global_batch = 8;
  EXPECT_NE(error_of(il, "llama2-7b", "dgx-h100").find("pp_virtual_stages=3"), std::string::npos);
}

TEST(TrainingConfig, TpAcrossNodesIsFlagged) {
  TrainingConfig t;
  t.tp = 16;
  auto w = resolve_training(t, model::preset("llama2-70b"), hw::cluster_preset("dgx-h100", 2));
  ASSERT_FALSE(w.items.empty());
  bool found = false;
  for (auto& s : w.items) found |= s.find("crosses nodes") != std::string::npos;
  EXPECT_TRUE(found);
}

TEST(TrainingConfig, JsonErrorsNameTheField) {
  EXPECT_NE(err(R"({"tp": -2})").find("training.tp=-2 is invalid"), std::string::npos);
  EXPECT_NE(err(R"({"zero": 4})").find("training.zero=4 is invalid: must be an integer in [0, 3]"), std::string::npos);
  // Values that do not fit an int are refused, never wrapped (zero 4294967295 ran as −1, tp
  // 4294967304 as 8).
  EXPECT_NE(err(R"({"zero": 4294967295})").find("training.zero=4294967295 is invalid"), std::string::npos);
  EXPECT_NE(err(R"({"tp": 4294967304})").find("training.tp=4294967304 is invalid: must be an integer in [1, 131072]"),
            std::string::npos);
  EXPECT_NE(err(R"({"seq_len": 9223372036854775807})").find("training.seq_len"), std::string::npos);
  EXPECT_NE(err(R"({"global_batch": 2147483648})").find("training.global_batch"), std::string::npos);
  EXPECT_NE(err(R"({"tp": null})").find("training.tp: null"), std::string::npos);
  EXPECT_NE(err(R"({"pp_schedule": "zb"})").find("valid choices: 1f1b, gpipe, interleaved"),
            std::string::npos);
  EXPECT_NE(err(R"({"micro_bacth": 2})").find("did you mean 'micro_batch'"), std::string::npos);
  EXPECT_NE(err(R"({"precision": "fp4"})").find("bf16-mixed"), std::string::npos);
  EXPECT_NE(err(R"({"recompute_layers": -1})").find("training.recompute_layers=-1 is invalid"),
            std::string::npos);
  // The key round-trips, and a config without it writes no such key (outputs stay as they were).
  const TrainingConfig t = training_from_json(Json::parse(R"({"recompute": "full", "recompute_layers": 3})"));
  EXPECT_EQ(t.recompute_layers, 3);
  EXPECT_EQ(t.to_json().at("recompute_layers"), 3);
  EXPECT_FALSE(training_from_json(Json::parse("{}")).to_json().contains("recompute_layers"));
}

// training.attention_kernel: default or flash2, named in the error with its choices; flash2 needs
// fused attention; written to the config's JSON only when not the default.
TEST(TrainingConfig, AttentionKernelKey) {
  const std::string bad = err(R"({"attention_kernel": "flash3"})");
  EXPECT_NE(bad.find("training.attention_kernel"), std::string::npos) << bad;
  EXPECT_NE(bad.find("flash2"), std::string::npos) << bad;
  const std::string unfused = err(R"({"attention_kernel": "flash2", "flash_attention": false})");
  EXPECT_NE(unfused.find("training.flash_attention"), std::string::npos) << unfused;
  const TrainingConfig t = training_from_json(Json::parse(R"({"attention_kernel": "flash2"})"));
  EXPECT_EQ(t.attention_kernel, hw::AttentionKernel::Flash2);
  EXPECT_EQ(t.to_json().at("attention_kernel"), "flash2");
  EXPECT_FALSE(training_from_json(Json::parse("{}")).to_json().contains("attention_kernel"));
}

TEST(Scenario, ParsesAndReportsErrorsWithOrigin) {
  auto s = scenario_from_json(
      Json::parse(R"({"name":"t","model":"llama3-8b","cluster":{"preset":"dgx-h100","nodes":2},
      "training":{"tp":8,"global_batch":32,"seq_len":8192},"serving":{"tp":2,"weights":"fp8","prefix_cache":true}})"),
      "t.json");
  EXPECT_EQ(s.cluster.total_gpus(), 16);
  ASSERT_TRUE(s.training);
  EXPECT_EQ(s.training->dp, 2);
  ASSERT_TRUE(s.serving);
  EXPECT_EQ(s.serving->weights, WeightQuant::FP8);
  try {
    scenario_from_json(
        Json::parse(R"({"model":"llama3-8b","cluster":"dgx-a100-80gb","serving":{"weights":"fp8"}})"),
        "a.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a.json: serving.weights=fp8 is not supported"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(scenario_from_json(Json::parse(R"({"model":"llama3-8b"})"), "b.json"), Error);
  for (const char* bad : {R"({"model":"llama3-8b","cluster":"dgx-h100","serving":{"replicas":2147483648}})",
                          R"({"model":"llama3-8b","cluster":"dgx-h100","serving":{"quant_group":4294967295}})",
                          R"({"model":"llama3-8b","cluster":{"preset":"dgx-h100","nodes":1250000}})",
                          R"({"model":"llama3-8b","cluster":{"preset":"dgx-h100","nodes":16385}})",
                          R"({"model":"llama3-8b","cluster":"dgx-h100","seed":18446744073709551615})"})
    EXPECT_THROW(scenario_from_json(Json::parse(bad), "c.json"), Error) << bad;
  EXPECT_THROW(scenario_from_json(Json::parse(R"({"model":"llama3-8b","cluster":"dgx-h1000"})"), "b.json"),
               Error);
}

// recompute "selective-op" (PyTorch's op-level checkpointing) is priced for the eager frameworks'
// dense blocks: refused elsewhere with the field, the reason and the valid choices.
TEST(TrainingConfig, SelectiveOpNeedsAnEagerFrameworkAndDenseBlocks) {
  TrainingConfig t =
      training_from_json(Json::parse(R"({"recompute": "selective-op", "framework": "megatron"})"));
  std::string e = error_of(t, "llama3-8b", "dgx-h200");
  EXPECT_NE(e.find("training.recompute=\"selective-op\""), std::string::npos) << e;
  EXPECT_NE(e.find("pytorch-eager or transformers"), std::string::npos) << e;
  t.framework = Framework::Transformers;
  EXPECT_EQ(error_of(t, "llama3-8b", "dgx-h200"), "");
  e = error_of(t, "mixtral-8x7b", "dgx-h200");
  EXPECT_NE(e.find("MoE"), std::string::npos) << e;
  t.flash_attention = false;
  e = error_of(t, "llama3-8b", "dgx-h200");
  EXPECT_NE(e.find("training.flash_attention"), std::string::npos) << e;
  EXPECT_EQ(training_from_json(Json::parse(R"({"recompute": "selective-op"})")).to_json().at("recompute"),
            "selective-op");
}
