#include "planner/train_planner.hpp"

#include <gtest/gtest.h>

#include "hardware/calibrated_cost_model.hpp"
#include "hardware/roofline_cost_model.hpp"
#include "common/error.hpp"

using namespace infraplan;
using namespace infraplan::plan;

namespace {

TrainPlanRequest request(const std::string& model, const std::string& cluster, std::int64_t seq,
                         std::int64_t gb) {
  TrainPlanRequest r;
  r.model = model::preset(model);
  r.cluster = hw::resolve_cluster_arg(cluster);
  r.search.seq_len = seq;
  r.search.global_batch = gb;
  r.top = 3;
  return r;
}

}  // namespace

// Roadmap 2.3: 64 GPUs (8 nodes × 8): the recommended layout keeps TP inside a node, and the
// best layout with TP across nodes is markedly slower.
TEST(TrainPlanner, SixtyFourGpusKeepTpInsideANode) {
  auto r = request("llama3-70b", "dgx-h100:8", 8192, 512);
  auto cost = hw::make_calibrated_cost_model("h100-sxm5-80gb");
  coll::CommModel comm(r.cluster);
  auto plan = plan_training(r, *cost, comm);
  ASSERT_FALSE(plan.candidates.empty());
  const auto& best = plan.candidates.front();
  EXPECT_LE(best.cfg.tp, 8);
  EXPECT_TRUE(best.simulated);
  EXPECT_LE(best.peak_bytes, r.cluster.gpu.hbm_bytes);
  EXPECT_EQ(best.cfg.tp * best.cfg.pp * best.cfg.dp * best.cfg.cp, 64);
  bool saw_cross = false;
  for (const auto& a : plan.alternatives) {
    if (a.candidate.cfg.tp > 8) {
      saw_cross = true;
      EXPECT_GT(a.candidate.iteration_time_s, 1.2 * best.iteration_time_s) << a.candidate.label();
    }
  }
  EXPECT_TRUE(saw_cross);
  // Memory pruning rejected something (70B does not fit everywhere) and every reason is counted.
  EXPECT_GT(plan.rejected.counts.count("does not fit in GPU memory"), 0u);
  EXPECT_GT(plan.layouts_visited, 100);
  // Ranked best first; explanations name the winner and each runner-up.
  for (std::size_t i = 1; i < plan.candidates.size(); ++i)
    EXPECT_GE(plan.candidates[i].iteration_time_s, best.iteration_time_s);
  ASSERT_GE(plan.explanation.size(), 2u);
  EXPECT_NE(plan.explanation[0].find("winner"), std::string::npos);
  bool crosses = false;
  for (const auto& s : plan.explanation) crosses |= s.find("crosses nodes") != std::string::npos;
  EXPECT_TRUE(crosses);
}

TEST(TrainPlanner, JsonIsStableAndDeterministic) {
  auto r = request("llama2-7b", "dgx-h100", 4096, 64);
  hw::RooflineCostModel cost(r.cluster.gpu);
  coll::CommModel comm(r.cluster);
  auto a = plan_training(r, cost, comm).to_json();
  auto b = plan_training(r, cost, comm).to_json();
  EXPECT_EQ(a.dump(), b.dump());
  for (const char* k : {"best", "candidates", "rejected"}) EXPECT_TRUE(a.contains(k)) << k;
  for (const char* k : {"tp", "pp", "dp", "cp", "ep", "sp", "zero", "micro_batch", "recompute", "pp_schedule",
                        "iteration_time_s", "tokens_per_s", "mfu", "peak_bytes"})
    EXPECT_TRUE(a["candidates"][0].contains(k)) << k;
  for (const auto& x : a["rejected"]) {
    EXPECT_TRUE(x.contains("reason"));
    EXPECT_GT(x["count"].get<long long>(), 0);
  }
}

TEST(TrainPlanner, TimeToTrain) {
  auto r = request("llama2-7b", "dgx-h100", 4096, 64);
  r.train_tokens = 1e12;
  hw::RooflineCostModel cost(r.cluster.gpu);
  coll::CommModel comm(r.cluster);
  auto plan = plan_training(r, cost, comm);
  const auto& b = plan.candidates.front();
  double iters = 1e12 / (64.0 * 4096);
  EXPECT_NEAR(b.time_to_train_s, iters * b.iteration_time_s, 1e-6 * b.time_to_train_s);
  EXPECT_NEAR(b.gpu_hours, b.time_to_train_s / 3600 * 8, 1e-9 * b.gpu_hours);
}

TEST(TrainPlanner, NothingFitsIsAClearError) {
  auto r = request("gpt3-175b", "h100-sxm5-80gb", 2048, 8);
  r.cluster.gpus_per_node = 1;
  hw::RooflineCostModel cost(r.cluster.gpu);
  coll::CommModel comm(r.cluster);
  try {
    plan_training(r, cost, comm);
    FAIL();
  } catch (const Error& e) {
    std::string w = e.what();
    EXPECT_NE(w.find("no training layout of gpt3-175b fits"), std::string::npos) << w;
    EXPECT_NE(w.find("does not fit in GPU memory"), std::string::npos) << w;
  }
  r.search.global_batch = 0;
  EXPECT_THROW(plan_training(r, cost, comm), Error);
}

