// The CUDA engine's host side: model config, weight layout, safetensors, token ids, step plans
// and the bench checks (CUDA-free; runs in CI).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "common/error.hpp"
#include "engine/bench_support.hpp"
#include "engine/engine_test_workload.hpp"
#include "engine/kv_format.hpp"
#include "engine/l2_flush.hpp"
#include "engine/llama_config.hpp"
#include "engine/prefill_kernel.hpp"
#include "engine/safetensors.hpp"
#include "engine/step_plan.hpp"
#include "engine/step_timing.hpp"
#include "engine/token_store.hpp"
#include "engine/weight_format.hpp"
#include "engine/weight_layout.hpp"
#include "strategies/scenario.hpp"

using namespace infraplan;
using namespace infraplan::engine;
using sim::serve::Request;
using sim::serve::Sequence;

namespace {
LlamaConfig tiny() {
  LlamaConfig c;
  c.name = "tiny";
  c.layers = 2;
  c.hidden = 64;
  c.heads = 2;
  c.kv_heads = 1;
  c.ffn = 96;
  c.vocab = 50;
  c.max_seq = 64;
  return c;
}
std::string tmp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("infraplan_engine_" + name)).string();
}
}  // namespace

TEST(LlamaConfig, PresetsAndRefusals) {
  const LlamaConfig c = llama_config_from_spec(model::preset("llama2-7b"));
  EXPECT_EQ(c.q_dim(), 4096);
  EXPECT_EQ(c.qkv_dim(), 3 * 4096);
  EXPECT_NEAR(double(c.params()), 6.74e9, 0.01e9);
  EXPECT_EQ(c.kv_bytes_per_token(), 32 * 2 * 4096 * 2);
  const LlamaConfig l3 = llama_config_from_spec(model::preset("llama3-8b"));
  EXPECT_EQ(l3.qkv_dim(), 4096 + 2 * 1024);
  EXPECT_NEAR(double(l3.params()), 8.03e9, 0.01e9);
  try {
    llama_config_from_spec(model::preset("gpt2-124m"));
    FAIL() << "GPT-2 is not LLaMA-architecture";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("SwiGLU"), std::string::npos) << e.what();
  }
  LlamaConfig bad = tiny();
  bad.head_dim = 64;
  EXPECT_THROW(bad.validate(), Error);
  bad = tiny();
  bad.heads = 6;
  bad.kv_heads = 2;  // group of 3
  EXPECT_THROW(bad.validate(), Error);
}

TEST(LlamaConfig, FromHuggingFaceConfig) {
  Json j = {{"model_type", "llama"},    {"hidden_size", 256},
            {"num_hidden_layers", 2},   {"num_attention_heads", 2},
            {"num_key_value_heads", 1}, {"intermediate_size", 512},
            {"vocab_size", 1000},       {"max_position_embeddings", 512},
            {"rms_norm_eps", 1e-6},     {"rope_theta", 500000.0}};
  const LlamaConfig c = llama_config_from_hf(j, "config.json");
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_FLOAT_EQ(c.rope_theta, 500000.0f);
  EXPECT_FLOAT_EQ(c.rms_eps, 1e-6f);
  j["rope_scaling"] = {{"type", "llama3"}};
  EXPECT_THROW(llama_config_from_hf(j, "config.json"), Error);
}

TEST(LlamaConfig, RopeTable) {
  const LlamaConfig c = tiny();
  const auto t = rope_table(c);
  ASSERT_EQ(t.size(), std::size_t(c.max_seq) * 64 * 2);
  EXPECT_FLOAT_EQ(t[0], 1.0f);  // position 0: cos 1, sin 0
  EXPECT_FLOAT_EQ(t[1], 0.0f);
  // position 1, pair 0: angle 1 rad
  EXPECT_NEAR(t[64 * 2], std::cos(1.0), 1e-7);
  EXPECT_NEAR(t[64 * 2 + 1], std::sin(1.0), 1e-7);
}

