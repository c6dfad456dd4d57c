// The H200 profile's record of how far serving latencies fell from the model
// (validation_error.serving_ttft and .serving_tpot, hardware/validation_error.hpp): measured / predicted
// TTFT p50 and TPOT p50 over the 18 reference runs of the mini-engine on the H200 (LLaMA-2-7B and
// LLaMA-3-8B, every bench load; docs/data/engine/wgmma_prefill), the 10th / 50th / 90th percentiles,
// and how many held-out runs (LLaMA-2-13B, the Phi-3-medium and CodeLlama-34B shapes, the fp8 weight
// and fp8 KV runs) fall inside [p10, p90]. Recomputed with the simulator as it is; the test fails
// when the record no longer describes it. INFRAPLAN_WRITE_VALIDATION_ERROR=DIR writes
// DIR/serving_ttft.json and DIR/serving_tpot.json for bench/calib/validation_error_to_profile.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "hardware/calibrated_cost_model.hpp"
#include "hardware/profile.hpp"
#include "simulator/metrics.hpp"
#include "simulator/serving_sim.hpp"
#include "strategies/scenario.hpp"

namespace infraplan::sim::serve {
namespace {

const std::string kDir = std::string(INFRAPLAN_SOURCE_DIR) + "/docs/data/engine/wgmma_prefill/";

/// measured / predicted {TTFT p50, TPOT p50} of one bench scenario, as `infraplan validate serve`
/// predicts it (the scenario's workload and seed, the power limiter where the profile has one).
std::pair<double, double> ratios(const std::string& name) {
  const auto sc = strat::load_scenario(std::string(INFRAPLAN_SOURCE_DIR) + "/scenarios/" + name + ".json");
  const auto setup = serving_setup_from_scenario(sc);
  auto cost = hw::make_calibrated_cost_model(sc.cluster.gpu.name);
  SimOptions o;
  o.keep_requests = false;
  o.power_limited = cost->power_model() && cost->power_limiter_tau_s() > 0;
  const ServingMetrics p = simulate_serving(setup, *cost, o).metrics;
  const Json m = read_json_file(kDir + name + ".json").at("metrics");
  return {m.at("ttft_ms").at("p50").get<double>() / p.ttft_ms.p50,
          m.at("tpot_ms").at("p50").get<double>() / p.tpot_ms.p50};
}

struct Record {
  std::string kind, what;
  std::vector<double> fit, held;
};

TEST(ServingAccuracy, ValidationErrorOfTheProfileIsCurrent) {
  Record ttft{"serving_ttft",
              "mini-engine TTFT p50 on one H200 (LLaMA-2-7B and LLaMA-3-8B, every bench load)",
              {},
              {}};
  Record tpot{"serving_tpot",
              "mini-engine TPOT p50 on one H200 (LLaMA-2-7B and LLaMA-3-8B, every bench load)",
              {},
              {}};
  for (const char* m : {"llama2_7b", "llama3_8b"})
    for (const char* load : {"single", "closed1", "load", "prefix", "closed16", "closed_prefix", "closed64",
                             "saturate", "throughput"}) {
      const auto [t, p] = ratios(std::string("bench_") + m + "_h200_" + load);
      ttft.fit.push_back(t), tpot.fit.push_back(p);
    }
  for (const char* name :
       {"bench_llama2_13b_h200_single", "bench_llama2_13b_h200_closed16", "bench_llama2_13b_h200_saturate",
        "bench_llama2_13b_h200_throughput", "bench_llama2_13b_h200_throughput_fp8",
        "bench_phi3_medium_shape_h200_single", "bench_phi3_medium_shape_h200_closed16",
        "bench_phi3_medium_shape_h200_throughput", "bench_codellama_34b_shape_h200_closed16",
        "bench_codellama_34b_shape_h200_throughput", "bench_llama2_7b_h200_single_fp8",
        "bench_llama2_7b_h200_single_fp8kv", "bench_llama2_7b_h200_throughput_fp8kv",
        "bench_llama3_8b_h200_throughput_fp8", "bench_llama3_8b_h200_throughput_fp8kv"}) {
    const auto [t, p] = ratios(name);
    std::printf("  held out %-42s measured / predicted TTFT p50 %.3f, TPOT p50 %.3f\n", name, t, p);
    ttft.held.push_back(t), tpot.held.push_back(p);
  }
  const char* dir = std::getenv("INFRAPLAN_WRITE_VALIDATION_ERROR");
  const hw::Profile profile = hw::default_profile("h200-sxm-141gb");
  for (Record* r : {&ttft, &tpot}) {
    ASSERT_EQ(r->fit.size(), 18u);
    std::sort(r->fit.begin(), r->fit.end());
    const double p10 = quantile_of_sorted(r->fit, 0.1), p50 = quantile_of_sorted(r->fit, 0.5),
                 p90 = quantile_of_sorted(r->fit, 0.9);
    const auto inside =
        std::count_if(r->held.begin(), r->held.end(), [&](double x) { return x >= p10 && x <= p90; });
    const double coverage = double(inside) / double(r->held.size());
    std::printf(
        "%s: measured / predicted p10 %.3f p50 %.3f p90 %.3f over %zu runs; %ld of %zu held-out runs "
        "inside\n",
        r->kind.c_str(), p10, p50, p90, r->fit.size(), long(inside), r->held.size());
    if (dir) {
      std::filesystem::create_directories(dir);
      const Json j = {
          {"kind", r->kind},
          {"p10", p10},
          {"p50", p50},
          {"p90", p90},
          {"rows", int(r->fit.size())},
          {"what", r->what},
          {"source", "docs/data/engine/wgmma_prefill/bench_{llama2_7b,llama3_8b}_h200_*.json"},
          {"held_out_rows", int(r->held.size())},
          {"held_out_coverage", coverage},
          {"held_out_source",
           "LLaMA-2-13B, Phi-3-medium and CodeLlama-34B shapes, fp8 weight and fp8 KV runs of the "
           "same directory"},
          {"command", "simulator_tests --gtest_filter='*ValidationError*'"}};
      std::ofstream(std::string(dir) + "/" + r->kind + ".json") << j.dump(1) << "\n";
      continue;
    }
    const auto it = profile.validation_error.find(r->kind);
    ASSERT_NE(it, profile.validation_error.end())
        << "the H200 profile records no validation_error." << r->kind;
    const hw::ValidationError& v = it->second;
    const char* how =
        " (the model moved: rewrite the record, see simulator/serving_validation_error_test.cpp)";
    EXPECT_EQ(v.rows, int(r->fit.size())) << how;
    EXPECT_NEAR(v.p10, p10, 0.005) << r->kind << how;
    EXPECT_NEAR(v.p50, p50, 0.005) << r->kind << how;
    EXPECT_NEAR(v.p90, p90, 0.005) << r->kind << how;
    EXPECT_EQ(v.held_out_rows, int(r->held.size())) << how;
    EXPECT_NEAR(v.held_out_coverage, coverage, 0.04) << r->kind << how;
  }
}

}  // namespace
}  // namespace infraplan::sim::serve
