#include "strategies/memory_ledger.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "model/model_math.hpp"
#include "strategies/compiled_memory.hpp"
#include "strategies/eager_memory.hpp"

using namespace infraplan;
using namespace infraplan::strat;

namespace {
constexpr double GiB = 1073741824.0;

TrainingConfig resolved(TrainingConfig t, const model::ModelSpec& m, const hw::Cluster& c) {
  resolve_training(t, m, c);
  return t;
}
}  // namespace

TEST(StateBytes, RecipesMatchTheirDefinitions) {
  EXPECT_DOUBLE_EQ(state_bytes_per_param(Precision::BF16Mixed, Optimizer::AdamW).total(), 18);
  EXPECT_DOUBLE_EQ(state_bytes_per_param(Precision::FP16Mixed, Optimizer::AdamW).total(), 18);
  auto amp = state_bytes_per_param(Precision::AmpBF16, Optimizer::AdamW);
  EXPECT_DOUBLE_EQ(amp.params + amp.grads + amp.optimizer, 16);
  EXPECT_DOUBLE_EQ(state_bytes_per_param(Precision::BF16Pure, Optimizer::AdamW).total(), 8);
  // The roadmap's "12 B/param" Adam state: fp32 master copy + two moments.
  EXPECT_DOUBLE_EQ(state_bytes_per_param(Precision::BF16Mixed, Optimizer::AdamW).optimizer, 12);
}

// Roadmap 2.3: LLaMA-2-7B training state does not fit one 80 GB card without ZeRO; ZeRO-3 over 8
// GPUs cuts model state to 1/8.
TEST(TrainingLedger, SevenBNeedsZeroOnEightyGigabytes) {
  auto m = model::preset("llama2-7b");
  auto one = hw::cluster_preset("dgx-a100-80gb");
  one.gpus_per_node = 1;
  TrainingConfig t;
  t.seq_len = 2048;
  t = resolved(t, m, one);
  auto L = training_memory(m, one, t, 0);
  EXPECT_FALSE(L.fits()) << L.verdict();
  EXPECT_GT(L.line("optimizer_states"), 80e9);
  EXPECT_NE(L.verdict().find("does not fit by"), std::string::npos);

  auto node = hw::cluster_preset("dgx-a100-80gb");
  TrainingConfig z;
  z.seq_len = 2048;
  z.zero = 3;
  z = resolved(z, m, node);
  auto Z = training_memory(m, node, z, 0);
  double state0 = L.line("parameters") + L.line("gradients") + L.line("optimizer_states");
  double state3 = Z.line("parameters") + Z.line("gradients") + Z.line("optimizer_states");
  EXPECT_NEAR(state3, state0 / 8, state0 * 1e-9);
  EXPECT_TRUE(Z.fits()) << Z.verdict();
  // ZeRO-1 shards only the optimizer states, ZeRO-2 also gradients.
  z.zero = 1;
  auto Z1 = training_memory(m, node, z, 0);
  EXPECT_NEAR(Z1.line("optimizer_states"), L.line("optimizer_states") / 8, 1);
  EXPECT_NEAR(Z1.line("gradients"), L.line("gradients"), 1);
  z.zero = 2;
  auto Z2 = training_memory(m, node, z, 0);
  EXPECT_NEAR(Z2.line("gradients"), L.line("gradients") / 8, 1);
  EXPECT_NEAR(Z2.line("parameters"), L.line("parameters"), 1);
}

