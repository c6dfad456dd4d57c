// The mini-engine on an H100, predicted with the embedded H100 profile (derived from the H200's, with
// the engine's attention tables of another H100 start since 2026-12-07: docs/data/engine/h100_start2):
// the 18 reference scenarios of LLaMA-2-7B and LLaMA-3-8B run with their cluster
// preset changed to dgx-h100 (2026-12-07, docs/data/engine/h100_start, its README the command). Each
// stored file is the measured side of `infraplan validate serve`; the scenario as it ran is in its
// provenance. The prediction is `infraplan validate serve`'s: the embedded profile of the scenario's
// GPU, the power limiter where the profile has one. docs/serving.md, "The mini-engine on an H100";
// held-out model shapes on another start: "Held-out model shapes on an H100".
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "common/json_text.hpp"
#include "simulator/serving_prediction_test_support.hpp"
#include "strategies/scenario.hpp"

namespace infraplan::sim::serve {
namespace {

const std::string kData = std::string(INFRAPLAN_SOURCE_DIR) + "/docs/data/engine/";

struct Row {
  std::string name;
  double ttft_err, tpot_err, tok_err;  // predicted / measured − 1
};

struct Means {
  double ttft = 0, tpot = 0, tok = 0;  // mean |error|
};

/// Every measured report in `dir` (its .json files, sorted), predicted as `validate serve` does, one
/// row each; each report must come from an H100 and name the H100 preset.
std::vector<Row> rows_of(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  std::vector<Row> rows;
  for (const std::string& f : files) {
    const Json measured = read_json_file(f);
    EXPECT_NE(measured.at("device").get<std::string>().find("H100"), std::string::npos) << f;
    const auto sc = strat::scenario_from_json(measured.at("provenance").at("scenario"), f, dir);
    EXPECT_EQ(sc.cluster.gpu.name, "h100-sxm5-80gb") << f;
    const ServingMetrics p = predicted_as_validate_serve(sc);
    const Json& m = measured.at("metrics");
    rows.push_back({sc.name, p.ttft_ms.p50 / m.at("ttft_ms").at("p50").get<double>() - 1,
                    p.tpot_ms.p50 / m.at("tpot_ms").at("p50").get<double>() - 1,
                    p.output_tokens_per_s / m.at("output_tokens_per_s").get<double>() - 1});
  }
  return rows;
}

/// Prints every row and the mean |error| of each metric.
Means print_and_average(const std::vector<Row>& rows) {
  Means mean;
  for (const Row& r : rows) {
    std::printf("%-36s TTFT p50 %+6.1f%%  TPOT p50 %+6.1f%%  output tok/s %+6.1f%%\n", r.name.c_str(),
                100 * r.ttft_err, 100 * r.tpot_err, 100 * r.tok_err);
    mean.ttft += std::fabs(r.ttft_err) / double(rows.size());
    mean.tpot += std::fabs(r.tpot_err) / double(rows.size());
    mean.tok += std::fabs(r.tok_err) / double(rows.size());
  }
  std::printf("%zu runs, mean |error|: TTFT p50 %.1f%%, TPOT p50 %.1f%%, output tok/s %.1f%%\n", rows.size(),
              100 * mean.ttft, 100 * mean.tpot, 100 * mean.tok);
  return mean;
}

TEST(ServingAccuracy, MiniEngineOnAnH100WithTheH100Profile) {
  const std::vector<Row> rows = rows_of(kData + "h100_start/");
  ASSERT_EQ(rows.size(), 18u);
  const Means mean = print_and_average(rows);
  for (const Row& r : rows)
    // One request at a time (batch 1): the case published small-batch latencies are about.
    if (r.name.find("_single") != std::string::npos || r.name.find("_closed1") != std::string::npos) {
      EXPECT_LT(std::fabs(r.ttft_err), 0.05) << r.name;
      EXPECT_LT(std::fabs(r.tpot_err), 0.05) << r.name;
    }
  // 2026-12-07, with the H100's own attention tables (read flush, two starts): TTFT 4.3% (max 14.1%,
  // open-loop load), TPOT 1.8% (max 4.5%), output tok/s 1.1% (max 4.3%). With the decode table derived
  // from the H200's: TTFT 4.8%, TPOT 4.4% (max 15.0% at batches of 64-256), output tok/s 2.6%.
  // docs/serving.md, "The H100's own attention tables".
  EXPECT_LT(mean.ttft, 0.06);
  EXPECT_LT(mean.tpot, 0.03);
  EXPECT_LT(mean.tok, 0.02);
}

// Model shapes the H100 profile was never checked on (LLaMA-2-13B and the Phi-3-medium shape, eight
// scenarios; another H100 start, 2026-12-07 16:43 UTC, docs/data/engine/h100_heldout, predictions
// committed before the run). docs/serving.md, "Held-out model shapes on an H100".
TEST(ServingAccuracy, HeldOutShapesOnAnH100) {
  const std::vector<Row> rows = rows_of(kData + "h100_heldout/");
  ASSERT_EQ(rows.size(), 8u);
  const Means mean = print_and_average(rows);
  // 2026-12-07: TTFT 4.8% (max −10.2%, LLaMA-2-13B single: a 512-token prefill), TPOT 3.1% (max +6.7%,
  // fp8 weights), output tok/s 2.4% (max −5.9%, fp8): as the H200's held-out shapes (6.1%, 3.1%, 2.7%).
  EXPECT_LT(mean.ttft, 0.06);
  EXPECT_LT(mean.tpot, 0.04);
  EXPECT_LT(mean.tok, 0.03);
  for (const Row& r : rows) {
    EXPECT_LT(std::fabs(r.ttft_err), 0.12) << r.name;
    EXPECT_LT(std::fabs(r.tpot_err), 0.08) << r.name;
  }
}

}  // namespace
}  // namespace infraplan::sim::serve
