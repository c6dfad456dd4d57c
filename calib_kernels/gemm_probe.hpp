#pragma once
// A probe of how the GEMM a framework gets compares with the sweep's choice (cuBLASLt's first
// heuristic algorithm): other workspace sizes, the best of several heuristics, the classic
// cublasGemmEx path, and the same plan before and after sustained load.
//   infraplan-calibrate gemm-probe --out FILE.json
#include <nlohmann/json.hpp>

namespace infraplan::calib {

nlohmann::ordered_json run_gemm_probe();

}  // namespace infraplan::calib