TEST(WeightLayout, AlignedDisjointAndCoveredByHuggingFaceNames) {
  const WeightLayout L(tiny());
  std::int64_t end = 0;
  for (const auto& t : L.tensors()) {
    EXPECT_EQ(t.offset % 64, 0) << t.name;
    EXPECT_GE(t.offset, end) << t.name;
    end = t.offset + t.elems();
  }
  EXPECT_LE(end, L.total_elems());
  // Every element of every used tensor is written by exactly one Hugging Face tensor.
  std::map<std::string, std::vector<int>> rows;
  for (const auto& n : L.hf_names()) {
    auto p = L.hf_placement(n);
    ASSERT_TRUE(p) << n;
    auto& r = rows[p->slot->name];
    r.resize(std::size_t(p->slot->rows), 0);
    for (std::int64_t i = 0; i < p->rows; ++i) ++r[std::size_t(p->row0 + i)];
    EXPECT_EQ(p->cols, p->slot->cols) << n;
  }
  for (const auto& t : L.tensors()) {
    if (t.rows == 0) continue;
    ASSERT_TRUE(rows.count(t.name)) << t.name;
    for (int c : rows[t.name]) EXPECT_EQ(c, 1) << t.name;
  }
  EXPECT_FALSE(L.hf_placement("model.layers.0.self_attn.rotary_emb.inv_freq"));
  EXPECT_THROW(L.hf_placement("model.layers.7.mlp.up_proj.weight"), Error);
}

TEST(WeightLayout, RandomWeightsAreSeededAndScaled) {
  const WeightLayout L(tiny());
  const auto a = L.random_host(1), b = L.random_host(1), c = L.random_host(2);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  const auto& qkv = L.layer(1, LayerTensor::Qkv);
  double mx = 0, ss = 0;
  for (std::int64_t i = 0; i < qkv.elems(); ++i) {
    const double v = bf16_value(a[std::size_t(qkv.offset + i)]);
    mx = std::max(mx, std::abs(v));
    ss += v * v;
  }
  const double bound = std::sqrt(3.0 / 64.0);
  EXPECT_LE(mx, bound * 1.01);
  EXPECT_NEAR(std::sqrt(ss / double(qkv.elems())), bound / std::sqrt(3.0), 0.05 * bound);
  const auto& norm = L.layer(0, LayerTensor::AttnNorm);
  for (std::int64_t i = 0; i < norm.elems(); ++i) {
    const double v = bf16_value(a[std::size_t(norm.offset + i)]);
    EXPECT_GE(v, 0.89);
    EXPECT_LE(v, 1.11);
  }
}

TEST(WeightInit, Bf16RoundsToNearestEven) {
  EXPECT_EQ(bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(bf16_bits(1.0f + 1.0f / 256), 0x3f80);  // exactly half way: to even
  EXPECT_EQ(bf16_bits(1.0f + 3.0f / 256), 0x3f82);  // half way above an odd: up
  EXPECT_EQ(bf16_value(bf16_bits(-2.5f)), -2.5f);
  EXPECT_EQ(round_bf16(3.14159f), bf16_value(0x4049));
}

TEST(Safetensors, RoundTripAndConversion) {
  const std::string path = tmp_path("rt.safetensors");
  std::map<std::string, BF16Tensor> t;
  t["a.weight"] = {{2, 3}, {1, 2, 3, 4, 5, 6}};
  t["b"] = {{4}, {bf16_bits(1.5f), bf16_bits(-2.0f), 0, 7}};
  write_safetensors_bf16(path, t);
  SafetensorsFile f(path);
  ASSERT_EQ(f.tensors().size(), 2u);
  EXPECT_EQ(f.info("a.weight").shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(f.read_bf16("a.weight"), t["a.weight"].data);
  EXPECT_EQ(f.read_bf16("b"), t["b"].data);
  EXPECT_THROW(f.info("missing"), Error);

  // A hand-written F32 / F16 file.
  const std::string p2 = tmp_path("f32.safetensors");
  {
    std::string h =
        R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"y":{"dtype":"F16","shape":[2],"data_offsets":[8,12]},"__metadata__":{"format":"pt"}})";
    std::ofstream o(p2, std::ios::binary);
    const std::uint64_t n = h.size();
    for (int i = 0; i < 8; ++i) o.put(char((n >> (8 * i)) & 0xff));
    o << h;
    const float xs[2] = {1.0f, -0.15625f};
    o.write(reinterpret_cast<const char*>(xs), 8);
    const std::uint16_t ys[2] = {0x3c00 /* 1.0 */, 0xc500 /* -5.0 */};
    o.write(reinterpret_cast<const char*>(ys), 4);
  }
  SafetensorsFile g(p2);
  const auto x = g.read_bf16("x"), y = g.read_bf16("y");
  EXPECT_EQ(bf16_value(x[0]), 1.0f);
  EXPECT_EQ(bf16_value(x[1]), -0.15625f);
  EXPECT_EQ(bf16_value(y[0]), 1.0f);
  EXPECT_EQ(bf16_value(y[1]), -5.0f);
}

