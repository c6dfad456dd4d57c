#include "strategies/pipeline_layout.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"

using namespace infraplan;
using namespace infraplan::strat;

namespace {

std::string error_of(const TrainingConfig& t0, const model::ModelSpec& m, const hw::Cluster& c) {
  TrainingConfig t = t0;
  try {
    resolve_training(t, m, c);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TrainingConfig llama3_16k() {
  TrainingConfig t;
  t.seq_len = 8192, t.tp = 8, t.pp = 16, t.dp = 128, t.sp = true, t.zero = 1;
  t.global_batch = 16 * 128;
  t.pp_schedule = PpSchedule::Interleaved, t.pp_virtual_stages = 8;
  t.pp_layers = {7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7};
  return t;
}

}  // namespace

// Llama 3 paper §3.3.2: one layer fewer on the first and last stages, so the first model chunk
// holds only the embedding and the last only the LM head and loss.
TEST(PipelineLayout, Llama3UnevenInterleavedChunks) {
  const auto m = model::preset("llama3-405b");
  auto c = hw::cluster_preset("dgx-h100", 2048);
  auto t = llama3_16k();
  resolve_training(t, m, c);
  const auto L = pipeline_layout(m, t);
  ASSERT_EQ(L.chunks(), 128);
  EXPECT_EQ(L.slots(), 8);
  EXPECT_EQ(L.layers(0).count, 0);
  EXPECT_EQ(L.layers(127).count, 0);
  for (int k = 1; k < 127; ++k) EXPECT_EQ(L.layers(k).count, 1) << k;
  EXPECT_EQ(L.layers(1).first, 0);
  EXPECT_EQ(L.layers(126).first, 125);
  EXPECT_EQ(L.layers_on_stage(0), 7);
  EXPECT_EQ(L.layers_on_stage(5), 8);
  EXPECT_EQ(L.layers_on_stage(15), 7);
  // Chunk k runs on rank k mod 16, slot k / 16.
  EXPECT_EQ(L.place(17, 0, 16).stage, 1);
  EXPECT_EQ(L.place(17, 0, 16).slot, 1);
  EXPECT_EQ(L.chunk_at(15, 7), 127);
}

TEST(PipelineLayout, PerChunkCountsAndEvenDefault) {
  const auto m = model::preset("llama2-7b");  // 32 layers
  auto c = hw::cluster_preset("dgx-h100", 1);
  TrainingConfig t;
  t.tp = 2, t.pp = 4, t.global_batch = 8, t.pp_schedule = PpSchedule::Interleaved, t.pp_virtual_stages = 2;
  resolve_training(t, m, c);
  auto L = pipeline_layout(m, t);
  for (int k = 0; k < 8; ++k) EXPECT_EQ(L.layers(k).count, 4);
  // One count per chunk (pp × v entries, chunk k at index k).
  t.pp_layers = {3, 4, 4, 4, 4, 4, 4, 5};
  resolve_training(t, m, c);
  L = pipeline_layout(m, t);
  EXPECT_EQ(L.layers(0).count, 3);
  EXPECT_EQ(L.layers(7).count, 5);
  EXPECT_EQ(L.layers(7).first, 27);
  EXPECT_EQ(L.layers_on_stage(3), 4 + 5);
  // 1F1B with uneven stages.
  TrainingConfig u;
  u.tp = 2, u.pp = 4, u.global_batch = 8, u.pp_layers = {6, 9, 9, 8};
  resolve_training(u, m, c);
  L = pipeline_layout(m, u);
  EXPECT_EQ(L.layers(1).first, 6);
  EXPECT_EQ(L.layers(3).count, 8);
}

TEST(PipelineLayout, ErrorsNameTheFieldAndTheFix) {
  const auto m = model::preset("llama2-7b");
  auto c = hw::cluster_preset("dgx-h100", 1);
  TrainingConfig t;
  t.tp = 2, t.pp = 4, t.global_batch = 8, t.pp_layers = {8, 8, 8};
  EXPECT_NE(error_of(t, m, c).find("training.pp_layers has 3 entries; give one per pipeline stage (pp=4)"),
            std::string::npos)
      << error_of(t, m, c);
  t.pp_layers = {8, 8, 8, 7};
  EXPECT_NE(error_of(t, m, c).find("sums to 31 but llama2-7b has 32 layers"), std::string::npos);
  t.pp_layers = {0, 16, 0, 16};
  EXPECT_NE(error_of(t, m, c).find("leaves model chunk 2 (stage 2) without layers"), std::string::npos)
      << error_of(t, m, c);
  t.pp_layers = {0, 11, 11, 10};  // the first stage may hold only the embedding
  EXPECT_EQ(error_of(t, m, c), "");
  TrainingConfig il;
  il.tp = 2, il.pp = 4, il.global_batch = 8, il.pp_schedule = PpSchedule::Interleaved, il.pp_virtual_stages = 4;
  il.pp_layers = {9, 3, 10, 10};
  EXPECT_NE(error_of(il, m, c).find("at least pp_virtual_stages=4 layers"), std::string::npos) << error_of(il, m, c);
  il.pp_virtual_stages = 3, il.pp_layers = {};
  EXPECT_NE(error_of(il, m, c).find("or give pp_layers"), std::string::npos);
  il.pp_layers = {8, 8, 8, 8};  // 32 layers in 12 chunks of 2 or 3
  EXPECT_EQ(error_of(il, m, c), "");
}

TEST(PipelineLayout, DualPipeHoldsTwoStagesPerRank) {
  const auto m = model::preset("llama2-7b");
  auto c = hw::cluster_preset("dgx-h100", 1);
  TrainingConfig t;
  t.tp = 2, t.pp = 4, t.global_batch = 8, t.pp_schedule = PpSchedule::DualPipe;
  resolve_training(t, m, c);
  const auto L = pipeline_layout(m, t);
  EXPECT_EQ(L.chunks(), 4);
  EXPECT_EQ(L.slots(), 2);
  EXPECT_EQ(L.chunk_at(0, 0), 0);
  EXPECT_EQ(L.chunk_at(0, 1), 3);
  EXPECT_EQ(L.layers_on_stage(1), 16);
  // First half of the micro-batches: stage k on rank k; second half: on rank 3 - k.
  EXPECT_EQ(L.place(0, 0, 8).stage, 0);
  EXPECT_EQ(L.place(0, 4, 8).stage, 3);
  EXPECT_EQ(L.place(0, 4, 8).slot, 1);
  TrainingConfig odd = t;
  odd.global_batch = 6;
  EXPECT_NE(error_of(odd, m, c).find("even number of micro-batches >= 2×pp=8"), std::string::npos);
  TrainingConfig pp3 = t;
  pp3.pp = 3, pp3.tp = 2, pp3.global_batch = 12;
  auto c12 = hw::resolve_cluster(Json{{"gpu", "h100-sxm5-80gb"}, {"gpus_per_node", 6}});
  EXPECT_NE(error_of(pp3, m, c12).find("needs an even pp"), std::string::npos) << error_of(pp3, m, c12);
}

TEST(PipelineLayout, ScenarioKeysParseAndValidate) {
  auto t = training_from_json(Json::parse(
      R"({"tp": 8, "pp": 16, "pp_layers": [7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7],
          "pp_schedule": "interleaved", "pp_virtual_stages": 8, "dp_shard": 16, "zero": 1,
          "train_tokens": 15.6e12})"));
  EXPECT_EQ(t.pp_layers.size(), 16u);
  EXPECT_EQ(t.dp_shard, 16);
  EXPECT_DOUBLE_EQ(t.train_tokens, 15.6e12);
  EXPECT_EQ(training_from_json(Json::parse(R"({"pp_schedule": "zb-h1"})")).pp_schedule, PpSchedule::ZBH1);
  EXPECT_EQ(training_from_json(Json::parse(R"({"pp_schedule": "dualpipe"})")).pp_schedule, PpSchedule::DualPipe);
  auto err = [](const char* text) {
    try {
      training_from_json(Json::parse(text));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(err(R"({"pp_layers": [4, -1]})").find("training.pp_layers[1]=-1 is invalid"), std::string::npos);
  EXPECT_NE(err(R"({"pp_layers": "4,4"})").find("training.pp_layers: expected a non-empty array"), std::string::npos);
  EXPECT_NE(err(R"({"pp_schedule": "zb"})").find("zb-h1, dualpipe"), std::string::npos);
  EXPECT_NE(err(R"({"dp_shard": -2})").find("training.dp_shard"), std::string::npos);
}

TEST(PipelineLayout, HsdpShardGroupValidation) {
  const auto m = model::preset("llama2-7b");
  auto c = hw::cluster_preset("dgx-h100", 4);
  TrainingConfig t;
  t.tp = 8, t.global_batch = 32, t.zero = 3, t.dp_shard = 3;
  EXPECT_NE(error_of(t, m, c).find("training.dp_shard=3 does not divide dp=4; try 1, 2, 4"), std::string::npos);
  t.dp_shard = 2, t.zero = 0;
  EXPECT_NE(error_of(t, m, c).find("needs zero >= 1"), std::string::npos);
  t.zero = 3;
  EXPECT_EQ(error_of(t, m, c), "");
  TrainingConfig d;
  d.tp = 8, d.global_batch = 32, d.zero = 1;
  resolve_training(d, m, c);
  EXPECT_EQ(d.dp_shard, 4);  // FSDP / ZeRO: shard over all of DP
}