// A scenario's training object is the planner's question the same way for `plan train
// --scenario`, the report's plan question and the GUI: its fixed terms, its tokens and its seed.
TEST(TrainPlanner, ScenarioQuestionCarriesTheJobsTermsTokensAndSeed) {
  const Json j = Json::parse(R"({"model": "llama3-8b", "cluster": {"preset": "dgx-h100", "nodes": 1},
    "seed": 7, "training": {"seq_len": 4096, "global_batch": 64, "precision": "bf16-mixed",
    "train_tokens": 1e11}})");
  const TrainPlanRequest r = train_plan_request_of(strat::scenario_from_json(j, "question.json"));
  EXPECT_EQ(r.model.name, "llama3-8b");
  EXPECT_EQ(r.search.seq_len, 4096);
  EXPECT_EQ(r.search.global_batch, 64);
  ASSERT_EQ(r.search.precisions.size(), 1u);
  EXPECT_EQ(r.default_train_tokens, 1e11);
  EXPECT_EQ(r.default_train_tokens_source, "training.train_tokens");
  EXPECT_EQ(r.seed, 7u);
  const Json no_training =
      Json::parse(R"({"model": "llama3-8b", "cluster": {"preset": "dgx-h100", "nodes": 1}})");
  const strat::Scenario sc = strat::scenario_from_json(no_training, "serve_only.json");
  ASSERT_FALSE(sc.training.has_value());
  try {
    train_plan_request_of(sc);
    FAIL() << "a scenario without training was planned";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("serve_only.json"), std::string::npos) << e.what();
  }
}

// The job's software is part of the question, held fixed while the layout is searched: a PyTorch
// FSDP job on the flash-attn package is planned with the transformers op list and the
// FlashAttention-2 tables, and every candidate carries them (it was planned as Megatron-LM with
// cuDNN attention before).
TEST(TrainPlanner, ScenarioSoftwareIsHeldFixed) {
  const Json j = Json::parse(R"({"model": "llama3-8b", "cluster": {"preset": "dgx-h200", "nodes": 1},
    "training": {"seq_len": 16384, "global_batch": 16, "precision": "bf16-mixed",
    "framework": "transformers", "attention_kernel": "flash2", "dp_buckets": "copy"}})");
  TrainPlanRequest r = train_plan_request_of(strat::scenario_from_json(j, "fsdp.json"));
  EXPECT_EQ(r.search.software.framework, strat::Framework::Transformers);
  EXPECT_EQ(r.search.software.attention_kernel, hw::AttentionKernel::Flash2);
  EXPECT_EQ(r.search.software.dp_buckets, strat::DpBuckets::Copy);
  r.top = 2;
  auto cost = hw::make_calibrated_cost_model("h200-sxm-141gb");
  coll::CommModel comm(r.cluster);
  const auto flash = plan_training(r, *cost, comm);
  ASSERT_FALSE(flash.candidates.empty());
  for (const auto& c : flash.candidates) {
    EXPECT_EQ(c.cfg.framework, strat::Framework::Transformers);
    EXPECT_EQ(c.cfg.attention_kernel, hw::AttentionKernel::Flash2);
  }
  r.search.software.attention_kernel = hw::AttentionKernel::Default;
  const auto cudnn = plan_training(r, *cost, comm);
  ASSERT_FALSE(cudnn.candidates.empty());
  EXPECT_GT(flash.candidates.front().iteration_time_s, 1.05 * cudnn.candidates.front().iteration_time_s);
}

// recompute "selective-op" joins the search where the job names an eager PyTorch framework, and
// only there (Megatron's op list has no such policy).
TEST(TrainPlanner, SelectiveOpIsSearchedForEagerFrameworksOnly) {
  const auto m = model::preset("llama3-8b");
  const auto c = hw::resolve_cluster_arg("dgx-h200");
  TrainSearch s;
  s.seq_len = 4096;
  s.global_batch = 16;
  auto count_sac = [&](strat::Framework fw) {
    s.software.framework = fw;
    int n = 0;
    Rejections rej;
    enumerate_training(
        m, c, s, [&](FeasibleLayout&& f) { n += f.cfg.recompute == model::Recompute::SelectiveOp; }, rej);
    for (const auto& [reason, k] : rej.counts)
      EXPECT_EQ(reason.find("selective-op"), std::string::npos) << reason;
    return n;
  };
  EXPECT_GT(count_sac(strat::Framework::Transformers), 0);
  EXPECT_EQ(count_sac(strat::Framework::Megatron), 0);
}