TEST(Safetensors, BrokenFilesAreRefused) {
  const std::string p = tmp_path("bad.safetensors");
  {
    std::ofstream o(p, std::ios::binary);
    o << "abc";
  }
  EXPECT_THROW(SafetensorsFile{p}, Error);
  {
    std::string h = R"({"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})";
    std::ofstream o(p, std::ios::binary);
    const std::uint64_t n = h.size();
    for (int i = 0; i < 8; ++i) o.put(char((n >> (8 * i)) & 0xff));
    o << h << "12345678";  // 8 of the 16 bytes
  }
  try {
    SafetensorsFile f(p);
    FAIL() << "offsets past the end must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(SafetensorsFile{tmp_path("does_not_exist.safetensors")}, Error);
  // Headers a careless or hostile writer could produce: each refused with the tensor named,
  // never an overflow or a JSON library exception.
  auto write_header = [&](const std::string& h) {
    std::ofstream o(p, std::ios::binary);
    const std::uint64_t n = h.size();
    for (int i = 0; i < 8; ++i) o.put(char((n >> (8 * i)) & 0xff));
    o << h << std::string(64, '\0');
  };
  for (const std::string h :
       {R"({"x":{"dtype":7,"shape":[4],"data_offsets":[0,16]}})",
        R"({"x":{"dtype":"BF16","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,16]}})",
        R"({"x":{"dtype":"BF16","shape":"4","data_offsets":[0,16]}})",
        R"({"x":{"dtype":"BF16","shape":[4],"data_offsets":["0",8]}})",
        R"({"x":{"dtype":"BF16","shape":[4],"data_offsets":[18446744073709551615,8]}})"}) {
    write_header(h);
    try {
      SafetensorsFile f(p);
      FAIL() << "accepted: " << h;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(SafetensorsFile{std::filesystem::temp_directory_path().string()}, Error);  // a directory
}

TEST(TokenStore, SharedPrefixesSessionsAndOutputs) {
  TokenStore st(1000);
  Request a, b, c;
  a.id = 0;
  b.id = 1;
  c.id = 2;
  a.prompt_tokens = b.prompt_tokens = 40;
  a.output_tokens = b.output_tokens = 4;
  a.content_key = b.content_key = 77;
  a.shared_tokens = b.shared_tokens = 32;
  Sequence sa(a, 16), sb(b, 16);
  for (int p = 0; p < 32; ++p) EXPECT_EQ(st.token(sa, p), st.token(sb, p));
  int differ = 0;
  for (int p = 32; p < 40; ++p) differ += st.token(sa, p) != st.token(sb, p);
  EXPECT_GT(differ, 4);
  for (int p = 0; p < 40; ++p) {
    EXPECT_GE(st.token(sa, p), 1);
    EXPECT_LT(st.token(sa, p), 1000);
  }
  EXPECT_THROW(st.token(sa, 40), std::logic_error);  // no output yet
  st.record(sa, 123);
  sa.num_generated = 1;
  EXPECT_EQ(st.token(sa, 40), 123);
  EXPECT_THROW(st.record(sb, 5); st.record(sb, 6), std::logic_error);  // sb.num_generated stayed 0

  // A conversation: turn 2's prompt holds turn 1's output as generated.
  c.prompt_tokens = 20;
  c.output_tokens = 3;
  c.session_key = 555;
  c.session_tokens = 23;
  Sequence sc(c, 16);
  st.record(sc, 901);
  sc.num_generated = 1;
  st.record(sc, 902);
  sc.num_generated = 2;
  Request d = c;
  d.id = 3;
  d.prompt_tokens = 30;
  d.session_tokens = 35;
  Sequence sd(d, 16);
  for (int p = 0; p < 20; ++p) EXPECT_EQ(st.token(sd, p), st.token(sc, p));
  EXPECT_EQ(st.token(sd, 20), 901);
  EXPECT_EQ(st.token(sd, 21), 902);
  st.forget(2);
  EXPECT_TRUE(st.generated(2).empty());
  EXPECT_EQ(st.token(sd, 21), 902);  // the conversation keeps it
}

TEST(StepPlan, DecodesFirstThenChunksWithSlotsTablesAndSamples) {
  TokenStore st(100);
  Request r1, r2, r3;
  r1.id = 1;
  r1.prompt_tokens = 40;
  r1.output_tokens = 5;
  r2.id = 2;
  r2.prompt_tokens = 20;
  r2.output_tokens = 5;
  r3.id = 3;
  r3.prompt_tokens = 10;
  r3.output_tokens = 5;
  Sequence s1(r1, 16), s2(r2, 16), s3(r3, 16);
  s1.block_table = {7, 3, 9};  // prefilling tokens 16..39 (a second chunk)
  s1.num_computed = 16;
  s2.block_table = {4, 5};  // decoding: 20 prompt + 2 generated, token 21 computes
  st.record(s2, 11);
  s2.num_generated = 1;
  st.record(s2, 12);
  s2.num_generated = 2;
  s2.num_computed = 21;
  s3.block_table = {8};  // first chunk of 6 tokens, not sampled
  sim::serve::BatchShape b;
  b.items.push_back({24, 40, true, true, &s1});
  b.items.push_back({1, 22, false, true, &s2});
  b.items.push_back({6, 6, true, false, &s3});
  b.block_copies.push_back({1, 2});
  const StepPlan p = build_step_plan(b, st, 16, 4);
  ASSERT_EQ(p.rows(), 31);
  EXPECT_EQ(p.num_decode, 1);
  EXPECT_EQ(p.tokens[0], 12);
  EXPECT_EQ(p.positions[0], 21);
  EXPECT_EQ(p.slots[0], 5 * 16 + 5);
  EXPECT_EQ(p.decode_context, (std::vector<std::int32_t>{22}));
  EXPECT_EQ(p.decode_tables, (std::vector<std::int32_t>{4, 5, 0, 0}));
  EXPECT_EQ(p.prefill_cu, (std::vector<std::int32_t>{0, 24, 30}));
  EXPECT_EQ(p.prefill_start, (std::vector<std::int32_t>{16, 0}));
  EXPECT_EQ(p.prefill_kv, (std::vector<std::int32_t>{40, 6}));
  EXPECT_EQ(p.prefill_tables, (std::vector<std::int32_t>{7, 3, 9, 0, 8, 0, 0, 0}));
  EXPECT_EQ(p.positions[1], 16);
  EXPECT_EQ(p.slots[1], 3 * 16 + 0);
  EXPECT_EQ(p.slots[24], 9 * 16 + 7);  // position 39
  EXPECT_EQ(p.tokens[1], st.token(s1, 16));
  EXPECT_EQ(p.sample_rows, (std::vector<std::int32_t>{0, 24}));
  ASSERT_EQ(p.sampled.size(), 2u);
  EXPECT_EQ(p.sampled[0], &s2);
  EXPECT_EQ(p.sampled[1], &s1);
  ASSERT_EQ(p.copies.size(), 1u);
  EXPECT_EQ(p.copies[0].dst, 2);
  EXPECT_EQ(p.max_prefill_q, 24);

  // A table wider than the plan's width is refused.
  EXPECT_THROW(build_step_plan(b, st, 16, 2), std::logic_error);
  // Decode-only plans pad to a graph size.
  sim::serve::BatchShape d;
  d.items.push_back({1, 22, false, true, &s2});
  StepPlan q = build_step_plan(d, st, 16, 4);
  pad_decode_plan(q, 4, 99);
  EXPECT_EQ(q.num_decode, 4);
  EXPECT_EQ(q.rows(), 4);
  EXPECT_EQ(q.slots[3], -1);
  EXPECT_EQ(q.decode_context[3], 1);
  EXPECT_EQ(q.decode_tables[3 * 4], 99);
  EXPECT_EQ(q.sample_rows, (std::vector<std::int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(q.sampled.size(), 1u);
  EXPECT_THROW(pad_decode_plan(q, 2, 99), std::logic_error);
}

TEST(BenchSupport, RefusesWhatTheCudaBackendDoesNotRun) {
  const std::string base = std::string(INFRAPLAN_SOURCE_DIR) + "/scenarios/bench_llama2_7b_h200_load.json";
  auto sc = strat::load_scenario(base);
  auto setup = sim::serve::serving_setup_from_scenario(sc);
  const LlamaConfig c = llama_config_from_spec(sc.model);
  EXPECT_NO_THROW(check_bench_supported(setup, c));
  auto bad = setup;
  bad.serving.tp = 2;
  try {
    check_bench_supported(bad, c);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("serving.tp=2"), std::string::npos) << e.what();
  }
  bad = setup;
  bad.engine.sched.preemption = sim::serve::Preemption::Swap;
  EXPECT_THROW(check_bench_supported(bad, c), Error);
  auto fp8 = setup;
  fp8.serving.weights = strat::WeightQuant::FP8;
  EXPECT_NO_THROW(check_bench_supported(fp8, c));
  for (const char* name : {"bench_llama2_7b_h200_single_fp8.json", "bench_llama3_8b_h200_throughput_fp8.json"}) {
    auto f8 = strat::load_scenario(std::string(INFRAPLAN_SOURCE_DIR) + "/scenarios/" + name);
    auto s8 = sim::serve::serving_setup_from_scenario(f8);
    EXPECT_EQ(s8.serving.weights, strat::WeightQuant::FP8) << name;
    EXPECT_EQ(s8.serving.kv_dtype, Dtype::BF16) << name;
    EXPECT_NO_THROW(check_bench_supported(s8, llama_config_from_spec(f8.model))) << name;
  }
  EXPECT_EQ(engine_weight_format(strat::WeightQuant::FP8), WeightFormat::FP8);
  EXPECT_EQ(engine_weight_format(strat::WeightQuant::BF16), WeightFormat::BF16);
  for (auto q : {strat::WeightQuant::FP16, strat::WeightQuant::INT8, strat::WeightQuant::INT4,
                 strat::WeightQuant::NVFP4}) {
    bad = setup;
    bad.serving.weights = q;
    try {
      check_bench_supported(bad, c);
      FAIL() << strat::weight_quant_name(q);
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(std::string("serving.weights=") + strat::weight_quant_name(q)), std::string::npos)
          << m;
      EXPECT_NE(m.find("valid: bf16, fp8"), std::string::npos) << m;
    }
  }
  LlamaConfig short_model = c;
  short_model.max_seq = 64;
  EXPECT_THROW(check_bench_supported(setup, short_model), Error);
}

TEST(BenchSupport, AcceptsFp8KvAndRefusesOtherKvDtypes) {
  const std::string dir = std::string(INFRAPLAN_SOURCE_DIR) + "/scenarios/";
  auto sc = strat::load_scenario(dir + "bench_llama2_7b_h200_load.json");
  auto setup = sim::serve::serving_setup_from_scenario(sc);
  const LlamaConfig c = llama_config_from_spec(sc.model);
  EXPECT_EQ(engine_kv_format(Dtype::BF16), KvFormat::BF16);
  EXPECT_EQ(engine_kv_format(Dtype::FP8), KvFormat::FP8);
  auto kv8 = setup;
  kv8.serving.kv_dtype = Dtype::FP8;
  EXPECT_NO_THROW(check_bench_supported(kv8, c));
  kv8.serving.weights = strat::WeightQuant::FP8;
  EXPECT_NO_THROW(check_bench_supported(kv8, c)) << "fp8 weights with fp8 KV";
  for (Dtype d : {Dtype::FP16, Dtype::FP32, Dtype::INT8, Dtype::INT4, Dtype::FP4}) {
    auto bad = setup;
    bad.serving.kv_dtype = d;
    try {
      check_bench_supported(bad, c);
      FAIL() << dtype_name(d);
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("serving.kv_dtype=" + std::string(dtype_name(d))), std::string::npos) << m;
      EXPECT_NE(m.find("valid: bf16, fp8"), std::string::npos) << m;
    }
  }
  // The fp8-KV bench scenarios load as such and pass the checks.
  for (const char* name : {"bench_llama2_7b_h200_single_fp8kv.json", "bench_llama2_7b_h200_throughput_fp8kv.json",
                           "bench_llama3_8b_h200_throughput_fp8kv.json"}) {
    auto f = strat::load_scenario(dir + name);
    auto s = sim::serve::serving_setup_from_scenario(f);
    EXPECT_EQ(s.serving.kv_dtype, Dtype::FP8) << name;
    EXPECT_EQ(s.serving.weights, std::string(name).find("llama3") != std::string::npos ? strat::WeightQuant::FP8
                                                                                        : strat::WeightQuant::BF16)
        << name;
    EXPECT_NO_THROW(check_bench_supported(s, llama_config_from_spec(f.model))) << name;
  }
}

