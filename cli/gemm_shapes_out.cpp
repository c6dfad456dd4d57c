#include "cli/gemm_shapes_out.hpp"

#include <cstdio>

#include "cli/commands.hpp"

namespace infraplan::cli {

OptionSpec GemmShapesOut::option() {
  return {
      "gemm-shapes-out", true,
      "write the distinct GEMM shapes this run asked of the cost model (for infraplan calibrate --shapes)"};
}

GemmShapesOut::GemmShapesOut(const Args& a, const hw::CostModel& cost)
    : path_(a.get("gemm-shapes-out")), inner_(cost), recorder_(cost) {}

void GemmShapesOut::declare(OutputFiles& out) const {
  if (path_) out.add("--gemm-shapes-out", *path_);
}

void GemmShapesOut::stage(OutputFiles& out) const {
  if (!path_) return;
  out.set(*path_, recorder_.shapes_json().dump(1) + "\n");
  std::fprintf(stderr, "%zu GEMM shapes written to %s\n", recorder_.distinct_shapes(), path_->c_str());
}

void GemmShapesOut::write() const {
  if (!path_) return;
  write_file_atomic(*path_, recorder_.shapes_json().dump(1) + "\n");
  std::fprintf(stderr, "%zu GEMM shapes written to %s\n", recorder_.distinct_shapes(), path_->c_str());
}

}  // namespace infraplan::cli