// NCCL's buffers: the default reserve, or what a cluster calibration measured (cluster key
// nccl_buffer_bytes); none with one GPU.
TEST(TrainingLedger, NcclBuffersMeasuredOrDefault) {
  auto m = model::preset("llama2-7b");
  auto c = hw::cluster_preset("dgx-h100");
  TrainingConfig t;
  t.seq_len = 2048;
  t.zero = 1;
  t = resolved(t, m, c);
  EXPECT_DOUBLE_EQ(training_memory(m, c, t, 0).line("nccl_buffers"), 0.5 * GiB);
  const auto measured = hw::resolve_cluster(Json{{"preset", "dgx-h100"}, {"nccl_buffer_bytes", 3.25e8}});
  EXPECT_DOUBLE_EQ(measured.nccl_buffer_bytes, 3.25e8);
  EXPECT_DOUBLE_EQ(hw::resolve_cluster(measured.to_json()).nccl_buffer_bytes, 3.25e8);
  const auto L = training_memory(m, measured, t, 0);
  EXPECT_DOUBLE_EQ(L.line("nccl_buffers"), 3.25e8);
  EXPECT_DOUBLE_EQ(training_memory(m, c, t, 0).total_bytes() - L.total_bytes(), 0.5 * GiB - 3.25e8);
  EXPECT_FALSE(hw::cluster_preset("dgx-h100").to_json().contains("nccl_buffer_bytes"));
  try {
    hw::resolve_cluster(Json{{"preset", "dgx-h100"}, {"nccl_buffer_bytes", -1}});
    ADD_FAILURE() << "negative nccl_buffer_bytes accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nccl_buffer_bytes"), std::string::npos) << e.what();
  }
  auto one = c;
  one.gpus_per_node = 1;
  one.nccl_buffer_bytes = 3.25e8;
  TrainingConfig s;
  s.seq_len = 2048;
  s = resolved(s, m, one);
  EXPECT_DOUBLE_EQ(training_memory(m, one, s, 0).line("nccl_buffers"), 0);
}

TEST(TrainingLedger, PipelineSchedulesAndRecompute) {
  auto m = model::preset("llama2-13b");
  auto c = hw::cluster_preset("dgx-h100", 2);
  TrainingConfig t;
  t.seq_len = 4096;
  t.tp = 4;
  t.pp = 4;
  t.global_batch = 64;
  t = resolved(t, m, c);
  EXPECT_EQ(t.dp, 1);
  EXPECT_EQ(t.micro_batches(), 64);
  double a_1f1b = training_memory(m, c, t, 0).line("activations");
  EXPECT_DOUBLE_EQ(inflight_microbatches(t, 0), 4);
  EXPECT_DOUBLE_EQ(inflight_microbatches(t, 3), 1);
  t.pp_schedule = PpSchedule::GPipe;
  EXPECT_NEAR(training_memory(m, c, t, 0).line("activations"), a_1f1b * 16, a_1f1b * 1e-9);
  t.pp_schedule = PpSchedule::Interleaved;
  t.pp_virtual_stages = 2;
  EXPECT_NEAR(inflight_microbatches(t, 0), 4 * (1 + 3.0 / 8), 1e-12);
  t.pp_schedule = PpSchedule::OneFOneB;
  t.pp_virtual_stages = 1;
  t.recompute = model::Recompute::Full;
  auto full = training_memory(m, c, t, 0);
  EXPECT_LT(full.line("activations"), a_1f1b / 5);
  EXPECT_GT(full.line("recompute_working_set"), 0);
  // The last stage holds the logits.
  EXPECT_GT(training_memory(m, c, t, 3).line("logits_and_loss"), 0);
  EXPECT_EQ(training_memory(m, c, t, 0).line("logits_and_loss"), 0);
}

// Roadmap 3.3: 70B on 2×A100-80GB.
TEST(ServingLedger, SeventyBOnTwoA100s) {
  auto m = model::preset("llama2-70b");
  auto g = hw::find_gpu("a100-sxm4-80gb");
  ServingConfig s;
  s.tp = 2;
  s.weights = WeightQuant::FP16;
  double w16 = serving_weight_bytes_per_gpu(m, s) * 2;
  EXPECT_NEAR(w16 / 1e9, 138, 3);  // ≈ 140 GB
  double left = 2 * g.hbm_bytes - w16;
  EXPECT_NEAR(left / 1e9, 30, 10);  // "~20 GB" left for KV and buffers (2×80 GiB cards)
  s.weights = WeightQuant::INT8;
  EXPECT_NEAR(serving_weight_bytes_per_gpu(m, s) * 2 / 1e9, 70, 2);
  EXPECT_GT(serving_kv_capacity_tokens(m, g, s), 4 * serving_kv_capacity_tokens(m, g, [&] {
                                                   ServingConfig f = s;
                                                   f.weights = WeightQuant::FP16;
                                                   return f;
                                                 }()));
  ServingConfig q;
  q.tp = 1;
  q.weights = WeightQuant::INT4;
  auto L = serving_memory(m, g, q, 8, 4096);
  EXPECT_NEAR(L.line("weights") / 1e9, 36, 2);  // ≈ 35 GB
  EXPECT_TRUE(L.fits()) << L.verdict();
  q.weights = WeightQuant::FP8;
  try {
    serving_memory(m, g, q, 1, 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("serving.weights=fp8 is not supported on a100-sxm4-80gb"),
              std::string::npos)
        << e.what();
  }
  q.weights = WeightQuant::BF16;
  q.kv_dtype = Dtype::FP8;
  EXPECT_THROW(serving_memory(m, g, q, 1, 1), Error);
  q.kv_dtype = Dtype::BF16;
  q.weights = WeightQuant::NVFP4;
  EXPECT_THROW(serving_memory(m, hw::find_gpu("h100-sxm5-80gb"), q, 1, 1), Error);
  EXPECT_NO_THROW(serving_memory(m, hw::find_gpu("b200-sxm-180gb"), q, 1, 1));
}