TEST(KvFormat, ParsesBf16AndFp8AndNamesTheFieldOtherwise) {
  EXPECT_EQ(parse_kv_format("bf16", "--kv-dtype"), KvFormat::BF16);
  EXPECT_EQ(parse_kv_format("fp8", "--kv-dtype"), KvFormat::FP8);
  EXPECT_STREQ(kv_format_name(KvFormat::FP8), "fp8");
  EXPECT_EQ(kv_element_bytes(KvFormat::BF16), 2);
  EXPECT_EQ(kv_element_bytes(KvFormat::FP8), 1);
  try {
    (void)parse_kv_format("int8", "--kv-dtype");
    FAIL();
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("--kv-dtype='int8'"), std::string::npos) << m;
    EXPECT_NE(m.find("fp8"), std::string::npos) << m;
  }
  KvScales s{{1.0f, 2.0f}};
  EXPECT_NO_THROW(s.validate(1));
  EXPECT_EQ(s.k(0), 1.0f);
  EXPECT_EQ(s.v(0), 2.0f);
  EXPECT_THROW(s.validate(2), Error);
  EXPECT_EQ(KvScales{}.k(5), 1.0f) << "no scales: 1 everywhere";
}

TEST(SteadyRunClock, WaitsUntilTheTarget) {
  SteadyRunClock c;
  const double t = c.now_s() + 0.004;
  c.wait_until(t);
  EXPECT_GE(c.now_s(), t);
  EXPECT_LT(c.now_s(), t + 0.05);
}

