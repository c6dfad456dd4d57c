// Correctness of every calibration kernel against its CPU reference (skipped without a GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "calib_kernels/checks.hpp"
#include "calib_kernels/cublas_gemm.hpp"
#include "calib_kernels/cuda_util.hpp"

namespace infraplan::calib {
namespace {

class KernelCheck : public ::testing::TestWithParam<std::size_t> {};

TEST_P(KernelCheck, MatchesReference) {
  if (!gpu_available()) GTEST_SKIP() << "no CUDA device";
  const NamedCheck& c = all_checks().at(GetParam());
  // Fresh random inputs each run (the seed varies with the clock), echoed on failure.
  std::uint64_t seed = std::uint64_t(::testing::UnitTest::GetInstance()->random_seed()) * 7919 + GetParam();
  CheckResult r = c.run(seed);
  EXPECT_TRUE(r.ok) << c.name << " seed " << seed << ": " << r.detail << " (max rel err " << r.max_rel_err
                    << ", tolerance " << r.tolerance << ")";
}

INSTANTIATE_TEST_SUITE_P(AllKernels, KernelCheck, ::testing::Range<std::size_t>(0, all_checks().size()),
                         [](const ::testing::TestParamInfo<std::size_t>& p) {
                           return all_checks()[p.param].name;
                         });

// The algorithm record the GEMM sweep stores per cell: nine fields, the first the algorithm id;
// empty when cuBLASLt has no algorithm (fp8 needs n and k multiples of 16).
TEST(LtPlan, AlgoSignatureNamesTheHeuristicsChoice) {
  if (!gpu_available()) GTEST_SKIP() << "no CUDA device";
  LtHandle h;
  LtPlan plan(h, GemmDtype::BF16, 4096, 4096, 4096);
  ASSERT_TRUE(plan.ok());
  const std::string sig = plan.algo_signature();
  EXPECT_EQ(sig.rfind("a", 0), 0u) << sig;
  EXPECT_EQ(std::count(sig.begin(), sig.end(), ' '), 8) << sig;
  EXPECT_EQ(sig.find('?'), std::string::npos) << sig;
  LtPlan none(h, GemmDtype::FP8, 64, 129, 40);
  if (!none.ok()) {
    EXPECT_EQ(none.algo_signature(), "");
  }
}

}  // namespace
}  // namespace infraplan::calib