TEST(ServingLedger, KvCacheLineIsTheRoadmapNumber) {
  auto m = model::preset("llama2-7b");
  ServingConfig s;
  s.weights = WeightQuant::FP16;
  s.kv_dtype = Dtype::FP16;
  auto L = serving_memory(m, hw::find_gpu("a100-sxm4-80gb"), s, 16, 4096);
  EXPECT_DOUBLE_EQ(L.line("kv_cache"), 32 * GiB);
  EXPECT_TRUE(L.fits());
  EXPECT_THROW(serving_memory(m, hw::find_gpu("a100-sxm4-80gb"), s, -1, 4096), Error);
  // GQA with tp beyond kv_heads replicates KV heads.
  auto l3 = model::preset("llama3-70b");
  ServingConfig t8;
  t8.tp = 8;
  ServingConfig t16 = t8;
  t16.tp = 16;
  EXPECT_DOUBLE_EQ(serving_kv_bytes_per_token_per_gpu(l3, t8), serving_kv_bytes_per_token_per_gpu(l3, t16));
}

namespace {
// The calibration shape of bench/pytorch/saved_activations.py (docs/data/h200_saved_activations*.json):
// hidden 1536, 12 / 4 heads of 128, FFN 4096, vocabulary 50,000, untied; 2 × 2048 tokens.
model::ModelSpec saved_tensor_shape() {
  model::ModelSpec m = model::preset("llama3-8b");
  m.name = "calib-act", m.hidden = 1536, m.layers = 6, m.heads = 12, m.kv_heads = 4, m.head_dim = 128;
  m.ffn_hidden = 4096, m.vocab = 50000, m.tied_embeddings = false;
  return m;
}
TrainingConfig one_gpu(Framework f, Precision p) {
  TrainingConfig t;
  t.seq_len = 2048, t.micro_batch = 2, t.global_batch = 2, t.framework = f, t.precision = p;
  return t;
}
}  // namespace

// Bytes per token one block keeps, against the slope over 2 and 6 blocks measured with
// torch.cuda.memory_allocated on the H200 (saved_activations.py; AMP's slopes include the block's
// bf16 weight casts, 12,288 B/token here, which the ledger keeps on its weight_copies line; the
// eager formula leaves out the 56 B/token of fp32 norm and softmax statistics): within 0.5%).
TEST(TrainingLedger, BlockBytesMatchTheSavedTensorsMeasured) {
  const model::ModelSpec m = saved_tensor_shape();
  const double tokens = 4096, casts = 12288;
  auto per_token = [&](Framework f, Precision p) {
    const TrainingConfig t = one_gpu(f, p);
    return (f == Framework::TorchCompile ? compiled_activation_bytes_per_layer(m, t, model::Recompute::None)
                                         : eager_activation_bytes_per_layer(m, t, model::Recompute::None)) /
           tokens;
  };
  EXPECT_NEAR(per_token(Framework::TorchCompile, Precision::BF16Pure), 49208, 1);
  EXPECT_NEAR(per_token(Framework::TorchCompile, Precision::AmpBF16) + casts, 67707, 0.005 * 67707);
  EXPECT_NEAR(per_token(Framework::PytorchEager, Precision::BF16Pure), 57400, 0.005 * 57400);
  EXPECT_NEAR(per_token(Framework::PytorchEager, Precision::AmpBF16) + casts, 85111, 0.005 * 85111);
  EXPECT_NEAR(per_token(Framework::Transformers, Precision::BF16Pure), 65592, 0.005 * 65592);
  EXPECT_NEAR(per_token(Framework::Transformers, Precision::AmpBF16) + casts, 93243, 0.005 * 93243);
}