namespace {
/// Stands in for the GPU: every step takes 1 ms, tokens are not computed.
class NullBackend final : public sim::serve::ExecutionBackend {
 public:
  sim::serve::StepCost step(const sim::serve::BatchShape& b) override {
    for (const auto& it : b.items) {
      EXPECT_NE(it.seq, nullptr);
      if (it.prefill && it.context > it.q_tokens + it.seq->cached_tokens) ++chunks_after_first;
    }
    copies += std::int64_t(b.block_copies.size());
    sim::serve::StepCost c;
    c.total_s = 1e-3;
    return c;
  }
  std::int64_t copies = 0, chunks_after_first = 0;
};
}  // namespace

TEST(EngineTestWorkload, DrivesEveryPathTheGpuTestChecks) {
  // The GPU correctness test (cuda_engine_test.cpp) runs this workload; scheduling does not
  // depend on token values, so the paths it takes are checked here without a GPU.
  auto backend = std::make_unique<NullBackend>();
  NullBackend* nb = backend.get();
  sim::serve::InstanceSpec spec;
  spec.num_blocks = test_workload::kNumBlocks;
  spec.block_size = 16;
  sim::serve::ServingEngine e(0, spec, test_workload::options(), std::move(backend), nullptr,
                              sim::serve::Rng::derive(1, 1));
  const auto reqs = test_workload::requests(7);
  std::int64_t finished = 0, outputs = 0;
  const auto d = test_workload::drive(e, reqs, [&](Sequence& s) {
    ++finished;
    outputs += s.num_generated;
  });
  EXPECT_EQ(finished, std::int64_t(reqs.size()));
  EXPECT_GT(outputs, 150);
  EXPECT_GT(e.scheduler().num_preemptions(), 0);
  EXPECT_GT(e.blocks().cache().stats.hit_tokens, 0);
  EXPECT_GT(e.blocks().stats().cow_copies, 0);
  EXPECT_EQ(nb->copies, e.blocks().stats().cow_copies) << "every copy-on-write reaches the backend";
  EXPECT_GT(d.mixed_steps, 0);
  EXPECT_GT(nb->chunks_after_first, 0) << "long prompts are prefilled in several chunks";
}