// With checkpointing per block the step's peak is the loss's backward, a rebuilt block or the
// optimizer step, never all at once: the measured peak of the calibration shape under AMP (6
// blocks: 2,674.5 MiB above the parameters) is the block inputs, the loss's fp32 tensors and the LM
// head's bf16 cast — not every block's cast, not the rebuilt block's activations.
TEST(TrainingLedger, CheckpointedEagerPeakIsOnePhase) {
  const model::ModelSpec m = saved_tensor_shape();
  hw::Cluster c = hw::cluster_preset("dgx-h200", 1);
  c.gpus_per_node = 1;
  TrainingConfig t = one_gpu(Framework::PytorchEager, Precision::AmpBF16);
  t.recompute = model::Recompute::Full;
  t = resolved(t, m, c);
  const MemoryLedger L = training_memory(m, c, t, 0);
  EXPECT_EQ(L.line("recompute_working_set"), 0);
  EXPECT_EQ(L.line("gradients"), 0);
  EXPECT_NEAR(L.line("weight_copies"), 2.0 * 50000 * 1536, 1);  // the LM head's cast only
  const double above_params = L.line("activations") + L.line("embedding_output") + L.line("logits_and_loss") +
                              L.line("weight_copies");
  EXPECT_NEAR(above_params / 1048576.0, 2674.5, 0.05 * 2674.5);
  // A large model with a small vocabulary peaks at the optimizer step (every gradient).
  const model::ModelSpec big = model::preset("llama2-7b");
  TrainingConfig tb = one_gpu(Framework::PytorchEager, Precision::BF16Pure);
  tb.recompute = model::Recompute::Full, tb.micro_batch = 1, tb.global_batch = 1;
  tb = resolved(tb, big, c);
  const MemoryLedger B = training_memory(big, c, tb, 0);
  EXPECT_GT(B.line("gradients"), 0);
  EXPECT_EQ(B.line("logits_and_loss"), 0);
  EXPECT_EQ(B.line("activations"), 0);
}

// Op-level selective checkpointing keeps the block input, every other matmul output and SDPA's
// output: LLaMA-3 8B per token and layer (bf16, pure): input 4096·2, q 4096·2, v 1024·2, gate
// 14336·2, down 4096·2, SDPA output 4096·2 and its log-sum-exp 32·4 bytes; the rest is a working
// set of one layer during backward.
TEST(TrainingLedger, SelectiveOpKeepsEveryOtherMatmulOutput) {
  auto m = model::preset("llama3-8b");
  auto one = hw::cluster_preset("dgx-h200");
  one.gpus_per_node = 1;
  TrainingConfig t;
  t.seq_len = 2048;
  t.micro_batch = 1;
  t.global_batch = 1;
  t.precision = Precision::BF16Pure;
  t.framework = Framework::Transformers;
  t.recompute = model::Recompute::SelectiveOp;
  t = resolved(t, m, one);
  const double per_token = 2.0 * (4096 + 4096 + 1024 + 14336 + 4096 + 4096) + 32 * 4;
  EXPECT_DOUBLE_EQ(eager_activation_bytes_per_layer(m, t, model::Recompute::SelectiveOp), 2048 * per_token);
  const double none = eager_activation_bytes_per_layer(m, t, model::Recompute::None);
  const double full = eager_activation_bytes_per_layer(m, t, model::Recompute::Full);
  EXPECT_GT(2048 * per_token, full);
  EXPECT_LT(2048 * per_token, none);
  const auto L = training_memory(m, one, t, 0);
  EXPECT_NEAR(L.line("recompute_working_set"), none - 2048 * per_token, 1.0);
}