TEST(EngineTestWorkload, Fp8VariantComputesEveryRowInOneStep) {
  // The fp8 GPU test replays each (sequence, position) with the activation scales of the step
  // that computed it: every row must be computed exactly once, through chunked prefill, mixed
  // steps and decodes.
  class RowRecorder final : public sim::serve::ExecutionBackend {
   public:
    sim::serve::StepCost step(const sim::serve::BatchShape& b) override {
      for (const auto& it : b.items) {
        for (std::int64_t p = it.context - it.q_tokens; p < it.context; ++p)
          if (!rows.insert({it.seq->id(), p}).second) ++repeated;
        if (it.prefill && it.context > it.q_tokens) ++later_chunks;
      }
      sim::serve::StepCost c;
      c.total_s = 1e-3;
      return c;
    }
    std::set<std::pair<std::int64_t, std::int64_t>> rows;
    std::int64_t repeated = 0, later_chunks = 0;
  };
  auto backend = std::make_unique<RowRecorder>();
  RowRecorder* rr = backend.get();
  sim::serve::InstanceSpec spec;
  spec.num_blocks = test_workload::kFp8NumBlocks;
  spec.block_size = 16;
  sim::serve::ServingEngine e(0, spec, test_workload::fp8_options(), std::move(backend), nullptr,
                              sim::serve::Rng::derive(1, 1));
  const auto reqs = test_workload::requests(7);
  std::int64_t finished = 0, positions = 0;
  const auto d = test_workload::drive(e, reqs, [&](Sequence& s) {
    ++finished;
    positions += s.prompt_tokens() + s.num_generated - 1;  // the last token is never fed back
  });
  EXPECT_EQ(finished, std::int64_t(reqs.size()));
  EXPECT_EQ(rr->repeated, 0) << "a row computed twice";
  EXPECT_EQ(std::int64_t(rr->rows.size()), positions) << "every fed position computed once";
  EXPECT_EQ(e.scheduler().num_preemptions(), 0);
  EXPECT_EQ(e.blocks().cache().stats.hit_tokens, 0);
  EXPECT_GT(d.mixed_steps, 0);
  EXPECT_GT(rr->later_chunks, 0) << "long prompts are prefilled in several chunks";
}

TEST(WeightFormat, NamesAndTheFp8Gemms) {
  EXPECT_EQ(parse_weight_format("bf16", "--weights"), WeightFormat::BF16);
  EXPECT_EQ(parse_weight_format("fp8", "--weights"), WeightFormat::FP8);
  EXPECT_STREQ(weight_format_name(WeightFormat::FP8), "fp8");
  try {
    parse_weight_format("int8", "--weights");
    FAIL();
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("--weights='int8'"), std::string::npos) << m;
    EXPECT_NE(m.find("bf16"), std::string::npos) << m;
    EXPECT_NE(m.find("fp8"), std::string::npos) << m;
  }
  EXPECT_EQ(fp8_gemm_index(LayerTensor::Qkv), 0);
  EXPECT_EQ(fp8_gemm_index(LayerTensor::O), 1);
  EXPECT_EQ(fp8_gemm_index(LayerTensor::GateUp), 2);
  EXPECT_EQ(fp8_gemm_index(LayerTensor::Down), 3);
  EXPECT_FALSE(is_fp8_linear(LayerTensor::AttnNorm));
  EXPECT_FALSE(is_fp8_linear(LayerTensor::FfnNorm));
}

// The host-time line of a run's steps (engine/step_timing.hpp): least squares over the steps
// of one kind, outliers left out, percentiles of what was kept.
TEST(StepTimingLog, FitsTheHostLineOfGraphStepsAndLeavesOutliers) {
  infraplan::engine::StepTimingLog log;
  for (int seqs = 1; seqs <= 64; ++seqs) {
    infraplan::engine::StepTiming t;
    t.seqs = seqs;
    t.graph = true;
    t.host_s = (120.0 + 3.5 * seqs) * 1e-6;
    t.gpu_s = 5e-3;
    log.add(t);
  }
  infraplan::engine::StepTiming slow;  // a graph captured on first use
  slow.seqs = 8;
  slow.graph = true;
  slow.host_s = 0.2;
  log.add(slow);
  infraplan::engine::StepTiming eager;
  eager.seqs = 3;
  eager.host_s = 400e-6;
  log.add(eager);
  const auto g = log.host_fit(true);
  EXPECT_EQ(g.steps, 64);
  EXPECT_NEAR(g.intercept_us, 120.0, 1e-6);
  EXPECT_NEAR(g.per_seq_us, 3.5, 1e-9);
  EXPECT_NEAR(g.rmse_us, 0.0, 1e-6);
  EXPECT_EQ(g.min_seqs, 1);
  EXPECT_EQ(g.max_seqs, 64);
  const auto e = log.host_fit(false);
  EXPECT_EQ(e.steps, 1);
  EXPECT_DOUBLE_EQ(e.per_seq_us, 0.0);
  EXPECT_NEAR(e.intercept_us, 400.0, 1e-9);
  const std::string csv = log.csv();
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 67);
  EXPECT_EQ(csv.rfind("start_s,seqs,tokens,prefill_seqs,context_tokens,max_context,graph,host_us,gpu_us,predicted_gpu_us\n", 0), 0u);
  EXPECT_FALSE(log.summary_json().contains("step_model"));
}

// predict() prices each recorded step with a backend; the summary gives predicted / measured.
TEST(StepTimingLog, ComparesTheStepModelWithTheMeasuredGpuTime) {
  struct PerToken final : infraplan::sim::serve::ExecutionBackend {
    infraplan::sim::serve::StepCost step(const infraplan::sim::serve::BatchShape& b) override {
      infraplan::sim::serve::StepCost c;
      for (const auto& it : b.items) c.total_s += 1e-4 * double(it.q_tokens);
      return c;
    }
  } model;
  infraplan::engine::StepTimingLog log;
  for (int seqs : {1, 4, 16, 64}) {
    infraplan::engine::StepTiming t;
    t.seqs = seqs;
    t.graph = true;
    t.gpu_s = 1.25e-4 * seqs;  // the model is 20% fast
    for (int i = 0; i < seqs; ++i) t.items.push_back({1, 100, false, true, nullptr});
    log.add(t);
  }
  log.predict(model);
  const auto j = log.summary_json();
  ASSERT_TRUE(j.contains("step_model"));
  EXPECT_NEAR(j["step_model"]["ratios"]["graph_steps"]["all"]["median"].get<double>(), 0.8, 1e-9);
  EXPECT_EQ(j["step_model"]["ratios"]["graph_steps"]["1"]["steps"].get<int>(), 1);
  EXPECT_EQ(j["step_model"]["ratios"]["graph_steps"]["33-128"]["steps"].get<int>(), 1);
  EXPECT_NE(log.csv().find(",100.0\n"), std::string::npos);  // predicted µs of the 1-sequence step
}

namespace {

/// The message of the Error `parse` throws; a failure (and "") when it accepts.
template <class Parse>
std::string refusal_of(Parse&& parse, const char* what) {
  try {
    parse();
  } catch (const infraplan::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted " << what;
  return "";
}

}  // namespace

// The prefill kernel's spelling on the command line: the three names round-trip; anything else is
// refused naming the option and the choices.
TEST(PrefillKernelName, ParsesTheThreeChoicesAndRefusesOthers) {
  using namespace infraplan::engine;
  for (PrefillKernel k : {PrefillKernel::automatic, PrefillKernel::mma_sync, PrefillKernel::wgmma})
    EXPECT_EQ(parse_prefill_kernel(prefill_kernel_name(k), "--prefill-kernel"), k);
  const std::string m = refusal_of([] { parse_prefill_kernel("wgmma2", "--prefill-kernel"); }, "wgmma2");
  EXPECT_NE(m.find("--prefill-kernel"), std::string::npos) << m;
  EXPECT_NE(m.find("auto, mma, wgmma"), std::string::npos) << m;
}

// How a kernel timing clears the L2 (infraplan-bench attention --flush): the two names round-trip;
// anything else is refused naming the option and the choices.
TEST(L2FlushName, ParsesWriteAndReadAndRefusesOthers) {
  using namespace infraplan::engine;
  for (L2Flush f : {L2Flush::Write, L2Flush::Read}) EXPECT_EQ(parse_l2_flush(l2_flush_name(f), "--flush"), f);
  const std::string m = refusal_of([] { parse_l2_flush("memset", "--flush"); }, "memset");
  EXPECT_NE(m.find("--flush='memset'"), std::string::npos) << m;
  EXPECT_NE(m.find("write or read"), std::string::npos) << m;
}
